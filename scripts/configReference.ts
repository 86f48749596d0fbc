// `npm run docs:config`: regenerates docs/configuration.md from runtime/settings/catalog.ts and the deployment schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { configurationReference } from '../runtime/settings/reference.js';

const file = new URL('../docs/configuration.md', import.meta.url);
const now = configurationReference();
let before = '';
try {
  before = readFileSync(file, 'utf8');
} catch {
  // Not written yet.
}
if (now !== before) writeFileSync(file, now);
console.log(now === before ? 'docs/configuration.md is up to date' : 'docs/configuration.md updated');
