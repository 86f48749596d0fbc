// Block selectors, addresses and topics are checked before any call: the wire form out, or a
// validation_error naming the field.
import { describe, expect, it } from 'vitest';
import { AuthcapError } from '../../../domain/errors.js';
import { blockTags, isNumberSelector, parseBlockSelector, parseRpcAddress, parseTopic } from '../../../activities/rpc/selectors.js';

function refusal(fn: () => unknown): AuthcapError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AuthcapError);
    expect((err as AuthcapError).code).toBe('validation_error');
    return err as AuthcapError;
  }
  throw new Error('expected a validation_error, got a value');
}

describe('parseBlockSelector', () => {
  it('knows exactly the five tags', () => {
    expect([...blockTags]).toEqual(['latest', 'pending', 'safe', 'finalized', 'earliest']);
  });

  it.each(['latest', 'pending', 'safe', 'finalized', 'earliest'])('passes the tag %s through', (tag) => {
    expect(parseBlockSelector(tag)).toBe(tag);
    expect(isNumberSelector(parseBlockSelector(tag))).toBe(false);
  });

  it.each([
    ['0x0', '0x0'],
    ['0x1', '0x1'],
    ['0x1b4', '0x1b4'],
    ['0x1B4', '0x1b4'],
    ['0xABCDEF', '0xabcdef'],
    ['0xfffffffffffffffffff', '0xfffffffffffffffffff'],
  ])('accepts hex %s as %s', (input, wire) => {
    expect(parseBlockSelector(input)).toBe(wire);
    expect(isNumberSelector(parseBlockSelector(input))).toBe(true);
  });

  it.each([
    [0, '0x0'],
    [436, '0x1b4'],
    [Number.MAX_SAFE_INTEGER, '0x1fffffffffffff'],
    [0n, '0x0'],
    [436n, '0x1b4'],
    [2n ** 64n, '0x10000000000000000'],
  ])('turns the number %s into %s', (input, wire) => {
    expect(parseBlockSelector(input)).toBe(wire);
  });

  it.each([
    ['a negative number', -1],
    ['a fraction', 1.5],
    ['an unsafe integer', Number.MAX_SAFE_INTEGER + 1],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['0x with no digits', '0x'],
    ['a leading zero (0x01)', '0x01'],
    ['a zero padded zero (0x00)', '0x00'],
    ['an upper-case prefix (0X1b4)', '0X1b4'],
    ['a non-hex digit', '0x1g'],
    ['a decimal string', '12'],
    ['a negative hex string', '-0x1'],
    ['a tag with a suffix', 'pendingx'],
    ['a tag in another case', 'Latest'],
    ['a tag with whitespace', ' latest'],
    ['the empty string', ''],
    ['null', null],
    ['undefined', undefined],
    ['an object', {}],
    ['an array', ['latest']],
    ['a boolean', true],
  ])('refuses %s', (_name, input) => {
    const err = refusal(() => parseBlockSelector(input));
    expect(err.message).toMatch(/^block must be a hex block number/);
  });

  it('names the field in the message', () => {
    expect(refusal(() => parseBlockSelector('nope', 'fromBlock')).message).toMatch(/^fromBlock /);
  });

  // BUG: bigints skip the `>= 0` check numbers get, so -1n becomes the invalid wire value "0x-1".
  it('refuses a negative bigint', () => {
    refusal(() => parseBlockSelector(-1n));
  });
});

describe('parseRpcAddress', () => {
  const checksummed = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

  it.each([checksummed, checksummed.toLowerCase(), `0x${checksummed.slice(2).toUpperCase()}`, '0x0000000000000000000000000000000000000000'])(
    'accepts %s as given',
    (address) => {
      expect(parseRpcAddress(address)).toBe(address);
    },
  );

  it.each([
    ['too short', '0x123'],
    ['too long', `${checksummed}00`],
    ['no 0x prefix', checksummed.slice(2)],
    ['a non-hex digit', `0x${'g'.repeat(40)}`],
    ['a 32-byte topic', `0x${'0'.repeat(64)}`],
    ['the empty string', ''],
    ['null', null],
    ['a number', 42],
    ['an object', {}],
  ])('refuses %s', (_name, input) => {
    expect(refusal(() => parseRpcAddress(input)).message).toMatch(/^address must be a 20-byte hex address/);
  });

  it('names the field in the message', () => {
    expect(refusal(() => parseRpcAddress('0x1', 'address[2]')).message).toMatch(/^address\[2\] /);
  });
});

describe('parseTopic', () => {
  const topic = `0x${'ab'.repeat(32)}`;

  it('accepts 0x + 64 hex digits and lower-cases them', () => {
    expect(parseTopic(topic, 't')).toBe(topic);
    expect(parseTopic(topic.toUpperCase().replace('0X', '0x'), 't')).toBe(topic);
    expect(parseTopic(`0x${'0'.repeat(64)}`, 't')).toBe(`0x${'0'.repeat(64)}`);
  });

  it.each([
    ['63 digits', `0x${'a'.repeat(63)}`],
    ['65 digits', `0x${'a'.repeat(65)}`],
    ['an address', '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'],
    ['a non-hex digit', `0x${'z'.repeat(64)}`],
    ['an upper-case prefix', `0X${'a'.repeat(64)}`],
    ['no prefix', 'ab'.repeat(33)],
    ['null', null],
    ['a number', 1],
    ['an array', [topic]],
  ])('refuses %s', (_name, input) => {
    expect(refusal(() => parseTopic(input, 'topics[1]')).message).toMatch(/^topics\[1\] must be a 32-byte topic/);
  });
});
