// The start checks against real nodes: each network's node must serve the chain its id names, and
// each token's name, version, symbol, decimals and EIP-3009 form come from the chain. Two anvils:
// one with our token (v2.2's `bytes signature` overloads), one with a FiatToken v2.1-like token.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, defineChain, getAddress, http, type Address, type Chain } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { fiatTokenV21Like, mockErc1271Wallet } from '../../contracts/artifacts.js';
import { ANVIL_MNEMONIC, startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import { deployDevToken, deployDevTokens, devAccounts } from '../../devstack/token.js';
import { AuthcapError } from '../../domain/errors.js';
import { DeploymentConfigError, parseDeployment, type LoadedDeployment, type LoadedNetwork } from '../../runtime/deployment/load.js';
import { resolveDeployment } from '../../runtime/deployment/resolve.js';

const V21_CHAIN_ID = 31_338;
const MERCHANT_KEY = devAccounts(0).merchant.privateKey;
/** `${NAME}`: a configuration's reference to an environment variable. */
const ref = (name: string) => `\${${name}}`;

let ours: Anvil;
let v21: Anvil;
let ourToken: Address;
/** Our token again, with 18 decimals: decimals are read from the chain, not assumed. */
let ourToken18: Address;
let v21Token: Address;
/** A contract that is not a token (an ERC-1271 wallet) on `ours`. */
let notAToken: Address;
/** A port nothing listens on. */
let deadUrl: string;
/** Accepts connections and never answers. */
let silent: Server;
let silentUrl: string;
const silentSockets = new Set<Socket>();

function chainOf(anvil: Anvil): Chain {
  return defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
}

beforeAll(async () => {
  [ours, v21] = await Promise.all([
    freePort().then((port) => startAnvil({ port, blockTimeSeconds: 0 })),
    freePort().then((port) => startAnvil({ port, blockTimeSeconds: 0, chainId: V21_CHAIN_ID })),
  ]);
  const accounts = devAccounts(0);
  let oursTokens: Address[];
  [oursTokens, v21Token] = await Promise.all([
    deployDevTokens({
      rpcUrl: ours.rpcUrl,
      chain: chainOf(ours),
      accounts,
      tokens: [
        { name: 'USD Coin', symbol: 'USDC' },
        { name: 'Dev Dollar', symbol: 'DD18', decimals: 18 },
      ],
    }),
    deployDevToken({ rpcUrl: v21.rpcUrl, chain: chainOf(v21), accounts, name: 'Bridged USDC', symbol: 'USDC.e', artifact: fiatTokenV21Like }),
  ]);
  [ourToken, ourToken18] = oursTokens as [Address, Address];
  const owner = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 0 });
  const wallet = createWalletClient({ chain: chainOf(ours), transport: http(ours.rpcUrl), account: owner });
  const hash = await wallet.deployContract({ abi: mockErc1271Wallet.abi, bytecode: mockErc1271Wallet.bytecode, args: [owner.address] });
  const receipt = await createPublicClient({ chain: chainOf(ours), transport: http(ours.rpcUrl) }).waitForTransactionReceipt({ hash });
  notAToken = getAddress(receipt.contractAddress!);

  deadUrl = `http://127.0.0.1:${await freePort()}`;
  silent = createServer((socket) => {
    silentSockets.add(socket);
    socket.on('close', () => silentSockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
}, 120_000);

afterAll(async () => {
  for (const socket of silentSockets) socket.destroy();
  await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
  await Promise.all([ours?.stop(), v21?.stop()]);
});

/** A configuration file's text, loaded with the dev merchant key. */
function load(networks: Record<string, unknown>[]): LoadedDeployment {
  return parseDeployment(JSON.stringify({ networks }), 'test.json', { MERCHANT_PRIVATE_KEY: MERCHANT_KEY });
}

async function refusal(loaded: LoadedDeployment, timeoutMs?: number): Promise<DeploymentConfigError> {
  const outcome = await resolveDeployment(loaded, timeoutMs === undefined ? {} : { timeoutMs }).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(DeploymentConfigError);
  return outcome as DeploymentConfigError;
}

describe('resolveDeployment', () => {
  it("reads our token's domain and form from the chain", async () => {
    const resolved = await resolveDeployment(load([{ id: 'eip155:31337', rpcUrls: [ours.rpcUrl], tokens: [ourToken.toLowerCase()], confirmations: 2 }]));
    expect(resolved.source).toBe('test.json');
    expect(resolved.networks).toHaveLength(1);
    const [network] = resolved.networks;
    expect(network).toMatchObject({ network: 'eip155:31337', chainId: 31337, name: 'eip155:31337', confirmations: 2, rpcUrls: [ours.rpcUrl] });
    expect(network!.merchantPrivateKeys).toEqual([MERCHANT_KEY.toLowerCase()]);
    expect(network!.tokens).toEqual([{ address: ourToken.toLowerCase(), name: 'USD Coin', version: '2', symbol: 'USDC', decimals: 6, form: 'bytes' }]);
  });

  it('reads decimals from the chain: an 18-decimal token beside a 6-decimal one', async () => {
    const resolved = await resolveDeployment(load([{ id: 'eip155:31337', rpcUrls: [ours.rpcUrl], tokens: [ourToken, ourToken18] }]));
    expect(resolved.networks[0]!.tokens.map((t) => [t.address, t.symbol, t.decimals, t.form])).toEqual([
      [ourToken, 'USDC', 6, 'bytes'],
      [ourToken18, 'DD18', 18, 'bytes'],
    ]);
    expect(resolved.catalog.select({ token: 'dd18' }).served.decimals).toBe(18);
  });

  it('the catalog of one network and token: nothing secret in it, and requests naming neither are on it', async () => {
    const resolved = await resolveDeployment(load([{ id: 'eip155:31337', rpcUrls: [ours.rpcUrl], tokens: [ourToken.toLowerCase()] }]));
    const network = resolved.networks[0]!;
    // The catalog every process sees: the same tokens, and nothing secret.
    expect(resolved.catalog.networks).toEqual([{ network: 'eip155:31337', chainId: 31337, name: 'eip155:31337', tokens: network.tokens }]);
    expect(JSON.stringify(resolved.catalog.networks)).not.toContain(MERCHANT_KEY.slice(2).toLowerCase());
    expect(resolved.catalog.select({}).token).toBe(ourToken.toLowerCase());
    expect(resolved.catalog.select({ token: 'usdc' }).token).toBe(ourToken.toLowerCase());
  });

  it("reads a v2.1-like token's form as 'vrs'", async () => {
    const resolved = await resolveDeployment(load([{ id: `eip155:${V21_CHAIN_ID}`, name: 'v2.1 chain', rpcUrls: [v21.rpcUrl], tokens: [v21Token] }]));
    expect(resolved.networks[0]).toMatchObject({ network: `eip155:${V21_CHAIN_ID}`, chainId: V21_CHAIN_ID, name: 'v2.1 chain' });
    expect(resolved.networks[0]!.tokens).toEqual([{ address: v21Token, name: 'Bridged USDC', version: '2', symbol: 'USDC.e', decimals: 6, form: 'vrs' }]);
  });

  it('resolves two networks into one catalog, each token on its own chain', async () => {
    const resolved = await resolveDeployment(
      load([
        { id: 'eip155:31337', rpcUrls: [ours.rpcUrl], tokens: [ourToken], publicRpcUrls: ['https://public.example'] },
        { id: `eip155:${V21_CHAIN_ID}`, rpcUrls: [v21.rpcUrl], tokens: [v21Token] },
      ]),
    );
    const { catalog } = resolved;
    expect(catalog.networks.map((n) => [n.network, n.tokens.map((t) => `${t.symbol}/${t.form}`)])).toEqual([
      ['eip155:31337', ['USDC/bytes']],
      [`eip155:${V21_CHAIN_ID}`, ['USDC.e/vrs']],
    ]);
    expect(catalog.networks[0]!.publicRpcUrls).toEqual(['https://public.example']);
    expect(catalog.networks[1]).not.toHaveProperty('publicRpcUrls');
    expect(catalog.select({ token: 'USDC.E' })).toMatchObject({ network: `eip155:${V21_CHAIN_ID}`, token: v21Token });
    let refused: unknown;
    try {
      catalog.select({});
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(AuthcapError);
    expect((refused as AuthcapError).code).toBe('validation_error');
  });

  it('refuses a node serving another chain than the id names, naming both', async () => {
    const err = await refusal(load([{ id: 'eip155:8453', rpcUrls: [ours.rpcUrl], tokens: [ourToken] }]));
    expect(err.message).toContain('test.json: eip155:8453: ');
    expect(err.message).toContain('serves chain 31337 (eip155:31337), not eip155:8453');
  });

  it('refuses two networks that are one chain', async () => {
    const base: Omit<LoadedNetwork, 'id'> = {
      rpcUrls: [ours.rpcUrl],
      tokens: [ourToken],
      confirmations: 1,
      logSpan: 1999,
      merchantPrivateKeys: [],
    };
    const err = await refusal({
      source: 'mixed',
      networks: [
        { ...base, id: 'eip155:31337' },
        { ...base, id: 'eip155:31337' },
      ],
    });
    expect(err.message).toBe('mixed: two networks are eip155:31337');
  });

  it('refuses a token address with no contract', async () => {
    const nothing = `0x${'de'.repeat(20)}`;
    const err = await refusal(load([{ id: 'eip155:31337', rpcUrls: [ours.rpcUrl], tokens: [ourToken, nothing] }]));
    expect(err.message).toContain(`eip155:31337: token ${nothing}: no contract at this address`);
  });

  it('refuses a contract that is not a token', async () => {
    const err = await refusal(load([{ id: 'eip155:31337', rpcUrls: [ours.rpcUrl], tokens: [notAToken] }]));
    expect(err.message).toContain(`token ${notAToken}: not an EIP-3009 token authcap can use`);
  });

  it('refuses a token that is on another network than configured (no code there)', async () => {
    const elsewhere = getAddress(`0x${'ef'.repeat(20)}`);
    const err = await refusal(load([{ id: `eip155:${V21_CHAIN_ID}`, rpcUrls: [v21.rpcUrl], tokens: [elsewhere] }]));
    expect(err.message).toContain('no contract at this address on this network');
  });

  it('a node that does not answer: says so, showing only its host (provider URLs carry keys)', async () => {
    const host = new URL(deadUrl).host;
    const err = await refusal(load([{ id: 'eip155:31337', rpcUrls: [`${deadUrl}/v2/SECRETPATHKEY?apikey=SECRETQUERYKEY`], tokens: [ourToken] }]));
    expect(err.message).toContain(`eip155:31337: the node at ${host} did not answer eth_chainId`);
    expect(err.message).not.toContain('SECRETPATHKEY');
    expect(err.message).not.toContain('SECRETQUERYKEY');
    expect(err.message).not.toContain('/v2');
  });

  it('a node that accepts and never answers: refused after the timeout, URL redacted too', async () => {
    const started = Date.now();
    const err = await refusal(load([{ id: 'eip155:31337', rpcUrls: [`${silentUrl}/key/SECRETPATHKEY`], tokens: [ourToken] }]), 500);
    // One attempt (a single URL is not retried): well under what a second 500 ms attempt would add.
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(err.message).toContain(`the node at ${new URL(silentUrl).host} did not answer eth_chainId`);
    expect(err.message).not.toContain('SECRETPATHKEY');
  });

  it('a URL named from the environment that is a dead node is redacted like any other', async () => {
    const loaded = parseDeployment(JSON.stringify({ networks: [{ id: 'eip155:31337', rpcUrls: [ref('PROVIDER_URL')], tokens: [ourToken] }] }), 'test.json', {
      PROVIDER_URL: `${deadUrl}/SECRETPATHKEY`,
      MERCHANT_PRIVATE_KEY: MERCHANT_KEY,
    });
    const err = await refusal(loaded);
    expect(err.message).toContain(new URL(deadUrl).host);
    expect(err.message).not.toContain('SECRETPATHKEY');
  });

  it('falls back to the next URL when the first is dead', async () => {
    const resolved = await resolveDeployment(load([{ id: 'eip155:31337', rpcUrls: [`${deadUrl}/SECRETPATHKEY`, ours.rpcUrl], tokens: [ourToken] }]));
    expect(resolved.networks[0]!.chainId).toBe(31337);
    expect(resolved.networks[0]!.tokens[0]).toMatchObject({ symbol: 'USDC', form: 'bytes' });
    // Both URLs stay configured, in order, for the processes that use them.
    expect(resolved.networks[0]!.rpcUrls).toEqual([`${deadUrl}/SECRETPATHKEY`, ours.rpcUrl]);
  });

  it("falls back for a v2.1-like token too: its form is still 'vrs' behind a dead first URL", async () => {
    const resolved = await resolveDeployment(load([{ id: `eip155:${V21_CHAIN_ID}`, rpcUrls: [deadUrl, v21.rpcUrl], tokens: [v21Token] }]));
    expect(resolved.networks[0]!.tokens[0]).toMatchObject({ symbol: 'USDC.e', form: 'vrs' });
  });

  it('every URL dead: refused, naming the first host only', async () => {
    const err = await refusal(load([{ id: 'eip155:31337', rpcUrls: [`${deadUrl}/FIRSTKEY`, `${silentUrl}/SECONDKEY`], tokens: [ourToken] }]), 500);
    expect(err.message).toContain(`the node at ${new URL(deadUrl).host} did not answer`);
    expect(err.message).not.toContain('FIRSTKEY');
    expect(err.message).not.toContain('SECONDKEY');
  });
});
