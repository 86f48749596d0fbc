// The error catalog (domain/errorCatalog.ts) as Markdown: the table in the OpenAPI document's
// description, which the reference page (/docs) renders, and docs/errors.md, which
// scripts/errorReference.ts writes (`npm run docs:errors`) and a unit test keeps current.
import { STATUS_CODES } from 'node:http';
import { errorCatalog, retryAdvice, type RetryAdvice } from '../domain/errorCatalog.js';
import { type ErrorCode, errorCodes } from '../domain/errors.js';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** Every code, by HTTP status, then in the order domain/errors.ts lists them. */
export function codesByStatus(): ErrorCode[] {
  const codes = Object.keys(errorCodes) as ErrorCode[];
  return codes
    .map((code, index) => ({ code, index }))
    .sort((a, b) => errorCodes[a.code] - errorCodes[b.code] || a.index - b.index)
    .map((c) => c.code);
}

const retryLegend = () => Object.entries(retryAdvice) as [RetryAdvice, string][];

const statusLine = (status: number) => `${status} ${STATUS_CODES[status] ?? ''}`.trim();

/** One row per code (code, HTTP status, meaning, what to do, retry): the reference page's error table. */
export function errorTableMarkdown(): string {
  const rows = codesByStatus().map((code) => {
    const { meaning, whatToDo, retry } = errorCatalog[code];
    return `| \`${code}\` | ${errorCodes[code]} | ${cell(meaning)} | ${cell(whatToDo)} | ${retry} |`;
  });
  return ['| Code | HTTP status | Meaning | What to do | Retry |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

/** How the OpenAPI document introduces the API and its errors. */
export function openApiDescription(): string {
  return [
    "Take a payer's signed EIP-3009 authorization now, capture it later: exactly once.",
    '',
    '## Errors',
    '',
    'Every error is `{"error": {"code", "message", "details"?}}` with the HTTP status below. The `code` is stable; the `message` is for people.',
    "The same codes appear as an authorization's `lastError` and a refund's `failure`. 429 and 503 answers carry Retry-After.",
    '',
    errorTableMarkdown(),
    '',
    'What the Retry column says:',
    '',
    ...retryLegend().map(([name, text]) => `- **${name}**: ${text}`),
  ].join('\n');
}

/** docs/errors.md: a summary table, then a section per code (`errors.md#token_policy_blocked`). */
export function errorsDocument(): string {
  const codes = codesByStatus();
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from domain/errorCatalog.ts by `npm run docs:errors`: edit the catalog, not this file. -->',
    '',
    'Every error authcap answers with is JSON, `{"error": {"code": "…", "message": "…", "details": {…}}}`, with the HTTP status',
    'listed here. The `code` never changes meaning; the `message` is for people and may improve; `details` (when present) carries',
    "what a program may act on, such as `retryAfterSeconds` or the `id` of another authorization. The same codes are an authorization's",
    "`lastError` (why its last capture or cancellation attempt failed: it rests, usually `stored`, until the next one) and a refund's",
    '`failure` or `lastError`. 429 and 503 answers carry a Retry-After header.',
    '',
    'The API serves this table too, on its reference page: see [api-reference.md](api-reference.md).',
    '',
    '| Code | HTTP status | Retry |',
    '| --- | --- | --- |',
    ...codes.map((code) => `| [\`${code}\`](#${code}) | ${statusLine(errorCodes[code])} | ${errorCatalog[code].retry} |`),
    '',
    '## What “Retry” says',
    '',
    '| Retry | Meaning |',
    '| --- | --- |',
    ...retryLegend().map(([name, text]) => `| ${name} | ${cell(text)} |`),
    '',
  ];
  let status: number | undefined;
  for (const code of codes) {
    if (errorCodes[code] !== status) {
      status = errorCodes[code];
      lines.push(`## ${statusLine(status)}`, '');
    }
    const { meaning, whatToDo, retry } = errorCatalog[code];
    lines.push(`### \`${code}\``, '', `HTTP ${status} · Retry: ${retry}`, '', `**Meaning.** ${meaning}`, '', `**What to do.** ${whatToDo}`, '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
