// A contract wallet (ERC-1271) payer on a token that cannot check its signatures (FiatToken v2.1: no
// `bytes signature` overloads, ecrecover only). The wallet's signature is genuine, but the token would
// refuse the capture onchain, so authcap refuses it when it is submitted (422
// contract_wallet_unsupported) and leaves the draft as it was; an ordinary account still pays.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAddress, hashTypedData, parseUnits, toHex, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { fiatTokenV21Like, mockErc1271Wallet } from '../../contracts/artifacts.js';
import type { TokenDomain } from '../../domain/eip3009.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { walletSign } from '../support/api.js';
import { isolatedBalance, startIsolatedChain, type IsolatedChain } from '../support/isolatedChain.js';
import { ethersSign } from '../support/lifecycle.js';
import { startOwnApi, type OwnApi } from '../support/ownApi.js';
import { expectApiError } from '../support/sideEffects.js';

/** The wallet's owner: an EOA that only signs. */
const ownerKey = generatePrivateKey();
const owner = privateKeyToAccount(ownerKey);
const ERC1271_MAGIC = '0x1626ba7e';

let chain: IsolatedChain;
let own: OwnApi;
let wallet: Address;

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${own.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${own.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

beforeAll(async () => {
  chain = await startIsolatedChain({ token: fiatTokenV21Like });
  own = await startOwnApi('v21', { rpcUrl: chain.anvil.rpcUrl }, chain.taskQueue);
  const deployed = await chain.ownerWallet.deployContract({
    abi: mockErc1271Wallet.abi,
    bytecode: mockErc1271Wallet.bytecode,
    args: [owner.address],
    account: chain.ownerWallet.account!,
    chain: undefined,
  });
  wallet = getAddress((await chain.publicClient.waitForTransactionReceipt({ hash: deployed })).contractAddress!);
  const minted = await chain.ownerWallet.writeContract({
    address: chain.tokenAddress,
    abi: tokenAbi,
    functionName: 'mint',
    args: [wallet, parseUnits('100', 6)],
    account: chain.ownerWallet.account!,
    chain: undefined,
  });
  await chain.publicClient.waitForTransactionReceipt({ hash: minted });
  expect(await isolatedBalance(chain, wallet)).toBe(100_000_000n);
}, 180_000);

afterAll(async () => {
  await own?.close();
  await chain?.stop();
});

describe('a contract-wallet payer on a FiatToken v2.1-like token', () => {
  it("refuses the wallet's genuine signature when it is submitted (422 contract_wallet_unsupported); the draft is untouched", async () => {
    const created = await call('POST', '/v1/authorizations', { orderId: `v21-wallet-${process.pid}-${Date.now()}`, payer: wallet, amount: '5' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.state).toBe('drafted');
    const signature = walletSign(created.body.typedData, ownerKey);
    // The wallet itself vouches for this signature: the refusal is about the token, not the payer.
    const vouched = await chain.publicClient.readContract({
      address: wallet,
      abi: mockErc1271Wallet.abi,
      functionName: 'isValidSignature',
      args: [hashTypedData(created.body.typedData), signature],
    });
    expect(vouched).toBe(ERC1271_MAGIC);
    const before = await call('GET', `/v1/authorizations/${created.body.id}`);

    const refused = await call('POST', `/v1/authorizations/${created.body.id}/signature`, { signature });
    expectApiError(refused, 422, 'contract_wallet_unsupported', /contract wallet.*FiatToken v2\.1/i);
    expect(refused.body.error.message).toContain(wallet);

    // Nothing stored, no state moved: the draft reads back exactly as before, and nothing onchain.
    const after = await call('GET', `/v1/authorizations/${created.body.id}`);
    expect(after.body).toEqual(before.body);
    expect(after.body.state).toBe('drafted');
    expect(await isolatedBalance(chain, wallet)).toBe(100_000_000n);
    const nonce = created.body.authorization.nonce;
    expect(
      await chain.publicClient.readContract({ address: chain.tokenAddress, abi: tokenAbi, functionName: 'authorizationState', args: [wallet, nonce] }),
    ).toBe(false);
    // Not stored, so there is nothing to capture.
    expectApiError(await call('POST', `/v1/authorizations/${created.body.id}/capture`), 409, 'invalid_state');
    expect((await call('POST', `/v1/authorizations/${created.body.id}/void`, { reason: 'test cleanup' })).status).toBe(200);
  }, 60_000);

  it('refuses a pre-signed authorization from the wallet the same way (422 contract_wallet_unsupported)', async () => {
    const domain: TokenDomain = { name: 'USD Coin', version: '2', chainId: chain.anvil.chainId, verifyingContract: chain.tokenAddress };
    const now = Math.floor(Date.now() / 1000);
    const authorization = {
      from: wallet,
      to: chain.merchant.address,
      value: '2000000',
      validAfter: '0',
      validBefore: String(now + 600),
      nonce: toHex(randomBytes(32)),
    };
    const signature = await ethersSign('ReceiveWithAuthorization', domain, authorization, ownerKey);
    const res = await call('POST', '/v1/authorizations', {
      orderId: `v21-presigned-${process.pid}-${Date.now()}`,
      primaryType: 'ReceiveWithAuthorization',
      authorization,
      signature,
      domain,
    });
    expectApiError(res, 422, 'contract_wallet_unsupported', /contract wallet/i);
    expect(res.body).not.toHaveProperty('id');
    expect(await isolatedBalance(chain, wallet)).toBe(100_000_000n);
  }, 60_000);

  it('an ordinary account (EOA) on the same token is stored and captured with the v, r, s overload', async () => {
    const payer = chain.payers[0]!;
    const created = await call('POST', '/v1/authorizations', { orderId: `v21-eoa-${process.pid}-${Date.now()}`, payer: payer.address, amount: '1.25' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const stored = await call('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: walletSign(created.body.typedData, payer.privateKey) });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    expect(stored.body.state).toBe('stored');
    const before = await isolatedBalance(chain, payer.address);
    const captured = await call('POST', `/v1/authorizations/${created.body.id}/capture`);
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body.state).toBe('captured');
    expect(await isolatedBalance(chain, payer.address)).toBe(before - 1_250_000n);
  }, 90_000);
});
