import { describe, expect, it } from 'vitest';
import { FollowedNonces, LINGER_MS } from '../../../activities/followedNonces.js';

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

  it('keeps a pair whose follower reached an outcome for a while (the watcher sees its log just after), then forgets it', () => {
    let now = 1_000;
    const followed = new FollowedNonces(() => now);
    followed.follow(payer, nonce)(true);
    expect(followed.has(payer, nonce)).toBe(true);
    now += LINGER_MS + 1;
    expect(followed.has(payer, nonce)).toBe(false);
    // A follower that failed leaves the pair to the watcher at once.
    followed.follow(payer, nonce)(false);
    expect(followed.has(payer, nonce)).toBe(false);
    // Old entries go as new ones come: the map does not grow with every capture ever followed.
    for (let i = 0; i < 100; i++) followed.follow(payer, `0x${i.toString(16).padStart(64, '0')}`)(true);
    now += LINGER_MS + 1;
    followed.follow(payer, nonce)(true);
    expect(followed.size).toBe(1);
  });
});
