// Case 7: the payer races the merchant at the last moment before a capture: cancels onchain, moves
// the funds away, or has a TransferWithAuthorization settled elsewhere; and a capture that is mined
// only after validBefore. In each, authcap ends in the state the chain proves and pays nothing twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseSignature, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { audit } from './audit.js';
import { eventually, sleep, startWorld, type World } from './harness.js';
import { createStored, sign } from './drive.js';

describe('payer races', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  }, 240_000);
  afterAll(() => world?.stop());

  const payerWallet = (i: number) => {
    const p = world.payers[i]!;
    return createWalletClient({ chain: world.publicClient.chain, transport: http(world.anvil.rpcUrl), account: privateKeyToAccount(p.privateKey) });
  };

  it('cancel onchain, funds moved away, settled elsewhere, mined after the deadline: each ends as the chain says', async () => {
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const ids: string[] = [];

    // 1. The payer cancels onchain just before the merchant captures.
    const canceledId = await createStored(world, 0);
    ids.push(canceledId);
    const toCancel = await world.client.authorizations.get(canceledId);
    const cancelSig = parseSignature(sign(toCancel.cancellationTypedData, world.payers[0]!.privateKey));
    const cancelHash = await payerWallet(0).writeContract({
      address: world.tokenAddress,
      abi: tokenAbi,
      functionName: 'cancelAuthorization',
      chain: world.publicClient.chain,
      account: privateKeyToAccount(world.payers[0]!.privateKey),
      args: [toCancel.authorization!.from, toCancel.authorization!.nonce, Number(cancelSig.v), cancelSig.r, cancelSig.s],
    });
    const raced = await world.client.authorizations.capture(canceledId, { waitMs: 30_000 }).then(
      (o) => o.authorization.state,
      (e: { code?: string }) => e.code,
    );
    expect(['canceled', 'invalid_state', 'nonce_already_used']).toContain(raced);
    await world.publicClient.waitForTransactionReceipt({ hash: cancelHash });
    expect(
      (
        await eventually(
          () => world.client.authorizations.get(canceledId),
          (a) => a.state === 'canceled',
          60_000,
        )
      )?.state,
    ).toBe('canceled');

    // 2. The payer moves the funds away: the capture is refused before anything is sent, and can be retried.
    const brokeId = await createStored(world, 1, '5');
    ids.push(brokeId);
    const balance = (await world.publicClient.readContract({
      address: world.tokenAddress,
      abi: tokenAbi,
      functionName: 'balanceOf',
      args: [world.payers[1]!.address],
    })) as bigint;
    const moved = await payerWallet(1).writeContract({
      address: world.tokenAddress,
      abi: tokenAbi,
      functionName: 'transfer',
      chain: world.publicClient.chain,
      account: privateKeyToAccount(world.payers[1]!.privateKey),
      args: [world.payers[2]!.address, balance],
    });
    await world.publicClient.waitForTransactionReceipt({ hash: moved });
    const refused = await world.client.authorizations.capture(brokeId).then(
      () => 'captured',
      (e: { code?: string }) => e.code,
    );
    expect(refused).toBe('insufficient_balance');
    expect((await world.client.authorizations.get(brokeId)).state).toBe('stored');
    await world.client.authorizations.void(brokeId, { reason: 'payer has no funds' });

    // 3. A pre-signed TransferWithAuthorization settled by someone else just before our capture.
    const p3 = world.payers[3]!;
    // The token's own domain, as authcap drafts with it.
    const probe = await world.client.authorizations.create({ orderId: `race-domain-${Date.now()}`, payer: p3.address, amount: '0.01' });
    await world.client.authorizations.void(probe.id, { reason: 'only needed the domain' });
    const domain = probe.domain!;
    const now = Math.floor(Date.now() / 1000);
    const authorization = {
      from: p3.address,
      to: world.merchant.address,
      value: '70000',
      validAfter: String(now - 60),
      validBefore: String(now + 600),
      nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` as Hex,
    };
    const typedData = {
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      domain,
      message: authorization,
    };
    const signature = sign(typedData, p3.privateKey);
    const presigned = await world.client.authorizations.create({
      orderId: `race-settled-${Date.now()}`,
      primaryType: 'TransferWithAuthorization',
      authorization,
      signature,
    });
    ids.push(presigned.id);
    const sig = parseSignature(signature);
    const settledHash = await payerWallet(3).writeContract({
      address: world.tokenAddress,
      abi: tokenAbi,
      functionName: 'transferWithAuthorization',
      chain: world.publicClient.chain,
      account: privateKeyToAccount(p3.privateKey),
      args: [
        authorization.from,
        authorization.to,
        70000n,
        BigInt(authorization.validAfter),
        BigInt(authorization.validBefore),
        authorization.nonce,
        Number(sig.v),
        sig.r,
        sig.s,
      ],
    });
    const outcome = await world.client.authorizations.capture(presigned.id, { waitMs: 30_000 }).then(
      (o) => o.authorization,
      () => undefined,
    );
    await world.publicClient.waitForTransactionReceipt({ hash: settledHash });
    const settled = await eventually(
      () => world.client.authorizations.get(presigned.id),
      (a) => a.state === 'captured',
      60_000,
    );
    expect(settled?.state).toBe('captured');
    expect(outcome === undefined || outcome.state === 'captured' || outcome.state === 'capturing').toBe(true);

    // 4. A capture mined only after validBefore: it reverts by block time, and the authorization expires.
    const lateId = await createStored(world, 4, '0.5', 8);
    ids.push(lateId);
    await world.testClient.setAutomine(false);
    await world.testClient.setIntervalMining({ interval: 0 });
    const late = world.client.authorizations.capture(lateId, { waitMs: 60_000 }).then(
      (o) => o.authorization.state,
      (e: { code?: string }) => e.code,
    );
    await sleep(10_000);
    await world.testClient.setIntervalMining({ interval: 1 });
    const lateOutcome = await late;
    expect(['authorization_expired', 'expired']).toContain(lateOutcome);
    expect(
      (
        await eventually(
          () => world.client.authorizations.get(lateId),
          (a) => a.state === 'expired',
          60_000,
        )
      )?.state,
    ).toBe('expired');

    // The settled-elsewhere transfer paid the merchant outside authcap's transactions: allowed once.
    const result = await audit(world, ids, { caseName: 'payer races', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  }, 600_000);
});
