// A real anvil per test file, the dev token on it, and a viem transport that records every JSON-RPC
// request by method and params, so tests can count exactly what reached the node.
import { randomBytes } from 'node:crypto';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  type Address,
  type Chain,
  type Hex,
  type Log,
  type PublicClient,
  type Transport,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type Anvil } from '../../../devstack/anvil.js';
import { freePort } from '../../../devstack/process.js';
import { deployDevToken, devAccounts } from '../../../devstack/token.js';
import { authcapToken } from '../../../contracts/artifacts.js';
import { createChainContext } from '../../../activities/chainContext.js';
import { tokenAbi } from '../../../domain/tokenAbi.js';
import { authorizationTypes, cancelAuthorizationTypes } from '../../../domain/eip3009.js';

export interface RecordedCall {
  method: string;
  params: unknown;
}

/** An http transport (no retries, as in production) that records every request before sending it. */
export function recordingTransport(url: string) {
  const calls: RecordedCall[] = [];
  const inner = http(url, { retryCount: 0 });
  const transport: Transport = (config) => {
    const t = inner(config);
    const request: typeof t.request = (args, options) => {
      calls.push({ method: args.method, params: args.params });
      return t.request(args, options);
    };
    return { ...t, request };
  };
  return {
    transport,
    calls,
    of: (method: string) => calls.filter((c) => c.method === method),
    count: (method?: string) => (method ? calls.filter((c) => c.method === method).length : calls.length),
    reset: () => void calls.splice(0),
  };
}

export type Recorder = ReturnType<typeof recordingTransport>;

export function freshNonce(): Hex {
  return `0x${randomBytes(32).toString('hex')}`;
}

export function hex(n: bigint | number): Hex {
  return `0x${n.toString(16)}`;
}

export function addressTopic(address: Address): Hex {
  return `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;
}

/** A log's identity across readers: transaction and position in the block. */
export function logKey(log: { transactionHash: Hex | null; logIndex: number | null }): string {
  return `${log.transactionHash}:${log.logIndex}`;
}

const FAR_FUTURE = 2n ** 40n;

export type TestChain = Awaited<ReturnType<typeof startChain>>;

export async function startChain(options: { blockTimeSeconds?: number } = {}) {
  const anvil: Anvil = await startAnvil({ port: await freePort(), ...options });
  const chain: Chain = defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const accounts = devAccounts(3);
  /** Client for setup and oracle reads: not recorded. */
  const plain = createPublicClient({ chain, transport: http(anvil.rpcUrl), pollingInterval: 50 });
  const testClient = createTestClient({ chain, mode: 'anvil', transport: http(anvil.rpcUrl) });

  /** A public client whose requests are recorded; `url` may point at a proxy in front of anvil. */
  function recordedClient(url = anvil.rpcUrl): { client: PublicClient<Transport, Chain>; rec: Recorder } {
    const rec = recordingTransport(url);
    return { client: createPublicClient({ chain, transport: rec.transport, pollingInterval: 50 }), rec };
  }

  const walletFor = (privateKey: Hex) =>
    createWalletClient({ chain, transport: http(anvil.rpcUrl), account: privateKeyToAccount(privateKey), pollingInterval: 50 });

  async function mined(hash: Hex) {
    const receipt = await plain.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  }

  async function domainOf(token: Address) {
    const [name, version] = await Promise.all([
      plain.readContract({ address: token, abi: tokenAbi, functionName: 'name' }),
      plain.readContract({ address: token, abi: tokenAbi, functionName: 'version' }),
    ]);
    return { name, version, chainId: anvil.chainId, verifyingContract: token };
  }

  return {
    anvil,
    chain,
    accounts,
    plain,
    testClient,
    recordedClient,
    walletFor,
    mined,
    rpcUrl: anvil.rpcUrl,
    deployDevToken: () => deployDevToken({ rpcUrl: anvil.rpcUrl, chain, accounts }),

    /** A second token (another address), owned by the token owner, with `mintTo` funded. */
    async deployOtherToken(mintTo: Address, amount: bigint): Promise<Address> {
      const owner = walletFor(accounts.tokenOwner.privateKey);
      const hash = await owner.deployContract({
        abi: authcapToken.abi,
        bytecode: authcapToken.bytecode,
        args: ['Other', 'OTH', 6, accounts.tokenOwner.address],
      });
      const token = (await mined(hash)).contractAddress!;
      await mined(await owner.writeContract({ address: token, abi: tokenAbi, functionName: 'mint', args: [mintTo, amount] }));
      return token;
    },

    async transfer(token: Address, fromKey: Hex, to: Address, value: bigint) {
      return mined(await walletFor(fromKey).writeContract({ address: token, abi: tokenAbi, functionName: 'transfer', args: [to, value] }));
    },

    /** receiveWithAuthorization signed by `payerKey`, submitted by the merchant (the payee). */
    async receiveWithAuthorization(token: Address, payerKey: Hex, value: bigint, nonce: Hex) {
      const payer = privateKeyToAccount(payerKey);
      const message = {
        from: payer.address,
        to: accounts.merchant.address,
        value,
        validAfter: 0n,
        validBefore: FAR_FUTURE,
        nonce,
      };
      const signature = await payer.signTypedData({
        domain: await domainOf(token),
        types: authorizationTypes,
        primaryType: 'ReceiveWithAuthorization',
        message,
      });
      const merchant = walletFor(accounts.merchant.privateKey);
      return mined(
        await merchant.writeContract({
          address: token,
          abi: tokenAbi,
          functionName: 'receiveWithAuthorization',
          args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, signature],
        }),
      );
    },

    /** cancelAuthorization signed by `payerKey`, submitted by the merchant. */
    async cancelAuthorization(token: Address, payerKey: Hex, nonce: Hex) {
      const payer = privateKeyToAccount(payerKey);
      const signature = await payer.signTypedData({
        domain: await domainOf(token),
        types: cancelAuthorizationTypes,
        primaryType: 'CancelAuthorization',
        message: { authorizer: payer.address, nonce },
      });
      const merchant = walletFor(accounts.merchant.privateKey);
      return mined(
        await merchant.writeContract({
          address: token,
          abi: tokenAbi,
          functionName: 'cancelAuthorization',
          args: [payer.address, nonce, signature],
        }),
      );
    },

    async mine(blocks: number) {
      await testClient.mine({ blocks });
    },

    /** Every log on the chain, read from receipts block by block: the oracle eth_getLogs is checked against. */
    async allLogs(): Promise<Log[]> {
      const latest = await plain.getBlockNumber({ cacheTime: 0 });
      const logs: Log[] = [];
      for (let n = 0n; n <= latest; n++) {
        const block = await plain.getBlock({ blockNumber: n });
        for (const hash of block.transactions) logs.push(...(await plain.getTransactionReceipt({ hash })).logs);
      }
      return logs;
    },

    stop: () => anvil.stop(),
  };
}

/** startChain with the dev token deployed and authcap's chain context on it, signing as the dev merchant key. */
export async function startTokenChain() {
  const test = await startChain({ blockTimeSeconds: 0 });
  const tokenAddress = await test.deployDevToken();
  const ctx = await createChainContext({
    rpcUrl: test.rpcUrl,
    tokenAddress,
    merchantPrivateKey: test.accounts.merchant.privateKey,
    validitySeconds: 900,
    confirmations: 1,
  });
  return { ...test, tokenAddress, ctx };
}
