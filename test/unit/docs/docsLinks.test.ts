// Every relative link in the docs leads somewhere: a file that exists and, for `page.md#anchor`, a heading
// that page has (GitHub's slug rules). Docs are read by task, page to page, so a page that moved or a
// heading that was renamed must fail here, not in front of a reader. External http(s) links are not fetched.
// No Markdown parser is installed, so this reads the few constructs the docs use: inline links and images,
// reference definitions, HTML href/src/id/name, ATX and setext headings; code blocks, code spans and HTML
// comments are masked first, since a link inside them is not a link.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/** The pages whose links are checked: fixed names, so a page that goes missing fails too. */
function documentedPages(): string[] {
  const docs = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? docs(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', 'CHANGELOG.md', 'examples/README.md', ...docs(join(root, 'docs')).map((file) => relative(root, file).split(sep).join('/'))];
}

/** Blanks out what is not prose (fenced code, code spans, HTML comments), keeping offsets and line numbers. */
function maskNonProse(markdown: string): string {
  const blank = (text: string) => text.replace(/[^\n]/g, ' ');
  let masked = markdown.replace(/<!--[\s\S]*?-->/g, blank);
  masked = masked.replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\1[`~]*[ \t]*$|(?![\s\S]))/gm, blank);
  return masked.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, blank);
}

/** GitHub's heading ids (github-slugger): lower case, only letters, marks, digits, `_`, `-` and spaces, spaces to `-`; repeats get -1, -2. */
function headingAnchors(markdown: string): Set<string> {
  const lines = markdown
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\1[`~]*[ \t]*$|(?![\s\S]))/gm, '')
    .split('\n');
  const texts: string[] = [];
  lines.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx) texts.push(atx[1]!);
    else if (i > 0 && /^ {0,3}(=+|-+)[ \t]*$/.test(line) && /^ {0,3}[^\s|>#*+-]/.test(lines[i - 1]!) && !/^\s*$/.test(lines[i - 1]!)) {
      texts.push(lines[i - 1]!.trim());
    }
  });
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const text of texts) {
    const plain = text
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/`/g, '');
    const base = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of markdown.matchAll(/<[a-z][^>]*\s(?:id|name)="([^"]+)"/gi)) anchors.add(match[1]!);
  return anchors;
}

interface Link {
  target: string;
  line: number;
}

/** Every link destination in a page, with its line: inline links and images, reference definitions, HTML href and src. */
function linksOf(markdown: string): Link[] {
  const prose = maskNonProse(markdown);
  const lineAt = (offset: number) => prose.slice(0, offset).split('\n').length;
  const patterns = [
    /\]\(\s*(<[^>\n]*>|[^\s)]+)(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?\s*\)/g,
    /^ {0,3}\[[^\]\n]+\]:\s*(<[^>\n]*>|\S+)/gm,
    /<(?:a|img)\s[^>]*?(?:href|src)="([^"]+)"/gi,
  ];
  return patterns
    .flatMap((pattern) => [...prose.matchAll(pattern)].map((match) => ({ target: match[1]!.replace(/^<|>$/g, ''), line: lineAt(match.index!) })))
    .sort((a, b) => a.line - b.line);
}

/** Why a link from `page` (a path under root) does not resolve, or undefined when it does. */
function brokenReason(page: string, target: string, read: (file: string) => string | undefined): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // http(s), mailto: not fetched
  if (target.startsWith('//')) return undefined;
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const file =
    pathPart === ''
      ? page
      : relative(root, resolve(root, dirname(page), pathPart))
          .split(sep)
          .join('/');
  if (file.startsWith('..')) return `${target} leaves the repository`;
  if (read(file) === undefined && !existsSync(join(root, file))) return `${file} does not exist`;
  if (anchor === undefined || anchor === '' || !file.endsWith('.md')) return undefined;
  const text = read(file);
  if (text === undefined) return `${file} is not a readable page`;
  return headingAnchors(text).has(anchor) ? undefined : `${file} has no heading #${anchor}`;
}

function readPage(file: string): string | undefined {
  const path = join(root, file);
  return existsSync(path) && statSync(path).isFile() ? readFileSync(path, 'utf8') : undefined;
}

describe('links inside the docs', () => {
  const pages = documentedPages();

  it.each(pages)('%s: every relative link and #anchor resolves', (page) => {
    const text = readPage(page);
    expect(text, `${page} is missing`).toBeDefined();
    const broken = linksOf(text!).flatMap(({ target, line }) => {
      const reason = brokenReason(page, target, readPage);
      return reason ? [`${page}:${line} → ${target}: ${reason}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('the checker itself finds links where Markdown has them, and only there', () => {
    const sample = [
      '# Refunds and partial capture',
      'See [a page](other.md#its-heading) and ![a chart](chart.svg "title").',
      '`[not a link](code-span.md)`',
      '```sh',
      'echo "[not a link](fenced.md)"',
      '```',
      '<!-- [not a link](comment.md) -->',
      '[ref]: ./reference.md',
      '<a href="html.md">x</a>',
    ].join('\n');
    expect(linksOf(sample)).toEqual([
      { target: 'other.md#its-heading', line: 2 },
      { target: 'chart.svg', line: 2 },
      { target: './reference.md', line: 8 },
      { target: 'html.md', line: 9 },
    ]);
  });

  it('slugs headings as GitHub does: punctuation dropped, code kept, repeats numbered', () => {
    const anchors = headingAnchors(
      [
        '# Keys: rotation, and `AUTHCAP_CODEC_KEYS`',
        '## Tests',
        '## Tests',
        '## Try it against `npm start`',
        'Setext',
        '------',
        '```',
        '# not a heading',
        '```',
      ].join('\n'),
    );
    expect([...anchors]).toEqual(['keys-rotation-and-authcap_codec_keys', 'tests', 'tests-1', 'try-it-against-npm-start', 'setext']);
  });

  it('reports a missing page, a missing heading and a way out of the repository', () => {
    const pagesRead: Record<string, string> = { 'docs/a.md': '# Here\n', 'docs/b.md': '## Elsewhere\n' };
    const read = (file: string) => pagesRead[file];
    expect(brokenReason('docs/a.md', 'b.md#elsewhere', read)).toBeUndefined();
    expect(brokenReason('docs/a.md', '#here', read)).toBeUndefined();
    expect(brokenReason('docs/a.md', 'https://example.com/nowhere', read)).toBeUndefined();
    expect(brokenReason('docs/a.md', 'b.md#here', read)).toBe('docs/b.md has no heading #here');
    expect(brokenReason('docs/a.md', 'gone.md', read)).toBe('docs/gone.md does not exist');
    expect(brokenReason('docs/a.md', '../../../etc/passwd', read)).toBe('../../../etc/passwd leaves the repository');
  });
});
