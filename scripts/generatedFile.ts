// Writes a generated page only when its text changed, and says which it was (the npm run docs:* scripts).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function writeGenerated(file: URL, text: string): void {
  let before = '';
  try {
    before = readFileSync(file, 'utf8');
  } catch {
    // Not written yet.
  }
  if (text !== before) writeFileSync(file, text);
  const name = fileURLToPath(file).split('/').slice(-2).join('/');
  console.log(text === before ? `${name} is up to date` : `${name} updated`);
}
