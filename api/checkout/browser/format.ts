// Amounts, times and addresses as a payer reads them: the token's own decimals, the payer's own
// locale and time zone (Intl), addresses shortened but never altered.

/** Minor units → "12.50": the token's decimals, trailing zeros trimmed to at least two places. */
export function formatUnits(minor: string, decimals: number): string {
  const value = BigInt(minor);
  const base = 10n ** BigInt(decimals);
  const whole = value / base;
  let fraction = (value % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  const minimum = Math.min(2, decimals);
  fraction = fraction.padEnd(minimum, '0');
  const separator = new Intl.NumberFormat().formatToParts(1.5).find((part) => part.type === 'decimal')?.value ?? '.';
  const grouped = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 }).format(whole);
  return fraction ? `${grouped}${separator}${fraction}` : grouped;
}

const dateTime = () =>
  new Intl.DateTimeFormat(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    timeZoneName: 'short',
  });
const timeOnly = () => new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', timeZoneName: 'short' });

/** Unix seconds → "Nov 23, 2026, 1:25 PM GMT+1" in the payer's time zone. */
export function formatTime(unixSeconds: string | number): string {
  return dateTime().format(new Date(Number(unixSeconds) * 1000));
}

/**
 * The window as lines that never break inside: on one day ["Nov 23, 2026", "1:10 PM – 1:25 PM GMT+1"],
 * across days ["from Nov 23, 2026, 1:10 PM GMT+1", "until Nov 24, 2026, 1:10 PM GMT+1"].
 */
export function formatWindow(fromSeconds: string, untilSeconds: string): string[] {
  const from = new Date(Number(fromSeconds) * 1000);
  const until = new Date(Number(untilSeconds) * 1000);
  const day = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
  if (day.format(from) === day.format(until)) {
    const time = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
    return [day.format(from), `${time.format(from)} – ${timeOnly().format(until)}`];
  }
  return [`from ${dateTime().format(from)}`, `until ${dateTime().format(until)}`];
}

/** A deadline as lines that never break inside: ["until Dec 5, 2026", "1:24 PM GMT+1"]. */
export function formatUntil(unixSeconds: string | number): string[] {
  const at = new Date(Number(unixSeconds) * 1000);
  const day = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
  return [`until ${day.format(at)}`, timeOnly().format(at)];
}

/** "in 14 minutes", "in 2 hours" (rounded), for how long a window still runs. */
export function formatRemaining(seconds: number): string {
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  if (seconds < 90) return relative.format(Math.max(0, Math.round(seconds)), 'second');
  if (seconds < 90 * 60) return relative.format(Math.round(seconds / 60), 'minute');
  if (seconds < 36 * 3600) return relative.format(Math.round(seconds / 3600), 'hour');
  return relative.format(Math.round(seconds / 86400), 'day');
}

/** 0x1234…abcd: enough to recognise an address, with the full one kept beside it. */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

export function sameAddress(a: string | null | undefined, b: string | null | undefined): boolean {
  return Boolean(a && b && a.toLowerCase() === b.toLowerCase());
}
