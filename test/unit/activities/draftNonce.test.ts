// Drafted nonces carry a keyed tag the pre-signed path recognises: under any key of the rotation,
// never under another key, and a random nonce practically never bears one.
import { randomBytes } from 'node:crypto';
import { toHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { draftNonce, isDraftNonce } from '../../../activities/draftNonce.js';

describe('draft nonces', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);

  it('are 32 bytes, different each time, and recognised under the key that tagged them', () => {
    const a = draftNonce([k1]);
    const b = draftNonce([k1]);
    expect(a).toMatch(/^0x[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(isDraftNonce([k1], a)).toBe(true);
  });

  it('are recognised after a rotation (the old key kept), never under another key', () => {
    const a = draftNonce([k1]);
    expect(isDraftNonce([k2, k1], a)).toBe(true);
    expect(isDraftNonce([k2], a)).toBe(false);
  });

  it('are not confused with random nonces or malformed ones', () => {
    for (let i = 0; i < 1_000; i += 1) expect(isDraftNonce([k1], toHex(randomBytes(32)))).toBe(false);
    expect(isDraftNonce([k1], '0x1234')).toBe(false);
  });
});
