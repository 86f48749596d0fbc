// Idempotency fingerprints compare JSON values, not the order keys were sent in (finding 7c: the
// same body with its keys reordered under the same Idempotency-Key was 409 idempotency_key_reused).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { FileIdempotencyStore, canonicalJson, fingerprintOf } from '../../../api/idempotency.js';

const path = '/v1/authorizations';

/** The same value with every object's keys in another order (reversed), recursively. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value !== null && typeof value === 'object') {
    return JSON.parse(
      `{${Object.keys(value)
        .reverse()
        .map((k) => `${JSON.stringify(k)}:${JSON.stringify(reordered((value as Record<string, unknown>)[k]))}`)
        .join(',')}}`,
    );
  }
  return value;
}

describe('canonical fingerprints', () => {
  it('the same body with keys in another order, at any depth, has the same fingerprint', () => {
    const a = JSON.parse('{"orderId":"o-1","payer":"0xabc","amount":"1.5","meta":{"x":1,"y":[{"b":2,"a":1}]}}');
    const b = JSON.parse('{"meta":{"y":[{"a":1,"b":2}],"x":1},"amount":"1.5","payer":"0xabc","orderId":"o-1"}');
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(b));
    expect(fingerprintOf('POST', path, a)).toBe(fingerprintOf('POST', path, b));
  });

  it('anything that changes the value changes the fingerprint: array order, types, values, method, path', () => {
    const base = fingerprintOf('POST', path, { a: [1, 2], b: '1' });
    expect(fingerprintOf('POST', path, { a: [2, 1], b: '1' })).not.toBe(base);
    expect(fingerprintOf('POST', path, { a: [1, 2], b: 1 })).not.toBe(base);
    expect(fingerprintOf('POST', path, { a: [1, 2], b: '2' })).not.toBe(base);
    expect(fingerprintOf('POST', path, { a: [1, 2], b: '1', c: null })).not.toBe(base);
    expect(fingerprintOf('POST', `${path}/x`, { a: [1, 2], b: '1' })).not.toBe(base);
    expect(fingerprintOf('PUT', path, { a: [1, 2], b: '1' })).not.toBe(base);
    // A key spelled to look like the separator cannot make two bodies collide.
    expect(fingerprintOf('POST', path, { 'a":1,"b': 2 })).not.toBe(fingerprintOf('POST', path, { a: 1, b: 2 }));
  });

  it('is valid JSON of the same value, for any JSON (property-based), and ignores key order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(reordered(value))).toBe(text);
      }),
      { numRuns: 500, seed: 7 },
    );
  });

  it('keeps a "__proto__" key as data, and survives a body nested 8,000 deep', () => {
    const withProto = JSON.parse('{"b":2,"__proto__":{"polluted":true}}');
    expect(canonicalJson(withProto)).toBe('{"__proto__":{"polluted":true},"b":2}');
    expect(canonicalJson(JSON.parse('{"b":2}'))).toBe('{"b":2}');
    const deep = JSON.parse(`${'['.repeat(8000)}${']'.repeat(8000)}`);
    expect(canonicalJson(deep)).toBe(`${'['.repeat(8000)}${']'.repeat(8000)}`);
  });
});

describe('the idempotency store with canonical fingerprints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'authcap-idem-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const first = JSON.parse('{"orderId":"o-2","payer":"0xabc","amount":"2"}');
  const shuffled = JSON.parse('{"amount":"2","orderId":"o-2","payer":"0xabc"}');

  it('replays the first answer to the same request with its keys reordered', () => {
    const store = new FileIdempotencyStore(dir);
    const claim = store.claim('caller', 'k-reorder', fingerprintOf('POST', path, first));
    expect(claim.kind).toBe('new');
    if (claim.kind === 'new') claim.complete({ status: 201, body: { id: 'auth_1' } });
    const again = store.claim('caller', 'k-reorder', fingerprintOf('POST', path, shuffled));
    expect(again).toEqual({ kind: 'replay', response: { status: 201, body: { id: 'auth_1' } } });
    const other = { ...shuffled, amount: '3' };
    expect(store.claim('caller', 'k-reorder', fingerprintOf('POST', path, other)).kind).toBe('reused');
  });
});
