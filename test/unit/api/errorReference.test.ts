// The error catalog (domain/errorCatalog.ts) explains every code, and docs/errors.md is what
// `npm run docs:errors` makes from it now, with an anchor per code.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorsDocument, errorTableMarkdown } from '../../../api/errorTable.js';
import { errorCatalog, retryAdvice } from '../../../domain/errorCatalog.js';
import { errorCodes } from '../../../domain/errors.js';
import { COOL_DOWN_SECONDS, FREE_FAILURES } from '../../../workflows/attemptBudget.js';

const root = join(import.meta.dirname, '..', '..', '..');

describe('the error catalog', () => {
  it('docs/errors.md is what `npm run docs:errors` makes now', () => {
    const committed = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
    expect(committed, 'run `npm run docs:errors`').toBe(errorsDocument());
  });

  it('explains exactly the codes of domain/errors.ts, each with a meaning, what to do and a known retry advice', () => {
    expect(Object.keys(errorCatalog).sort()).toEqual(Object.keys(errorCodes).sort());
    for (const [code, entry] of Object.entries(errorCatalog)) {
      expect(entry.meaning.trim().length, `${code}: meaning`).toBeGreaterThan(20);
      expect(entry.whatToDo.trim().length, `${code}: whatToDo`).toBeGreaterThan(20);
      expect(Object.keys(retryAdvice), `${code}: retry`).toContain(entry.retry);
      // Swagger UI's Markdown (remarkable) ends a table cell at any "|", escaped or not.
      expect(`${entry.meaning} ${entry.whatToDo}`, code).not.toContain('|');
    }
  });

  it('says "after Retry-After" only of answers that carry the header (429 and 503, api/router.ts errorResponse)', () => {
    for (const [code, entry] of Object.entries(errorCatalog)) {
      if (entry.retry === 'after Retry-After') expect([429, 503], code).toContain(errorCodes[code as keyof typeof errorCodes]);
    }
  });

  it('states the attempt budget as workflows/attemptBudget.ts keeps it', () => {
    expect(errorCatalog.too_many_attempts.meaning).toContain(`${FREE_FAILURES} failed attempts`);
    expect(errorCatalog.too_many_attempts.meaning).toContain(`${COOL_DOWN_SECONDS} s cool-down`);
  });

  it('docs/errors.md has a section per code, reachable as errors.md#<code>, listing its status', () => {
    const doc = errorsDocument();
    expect(doc).toContain('Generated from domain/errorCatalog.ts');
    for (const [code, status] of Object.entries(errorCodes)) {
      // GitHub's anchor for "### `token_policy_blocked`" is #token_policy_blocked.
      const section = doc.split(`\n### \`${code}\`\n`);
      expect(section, code).toHaveLength(2);
      expect(section[1]!.split('\n### ')[0], code).toContain(`HTTP ${status} · Retry: ${errorCatalog[code as keyof typeof errorCodes].retry}`);
      expect(doc, code).toContain(`| [\`${code}\`](#${code}) | ${status} `);
    }
  });

  it('the reference page table has one row per code with its status', () => {
    const rows = errorTableMarkdown()
      .split('\n')
      .slice(2)
      .map((row) => row.split(' | '));
    expect(rows.map(([code, status]) => [code!.replace(/^\| `|`$/g, ''), Number(status)])).toEqual(
      expect.arrayContaining(Object.entries(errorCodes).map(([code, status]) => [code, status])),
    );
    expect(rows).toHaveLength(Object.keys(errorCodes).length);
    // A code's own text can hold no unescaped cell separator.
    for (const row of rows) expect(row.length).toBe(5);
  });
});
