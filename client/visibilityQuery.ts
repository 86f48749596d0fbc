// Visibility queries are text: values go in as string literals, checked and quoted here only.
//
// Why some characters can never be searched for: Temporal's query parser decodes a literal
// correctly (`\"`, `\\`, doubled quotes), but the server then writes the value out again for its
// store, and no backend gets it back verbatim (server 1.29, common/persistence/visibility/store):
// - SQL stores (SQLite in the dev server, PostgreSQL, MySQL) re-escape `"` as `\"` and `\` as `\\`,
//   which SQLite and PostgreSQL read as two characters (the order `q"1` is searched as `q\"1`),
//   and `strings.Trim(value, "'")` drops every leading and trailing `'` (`'ab'` is searched as `ab`);
// - Elasticsearch re-encodes the value MySQL-style (`'` → `\'`, `"` → `\"`, `\` → `\\`, control
//   characters as `\n`, `\Z`, …) and matches the escaped text as a term.
// So a value holding a quote, a backslash or a control character matches another order or none.
// A lone UTF-16 surrogate cannot cross gRPC as UTF-8 at all. Everything else (backticks, `%`, `_`
// under `=`, any well-formed non-ASCII text) reaches every store unchanged.

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what this refuses
const UNSEARCHABLE = /['"\\\x00-\x1F\x7F]/;
// With the u flag a surrogate pair is one code point, so this matches lone halves only.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
export const QUOTES_MESSAGE = `must not contain quotes (' or ") or backslashes: Temporal visibility cannot search for them exactly`;

/** Why a value cannot be matched exactly by a visibility query, or undefined when it can. */
export function unsearchable(value: string): string | undefined {
  if (LONE_SURROGATE.test(value)) return 'must be well-formed Unicode (no lone surrogates)';
  const found = UNSEARCHABLE.exec(value)?.[0];
  if (found === undefined) return undefined;
  return found < ' ' || found === '\x7F' ? 'must not contain control characters' : QUOTES_MESSAGE;
}

/** A string literal for a visibility query. Callers check values first; this refuses what would not match. */
export function quote(value: string): string {
  const problem = unsearchable(value);
  if (problem) throw new Error(`a visibility query value ${problem}: ${JSON.stringify(value)}`);
  return `"${value}"`;
}
