// The caps on open long polls (api/waitLimits.ts): per key and per process, 429 `rate_limited` past
// either, with a Retry-After that names when the soonest wait counted against it ends.
import { describe, expect, it } from 'vitest';
import { WaitLimits } from '../../../api/waitLimits.js';
import { readSettings } from '../../../runtime/settings/read.js';

describe('WaitLimits', () => {
  it("refuses a key's wait past its cap, with the seconds until its soonest open wait ends", () => {
    const limits = new WaitLimits({ perKey: 2, perProcess: 10 });
    const now = 1_000_000;
    limits.hold('key-a', 30, now);
    limits.hold('key-a', 10, now);
    let refused: unknown;
    try {
      limits.hold('key-a', 30, now + 2_500);
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({ code: 'rate_limited', details: { retryAfterSeconds: 8 } });
    expect((refused as Error).message).toMatch(/this API key already has 2 waits open \(at most 2\)/);
    // Another key is not held back by this one.
    expect(() => limits.hold('key-b', 30, now)).not.toThrow();
  });

  it("refuses past the process's cap whichever key asks, and a released slot is free again", () => {
    const limits = new WaitLimits({ perKey: 5, perProcess: 3 });
    const releases = ['a', 'b', 'c'].map((key) => limits.hold(key, 30));
    expect(() => limits.hold('d', 30)).toThrow(/this API process already has 3 waits open \(at most 3\)/);
    releases[0]!();
    expect(limits.open()).toBe(2);
    expect(() => limits.hold('d', 30)).not.toThrow();
    expect(limits.open('d')).toBe(1);
    expect(limits.open('a')).toBe(0);
  });

  it("takes the API's settings (read at its start, with defaults), which refuse a malformed one", () => {
    const fromSettings = (env: Record<string, string>) => {
      const settings = readSettings('api', env);
      return new WaitLimits({ perKey: settings.AUTHCAP_MAX_WAITS_PER_KEY, perProcess: settings.AUTHCAP_MAX_WAITS });
    };
    expect(new WaitLimits().settings).toEqual({ perKey: 100, perProcess: 1_000 });
    expect(fromSettings({}).settings).toEqual({ perKey: 100, perProcess: 1_000 });
    expect(fromSettings({ AUTHCAP_MAX_WAITS_PER_KEY: '5', AUTHCAP_MAX_WAITS: '50' }).settings).toEqual({ perKey: 5, perProcess: 50 });
    expect(() => fromSettings({ AUTHCAP_MAX_WAITS: '0' })).toThrow(/AUTHCAP_MAX_WAITS must be a whole number/);
    expect(() => fromSettings({ AUTHCAP_MAX_WAITS_PER_KEY: 'lots' })).toThrow(/AUTHCAP_MAX_WAITS_PER_KEY/);
  });
});
