// Pure domain code: amounts, addresses and hex inputs, token revert reasons, error codes.
import {
  concatHex,
  hexToBigInt,
  keccak256,
  numberToHex,
  parseSignature as parseSignatureParts,
  recoverAddress,
  serializeCompactSignature,
  signatureToCompactSignature,
  sliceHex,
  toHex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, it, expect } from 'vitest';
import { TOKEN_DECIMALS, formatAmount, parseAmount, parseUint } from '../../../domain/amount.js';
import { parseAddress, parseBytes32, parseSignature, sameAddress } from '../../../domain/address.js';
import { codeForRevertReason } from '../../../domain/revertReasons.js';
import { AuthcapError, errorCodes, httpStatusFor, isErrorCode, type ErrorCode } from '../../../domain/errors.js';

const UINT256_MAX = (1n << 256n) - 1n;

/** Runs fn, expecting an AuthcapError with code validation_error; returns it for further checks. */
function validationError(fn: () => unknown): AuthcapError {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, 'expected a validation_error to be thrown').toBeInstanceOf(AuthcapError);
  expect((thrown as AuthcapError).code).toBe('validation_error');
  return thrown as AuthcapError;
}

describe('parseAmount', () => {
  it('has 6 token decimals', () => {
    expect(TOKEN_DECIMALS).toBe(6);
  });

  it.each([
    ['12.5', 12_500_000n],
    ['0.000001', 1n],
    ['1', 1_000_000n],
    ['1.123456', 1_123_456n],
    ['0.5', 500_000n],
    ['10', 10_000_000n],
    ['12.500000', 12_500_000n],
    [' 12.5 ', 12_500_000n],
  ])('parses %j → %s minor units', (text, minor) => {
    expect(parseAmount(text)).toBe(minor);
  });

  it.each([
    [12.5, 12_500_000n],
    [1, 1_000_000n],
    [0.000001, 1n],
    [250, 250_000_000n],
  ])('accepts the number %s → %s', (n, minor) => {
    expect(parseAmount(n)).toBe(minor);
  });

  it('rejects 7 decimals instead of rounding, naming the decimals in the message', () => {
    const err = validationError(() => parseAmount('1.1234567'));
    expect(err.message).toContain('7 decimal places');
    expect(err.message).toContain('6');
  });

  it('rejects numbers whose exact value has too many decimals (no silent rounding)', () => {
    validationError(() => parseAmount(1e-7));
    validationError(() => parseAmount(0.1 + 0.2));
  });

  it.each(['0', '0.0', '0.000000', '000'])('rejects the zero amount %j', (text) => {
    validationError(() => parseAmount(text));
  });

  it('says why zero is refused', () => {
    expect(validationError(() => parseAmount('0.0')).message).toMatch(/greater than zero/);
  });

  it.each(['-1', '-0.5', ' -1'])('rejects the negative amount %j', (text) => {
    expect(validationError(() => parseAmount(text)).message).toMatch(/positive/);
  });

  it.each(['', ' ', '\t\n'])('rejects the blank amount %j as required', (text) => {
    expect(validationError(() => parseAmount(text)).message).toMatch(/required/);
  });

  it.each(['abc', '1e3', '1E3', '01', '01.5', '00.5', '.5', '1.', '1,5', '+1', '0x10', '1 000', '12.5 USDC', 'Infinity', 'NaN'])(
    'rejects the malformed amount %j',
    (text) => {
      validationError(() => parseAmount(text));
    },
  );

  it.each([null, undefined, {}, [], true, Number.NaN, Number.POSITIVE_INFINITY, -1, 0])('rejects the non-amount %j', (value) => {
    validationError(() => parseAmount(value));
  });

  it('accepts exactly uint256 max and rejects one unit more', () => {
    expect(parseAmount(formatAmount(UINT256_MAX))).toBe(UINT256_MAX);
    expect(validationError(() => parseAmount(formatAmount(UINT256_MAX + 1n))).message).toMatch(/uint256/);
    validationError(() => parseAmount(`1${'0'.repeat(80)}`));
  });

  it('honours a different number of decimals', () => {
    expect(parseAmount('1.5', 2)).toBe(150n);
    expect(parseAmount('7', 0)).toBe(7n);
    validationError(() => parseAmount('1.234', 2));
    validationError(() => parseAmount('1.5', 0));
  });
});

describe('formatAmount', () => {
  it.each([
    [12_500_000n, '12.5'],
    [1n, '0.000001'],
    [1_000_000n, '1'],
    [0n, '0'],
    [1_123_456n, '1.123456'],
    [100_000_000n, '100'],
    [-1_500_000n, '-1.5'],
  ])('formats %s as %j', (minor, text) => {
    expect(formatAmount(minor)).toBe(text);
  });

  it('round-trips with parseAmount', () => {
    for (const minor of [1n, 9n, 10n, 999_999n, 1_000_000n, 1_000_001n, 12_500_000n, 123_456_789_012n, UINT256_MAX]) {
      expect(parseAmount(formatAmount(minor))).toBe(minor);
    }
    for (const text of ['12.5', '0.000001', '1', '1.123456', '1000000.01']) {
      expect(formatAmount(parseAmount(text))).toBe(text);
    }
  });

  it('honours a different number of decimals', () => {
    expect(formatAmount(150n, 2)).toBe('1.5');
    expect(formatAmount(7n, 0)).toBe('7');
  });
});

describe('parseUint', () => {
  it.each([
    ['0', 0n],
    ['123', 123n],
    [42, 42n],
    [0, 0n],
    [UINT256_MAX.toString(), UINT256_MAX],
  ])('parses %j → %s', (value, expected) => {
    expect(parseUint(value, 'validBefore')).toBe(expected);
  });

  it.each(['-1', '01', '1.5', '', ' 1', '1e3', '0x10', 'abc', 1.5, -1, Number.MAX_SAFE_INTEGER + 2, null, undefined, {}])(
    'rejects %j, naming the field',
    (value) => {
      expect(validationError(() => parseUint(value, 'validBefore')).message).toContain('validBefore');
    },
  );

  it('rejects values above uint256 max', () => {
    expect(validationError(() => parseUint((UINT256_MAX + 1n).toString(), 'value')).message).toMatch(/uint256/);
  });
});

describe('parseAddress', () => {
  const lower = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
  const checksummed = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

  it('checksums lower-case and upper-case input', () => {
    expect(parseAddress(lower, 'payer')).toBe(checksummed);
    expect(parseAddress(`0x${lower.slice(2).toUpperCase()}`, 'payer')).toBe(checksummed);
    expect(parseAddress(checksummed, 'payer')).toBe(checksummed);
  });

  it.each([
    ['too short', lower.slice(0, -1)],
    ['too long', `${lower}0`],
    ['non-hex', `0x${'g'.repeat(40)}`],
    ['no 0x', lower.slice(2)],
    ['upper-case 0X', `0X${lower.slice(2)}`],
    ['empty', ''],
    ['padded', ` ${lower}`],
    ['a 32-byte value', `0x${'ab'.repeat(32)}`],
  ])('rejects an address that is %s, naming the field', (_why, value) => {
    expect(validationError(() => parseAddress(value, 'payer')).message).toContain('payer');
  });

  it.each([null, undefined, 123, {}])('rejects the non-string %j', (value) => {
    validationError(() => parseAddress(value, 'payer'));
  });

  it('sameAddress compares case-insensitively', () => {
    expect(sameAddress(lower, checksummed)).toBe(true);
    expect(sameAddress(lower, '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC')).toBe(false);
  });
});

describe('parseBytes32', () => {
  it('accepts 32 bytes of hex and lower-cases it', () => {
    expect(parseBytes32(`0x${'AB'.repeat(32)}`, 'nonce')).toBe(`0x${'ab'.repeat(32)}`);
    expect(parseBytes32(`0x${'0'.repeat(64)}`, 'nonce')).toBe(`0x${'0'.repeat(64)}`);
  });

  it.each([
    ['31 bytes', `0x${'ab'.repeat(31)}`],
    ['33 bytes', `0x${'ab'.repeat(33)}`],
    ['odd length', `0x${'a'.repeat(63)}`],
    ['no 0x', 'ab'.repeat(32)],
    ['non-hex', `0x${'zz'.repeat(32)}`],
    ['empty', ''],
  ])('rejects %s, naming the field', (_why, value) => {
    expect(validationError(() => parseBytes32(value, 'nonce')).message).toContain('nonce');
  });

  it.each([null, 42, {}])('rejects the non-string %j', (value) => {
    validationError(() => parseBytes32(value, 'nonce'));
  });
});

describe('parseSignature', () => {
  it('keeps a canonical 65-byte signature as it is (lower-cased)', () => {
    const signature = `0x${'1b'.repeat(64)}1C`;
    expect(parseSignature(signature)).toBe(signature.toLowerCase());
  });

  it('turns the high-s twin of a real signature into the low-s one the token accepts, same signer', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const hash = keccak256(toHex('authcap'));
    const low = await account.sign({ hash });
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = hexToBigInt(sliceHex(low, 32, 64));
    const v = Number(hexToBigInt(sliceHex(low, 64, 65)));
    const high = concatHex([sliceHex(low, 0, 32), numberToHex(n - s, { size: 32 }), numberToHex(v === 27 ? 28 : 27, { size: 1 })]);
    expect(await recoverAddress({ hash, signature: high })).toBe(account.address);
    expect(parseSignature(high)).toBe(low.toLowerCase());
    expect(parseSignature(low)).toBe(low.toLowerCase());
  });

  it('expands an EIP-2098 compact (64-byte) signature to the 65 bytes the token takes', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const hash = keccak256(toHex('compact'));
    const full = await account.sign({ hash });
    const compact = serializeCompactSignature(signatureToCompactSignature(parseSignatureParts(full)));
    expect(parseSignature(compact)).toBe(full.toLowerCase());
  });

  it('refuses 65 bytes whose v is not a recovery id', () => {
    expect(() => parseSignature(`0x${'1b'.repeat(64)}05`)).toThrow(/v must be 27 or 28/);
  });

  it('accepts longer signatures (ERC-1271 contract wallets)', () => {
    const long = `0x${'ab'.repeat(200)}`;
    expect(parseSignature(long)).toBe(long);
  });

  it.each([
    ['empty hex', '0x'],
    ['odd length', '0x123'],
    ['non-hex', `0x${'zz'.repeat(65)}`],
    ['no 0x', '1b'.repeat(65)],
    ['empty', ''],
  ])('rejects %s', (_why, value) => {
    expect(validationError(() => parseSignature(value)).message).toMatch(/signature/);
  });

  it.each([null, undefined, 65, { r: '0x', s: '0x', v: 27 }])('rejects the non-string %j', (value) => {
    validationError(() => parseSignature(value));
  });
});

describe('codeForRevertReason', () => {
  it.each<[string, ErrorCode]>([
    ['Pausable: paused', 'token_policy_blocked'],
    ['Blacklistable: account is blacklisted', 'token_policy_blocked'],
    ['FiatTokenV2: caller must be the payee', 'recipient_mismatch'],
    ['FiatTokenV2: authorization is not yet valid', 'authorization_not_yet_valid'],
    ['EIP3009: authorization is not yet valid', 'authorization_not_yet_valid'],
    ['FiatTokenV2: authorization is expired', 'authorization_expired'],
    ['EIP3009: authorization is expired', 'authorization_expired'],
    ['FiatTokenV2: authorization is used or canceled', 'nonce_already_used'],
    ['EIP3009: authorization is used or canceled', 'nonce_already_used'],
    ['FiatTokenV2: invalid signature', 'invalid_signature'],
    ['EIP3009: invalid signature', 'invalid_signature'],
    ['ERC20: transfer amount exceeds balance', 'insufficient_balance'],
    ['FIATTOKENV2: AUTHORIZATION IS EXPIRED', 'authorization_expired'],
    ['execution reverted: FiatTokenV2: authorization is used or canceled', 'nonce_already_used'],
  ])('%j → %s', (reason, code) => {
    expect(codeForRevertReason(reason)).toBe(code);
  });

  it.each([undefined, '', 'Ownable: caller is not the owner', 'ERC20: transfer amount exceeds allowance', 'out of gas'])('%j → capture_reverted', (reason) => {
    expect(codeForRevertReason(reason)).toBe('capture_reverted');
  });
});

describe('error codes', () => {
  it.each<[ErrorCode, number]>([
    ['validation_error', 400],
    ['unauthorized', 401],
    ['not_found', 404],
    ['invalid_state', 409],
    ['order_has_open_authorization', 409],
    ['invalid_signature', 422],
    ['insufficient_balance', 422],
    ['insufficient_merchant_gas', 422],
    ['token_policy_blocked', 422],
    ['authorization_not_yet_valid', 422],
    ['authorization_expired', 422],
    ['nonce_already_used', 422],
    ['domain_mismatch', 422],
    ['recipient_mismatch', 422],
    ['contract_wallet_unsupported', 422],
    ['capture_reverted', 422],
    ['chain_unavailable', 503],
    ['idempotency_unavailable', 503],
    ['internal_error', 500],
  ])('httpStatusFor(%s) is %i', (code, status) => {
    expect(httpStatusFor(code)).toBe(status);
  });

  it('every code maps to an HTTP error status', () => {
    for (const code of Object.keys(errorCodes) as ErrorCode[]) {
      expect(httpStatusFor(code)).toBeGreaterThanOrEqual(400);
      expect(httpStatusFor(code)).toBeLessThan(600);
    }
  });

  it('isErrorCode accepts every known code', () => {
    for (const code of Object.keys(errorCodes)) expect(isErrorCode(code)).toBe(true);
  });

  it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty', '', 'VALIDATION_ERROR', 'validation-error', 400, null, undefined, {}])(
    'isErrorCode(%j) is false',
    (value) => {
      expect(isErrorCode(value)).toBe(false);
    },
  );
});

describe('AuthcapError', () => {
  it('is an Error with a name, a code and a message', () => {
    const err = new AuthcapError('not_found', 'no such authorization');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('AuthcapError');
    expect(err.code).toBe('not_found');
    expect(err.message).toBe('no such authorization');
  });

  it('toJSON without details has exactly code and message', () => {
    const json = new AuthcapError('invalid_state', 'cannot capture: voided').toJSON();
    expect(json).toStrictEqual({ code: 'invalid_state', message: 'cannot capture: voided' });
    expect(Object.keys(json)).toEqual(['code', 'message']);
  });

  it('toJSON with details includes them, and JSON.stringify uses it', () => {
    const err = new AuthcapError('validation_error', 'bad amount', { field: 'amount' });
    expect(err.toJSON()).toStrictEqual({ code: 'validation_error', message: 'bad amount', details: { field: 'amount' } });
    expect(JSON.parse(JSON.stringify(err))).toEqual({ code: 'validation_error', message: 'bad amount', details: { field: 'amount' } });
  });
});
