// `npm run diagram`: regenerates the lifecycle diagram in docs/lifecycle.md from workflows/machine.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { authorizationMachine } from '../workflows/machine.js';
import { machineToMermaid, withDiagram } from '../workflows/diagram.js';

const pageUrl = new URL('../docs/lifecycle.md', import.meta.url);
const page = readFileSync(pageUrl, 'utf8');
const updated = withDiagram(page, machineToMermaid(authorizationMachine));
if (updated !== page) writeFileSync(pageUrl, updated);
console.log(updated === page ? 'docs/lifecycle.md diagram is up to date' : 'docs/lifecycle.md diagram updated');
