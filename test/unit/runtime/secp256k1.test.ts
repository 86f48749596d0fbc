// The WebAssembly curve (runtime/secp256k1.ts) must give exactly viem's answers: the same signer for
// every signature form the API and the activities accept, none for what is no signature, and the
// same transaction signatures (RFC 6979, low s), byte for byte.
import { describe, expect, it } from 'vitest';
import {
  concatHex,
  hashTypedData,
  keccak256,
  numberToHex,
  parseEther,
  parseTransaction,
  recoverAddress as viemRecover,
  serializeSignature,
  toHex,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { isPayerKeySignatureOf, isSignatureOf, localAccount, recoverAddress, signHash } from '../../../runtime/secp256k1.js';
import { isEcdsaSignatureOf, recoverSigner } from '../../../domain/signatureRecovery.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const digests = Array.from({ length: 8 }, (_, i) => keccak256(toHex(`digest ${i}`)));

describe('recoverAddress', () => {
  it('recovers the signer of 65-byte signatures with v 27/28 and 0/1, as viem does', async () => {
    for (const digest of digests) {
      const key = generatePrivateKey();
      const { address } = privateKeyToAccount(key);
      const signature = await sign({ hash: digest, privateKey: key, to: 'hex' });
      expect(recoverAddress(digest, signature)).toBe(address);
      expect(recoverAddress(digest, signature)).toBe(await viemRecover({ hash: digest, signature }));
      const v01 = `${signature.slice(0, 130)}${signature.endsWith('1c') ? '01' : '00'}` as Hex;
      expect(recoverAddress(digest, v01)).toBe(address);
      expect(isSignatureOf(digest, signature, address.toLowerCase() as Hex)).toBe(true);
      expect(isSignatureOf(digest, signature, privateKeyToAccount(generatePrivateKey()).address)).toBe(false);
    }
  });

  it('reads a high-s signature as its low-s twin and an EIP-2098 compact one as its 65 bytes, like the workflow does', async () => {
    const key = generatePrivateKey();
    const { address } = privateKeyToAccount(key);
    const parts = await sign({ hash: digests[0]!, privateKey: key });
    const highS = concatHex([parts.r, numberToHex(N - BigInt(parts.s), { size: 32 }), parts.yParity ? '0x1b' : '0x1c']);
    expect(recoverAddress(digests[0]!, highS)).toBe(address);
    expect(recoverSigner(digests[0]!, highS)).toBe(address);
    const compact = serializeSignature({ ...parts, to: 'hex' });
    const yParityAndS = numberToHex((BigInt(parts.yParity ?? 0) << 255n) | BigInt(parts.s), { size: 32 });
    expect(recoverAddress(digests[0]!, concatHex([parts.r, yParityAndS]))).toBe(address);
    expect(recoverAddress(digests[0]!, compact)).toBe(address);
  });

  it('answers undefined, never throws, for what is no signature of any key', () => {
    const digest = digests[0]!;
    const zeros = `0x${'00'.repeat(65)}` as Hex;
    const rTooBig = `0x${'ff'.repeat(32)}${'11'.repeat(32)}1b` as Hex;
    const badV = `0x${'11'.repeat(64)}1d` as Hex;
    const notHex = `0x${'zz'.repeat(65)}` as Hex;
    for (const signature of [zeros, rTooBig, badV, notHex, '0x' as Hex, `0x${'11'.repeat(66)}` as Hex]) {
      expect(recoverAddress(digest, signature), signature).toBeUndefined();
      expect(recoverSigner(digest, signature), signature).toBeUndefined();
    }
  });
});

describe('isPayerKeySignatureOf', () => {
  it("judges every form exactly as the workflow's validator does: the 65-byte form only", async () => {
    const key = generatePrivateKey();
    const { address } = privateKeyToAccount(key);
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    const digest = digests[1]!;
    const parts = await sign({ hash: digest, privateKey: key });
    const full = serializeSignature({ ...parts });
    const v01 = `${full.slice(0, 130)}${parts.yParity ? '01' : '00'}` as Hex;
    const highS = concatHex([parts.r, numberToHex(N - BigInt(parts.s), { size: 32 }), parts.yParity ? '0x1b' : '0x1c']);
    const compact = concatHex([parts.r, numberToHex((BigInt(parts.yParity ?? 0) << 255n) | BigInt(parts.s), { size: 32 })]);
    const garbage = `0x${'zz'.repeat(65)}` as Hex;
    for (const signature of [full, v01, highS, compact, garbage]) {
      for (const signer of [address, stranger]) {
        expect(isPayerKeySignatureOf(digest, signature, signer), `${signature} by ${signer}`).toBe(isEcdsaSignatureOf(digest, signature, signer));
      }
    }
    // The compact form is a signature of the payer's key, but not in the form the workflow judges.
    expect(isSignatureOf(digest, compact, address)).toBe(true);
    expect(isPayerKeySignatureOf(digest, compact, address)).toBe(false);
    expect(isPayerKeySignatureOf(digest, full, address)).toBe(true);
  });
});

describe('signing', () => {
  it("signs a hash exactly as viem's JavaScript curve does (RFC 6979, low s)", async () => {
    for (const digest of digests) {
      const key = generatePrivateKey();
      const ours = signHash(digest, key);
      const viems = await sign({ hash: digest, privateKey: key });
      expect({ r: ours.r, s: ours.s, yParity: ours.yParity }).toEqual({ r: viems.r, s: viems.s, yParity: viems.yParity });
      expect(await localAccount(key).sign!({ hash: digest })).toBe(await privateKeyToAccount(key).sign!({ hash: digest }));
    }
  });

  it("signs EIP-1559 transactions byte for byte as viem's account does, and the sender recovers", async () => {
    const key = generatePrivateKey();
    const theirs = privateKeyToAccount(key);
    const ours = localAccount(key);
    expect(ours.address).toBe(theirs.address);
    for (let nonce = 0; nonce < 5; nonce += 1) {
      const transaction = {
        type: 'eip1559',
        chainId: 31337,
        nonce,
        to: theirs.address,
        value: parseEther('0.001'),
        data: keccak256(toHex(nonce)),
        gas: 90_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000n,
      } as const;
      const signed = await ours.signTransaction(transaction);
      expect(signed).toBe(await theirs.signTransaction(transaction));
      expect(parseTransaction(signed).nonce).toBe(nonce);
    }
  });

  it('typed data recovered through the digest matches viem', async () => {
    const key = generatePrivateKey();
    const account = privateKeyToAccount(key);
    const typedData = {
      domain: { name: 'USD Coin', version: '2', chainId: 1, verifyingContract: account.address },
      types: { Thing: [{ name: 'value', type: 'uint256' }] },
      primaryType: 'Thing',
      message: { value: 7n },
    } as const;
    const signature = await account.signTypedData(typedData);
    expect(recoverAddress(hashTypedData(typedData), signature)).toBe(account.address);
  });
});
