// Amounts are bigint in the token's smallest unit end to end; decimal strings only at the edges.
import { AuthcapError } from './errors.js';

/** The spec fixes the token's decimals for `value` at 6 (USDC); other tokens say theirs. */
export const TOKEN_DECIMALS = 6;

/** The decimals of an authorization's (or refund's) token: its chain's, or the spec's 6 when it names none. */
export function decimalsOf(chain: { decimals: number } | null | undefined): number {
  return chain?.decimals ?? TOKEN_DECIMALS;
}

const UINT256_MAX = (1n << 256n) - 1n;
const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/**
 * Parses a positive decimal token amount ("12.5") into minor units (12500000n).
 * Rejects more than 6 fraction digits instead of rounding: a payer signs an exact amount.
 */
export function parseAmount(input: unknown, decimals = TOKEN_DECIMALS): bigint {
  const text = typeof input === 'number' && Number.isFinite(input) ? numberToPlainString(input) : input;
  if (typeof text !== 'string' || text.trim() === '') {
    throw new AuthcapError('validation_error', 'amount is required, as a decimal string such as "12.50"');
  }
  const trimmed = text.trim();
  if (trimmed.startsWith('-')) throw new AuthcapError('validation_error', `amount must be positive, got "${trimmed}"`);
  const match = DECIMAL.exec(trimmed);
  if (!match) throw new AuthcapError('validation_error', `amount "${trimmed}" is not a decimal number such as "12.50"`);
  const [, whole = '0', fraction = ''] = match;
  if (fraction.length > decimals) {
    throw new AuthcapError('validation_error', `amount "${trimmed}" has ${fraction.length} decimal places; the token has ${decimals}`);
  }
  const minor = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
  if (minor === 0n) throw new AuthcapError('validation_error', 'amount must be greater than zero');
  if (minor > UINT256_MAX) throw new AuthcapError('validation_error', 'amount does not fit in uint256');
  return minor;
}

/** Minor units → decimal token amount, without trailing zeros ("12.5"). */
export function formatAmount(minor: bigint, decimals = TOKEN_DECIMALS): string {
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const fraction = (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Parses a uint256 given as a decimal string (the API's wire form of minor units and timestamps). */
export function parseUint(input: unknown, field: string): bigint {
  if (typeof input === 'number' && Number.isSafeInteger(input) && input >= 0) return BigInt(input);
  if (typeof input !== 'string' || !/^(0|[1-9]\d*)$/.test(input)) {
    throw new AuthcapError('validation_error', `${field} must be a non-negative integer as a decimal string`);
  }
  const value = BigInt(input);
  if (value > UINT256_MAX) throw new AuthcapError('validation_error', `${field} does not fit in uint256`);
  return value;
}

function numberToPlainString(n: number): string {
  // 1e-7 would print in exponent form; toFixed(20) then trimming keeps the digits a caller typed.
  const text = String(n);
  return /e/i.test(text) ? n.toFixed(20).replace(/\.?0+$/, '') : text;
}
