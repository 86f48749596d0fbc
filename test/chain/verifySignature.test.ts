// The signature check at submission, on a real anvil with our token: a payer's own ECDSA signature
// (nearly every payment) is judged locally, with no call to the node; anything else still goes to
// the chain, and a wrong signature is still refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineChain, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createChainContext, type ChainContext } from '../../activities/chainContext.js';
import { readTokenDomain } from '../../activities/tokenDomain.js';
import { createVerifyActivity } from '../../activities/verify.js';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import { deployDevToken, devAccounts } from '../../devstack/token.js';
import { authorizationMessageValues, authorizationTypes, type AuthorizationMessage, type TokenDomain } from '../../domain/eip3009.js';

let anvil: Anvil;
let ctx: ChainContext;
let domain: TokenDomain;
const accounts = devAccounts(2);

beforeAll(async () => {
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0 });
  const chain = defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const tokenAddress = await deployDevToken({ rpcUrl: anvil.rpcUrl, chain, accounts });
  ctx = await createChainContext({
    rpcUrl: anvil.rpcUrl,
    tokenAddress,
    merchantPrivateKey: accounts.merchant.privateKey,
    validitySeconds: 900,
    confirmations: 1,
    wsUrl: '',
  });
  domain = await readTokenDomain(ctx);
});

afterAll(async () => {
  ctx?.heads.stop();
  await anvil?.stop();
});

function authorization(from: Hex): AuthorizationMessage {
  return { from, to: ctx.merchant, value: '10000', validAfter: '0', validBefore: String(Math.floor(Date.now() / 1000) + 900), nonce: `0x${'ab'.repeat(32)}` };
}

async function signAs(privateKey: Hex, message: AuthorizationMessage): Promise<Hex> {
  return privateKeyToAccount(privateKey).signTypedData({
    domain,
    types: authorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message: authorizationMessageValues(message),
  });
}

describe('verifyAuthorizationSignature', () => {
  it("accepts the payer's own signature without a call to the node", async () => {
    const payer = accounts.payers[0]!;
    const message = authorization(payer.address);
    const signature = await signAs(payer.privateKey, message);
    const before = ctx.rpcMetrics.snapshot().calls;
    const check = await createVerifyActivity(ctx)({ domain, primaryType: 'ReceiveWithAuthorization', authorization: message, signature });
    expect(check).toEqual({ valid: true });
    expect(ctx.rpcMetrics.snapshot().calls - before).toBe(0);
  });

  it("refuses someone else's signature as invalid_signature", async () => {
    const message = authorization(accounts.payers[0]!.address);
    const signature = await signAs(accounts.payers[1]!.privateKey, message);
    const check = await createVerifyActivity(ctx)({ domain, primaryType: 'ReceiveWithAuthorization', authorization: message, signature });
    expect(check).toMatchObject({ valid: false, code: 'invalid_signature' });
  });
});
