import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { domainSeparator, hashTypedData, keccak256, parseEventLogs, toBytes, zeroAddress, type Address, type Hex, type TransactionReceipt } from 'viem';
import { compileContracts } from '../../contracts/compile.js';
import {
  authCaptureEscrow,
  authcapToken,
  erc3009PaymentCollector,
  fiatTokenV21Like,
  mockErc1271Wallet,
  operatorRefundCollector,
} from '../../contracts/artifacts.js';
import {
  AUTHORIZATION_TYPES,
  TOKEN_NAME,
  TOKEN_SYMBOL,
  freshNonce,
  splitSignature,
  startHarness,
  transferArgs,
  type Authorization,
  type Harness,
} from './harness.js';

const FAR_FUTURE = 2n ** 40n;
const USDC = 1_000_000n;

describe('contract artifacts', () => {
  it('match a fresh compile of the sources', async () => {
    const compiled = await compileContracts();
    for (const [fresh, committed] of [
      [compiled.AuthcapToken, authcapToken],
      [compiled.MockERC1271Wallet, mockErc1271Wallet],
      [compiled.FiatTokenV21Like, fiatTokenV21Like],
      [compiled.AuthCaptureEscrow, authCaptureEscrow],
      [compiled.ERC3009PaymentCollector, erc3009PaymentCollector],
      [compiled.OperatorRefundCollector, operatorRefundCollector],
    ] as const) {
      expect(fresh.bytecode, `${fresh.contractName} artifact is stale: npm run build:contracts`).toBe(committed.bytecode);
      expect(fresh.abi).toEqual(committed.abi);
      expect(fresh.solcVersion).toBe(committed.solcVersion);
    }
  }, 60_000);
});

describe('AuthcapToken on anvil', () => {
  let h: Harness;
  let payer: Harness['accounts']['payer'];
  let payee: Harness['accounts']['payee'];
  let relayer: Harness['accounts']['relayer'];
  let stranger: Harness['accounts']['stranger'];
  let owner: Harness['accounts']['owner'];

  const balanceOf = (who: Address) => h.read<bigint>('balanceOf', [who]);
  const used = (authorizer: Address, nonce: Hex) => h.read<boolean>('authorizationState', [authorizer, nonce]);
  const auth = (overrides: Partial<Authorization> = {}): Authorization => ({
    from: payer.address,
    to: payee.address,
    value: 2n * USDC,
    validAfter: 0n,
    validBefore: FAR_FUTURE,
    nonce: freshNonce(),
    ...overrides,
  });
  const eventNames = (receipt: TransactionReceipt) => parseEventLogs({ abi: authcapToken.abi, logs: receipt.logs }).map((log) => log.eventName);

  beforeAll(async () => {
    h = await startHarness();
    ({ payer, payee, relayer, stranger, owner } = h.accounts);
    await h.write(owner, 'mint', [payer.address, 1_000n * USDC]);
  }, 60_000);

  afterAll(async () => {
    await h?.stop();
  });

  it('exposes FiatToken metadata and the EIP-712 domain', async () => {
    expect(await h.read('name')).toBe(TOKEN_NAME);
    expect(await h.read('symbol')).toBe(TOKEN_SYMBOL);
    expect(await h.read('decimals')).toBe(6);
    expect(await h.read('version')).toBe('2');
    expect(await h.read('owner')).toBe(owner.address);
    expect(await h.read('DOMAIN_SEPARATOR')).toBe(domainSeparator({ domain: h.domain }));
    const typehash = (s: string) => keccak256(toBytes(s));
    expect(await h.read('TRANSFER_WITH_AUTHORIZATION_TYPEHASH')).toBe(
      typehash('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)'),
    );
    expect(await h.read('RECEIVE_WITH_AUTHORIZATION_TYPEHASH')).toBe(
      typehash('ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)'),
    );
    expect(await h.read('CANCEL_AUTHORIZATION_TYPEHASH')).toBe(typehash('CancelAuthorization(address authorizer,bytes32 nonce)'));
  });

  it('lets only the owner mint', async () => {
    expect(await h.revertReason(stranger, 'mint', [stranger.address, USDC])).toBe('Ownable: caller is not the owner');
    const supply = await h.read<bigint>('totalSupply');
    const receipt = await h.write(owner, 'mint', [stranger.address, 5n * USDC]);
    expect(eventNames(receipt)).toEqual(['Mint', 'Transfer']);
    expect(await balanceOf(stranger.address)).toBe(5n * USDC);
    expect(await h.read('totalSupply')).toBe(supply + 5n * USDC);
  });

  it.each(['bytes', 'v,r,s'] as const)('captures a ReceiveWithAuthorization (%s overload)', async (overload) => {
    const a = auth({ value: 1_500_000n });
    const signature = await h.signTransfer(payer, 'ReceiveWithAuthorization', a);
    const sigArgs = overload === 'bytes' ? [signature] : splitSignature(signature);
    const [payerBefore, payeeBefore] = [await balanceOf(payer.address), await balanceOf(payee.address)];

    const receipt = await h.write(payee, 'receiveWithAuthorization', [...transferArgs(a), ...sigArgs]);

    expect(await balanceOf(payer.address)).toBe(payerBefore - a.value);
    expect(await balanceOf(payee.address)).toBe(payeeBefore + a.value);
    expect(await used(payer.address, a.nonce)).toBe(true);
    const logs = parseEventLogs({ abi: authcapToken.abi, logs: receipt.logs });
    expect(logs.map((l) => l.eventName)).toEqual(['AuthorizationUsed', 'Transfer']);
    expect(logs[0]?.args).toEqual({ authorizer: payer.address, nonce: a.nonce });
    expect(logs[1]?.args).toEqual({ from: payer.address, to: payee.address, value: a.value });
    expect(logs[0]!.logIndex).toBeLessThan(logs[1]!.logIndex);
  });

  it('rejects a TransferWithAuthorization signature offered to receiveWithAuthorization', async () => {
    const a = auth();
    const signature = await h.signTransfer(payer, 'TransferWithAuthorization', a);
    expect(await h.revertReason(payee, 'receiveWithAuthorization', [...transferArgs(a), signature])).toBe('FiatTokenV2: invalid signature');
    const receiveSig = await h.signTransfer(payer, 'ReceiveWithAuthorization', a);
    expect(await h.revertReason(relayer, 'transferWithAuthorization', [...transferArgs(a), receiveSig])).toBe('FiatTokenV2: invalid signature');
  });

  it.each(['bytes', 'v,r,s'] as const)('lets a third party submit transferWithAuthorization (%s)', async (overload) => {
    const a = auth();
    const signature = await h.signTransfer(payer, 'TransferWithAuthorization', a);
    const sigArgs = overload === 'bytes' ? [signature] : splitSignature(signature);
    const payeeBefore = await balanceOf(payee.address);
    const receipt = await h.write(relayer, 'transferWithAuthorization', [...transferArgs(a), ...sigArgs]);
    expect(eventNames(receipt)).toEqual(['AuthorizationUsed', 'Transfer']);
    expect(await balanceOf(payee.address)).toBe(payeeBefore + a.value);
    expect(await used(payer.address, a.nonce)).toBe(true);
  });

  it('refuses receiveWithAuthorization from anyone but the payee', async () => {
    const a = auth();
    const signature = await h.signTransfer(payer, 'ReceiveWithAuthorization', a);
    expect(await h.revertReason(relayer, 'receiveWithAuthorization', [...transferArgs(a), signature])).toBe('FiatTokenV2: caller must be the payee');
  });

  it('judges the validity window strictly at both edges, in mined blocks', async () => {
    const now = await h.latestTimestamp();
    const early = auth({ validAfter: now + 100n, validBefore: now + 200n });
    const earlyArgs = [...transferArgs(early), await h.signTransfer(payer, 'ReceiveWithAuthorization', early)];
    expect(await h.revertReason(payee, 'receiveWithAuthorization', earlyArgs, early.validAfter)).toBe('FiatTokenV2: authorization is not yet valid');
    const atStart = await h.mineAt(payee, early.validAfter, 'receiveWithAuthorization', earlyArgs);
    expect([atStart.receipt.status, atStart.blockTimestamp]).toEqual(['reverted', early.validAfter]);
    expect(await used(payer.address, early.nonce)).toBe(false);
    const justAfter = await h.mineAt(payee, early.validAfter + 1n, 'receiveWithAuthorization', earlyArgs);
    expect(justAfter.receipt.status).toBe('success');

    const window = { validAfter: now + 300n, validBefore: now + 400n };
    const lastSecond = auth(window);
    const expired = auth(window);
    const lastArgs = [...transferArgs(lastSecond), await h.signTransfer(payer, 'ReceiveWithAuthorization', lastSecond)];
    const expiredArgs = [...transferArgs(expired), await h.signTransfer(payer, 'ReceiveWithAuthorization', expired)];
    const beforeEnd = await h.mineAt(payee, window.validBefore - 1n, 'receiveWithAuthorization', lastArgs);
    expect(beforeEnd.receipt.status).toBe('success');
    expect(await h.revertReason(payee, 'receiveWithAuthorization', expiredArgs, window.validBefore)).toBe('FiatTokenV2: authorization is expired');
    const atEnd = await h.mineAt(payee, window.validBefore, 'receiveWithAuthorization', expiredArgs);
    expect([atEnd.receipt.status, atEnd.blockTimestamp]).toEqual(['reverted', window.validBefore]);
    expect(await used(payer.address, expired.nonce)).toBe(false);
  });

  it('refuses to use an authorization twice, whatever its type', async () => {
    const a = auth();
    const args = [...transferArgs(a), await h.signTransfer(payer, 'ReceiveWithAuthorization', a)];
    await h.write(payee, 'receiveWithAuthorization', args);
    expect(await h.revertReason(payee, 'receiveWithAuthorization', args)).toBe('FiatTokenV2: authorization is used or canceled');
    const asTransfer = [...transferArgs(a), await h.signTransfer(payer, 'TransferWithAuthorization', a)];
    expect(await h.revertReason(relayer, 'transferWithAuthorization', asTransfer)).toBe('FiatTokenV2: authorization is used or canceled');
  });

  it.each(['bytes', 'v,r,s'] as const)('cancels an authorization (%s overload)', async (overload) => {
    const a = auth();
    const cancelSig = await h.signCancel(payer, payer.address, a.nonce);
    const sigArgs = overload === 'bytes' ? [cancelSig] : splitSignature(cancelSig);
    const receipt = await h.write(relayer, 'cancelAuthorization', [payer.address, a.nonce, ...sigArgs]);
    const logs = parseEventLogs({ abi: authcapToken.abi, logs: receipt.logs });
    expect(logs.map((l) => [l.eventName, l.args])).toEqual([['AuthorizationCanceled', { authorizer: payer.address, nonce: a.nonce }]]);
    expect(await used(payer.address, a.nonce)).toBe(true);
    const captureArgs = [...transferArgs(a), await h.signTransfer(payer, 'ReceiveWithAuthorization', a)];
    expect(await h.revertReason(payee, 'receiveWithAuthorization', captureArgs)).toBe('FiatTokenV2: authorization is used or canceled');
    expect(await h.revertReason(relayer, 'cancelAuthorization', [payer.address, a.nonce, cancelSig])).toBe('FiatTokenV2: authorization is used or canceled');
  });

  it('refuses a cancel signed by another key', async () => {
    const nonce = freshNonce();
    const forged = await h.signCancel(stranger, payer.address, nonce);
    expect(await h.revertReason(relayer, 'cancelAuthorization', [payer.address, nonce, forged])).toBe('FiatTokenV2: invalid signature');
    expect(await used(payer.address, nonce)).toBe(false);
  });

  it('reverts when the payer lacks funds or the payee is the zero address', async () => {
    const a = auth({ value: (await balanceOf(payer.address)) + 1n });
    const args = [...transferArgs(a), await h.signTransfer(payer, 'ReceiveWithAuthorization', a)];
    expect(await h.revertReason(payee, 'receiveWithAuthorization', args)).toBe('ERC20: transfer amount exceeds balance');
    const toZero = auth({ to: zeroAddress });
    const zeroArgs = [...transferArgs(toZero), await h.signTransfer(payer, 'TransferWithAuthorization', toZero)];
    expect(await h.revertReason(relayer, 'transferWithAuthorization', zeroArgs)).toBe('ERC20: transfer to the zero address');
  });

  it.each(['payer', 'payee'] as const)('blocks a blacklisted %s until unblacklisted', async (who) => {
    const target = who === 'payer' ? payer.address : payee.address;
    const a = auth();
    const args = [...transferArgs(a), await h.signTransfer(payer, 'ReceiveWithAuthorization', a)];
    expect(await h.revertReason(stranger, 'blacklist', [target])).toBe('Ownable: caller is not the owner');
    expect(eventNames(await h.write(owner, 'blacklist', [target]))).toEqual(['Blacklisted']);
    expect(await h.read('isBlacklisted', [target])).toBe(true);
    expect(await h.revertReason(payee, 'receiveWithAuthorization', args)).toBe('Blacklistable: account is blacklisted');
    const sender = who === 'payer' ? payer : payee;
    expect(await h.revertReason(sender, 'transfer', [relayer.address, 1n])).toBe('Blacklistable: account is blacklisted');
    expect(eventNames(await h.write(owner, 'unBlacklist', [target]))).toEqual(['UnBlacklisted']);
    expect(await h.read('isBlacklisted', [target])).toBe(false);
    await h.write(payee, 'receiveWithAuthorization', args);
    expect(await used(payer.address, a.nonce)).toBe(true);
  });

  it('blocks everything while paused, ahead of the blacklist, until unpaused', async () => {
    const a = auth();
    const args = [...transferArgs(a), await h.signTransfer(payer, 'ReceiveWithAuthorization', a)];
    const cancelArgs = [payer.address, a.nonce, await h.signCancel(payer, payer.address, a.nonce)];
    expect(await h.revertReason(stranger, 'pause', [])).toBe('Ownable: caller is not the owner');
    expect(eventNames(await h.write(owner, 'pause', []))).toEqual(['Pause']);
    await h.write(owner, 'blacklist', [payer.address]);
    try {
      expect(await h.read('paused')).toBe(true);
      expect(await h.revertReason(payee, 'receiveWithAuthorization', args)).toBe('Pausable: paused');
      expect(await h.revertReason(relayer, 'cancelAuthorization', cancelArgs)).toBe('Pausable: paused');
      expect(await h.revertReason(payee, 'transfer', [payer.address, 1n])).toBe('Pausable: paused');
    } finally {
      await h.write(owner, 'unBlacklist', [payer.address]);
      expect(eventNames(await h.write(owner, 'unpause', []))).toEqual(['Unpause']);
    }
    expect(await h.read('paused')).toBe(false);
    await h.write(payee, 'receiveWithAuthorization', args);
    expect(await used(payer.address, a.nonce)).toBe(true);
  });

  it("checks in FiatToken's order: payee, window, nonce, signature", async () => {
    const now = await h.latestTimestamp();
    const a = auth({ validBefore: now - 1n });
    const forged = await h.signTransfer(stranger, 'ReceiveWithAuthorization', a);
    const args = [...transferArgs(a), forged];
    expect(await h.revertReason(relayer, 'receiveWithAuthorization', args)).toBe('FiatTokenV2: caller must be the payee');
    expect(await h.revertReason(payee, 'receiveWithAuthorization', args)).toBe('FiatTokenV2: authorization is expired');
    const b = auth();
    await h.write(owner, 'cancelAuthorization', [payer.address, b.nonce, await h.signCancel(payer, payer.address, b.nonce)]);
    const forgedB = await h.signTransfer(stranger, 'ReceiveWithAuthorization', b);
    expect(await h.revertReason(payee, 'receiveWithAuthorization', [...transferArgs(b), forgedB])).toBe('FiatTokenV2: authorization is used or canceled');
  });

  it('rejects malleable (high-s) and non-27/28 v signatures', async () => {
    const a = auth();
    const [v, r, s] = await h.signTransfer(payer, 'ReceiveWithAuthorization', a).then(splitSignature);
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const highS = `0x${(n - BigInt(s)).toString(16).padStart(64, '0')}` as const;
    expect(await h.revertReason(payee, 'receiveWithAuthorization', [...transferArgs(a), v === 27 ? 28 : 27, r, highS])).toBe('FiatTokenV2: invalid signature');
    expect(await h.revertReason(payee, 'receiveWithAuthorization', [...transferArgs(a), v - 27, r, s])).toBe('FiatTokenV2: invalid signature');
    expect(await h.revertReason(payee, 'receiveWithAuthorization', [...transferArgs(a), v, r, s])).toBeUndefined();
  });

  describe('ERC-1271 contract wallet payer', () => {
    let wallet: Address;
    const walletDigest = (a: Authorization) =>
      hashTypedData({ domain: h.domain, types: AUTHORIZATION_TYPES, primaryType: 'ReceiveWithAuthorization', message: a });

    beforeAll(async () => {
      wallet = await h.deploy(mockErc1271Wallet, [h.accounts.walletOwner.address]);
      await h.write(owner, 'mint', [wallet, 10n * USDC]);
    }, 60_000);

    it.each(['bytes', 'v,r,s'] as const)("accepts the owner's signature over the digest (%s)", async (overload) => {
      const a = auth({ from: wallet, value: 3n * USDC });
      const signature = await h.accounts.walletOwner.sign({ hash: walletDigest(a) });
      const sigArgs = overload === 'bytes' ? [signature] : splitSignature(signature);
      const before = await balanceOf(wallet);
      const receipt = await h.write(payee, 'receiveWithAuthorization', [...transferArgs(a), ...sigArgs]);
      expect(eventNames(receipt)).toEqual(['AuthorizationUsed', 'Transfer']);
      expect(await balanceOf(wallet)).toBe(before - a.value);
      expect(await used(wallet, a.nonce)).toBe(true);
    });

    it("rejects a signature by someone other than the wallet's owner", async () => {
      const a = auth({ from: wallet, value: USDC });
      const signature = await stranger.sign({ hash: walletDigest(a) });
      expect(await h.revertReason(payee, 'receiveWithAuthorization', [...transferArgs(a), signature])).toBe('FiatTokenV2: invalid signature');
    });
  });
});
