// What the checkout pages tell a payer whose authorization is a hold (docs/holds.md): signing moves the
// money into an escrow at once, the merchant captures what is owed in parts until the capture window
// ends, and the rest comes back. Pure: words only (strings, [emphasised] parts), no DOM, so it is
// tested in Node; the pages render them with para().
import type { CheckoutHold, CheckoutSession } from '../sessionTypes.js';
import { formatTime, formatUnits, shortAddress } from './format.js';

/** A paragraph's parts: text, and [text] to emphasise. */
export type Words = (string | [string])[];

export type HeldSession = CheckoutSession & { hold: CheckoutHold };

export const isHold = (s: CheckoutSession): s is HeldSession => s.hold !== null;

const units = (s: CheckoutSession, minor: string): string => `${formatUnits(minor, s.token.decimals)} ${s.token.symbol}`.trim();

/** What is (or will be) held: what the escrow says once the hold is placed, what is signed for before. */
export function heldAmount(s: HeldSession): string {
  if (s.hold.amountHeldMinor !== '0') return units(s, s.hold.amountHeldMinor);
  return s.amountMinor === null ? '—' : units(s, s.amountMinor);
}

/** The end of the capture window, in the payer's time zone. */
export const heldUntil = (s: HeldSession): string => formatTime(s.hold.captureBefore);

/** Before signing: "12.50 USDC will be held for Shop until …; they capture what you owe and the rest comes back to you." */
export function holdPromise(s: HeldSession): Words {
  return [[heldAmount(s)], ' will be held for ', [s.merchant.name], ' until ', [heldUntil(s)], '; they capture what you owe and the rest comes back to you.'];
}

/** What signing a hold means, in plain words (the page's explanation, before signing). */
export function holdExplain(s: HeldSession): Words[] {
  return [
    ['Signing places a hold: ', ...holdPromise(s)],
    [
      'The money leaves your wallet as soon as you sign and waits in an escrow (a contract on the chain), where only ',
      [s.merchant.name],
      ' can capture it, and never more than this amount.',
    ],
    ...(s.hold.collector ? [collectorNote(s)] : []),
    ['A hold cannot be canceled once it is placed. Whatever is not captured by ', [heldUntil(s)], ' comes back to your wallet by itself.'],
  ];
}

/** The wallet names the escrow's collector as the recipient, not the merchant: say so before the payer wonders. */
export function collectorNote(s: HeldSession): Words {
  const collector = s.hold.collector;
  return collector
    ? ['Your wallet shows the escrow’s payment collector ', [shortAddress(collector)], ' as the recipient: it holds the money for ', [s.merchant.name], '.']
    : [];
}

/** While the signature is sent and the hold placed. */
export function placingHold(s: HeldSession): Words {
  return [[heldAmount(s)], ' is moving from your wallet into escrow for ', [s.merchant.name], '. This takes a few seconds.'];
}

/** The hold is placed: until when, what was captured so far, what comes back. */
export function heldNow(s: HeldSession): Words[] {
  const captured = BigInt(s.hold.capturedMinor);
  const lines: Words[] = [['Your ', [heldAmount(s)], ' is held until ', [heldUntil(s)], '.']];
  if (captured > 0n) {
    const left = BigInt(s.hold.amountHeldMinor) - captured;
    lines.push([
      [s.merchant.name],
      ' has captured ',
      [units(s, captured.toString())],
      ' so far; ',
      [units(s, (left > 0n ? left : 0n).toString())],
      ' is still held. What they do not capture comes back to you.',
    ]);
  } else {
    lines.push([[s.merchant.name], ' captures what you owe; the rest comes back to you.']);
  }
  return lines;
}

/** What came back once the hold ended, when something did. */
export function releasedWords(s: HeldSession): Words | null {
  const release = s.hold.release;
  if (!release || release.amountMinor === '0') return null;
  const amount = units(s, release.amountMinor);
  const rest = BigInt(s.hold.capturedMinor) > 0n ? 'The other ' : 'All ';
  return release.kind === 'reclaim'
    ? [rest, [amount], ' held went back to your account: you reclaimed it from the escrow.']
    : [rest, [amount], ' held came back to your account.'];
}

/** What the merchant collected of a hold once it ended. */
export const capturedAmount = (s: HeldSession): string => units(s, s.hold.capturedMinor);
