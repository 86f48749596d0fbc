// `npm run docs:errors`: regenerates docs/errors.md from domain/errorCatalog.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { errorsDocument } from '../api/errorTable.js';

const file = new URL('../docs/errors.md', import.meta.url);
const now = errorsDocument();
let before = '';
try {
  before = readFileSync(file, 'utf8');
} catch {
  // Not written yet.
}
if (now !== before) writeFileSync(file, now);
console.log(now === before ? 'docs/errors.md is up to date' : 'docs/errors.md updated');
