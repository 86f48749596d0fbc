// Visibility queries are text: values go in as string literals, quoted and escaped here only.

/** A string literal for a visibility query. */
export function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
