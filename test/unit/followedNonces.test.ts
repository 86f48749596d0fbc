import { describe, expect, it } from 'vitest';
import { FollowedNonces } from '../../activities/followedNonces.js';

const payer = '0xAbCd000000000000000000000000000000000001';
const nonce = `0x${'ab'.repeat(32)}`;

describe('FollowedNonces', () => {
  it('holds a pair while any of its followers runs, whatever the case of the hex', () => {
    const followed = new FollowedNonces();
    const first = followed.follow(payer, nonce);
    const second = followed.follow(payer.toLowerCase(), nonce.toUpperCase().replace('0X', '0x'));
    expect(followed.has(payer.toLowerCase(), nonce)).toBe(true);
    first();
    first();
    expect(followed.has(payer, nonce)).toBe(true);
    second();
    expect(followed.has(payer, nonce)).toBe(false);
    expect(followed.size).toBe(0);
  });
});
