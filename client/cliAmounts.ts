// Amounts as people read them in the CLI's tables: "12.50 USDC", in the token's own units. The
// JSON forms (--json) keep the API's decimal strings untouched; this is for eyes only.
import type { Authorizations } from './authorizations/resource.js';
import type { AuthorizationSummary } from './authorizations/types.js';

export interface TokenLabel {
  symbol: string;
}

/** "12.5" → "12.50 USDC": at least two decimals, as money is written; never rounds ("0.000001" stays). */
export function tokenUnits(amount: string | null | undefined, token: TokenLabel | null | undefined): string | undefined {
  if (amount === null || amount === undefined) return undefined;
  if (!token) return amount;
  const [whole, fraction = ''] = amount.split('.');
  return `${whole}.${fraction.padEnd(2, '0')} ${token.symbol}`;
}

/** Minor units → "12.50 USDC", given the token's decimals. */
export function minorToTokenUnits(minor: string, token: TokenLabel & { decimals: number }): string {
  const digits = minor.replace(/^-/, '').padStart(token.decimals + 1, '0');
  const whole = digits.slice(0, digits.length - token.decimals);
  const fraction = digits.slice(digits.length - token.decimals).replace(/0+$/, '');
  return tokenUnits(`${minor.startsWith('-') ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`, token)!;
}

/**
 * A list page carries each row's token address, not its symbol or decimals: one authorization per
 * distinct token on the page is read for them (a page rarely holds more than a few tokens).
 */
export async function listAmounts(authorizations: Pick<Authorizations, 'get'>, rows: AuthorizationSummary[]): Promise<Map<string, string>> {
  const tokens = new Map<string, Promise<(TokenLabel & { decimals: number }) | undefined>>();
  const out = new Map<string, string>();
  for (const row of rows) {
    if (row.amountMinor === null) continue;
    const key = `${row.network ?? ''}|${row.token ?? ''}`;
    if (!tokens.has(key)) {
      tokens.set(
        key,
        authorizations.get(row.id).then(
          (a) => a.token,
          () => undefined,
        ),
      );
    }
    const token = await tokens.get(key);
    out.set(row.id, token ? minorToTokenUnits(row.amountMinor, token) : `${row.amountMinor} (minor units)`);
  }
  return out;
}
