// What the checkout pages tell a payer whose authorization is a hold (api/checkout/browser/holdWords.ts):
// before signing, that the money will be held for the merchant until the capture window ends and the
// rest comes back; while held, until when and what was captured; once over, what came back.
import { describe, expect, it } from 'vitest';
import {
  collectorNote,
  heldNow,
  holdExplain,
  holdPromise,
  isHold,
  placingHold,
  releasedWords,
  type HeldSession,
  type Words,
} from '../../../api/checkout/browser/holdWords.js';
import { formatTime } from '../../../api/checkout/browser/format.js';
import type { CheckoutHold, CheckoutSession } from '../../../api/checkout/sessionTypes.js';

const COLLECTOR = `0x${'e5'.repeat(20)}`;
const CAPTURE_BEFORE = '2000000000';

function session(state: string, hold: Partial<CheckoutHold> = {}): HeldSession {
  return {
    id: 'auth_1',
    orderId: 'order-1',
    state,
    payer: `0x${'c3'.repeat(20)}`,
    merchant: { address: `0x${'d4'.repeat(20)}`, name: 'Shop' },
    network: { id: 'eip155:31337', chainId: 31337, name: 'Dev chain', rpcUrls: [] },
    token: { address: `0x${'a1'.repeat(20)}`, symbol: 'USDC', decimals: 6, chainId: 31337 },
    amountMinor: '12500000',
    validAfter: '0',
    validBefore: '1999395200',
    now: 0,
    typedData: null,
    cancellationTypedData: null,
    capture: null,
    cancellation: null,
    updatedAt: null,
    lastError: null,
    hold: { amountHeldMinor: '0', capturedMinor: '0', captureBefore: CAPTURE_BEFORE, release: null, collector: COLLECTOR, ...hold },
  };
}

/** The words as the page shows them: emphasis dropped. */
const text = (words: Words): string => words.map((part) => (typeof part === 'string' ? part : part[0])).join('');
const until = formatTime(CAPTURE_BEFORE);

describe('the checkout page’s words for a hold', () => {
  it('tells a hold from a plain authorization', () => {
    expect(isHold(session('drafted'))).toBe(true);
    expect(isHold({ ...session('drafted'), hold: null } as CheckoutSession)).toBe(false);
  });

  it('before signing: what will be held, for whom, until when (the payer’s local time), and that the rest comes back', () => {
    expect(text(holdPromise(session('drafted')))).toBe(
      `12.50 USDC will be held for Shop until ${until}; they capture what you owe and the rest comes back to you.`,
    );
    const explain = holdExplain(session('drafted')).map(text);
    expect(explain[0]).toBe(
      `Signing places a hold: 12.50 USDC will be held for Shop until ${until}; they capture what you owe and the rest comes back to you.`,
    );
    expect(explain.join(' ')).toContain('leaves your wallet as soon as you sign');
    expect(explain.join(' ')).toContain('cannot be canceled once it is placed');
    // The wallet names the escrow's collector as the recipient: the page says so.
    expect(explain).toContain(text(collectorNote(session('drafted'))));
    expect(text(collectorNote(session('drafted')))).toContain('0xe5e5…e5e5');
  });

  it('while the hold is placed', () => {
    expect(text(placingHold(session('holding')))).toBe('12.50 USDC is moving from your wallet into escrow for Shop. This takes a few seconds.');
  });

  it('held: until when; then what was captured so far and what is still held', () => {
    const placed = session('held', { amountHeldMinor: '12500000' });
    expect(heldNow(placed).map(text)).toEqual([`Your 12.50 USDC is held until ${until}.`, 'Shop captures what you owe; the rest comes back to you.']);
    const part = session('held', { amountHeldMinor: '12500000', capturedMinor: '3000000' });
    expect(heldNow(part).map(text)[1]).toBe('Shop has captured 3.00 USDC so far; 9.50 USDC is still held. What they do not capture comes back to you.');
  });

  it('once over: what came back (all of it when nothing was captured); nothing before', () => {
    const release = { kind: 'void' as const, amountMinor: '4500000', transactionHash: null, at: '2026-01-01T00:00:00.000Z' };
    expect(releasedWords(session('held', { amountHeldMinor: '12500000' }))).toBeNull();
    expect(text(releasedWords(session('captured', { amountHeldMinor: '10000000', capturedMinor: '5500000', release }))!)).toBe(
      'The other 4.50 USDC held came back to your account.',
    );
    const all = { ...release, amountMinor: '10000000' };
    expect(text(releasedWords(session('voided', { amountHeldMinor: '10000000', release: all }))!)).toBe('All 10.00 USDC held came back to your account.');
    expect(text(releasedWords(session('expired', { amountHeldMinor: '10000000', release: { ...all, kind: 'reclaim' } }))!)).toContain('you reclaimed it');
  });
});
