// domain/eip3009.ts: the eth_signTypedData_v4 payloads authcap hands to wallets. A wallet signing the
// payload (MetaMask's eth-sig-util) and viem signing it must produce the same signature, and authcap's
// verification must accept it: the proof that wallets and authcap agree on the bytes.
import { describe, it, expect } from 'vitest';
import { SignTypedDataVersion, TypedDataUtils, signTypedData as walletSignTypedData } from '@metamask/eth-sig-util';
import { keccak256, toHex, verifyTypedData, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  authorizationMessageValues,
  authorizationPrimaryTypes,
  authorizationTypedData,
  authorizationTypes,
  cancelAuthorizationTypedData,
  eip712DomainFields,
  isAuthorizationPrimaryType,
  type AuthorizationMessage,
  type TokenDomain,
  type TypedDataPayload,
} from '../../../domain/eip3009.js';

// anvil's second default account (a well-known test key, holds nothing real).
const PAYER_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const payer = privateKeyToAccount(PAYER_KEY);
const MERCHANT = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

const domain: TokenDomain = { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' };
const message: AuthorizationMessage = {
  from: payer.address,
  to: MERCHANT,
  value: '12500000',
  validAfter: '1700000000',
  validBefore: '1700000900',
  nonce: `0x${'5a'.repeat(32)}`,
};

const authorizationFields = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
];
const domainFields = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
];

// FiatToken v2.2's constants (design.md typehashes).
const TYPEHASH = {
  TransferWithAuthorization: keccak256(
    toHex('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)'),
  ),
  ReceiveWithAuthorization: keccak256(
    toHex('ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)'),
  ),
  CancelAuthorization: keccak256(toHex('CancelAuthorization(address authorizer,bytes32 nonce)')),
};

/** A wallet's eth_signTypedData_v4, MetaMask's implementation, over the payload exactly as given. */
function walletSign(payload: unknown): Hex {
  return walletSignTypedData({
    privateKey: Buffer.from(PAYER_KEY.slice(2), 'hex'),
    data: payload as never,
    version: SignTypedDataVersion.V4,
  }) as Hex;
}

/** viem wants the types without EIP712Domain (it derives that from the domain). */
function withoutDomainType<P extends string, M>(payload: TypedDataPayload<P, M>) {
  const { EIP712Domain, ...types } = payload.types;
  expect(EIP712Domain).toEqual(domainFields);
  return types;
}

describe('authorizationTypedData', () => {
  for (const primaryType of authorizationPrimaryTypes) {
    it(`${primaryType}: exactly the v4 payload shape, with only EIP712Domain and the primary type`, () => {
      const payload = authorizationTypedData(domain, primaryType, message);
      expect(payload).toStrictEqual({
        types: { EIP712Domain: domainFields, [primaryType]: authorizationFields },
        primaryType,
        domain,
        message,
      });
      expect(Object.keys(payload.types).sort()).toEqual(['EIP712Domain', primaryType].sort());
      expect(Object.keys(payload)).toEqual(expect.arrayContaining(['types', 'primaryType', 'domain', 'message']));
      expect(Object.keys(payload)).toHaveLength(4);
    });

    it(`${primaryType}: the encoded type hashes to FiatToken's typehash`, () => {
      const payload = authorizationTypedData(domain, primaryType, message);
      const hash = toHex(TypedDataUtils.hashType(primaryType, payload.types as never));
      expect(hash).toBe(TYPEHASH[primaryType]);
    });

    it(`${primaryType}: a wallet (eth-sig-util v4) and viem produce the same signature, and it verifies`, async () => {
      const payload = authorizationTypedData(domain, primaryType, message);
      const types = withoutDomainType(payload);
      const values = authorizationMessageValues(payload.message);

      const viemSignature = await payer.signTypedData({ domain: payload.domain, types, primaryType, message: values });
      const walletSignature = walletSign(payload);
      expect(walletSignature).toBe(viemSignature);
      // What the wallet receives over HTTP is JSON: the round-tripped payload signs identically.
      expect(walletSign(JSON.parse(JSON.stringify(payload)))).toBe(viemSignature);

      expect(
        await verifyTypedData({
          address: payer.address,
          domain: payload.domain,
          types,
          primaryType,
          message: values,
          signature: walletSignature,
        }),
      ).toBe(true);
      // The way activities/verify.ts checks it: all authorization types, bigint message values.
      expect(
        await verifyTypedData({
          address: payer.address,
          domain,
          types: authorizationTypes,
          primaryType,
          message: authorizationMessageValues(message),
          signature: walletSignature,
        }),
      ).toBe(true);
    });
  }

  it('a signature over TransferWithAuthorization does not verify as ReceiveWithAuthorization (the spec pitfall)', async () => {
    const signature = walletSign(authorizationTypedData(domain, 'TransferWithAuthorization', message));
    expect(
      await verifyTypedData({
        address: payer.address,
        domain,
        types: authorizationTypes,
        primaryType: 'ReceiveWithAuthorization',
        message: authorizationMessageValues(message),
        signature,
      }),
    ).toBe(false);
  });

  it('a signature does not verify for a different value, domain name or chain', async () => {
    const signature = walletSign(authorizationTypedData(domain, 'ReceiveWithAuthorization', message));
    const verify = (d: TokenDomain, m: AuthorizationMessage) =>
      verifyTypedData({
        address: payer.address,
        domain: d,
        types: authorizationTypes,
        primaryType: 'ReceiveWithAuthorization',
        message: authorizationMessageValues(m),
        signature,
      });
    expect(await verify(domain, message)).toBe(true);
    expect(await verify(domain, { ...message, value: '12500001' })).toBe(false);
    expect(await verify({ ...domain, name: 'USDC' }, message)).toBe(false);
    expect(await verify({ ...domain, chainId: 84532 }, message)).toBe(false);
  });

  it('does not share or mutate type arrays between payloads', () => {
    const a = authorizationTypedData(domain, 'ReceiveWithAuthorization', message);
    authorizationTypedData(domain, 'TransferWithAuthorization', { ...message, value: '1' });
    expect(a.types).toEqual({ EIP712Domain: domainFields, ReceiveWithAuthorization: authorizationFields });
    expect(a.message.value).toBe('12500000');
  });
});

describe('cancelAuthorizationTypedData', () => {
  const cancel = { authorizer: payer.address, nonce: message.nonce };

  it('is exactly the v4 payload for CancelAuthorization(authorizer, nonce)', () => {
    const payload = cancelAuthorizationTypedData(domain, cancel);
    expect(payload).toStrictEqual({
      types: {
        EIP712Domain: domainFields,
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      domain,
      message: cancel,
    });
    expect(toHex(TypedDataUtils.hashType('CancelAuthorization', payload.types as never))).toBe(TYPEHASH.CancelAuthorization);
  });

  it('a wallet and viem produce the same cancel signature, and it verifies', async () => {
    const payload = cancelAuthorizationTypedData(domain, cancel);
    const types = withoutDomainType(payload);
    const viemSignature = await payer.signTypedData({ domain, types, primaryType: 'CancelAuthorization', message: cancel });
    expect(walletSign(payload)).toBe(viemSignature);
    expect(
      await verifyTypedData({
        address: payer.address,
        domain,
        types,
        primaryType: 'CancelAuthorization',
        message: cancel,
        signature: viemSignature,
      }),
    ).toBe(true);
  });
});

describe('helpers', () => {
  it('eip712DomainFields lists the four domain fields in order', () => {
    expect(eip712DomainFields).toEqual(domainFields);
  });

  it('authorizationMessageValues turns the uint256 fields into bigint and keeps the rest', () => {
    expect(authorizationMessageValues(message)).toStrictEqual({
      from: message.from,
      to: message.to,
      value: 12_500_000n,
      validAfter: 1_700_000_000n,
      validBefore: 1_700_000_900n,
      nonce: message.nonce,
    });
  });

  it('isAuthorizationPrimaryType accepts the two authorization types only', () => {
    expect(isAuthorizationPrimaryType('ReceiveWithAuthorization')).toBe(true);
    expect(isAuthorizationPrimaryType('TransferWithAuthorization')).toBe(true);
    for (const value of ['CancelAuthorization', 'receiveWithAuthorization', '', null, 1]) {
      expect(isAuthorizationPrimaryType(value)).toBe(false);
    }
  });
});
