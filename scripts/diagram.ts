// `npm run diagram`: regenerates the lifecycle diagram in README.md from workflows/machine.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { authorizationMachine } from '../workflows/machine.js';
import { machineToMermaid, withDiagram } from '../workflows/diagram.js';

const readmeUrl = new URL('../README.md', import.meta.url);
const readme = readFileSync(readmeUrl, 'utf8');
const updated = withDiagram(readme, machineToMermaid(authorizationMachine));
if (updated !== readme) writeFileSync(readmeUrl, updated);
console.log(updated === readme ? 'README diagram is up to date' : 'README diagram updated');
