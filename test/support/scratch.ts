// Scratch directories of one test file, removed after its last hook: a suite run left a few MB of
// them in /tmp every time (the fault cases ~200 MB, before they removed their own).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Call at the top of a test file, before its own hooks: after-hooks run last-registered first, so the
 * directories go once the file's processes have stopped. Returns a maker of fresh directories.
 */
export function scratchDirs(name: string): () => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `authcap-${name}-`));
    made.push(dir);
    return dir;
  };
}
