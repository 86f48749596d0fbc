// The eth_getLogs filter, whole: parsed from untrusted input, and put on the wire exactly.
import { describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { AuthcapError } from '../../../domain/errors.js';
import { parseLogFilter, toRpcFilter } from '../../../activities/rpc/filter.js';

const A: Address = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const B: Address = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const t = (byte: string): Hex => `0x${byte.repeat(32)}`;
const [T0, T1, T2, T3] = [t('a0'), t('b1'), t('c2'), t('d3')];

/** parse, then the wire form. */
const wire = (input: unknown) => toRpcFilter(parseLogFilter(input));

function refusal(input: unknown): AuthcapError {
  try {
    parseLogFilter(input);
  } catch (err) {
    expect(err).toBeInstanceOf(AuthcapError);
    expect((err as AuthcapError).code).toBe('validation_error');
    return err as AuthcapError;
  }
  throw new Error('expected a validation_error');
}

describe('parseLogFilter + toRpcFilter', () => {
  it.each(['latest', 'pending', 'safe', 'finalized', 'earliest'])('fromBlock and toBlock as the tag %s', (tag) => {
    expect(wire({ fromBlock: tag, toBlock: tag })).toEqual({ fromBlock: tag, toBlock: tag });
  });

  it('a hex range, normalised to lower case; numbers and bigints become hex', () => {
    expect(wire({ fromBlock: '0x1B4', toBlock: '0x1c0' })).toEqual({ fromBlock: '0x1b4', toBlock: '0x1c0' });
    expect(wire({ fromBlock: 436, toBlock: 448n })).toEqual({ fromBlock: '0x1b4', toBlock: '0x1c0' });
    expect(wire({ fromBlock: 'earliest', toBlock: '0x0' })).toEqual({ fromBlock: 'earliest', toBlock: '0x0' });
  });

  it('either end alone', () => {
    expect(wire({ fromBlock: '0x10' })).toEqual({ fromBlock: '0x10' });
    expect(wire({ toBlock: 'finalized' })).toEqual({ toBlock: 'finalized' });
  });

  it('one address, or a list of them, as given', () => {
    expect(wire({ address: A })).toEqual({ address: A });
    expect(wire({ address: [A, B.toLowerCase()] })).toEqual({ address: [A, B.toLowerCase()] });
  });

  it('topics: single values, null wildcards and OR-arrays per position, up to four positions', () => {
    expect(wire({ topics: [T0] })).toEqual({ topics: [T0] });
    expect(wire({ topics: [null, T1] })).toEqual({ topics: [null, T1] });
    expect(wire({ topics: [[T0, T1], null, [T2]] })).toEqual({ topics: [[T0, T1], null, [T2]] });
    expect(wire({ topics: [T0, [T1, T2], null, T3] })).toEqual({ topics: [T0, [T1, T2], null, T3] });
    expect(wire({ topics: [T0.toUpperCase().replace('0X', '0x')] })).toEqual({ topics: [T0] });
  });

  it('every criterion together, in wire form', () => {
    expect(wire({ fromBlock: 1, toBlock: 'latest', address: [A], topics: [[T0, T1], null, T2] })).toEqual({
      fromBlock: '0x1',
      toBlock: 'latest',
      address: [A],
      topics: [[T0, T1], null, T2],
    });
  });

  it('blockHash replaces the range: a range beside it is dropped, even an invalid one', () => {
    expect(wire({ blockHash: T3 })).toEqual({ blockHash: T3 });
    expect(wire({ blockHash: T3, fromBlock: '0x1', toBlock: 'latest', address: A, topics: [T0] })).toEqual({
      blockHash: T3,
      address: A,
      topics: [T0],
    });
    expect(parseLogFilter({ blockHash: T3, fromBlock: 'not a block' })).toEqual({ blockHash: T3 });
  });

  it('toRpcFilter drops a range given beside blockHash when handed a LogFilter directly', () => {
    expect(toRpcFilter({ blockHash: T3, fromBlock: '0x1', toBlock: '0x2', address: A })).toEqual({ blockHash: T3, address: A });
    expect(toRpcFilter({ fromBlock: '0x1' })).toEqual({ fromBlock: '0x1' });
  });

  it('ignores unknown keys', () => {
    expect(wire({ fromBlock: 'latest', limit: 5 })).toEqual({ fromBlock: 'latest' });
  });
});

describe('parseLogFilter refusals', () => {
  it.each([
    ['an empty filter', {}],
    ['only unknown keys', { from: 'latest' }],
    ['null', null],
    ['a string', 'latest'],
    ['an array', [{ fromBlock: 'latest' }]],
  ])('%s', (_name, input) => {
    refusal(input);
  });

  it.each([
    ['fromBlock', { fromBlock: '0x01' }, /^fromBlock /],
    ['toBlock', { toBlock: 'Latest' }, /^toBlock /],
    ['a negative fromBlock', { fromBlock: -1 }, /^fromBlock /],
    ['blockHash', { blockHash: '0x1234' }, /^blockHash /],
    ['a single address', { address: '0x1234' }, /^address /],
    ['an address in a list', { address: [A, 'nope'] }, /^address\[1\] /],
    ['a topic', { topics: [T0, '0x12'] }, /^topics\[1\] /],
    ['a topic in an OR-array', { topics: [null, [T0, 7]] }, /^topics\[1\]\[1\] /],
    ['five topic positions', { topics: [T0, null, null, null, null] }, /^topics must be an array of at most 4/],
    ['topics not an array', { topics: T0 }, /^topics must be an array/],
  ])('names the bad field: %s', (_name, input, message) => {
    expect(refusal(input).message).toMatch(message);
  });
});
