// A contract wallet (ERC-1271) as payer: its owner signs the typed data, authcap verifies through the
// wallet's isValidSignature, stores it and captures it onchain with the bytes-signature overload.
import { beforeAll, describe, expect, it } from 'vitest';
import { parseEventLogs, parseUnits, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, chain, dev, newOrderId, payer, tokenBalance, walletSign } from '../support/api.js';
import { deployContractWallet, mintTokens } from '../support/contractWallet.js';
import { expectApiError, expectNothingChanges } from '../support/sideEffects.js';

/** The wallet's owner: an EOA that only signs, never holds tokens or sends transactions. */
const ownerKey = generatePrivateKey();
const owner = privateKeyToAccount(ownerKey);
/** Not the owner: payer(3)'s key, used by this file only. */
const stranger = payer(3);

let wallet: Address;

beforeAll(async () => {
  wallet = await deployContractWallet(owner.address);
  expect(await chain().getCode({ address: wallet })).toMatch(/^0x[0-9a-f]{10,}$/);
  await mintTokens(wallet, parseUnits('100', 6));
  expect(await tokenBalance(wallet)).toBe(100_000_000n);
});

describe('an ERC-1271 contract wallet as payer', () => {
  it("stores the owner's signature and captures from the wallet", async () => {
    const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('erc1271'), payer: wallet, amount: '20.5' });
    expect(created.status).toBe(201);
    expect(created.body.state).toBe('drafted');
    expect(created.body.authorization.from).toBe(wallet);
    expect(created.body.authorization.to).toBe(dev().merchantAddress);
    expect(created.body.authorization.value).toBe('20500000');

    const signature = walletSign(created.body.typedData, ownerKey);
    const stored = await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature });
    expect(stored.status).toBe(200);
    expect(stored.body.state).toBe('stored');
    expect(stored.body.lastError).toBeNull();

    const walletBefore = await tokenBalance(wallet);
    const captured = await api('POST', `/v1/authorizations/${created.body.id}/capture`);
    expect(captured.status).toBe(200);
    expect(captured.body.state).toBe('captured');
    expect(captured.body.capture.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(captured.body.history.map((h: { state: string }) => h.state)).toEqual(['drafting', 'drafted', 'stored', 'capturing', 'captured']);

    // The wallet is this test's alone, so its balance moves by exactly the amount.
    expect(await tokenBalance(wallet)).toBe(walletBefore - 20_500_000n);
    const receipt = await chain().getTransactionReceipt({ hash: captured.body.capture.transactionHash });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(dev().merchantAddress.toLowerCase());
    expect(receipt.blockNumber).toBe(BigInt(captured.body.capture.blockNumber));
    const nonce = created.body.authorization.nonce;
    const used = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationUsed' });
    expect(used.map((l) => l.args)).toEqual([{ authorizer: wallet, nonce }]);
    const transfers = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'Transfer' });
    expect(transfers.map((l) => l.args)).toEqual([{ from: wallet, to: dev().merchantAddress, value: 20_500_000n }]);
    expect(await chain().readContract({ address: dev().tokenAddress, abi: tokenAbi, functionName: 'authorizationState', args: [wallet, nonce] })).toBe(true);

    // Other test files capture to the same merchant concurrently: across the capture's block its
    // balance moves by exactly the transfers to it in that block, ours among them.
    const block = receipt.blockNumber;
    const [merchantBefore, merchantAfter, inBlock] = await Promise.all([
      chain().readContract({ address: dev().tokenAddress, abi: tokenAbi, functionName: 'balanceOf', args: [dev().merchantAddress], blockNumber: block - 1n }),
      chain().readContract({ address: dev().tokenAddress, abi: tokenAbi, functionName: 'balanceOf', args: [dev().merchantAddress], blockNumber: block }),
      chain().getContractEvents({ address: dev().tokenAddress, abi: tokenAbi, eventName: 'Transfer', fromBlock: block, toBlock: block }),
    ]);
    const toMerchant = inBlock.filter((l) => l.args.to === dev().merchantAddress);
    expect(toMerchant.some((l) => l.transactionHash === receipt.transactionHash && l.args.value === 20_500_000n)).toBe(true);
    const fromMerchant = inBlock.filter((l) => l.args.from === dev().merchantAddress);
    const net = toMerchant.reduce((sum, l) => sum + l.args.value!, 0n) - fromMerchant.reduce((sum, l) => sum + l.args.value!, 0n);
    expect(merchantAfter - merchantBefore).toBe(net);
    expect(merchantAfter - merchantBefore).toBeGreaterThanOrEqual(20_500_000n);

    const fetched = await api('GET', `/v1/authorizations/${created.body.id}`);
    expect(fetched.body.state).toBe('captured');
  });

  it("refuses a signature by a key that is not the wallet's owner (422 invalid_signature)", async () => {
    const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('erc1271-stranger'), payer: wallet, amount: '3' });
    expect(created.status).toBe(201);
    const foreign = walletSign(created.body.typedData, stranger.privateKey);
    await expectNothingChanges({ payer: wallet, id: created.body.id }, async () => {
      const res = await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: foreign });
      expectApiError(res, 422, 'invalid_signature', new RegExp(wallet, 'i'));
    });
    // The right key over the wrong draft (another nonce) is refused too.
    const another = await api('POST', '/v1/authorizations', { orderId: newOrderId('erc1271-other-draft'), payer: wallet, amount: '3' });
    expect(another.status).toBe(201);
    const wrongDraft = walletSign(another.body.typedData, ownerKey);
    const res = await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: wrongDraft });
    expectApiError(res, 422, 'invalid_signature');

    const after = await api('GET', `/v1/authorizations/${created.body.id}`);
    expect(after.body.state).toBe('drafted');
    // Still nothing consumed: the owner's signature over this draft is accepted.
    const ok = await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: walletSign(created.body.typedData, ownerKey) });
    expect(ok.status).toBe(200);
    expect(ok.body.state).toBe('stored');
    for (const id of [created.body.id, another.body.id]) {
      expect((await api('POST', `/v1/authorizations/${id}/void`, { reason: 'test cleanup' })).status).toBe(200);
    }
  });
});
