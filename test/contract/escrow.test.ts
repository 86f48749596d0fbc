// What authcap's escrow promises, on a real anvil with the real compiled contracts: only the operator
// moves funds and never more than held, captures in parts, expiries, the payer's reclaim, fees and
// refunds; and that it speaks Commerce Payments' interface (type hash, hash, typed data) as authcap's
// own client code computes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAddress, zeroAddress, type Address } from 'viem';
import { erc3009PaymentCollector } from '../../contracts/artifacts.js';
import { holdNonce, PAYMENT_INFO_TYPEHASH, paymentInfoHash, type PaymentInfo } from '../../domain/escrow.js';
import { escrowAbi, tokenCollectorAbi, CollectorType } from '../../domain/escrowAbi.js';
import { startHarness, type Harness } from './harness.js';
import { checkEscrow } from '../../runtime/deployment/escrowCheck.js';
import type { ServedToken } from '../../runtime/deployment/catalog.js';
import { deployEscrow, type EscrowHarness } from './escrowHarness.js';

const USDC = 1_000_000n;

describe('AuthCaptureEscrow (authcap’s, on the reference interface) on anvil', () => {
  let h: Harness;
  let e: EscrowHarness;
  let operator: Harness['accounts']['relayer'];
  let payer: Harness['accounts']['payer'];
  let stranger: Harness['accounts']['stranger'];
  let owner: Harness['accounts']['owner'];

  const balanceOf = (who: Address) => h.read<bigint>('balanceOf', [who]);
  /** Authorizes `amount` of a fresh payment's terms; returns the terms. */
  const held = async (amount: bigint, overrides: Partial<PaymentInfo> = {}) => {
    const info = await e.terms(overrides);
    await e.send(operator, 'authorize', [info, amount, e.paymentCollector, await e.signHold(info)]);
    return info;
  };

  beforeAll(async () => {
    h = await startHarness();
    e = await deployEscrow(h);
    ({ relayer: operator, payer, stranger, owner } = h.accounts);
    await h.write(owner, 'mint', [payer.address, 1_000n * USDC]);
    await h.write(owner, 'mint', [operator.address, 1_000n * USDC]);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('has the reference type hash, and its hash of a payment is the one authcap computes', async () => {
    const info = await e.terms();
    expect(await h.publicClient.readContract({ address: e.escrow, abi: escrowAbi, functionName: 'PAYMENT_INFO_TYPEHASH' })).toBe(PAYMENT_INFO_TYPEHASH);
    expect((await e.state(info)).hash).toBe(paymentInfoHash(info, h.anvil.chainId, e.escrow));
    // The collectors say what they are, and whose they are.
    for (const [address, type] of [
      [e.paymentCollector, CollectorType.Payment],
      [e.refundCollector, CollectorType.Refund],
    ] as const) {
      expect(await h.publicClient.readContract({ address, abi: tokenCollectorAbi, functionName: 'collectorType' })).toBe(type);
      expect(await h.publicClient.readContract({ address, abi: tokenCollectorAbi, functionName: 'authCaptureEscrow' })).toBe(getAddress(e.escrow));
    }
  });

  it('holds a payment, captures it in parts, and voids the rest back to the payer', async () => {
    const payerBefore = await balanceOf(payer.address);
    const receiverBefore = await balanceOf(h.accounts.payee.address);
    const store = await e.tokenStore(operator.address);
    const storeBefore = await balanceOf(store);
    const info = await e.terms({ maxAmount: 10n * USDC });
    const authorized = await e.send(operator, 'authorize', [info, 10n * USDC, e.paymentCollector, await e.signHold(info)]);
    expect(e.events(authorized).map((l) => l.eventName)).toEqual(['PaymentAuthorized']);
    // The payer's EIP-3009 nonce is the payment's payer-agnostic hash: used now, never again.
    expect(await h.read('authorizationState', [payer.address, holdNonce(info, h.anvil.chainId, e.escrow)])).toBe(true);
    expect(await balanceOf(store)).toBe(storeBefore + 10n * USDC);
    expect((await e.state(info)).capturableAmount).toBe(10n * USDC);

    const first = await e.send(operator, 'capture', [info, 3n * USDC, 0, zeroAddress]);
    const second = await e.send(operator, 'capture', [info, 2_500_000n, 0, zeroAddress]);
    expect([...e.events(first), ...e.events(second)].map((l) => [l.eventName, (l.args as { amount: bigint }).amount])).toEqual([
      ['PaymentCaptured', 3n * USDC],
      ['PaymentCaptured', 2_500_000n],
    ]);
    expect(await e.refusal(operator, 'capture', [info, 5n * USDC, 0, zeroAddress])).toBe('InsufficientAuthorization');
    const voided = await e.send(operator, 'void', [info]);
    expect(e.events(voided).map((l) => [l.eventName, (l.args as { amount: bigint }).amount])).toEqual([['PaymentVoided', 4_500_000n]]);

    expect(await balanceOf(payer.address)).toBe(payerBefore - 5_500_000n);
    expect(await balanceOf(h.accounts.payee.address)).toBe(receiverBefore + 5_500_000n);
    expect(await balanceOf(store)).toBe(storeBefore);
    expect(await e.state(info)).toMatchObject({ hasCollectedPayment: true, capturableAmount: 0n, refundableAmount: 5_500_000n });
    expect(await e.refusal(operator, 'void', [info])).toBe('ZeroAuthorization');
    expect(await e.refusal(operator, 'capture', [info, 1n, 0, zeroAddress])).toBe('InsufficientAuthorization');
  });

  it('holds less than the payer signed for and hands the difference straight back', async () => {
    const before = await balanceOf(payer.address);
    const info = await held(4n * USDC, { maxAmount: 10n * USDC });
    expect(await balanceOf(payer.address)).toBe(before - 4n * USDC);
    expect((await e.state(info)).capturableAmount).toBe(4n * USDC);
    await e.send(operator, 'void', [info]);
  });

  it('lets only the operator authorize, capture, void and refund', async () => {
    const info = await e.terms();
    const signature = await e.signHold(info);
    expect(await e.refusal(stranger, 'authorize', [info, USDC, e.paymentCollector, signature])).toBe('InvalidSender');
    expect(await e.refusal(payer, 'authorize', [info, USDC, e.paymentCollector, signature])).toBe('InvalidSender');
    await e.send(operator, 'authorize', [info, 2n * USDC, e.paymentCollector, signature]);
    expect(await e.refusal(stranger, 'capture', [info, USDC, 0, zeroAddress])).toBe('InvalidSender');
    expect(await e.refusal(stranger, 'void', [info])).toBe('InvalidSender');
    expect(await e.refusal(stranger, 'refund', [info, USDC, e.refundCollector, '0x'])).toBe('InvalidSender');
    // Nor do the collectors or the store take orders from anyone but the escrow.
    const direct = await h.publicClient
      .simulateContract({
        address: e.paymentCollector,
        abi: erc3009PaymentCollector.abi,
        functionName: 'collectTokens',
        args: [info, stranger.address, USDC, signature],
        account: stranger,
      })
      .then(
        () => undefined,
        (err: Error) => err.message,
      );
    expect(direct).toContain('OnlyAuthCaptureEscrow');
    // The same terms cannot be authorized twice, nor signed terms altered.
    expect(await e.refusal(operator, 'authorize', [info, USDC, e.paymentCollector, signature])).toBe('PaymentAlreadyCollected');
    const altered = { ...info, receiver: stranger.address };
    expect(await e.refusal(operator, 'authorize', [altered, USDC, e.paymentCollector, signature])).toBe('FiatTokenV2: invalid signature');
    expect(await e.refusal(operator, 'authorize', [await e.terms(), 11n * USDC, e.paymentCollector, signature])).toBe('ExceedsMaxAmount');
    await e.send(operator, 'void', [info]);
  });

  it('refuses bad terms before any token moves', async () => {
    const now = Number(await h.latestTimestamp());
    const cases: [Partial<PaymentInfo>, string][] = [
      [{ preApprovalExpiry: now - 1 }, 'AfterPreApprovalExpiry'],
      [{ preApprovalExpiry: now + 100, authorizationExpiry: now + 50 }, 'InvalidExpiries'],
      [{ refundExpiry: now + 10 }, 'InvalidExpiries'],
      [{ maxFeeBps: 10_001 }, 'FeeBpsOverflow'],
      [{ minFeeBps: 50, maxFeeBps: 10 }, 'InvalidFeeBpsRange'],
    ];
    for (const [overrides, error] of cases) {
      const info = await e.terms(overrides);
      expect(await e.refusal(operator, 'authorize', [info, USDC, e.paymentCollector, await e.signHold(info)]), error).toBe(error);
    }
    const info = await e.terms();
    expect(await e.refusal(operator, 'authorize', [info, 0n, e.paymentCollector, await e.signHold(info)])).toBe('ZeroAmount');
    expect(await e.refusal(operator, 'authorize', [info, 1n, e.refundCollector, await e.signHold(info)])).toBe('InvalidCollectorForOperation');
  });

  it('takes a fee within the payment’s range, to its fee receiver', async () => {
    const feeReceiver = stranger.address;
    const info = await held(10n * USDC, { maxAmount: 10n * USDC, minFeeBps: 100, maxFeeBps: 300, feeReceiver });
    expect(await e.refusal(operator, 'capture', [info, USDC, 50, feeReceiver])).toBe('FeeBpsOutOfRange');
    expect(await e.refusal(operator, 'capture', [info, USDC, 400, feeReceiver])).toBe('FeeBpsOutOfRange');
    expect(await e.refusal(operator, 'capture', [info, USDC, 200, owner.address])).toBe('InvalidFeeReceiver');
    const feeBefore = await balanceOf(feeReceiver);
    const receiverBefore = await balanceOf(h.accounts.payee.address);
    await e.send(operator, 'capture', [info, 5n * USDC, 200, feeReceiver]);
    expect(await balanceOf(feeReceiver)).toBe(feeBefore + 100_000n);
    expect(await balanceOf(h.accounts.payee.address)).toBe(receiverBefore + 4_900_000n);
    // A payment that names no fee receiver lets the operator name one, but never none with a fee.
    const open = await held(2n * USDC, { maxAmount: 2n * USDC, maxFeeBps: 100 });
    expect(await e.refusal(operator, 'capture', [open, USDC, 100, zeroAddress])).toBe('ZeroFeeReceiver');
    await e.send(operator, 'void', [info]);
    await e.send(operator, 'void', [open]);
  });

  it('refunds up to what was captured, from the operator’s balance, until refundExpiry', async () => {
    const info = await held(6n * USDC, { maxAmount: 6n * USDC });
    await e.send(operator, 'capture', [info, 4n * USDC, 0, zeroAddress]);
    await h.walletFor(operator).writeContract({
      address: h.token,
      abi: [
        { type: 'function', name: 'approve', stateMutability: 'nonpayable', inputs: [{ type: 'address' }, { type: 'uint256' }], outputs: [{ type: 'bool' }] },
      ] as const,
      functionName: 'approve',
      args: [e.refundCollector, 100n * USDC],
      chain: h.chain,
    });
    expect(await e.refusal(operator, 'refund', [info, 5n * USDC, e.refundCollector, '0x'])).toBe('RefundExceedsCapture');
    expect(await e.refusal(operator, 'refund', [info, USDC, e.paymentCollector, '0x'])).toBe('InvalidCollectorForOperation');
    const payerBefore = await balanceOf(payer.address);
    const operatorBefore = await balanceOf(operator.address);
    const refunded = await e.send(operator, 'refund', [info, 3n * USDC, e.refundCollector, '0x']);
    expect(e.events(refunded).map((l) => l.eventName)).toEqual(['PaymentRefunded']);
    expect(await balanceOf(payer.address)).toBe(payerBefore + 3n * USDC);
    expect(await balanceOf(operator.address)).toBe(operatorBefore - 3n * USDC);
    expect(await e.refusal(operator, 'refund', [info, 2n * USDC, e.refundCollector, '0x'])).toBe('RefundExceedsCapture');
    await e.send(operator, 'void', [info]);
  });

  it('keeps held funds through a paused token, and moves them once it resumes', async () => {
    const info = await held(2n * USDC, { maxAmount: 2n * USDC });
    await h.write(owner, 'pause', []);
    try {
      expect(await e.refusal(operator, 'capture', [info, USDC, 0, zeroAddress])).toBe('Pausable: paused');
      expect((await e.state(info)).capturableAmount).toBe(2n * USDC);
    } finally {
      await h.write(owner, 'unpause', []);
    }
    await e.send(operator, 'capture', [info, USDC, 0, zeroAddress]);
    await e.send(operator, 'void', [info]);
  });

  // Last: it moves the chain's clock past the payments' expiries.
  it('stops captures at authorizationExpiry and lets only the payer reclaim from then on', async () => {
    const info = await held(3n * USDC, { maxAmount: 3n * USDC });
    const charged = await e.terms({ maxAmount: 3n * USDC });
    expect(await e.refusal(payer, 'reclaim', [info])).toBe('BeforeAuthorizationExpiry');
    await h.testClient.setNextBlockTimestamp({ timestamp: BigInt(info.authorizationExpiry) });
    await h.testClient.mine({ blocks: 1 });
    expect(await e.refusal(operator, 'capture', [info, USDC, 0, zeroAddress])).toBe('AfterAuthorizationExpiry');
    expect(await e.refusal(stranger, 'reclaim', [info])).toBe('InvalidSender');
    expect(await e.refusal(operator, 'reclaim', [info])).toBe('InvalidSender');
    const before = await balanceOf(payer.address);
    const reclaimed = await e.send(payer, 'reclaim', [info]);
    expect(e.events(reclaimed).map((l) => [l.eventName, (l.args as { amount: bigint }).amount])).toEqual([['PaymentReclaimed', 3n * USDC]]);
    expect(await balanceOf(payer.address)).toBe(before + 3n * USDC);
    expect(await e.refusal(payer, 'reclaim', [info])).toBe('ZeroAuthorization');
    // Past its pre-approval expiry a signature authorizes nothing.
    expect(await e.refusal(operator, 'authorize', [charged, USDC, e.paymentCollector, await e.signHold(charged)])).toBe('AfterPreApprovalExpiry');
  });

  it('holds in its store exactly what its open payments can still capture', async () => {
    const store = await e.tokenStore(operator.address);
    // Every payment above ended voided, captured or reclaimed: nothing is left held.
    expect(await balanceOf(store)).toBe(0n);
    const open = [await held(2n * USDC, { maxAmount: 2n * USDC }), await held(3n * USDC, { maxAmount: 3n * USDC })];
    await e.send(operator, 'capture', [open[0], 1_250_000n, 0, zeroAddress]);
    const capturable = await Promise.all(open.map(async (info) => (await e.state(info)).capturableAmount));
    expect(await balanceOf(store)).toBe(capturable.reduce((a, b) => a + b, 0n));
    expect(capturable).toEqual([750_000n, 3n * USDC]);
  });
});

describe('the start check of a configured escrow', () => {
  let h: Harness;
  let e: EscrowHarness;
  let tokens: ServedToken[];
  const check = (config: Partial<Parameters<typeof checkEscrow>[1]>) =>
    checkEscrow(
      h.publicClient as never,
      { address: e.escrow, paymentCollector: e.paymentCollector, refundCollector: e.refundCollector, holdsByDefault: false, ...config },
      tokens,
      'deployment.json: eip155:31337',
    );

  beforeAll(async () => {
    h = await startHarness();
    e = await deployEscrow(h);
    tokens = [{ address: getAddress(h.token), name: 'x', version: '2', symbol: 'x', decimals: 6, form: 'bytes' }];
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('takes the escrow and its collectors, and the tokens that hold by default', async () => {
    expect(await check({})).toEqual({
      address: getAddress(e.escrow),
      paymentCollector: getAddress(e.paymentCollector),
      refundCollector: getAddress(e.refundCollector),
      holdsByDefault: [],
    });
    expect((await check({ holdsByDefault: true })).holdsByDefault).toEqual([getAddress(h.token)]);
    expect((await check({ holdsByDefault: [h.token.toLowerCase()] })).holdsByDefault).toEqual([getAddress(h.token)]);
  });

  it.each([
    [
      'collectors in each other’s place',
      () => ({ paymentCollector: e.refundCollector, refundCollector: e.paymentCollector }),
      /paymentCollector .*a refund collector in the other's place/,
    ],
    ['a token as the escrow', () => ({ address: h.token }), /is not an AuthCaptureEscrow/],
    ['an account with no code', () => ({ refundCollector: h.accounts.stranger.address }), /refundCollector .*: no contract at this address/],
    ['the escrow as a collector', () => ({ paymentCollector: e.escrow }), /paymentCollector .*: not a token collector/],
  ])('stops the start on %s, saying which', async (_, config, message) => {
    await expect(check(config() as never)).rejects.toThrow(message);
  });
});
