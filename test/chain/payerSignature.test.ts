// chainAcceptsSignature on a real anvil: a contract wallet's ERC-1271 answer decides (its owner's
// signature yes, a stranger's no), an EOA's non-own signature is no without asking the wallet, and a
// node that cannot be reached is an error (ChainUnreachableError), never a "no": a payer's genuine
// signature must not be refused, or counted against them, because the node was down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, defineChain, getAddress, http, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { mockErc1271Wallet } from '../../contracts/artifacts.js';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import { devAccounts } from '../../devstack/token.js';
import { authorizationMessageValues, authorizationTypes } from '../../domain/eip3009.js';
import { ChainUnreachableError, chainAcceptsSignature } from '../../runtime/payerSignature.js';

let anvil: Anvil;
let client: PublicClient;
let wallet: Address;
const accounts = devAccounts(3);
const owner = privateKeyToAccount(accounts.payers[0]!.privateKey);
const stranger = privateKeyToAccount(accounts.payers[1]!.privateKey);
const domain = { name: 'USD Coin', version: '2', chainId: 0, verifyingContract: '0x0000000000000000000000000000000000000001' as Address };

const typedData = (from: Address) => ({
  domain,
  types: authorizationTypes,
  primaryType: 'ReceiveWithAuthorization' as const,
  message: authorizationMessageValues({
    from,
    to: accounts.merchant.address,
    value: '1',
    validAfter: '0',
    validBefore: '99999999999',
    nonce: `0x${'cd'.repeat(32)}` as Hex,
  }),
});

beforeAll(async () => {
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0 });
  domain.chainId = anvil.chainId;
  const chain = defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  client = createPublicClient({ chain, transport: http(anvil.rpcUrl) }) as PublicClient;
  const deployer = createWalletClient({ chain, transport: http(anvil.rpcUrl), account: privateKeyToAccount(accounts.tokenOwner.privateKey) });
  const hash = await deployer.deployContract({ abi: mockErc1271Wallet.abi, bytecode: mockErc1271Wallet.bytecode, args: [owner.address] });
  wallet = getAddress((await client.waitForTransactionReceipt({ hash })).contractAddress!);
});

afterAll(async () => {
  await anvil?.stop();
});

describe('chainAcceptsSignature', () => {
  it("accepts a contract wallet's owner's signature and refuses a stranger's (ERC-1271)", async () => {
    const data = typedData(wallet);
    expect(await chainAcceptsSignature(client, wallet, data, await owner.signTypedData(data))).toBe(true);
    expect(await chainAcceptsSignature(client, wallet, data, await stranger.signTypedData(data))).toBe(false);
  });

  it("refuses, without asking anyone but the node for the account's code, a signature over an EOA's authorization that is not its own", async () => {
    const data = typedData(owner.address);
    expect(await chainAcceptsSignature(client, owner.address, data, await stranger.signTypedData(data))).toBe(false);
  });

  it('throws ChainUnreachableError when the node cannot be reached: not a verdict', async () => {
    const down = createPublicClient({ transport: http(`http://127.0.0.1:${await freePort()}`, { retryCount: 0 }) }) as PublicClient;
    const data = typedData(wallet);
    await expect(chainAcceptsSignature(down, wallet, data, await owner.signTypedData(data))).rejects.toBeInstanceOf(ChainUnreachableError);
  });
});
