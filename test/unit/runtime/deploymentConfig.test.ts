// The deployment configuration without a chain: what a file turns into,
// every kind of wrong entry refused with where it is, and how the catalog picks a request's network
// and token (with the stable error codes callers act on).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { AuthcapError, type ErrorCode } from '../../../domain/errors.js';
import { Catalog, type ServedNetwork, type ServedToken } from '../../../runtime/deployment/catalog.js';
import { DeploymentConfigError, loadDeployment, parseDeployment, variablesNamedBy, type LoadedDeployment } from '../../../runtime/deployment/load.js';
import { chainIdOfNetwork, networkOfChainId } from '../../../runtime/deployment/schema.js';

const TOKEN_A = `0x${'a1'.repeat(20)}` as Address;
const TOKEN_B = `0x${'b2'.repeat(20)}` as Address;
const KEY_1 = `0x${'11'.repeat(32)}`;
const KEY_2 = `0x${'22'.repeat(32)}`;
const KEY_3 = `0x${'33'.repeat(32)}`;
const env = { MERCHANT_PRIVATE_KEY: KEY_1 };
/** `${NAME}`: a configuration's reference to an environment variable. */
const ref = (name: string) => `\${${name}}`;

const network = (overrides: Record<string, unknown> = {}) => ({ id: 'eip155:8453', rpcUrls: ['https://base.example/rpc'], tokens: [TOKEN_A], ...overrides });
const text = (networks: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ networks, ...extra });

/** The DeploymentConfigError `run` throws (fails the test when it throws nothing, or something else). */
function configError(run: () => unknown): DeploymentConfigError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(DeploymentConfigError);
    return err as DeploymentConfigError;
  }
  throw new Error('expected a DeploymentConfigError, nothing was thrown');
}

function authcapError(run: () => unknown, code: ErrorCode): AuthcapError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AuthcapError);
    expect((err as AuthcapError).code).toBe(code);
    return err as AuthcapError;
  }
  throw new Error(`expected AuthcapError ${code}, nothing was thrown`);
}

describe('parseDeployment: valid configurations', () => {
  it('one network, with the defaults applied and the merchant key read from MERCHANT_PRIVATE_KEY', () => {
    const loaded = parseDeployment(text([network()]), 'authcap.json', env);
    expect(loaded.source).toBe('authcap.json');
    expect(loaded.networks).toHaveLength(1);
    const [only] = loaded.networks;
    expect(only).toEqual({
      id: 'eip155:8453',
      rpcUrls: ['https://base.example/rpc'],
      confirmations: 1,
      logSpan: 1999,
      tokens: [TOKEN_A],
      merchantPrivateKeys: [KEY_1],
    });
    // merchantKeys (names of variables) never leave the loader: only the keys they hold.
    expect(only).not.toHaveProperty('merchantKeys');
  });

  it('two networks, each with its own settings, in the order given', () => {
    const loaded = parseDeployment(
      text([
        network({ name: 'Base', confirmations: 'safe', logSpan: 500, wsUrl: 'wss://base.example/ws', publicRpcUrls: ['https://mainnet.base.org'] }),
        network({
          id: 'eip155:1',
          rpcUrls: ['https://eth-a.example', 'https://eth-b.example'],
          tokens: [TOKEN_A, TOKEN_B],
          confirmations: 12,
          merchantKeys: ['ETH_KEY'],
        }),
      ]),
      'two.json',
      { ...env, ETH_KEY: KEY_2 },
    );
    expect(loaded.networks.map((n) => n.id)).toEqual(['eip155:8453', 'eip155:1']);
    expect(loaded.networks[0]).toMatchObject({
      name: 'Base',
      confirmations: 'safe',
      logSpan: 500,
      wsUrl: 'wss://base.example/ws',
      publicRpcUrls: ['https://mainnet.base.org'],
      merchantPrivateKeys: [KEY_1],
    });
    expect(loaded.networks[1]).toMatchObject({
      rpcUrls: ['https://eth-a.example', 'https://eth-b.example'],
      tokens: [TOKEN_A, TOKEN_B],
      confirmations: 12,
      logSpan: 1999,
      merchantPrivateKeys: [KEY_2],
    });
  });

  it('CAIP-2 ids and chain ids convert both ways', () => {
    expect(chainIdOfNetwork('eip155:8453')).toBe(8453);
    expect(networkOfChainId(31337n)).toBe('eip155:31337');
    expect(networkOfChainId('0x2105')).toBe('eip155:8453');
  });
});

describe('parseDeployment: each wrong entry is refused with its path', () => {
  const cases: { what: string; config: string; path: string; says: RegExp }[] = [
    { what: 'a network id that is not CAIP-2', config: text([network(), network({ id: 'base' })]), path: 'networks[1].id', says: /CAIP-2/ },
    { what: 'a CAIP-2 id with a leading zero', config: text([network({ id: 'eip155:08453' })]), path: 'networks[0].id', says: /CAIP-2/ },
    {
      what: 'an RPC URL that is not a URL',
      config: text([network({ rpcUrls: ['https://ok.example', 'localhost:8545'] })]),
      path: 'networks[0].rpcUrls[1]',
      says: /http or https URL/,
    },
    { what: 'a WebSocket URL over http', config: text([network({ wsUrl: 'http://base.example' })]), path: 'networks[0].wsUrl', says: /ws or wss URL/ },
    { what: 'no RPC URL at all', config: text([network({ rpcUrls: [] })]), path: 'networks[0].rpcUrls', says: /1/ },
    { what: 'an empty token list', config: text([network(), network({ id: 'eip155:1', tokens: [] })]), path: 'networks[1].tokens', says: /1/ },
    {
      what: 'a token that is not an address',
      config: text([network(), network({ id: 'eip155:1', tokens: ['0x1234'] })]),
      path: 'networks[1].tokens[0]',
      says: /token contract address/,
    },
    { what: 'a network listed twice', config: text([network(), network()]), path: 'networks[1].id', says: /eip155:8453 is listed twice/ },
    {
      what: 'a token listed twice (in another case)',
      config: text([network({ tokens: [TOKEN_A, TOKEN_B, TOKEN_A.toUpperCase().replace('0X', '0x')] })]),
      path: 'networks[0].tokens[2]',
      says: /listed twice/,
    },
    {
      what: 'an unknown field in a network',
      config: text([network(), network({ id: 'eip155:1', rpcUrl: 'https://x.example' })]),
      path: 'networks[1]',
      says: /rpcUrl/,
    },
    { what: 'an unknown field at the top', config: text([network()], { tokens: [TOKEN_A] }), path: 'the configuration', says: /tokens/ },
    { what: 'confirmations of 0', config: text([network({ confirmations: 0 })]), path: 'networks[0].confirmations', says: /./ },
    { what: 'confirmations named otherwise', config: text([network({ confirmations: 'latest' })]), path: 'networks[0].confirmations', says: /./ },
    {
      what: 'a merchant key name that is not a variable name',
      config: text([network({ merchantKeys: ['0xabc'] })]),
      path: 'networks[0].merchantKeys[0]',
      says: /environment variable/,
    },
    { what: 'no networks', config: text([]), path: 'networks', says: /1/ },
  ];

  for (const { what, config, path, says } of cases) {
    it(`${what} → ${path}`, () => {
      const err = configError(() => parseDeployment(config, 'conf.json', env));
      expect(err.message.startsWith('conf.json: ')).toBe(true);
      expect(err.message).toContain(`${path}: `);
      expect(err.message).toMatch(says);
    });
  }

  it('lists every wrong entry, not just the first', () => {
    const err = configError(() => parseDeployment(text([network({ id: 'nope' }), network({ id: 'eip155:1', tokens: ['0x12'] })]), 'conf.json', env));
    expect(err.message).toContain('networks[0].id: ');
    expect(err.message).toContain('networks[1].tokens[0]: ');
  });

  it('text that is not JSON', () => {
    const err = configError(() => parseDeployment('{ networks: [', 'conf.json', env));
    expect(err.message).toMatch(/^conf\.json is not JSON: /);
  });

  it('JSON that is not an object', () => {
    const err = configError(() => parseDeployment('[]', 'conf.json', env));
    expect(err.message).toContain('conf.json: the configuration: ');
  });
});

describe('parseDeployment: URLs named from the environment', () => {
  it('reads RPC and WebSocket URLs from the environment', () => {
    const loaded = parseDeployment(text([network({ rpcUrls: [ref('BASE_RPC'), 'https://public.example'], wsUrl: ref('BASE_WS') })]), 'conf.json', {
      ...env,
      BASE_RPC: ' https://base.provider.example/v2/secret ',
      BASE_WS: 'wss://base.provider.example/ws/secret',
    });
    expect(loaded.networks[0]!.rpcUrls).toEqual(['https://base.provider.example/v2/secret', 'https://public.example']);
    expect(loaded.networks[0]!.wsUrl).toBe('wss://base.provider.example/ws/secret');
  });

  it('refuses a reference to an unset variable, naming it and the network', () => {
    const err = configError(() => parseDeployment(text([network(), network({ id: 'eip155:1', rpcUrls: [ref('ETH_RPC')] })]), 'conf.json', env));
    expect(err.message).toContain(`${ref('ETH_RPC')} is not set`);
    expect(err.message).toContain('networks[1] (eip155:1)');
  });

  it('refuses a reference to a variable set to blanks', () => {
    const err = configError(() => parseDeployment(text([network({ wsUrl: ref('BASE_WS') })]), 'conf.json', { ...env, BASE_WS: '   ' }));
    expect(err.message).toContain(`${ref('BASE_WS')} is not set`);
  });

  it('a lower-case reference is not a reference: refused as a URL', () => {
    const err = configError(() => parseDeployment(text([network({ rpcUrls: [ref('base_rpc')] })]), 'conf.json', { ...env, base_rpc: 'https://x.example' }));
    expect(err.message).toContain('networks[0].rpcUrls[0]: ');
  });
});

describe('parseDeployment: merchant keys', () => {
  it('refuses a named variable that is not set, naming it', () => {
    const err = configError(() => parseDeployment(text([network({ merchantKeys: ['MERCHANT_PRIVATE_KEY', 'BASE_KEY'] })]), 'conf.json', env));
    expect(err.message).toContain('merchantKeys names BASE_KEY, which is not set');
    expect(err.message).toContain('networks[0] (eip155:8453)');
  });

  it('refuses the default MERCHANT_PRIVATE_KEY when it is unset', () => {
    const err = configError(() => parseDeployment(text([network()]), 'conf.json', {}));
    expect(err.message).toContain('MERCHANT_PRIVATE_KEY');
  });

  it('refuses a malformed key without showing it', () => {
    const bad = `0x${'ab'.repeat(31)}`;
    const err = configError(() => parseDeployment(text([network()]), 'conf.json', { MERCHANT_PRIVATE_KEY: bad }));
    expect(err.message).toContain('MERCHANT_PRIVATE_KEY must be a 32-byte key');
    expect(err.message).not.toContain(bad);
  });

  it('refuses the bad one of several keys, saying which', () => {
    const err = configError(() => parseDeployment(text([network()]), 'conf.json', { MERCHANT_PRIVATE_KEY: `${KEY_1},nope` }));
    expect(err.message).toContain('MERCHANT_PRIVATE_KEY (key 2) must be a 32-byte key');
  });

  it('reads several comma-separated keys, trimmed, lower-cased and without repeats', () => {
    const upper = `0x${'AB'.repeat(32)}`;
    const loaded = parseDeployment(text([network({ merchantKeys: ['KEYS_A', 'KEYS_B'] })]), 'conf.json', {
      KEYS_A: ` ${KEY_1} , ${upper},${KEY_2}`,
      KEYS_B: `${KEY_2}, ${KEY_3}`,
    });
    expect(loaded.networks[0]!.merchantPrivateKeys).toEqual([KEY_1, upper.toLowerCase(), KEY_2, KEY_3]);
  });

  it('keys: false reads no key at all (processes that never sign)', () => {
    const loaded = parseDeployment(text([network({ merchantKeys: ['NOT_SET_ANYWHERE'] })]), 'conf.json', {}, { keys: false });
    expect(loaded.networks[0]!.merchantPrivateKeys).toEqual([]);
    // …but still checks everything else.
    expect(() => parseDeployment(text([network({ tokens: [] })]), 'conf.json', {}, { keys: false })).toThrow(DeploymentConfigError);
  });
});

describe('loadDeployment: AUTHCAP_CONFIG', () => {
  const dir = mkdtempSync(join(tmpdir(), 'authcap-deployment-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the file it names', () => {
    const file = join(dir, 'authcap.json');
    writeFileSync(file, text([network({ rpcUrls: [ref('BASE_RPC')] })]));
    const loaded = loadDeployment({
      AUTHCAP_CONFIG: ` ${file} `,
      BASE_RPC: 'https://base.example',
      ...env,
    });
    expect(loaded.source).toBe(file);
    expect(loaded.networks).toHaveLength(1);
    expect(loaded.networks[0]).toMatchObject({ id: 'eip155:8453', rpcUrls: ['https://base.example'], tokens: [TOKEN_A], merchantPrivateKeys: [KEY_1] });
  });

  it("names the file in a wrong entry's message", () => {
    const file = join(dir, 'wrong.json');
    writeFileSync(file, text([network({ tokens: ['0x12'] })]));
    const err = configError(() => loadDeployment({ AUTHCAP_CONFIG: file, ...env }));
    expect(err.message).toContain(`${file}: networks[0].tokens[0]: `);
  });

  it('refuses a file that cannot be read, naming it', () => {
    const missing = join(dir, 'missing.json');
    const err = configError(() => loadDeployment({ AUTHCAP_CONFIG: missing, ...env }));
    expect(err.message).toContain(`AUTHCAP_CONFIG names ${missing}, which cannot be read`);
    expect(err.message).toContain('ENOENT');
  });
});

describe('loadDeployment: AUTHCAP_CONFIG is the one way', () => {
  it('without it, says to set it and where npm start keeps its own', () => {
    // Variables a network was once described with are not read: the file is the one configuration path.
    for (const given of [{}, { AUTHCAP_CONFIG: '  ' }, { RPC_URL: 'http://127.0.0.1:8545', TOKEN_ADDRESS: TOKEN_A, ...env }]) {
      const err = configError(() => loadDeployment(given));
      expect(err.message).toMatch(/^set AUTHCAP_CONFIG to the deployment file/);
      expect(err.message).toContain('npm start');
    }
  });
});

describe('variablesNamedBy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'authcap-named-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("lists the merchant key variables and the URLs' variables a file names, once each", () => {
    const file = join(dir, 'named.json');
    writeFileSync(
      file,
      text([
        network({ rpcUrls: [ref('BASE_RPC'), 'https://base.example/public'], wsUrl: ref('BASE_WS'), merchantKeys: ['MERCHANT_PRIVATE_KEY', 'BASE_KEY'] }),
        network({ id: 'eip155:1', rpcUrls: [ref('ETH_RPC')] }),
      ]),
    );
    expect(variablesNamedBy(file)).toEqual({ keys: ['MERCHANT_PRIVATE_KEY', 'BASE_KEY'], urls: ['BASE_RPC', 'BASE_WS', 'ETH_RPC'] });
  });
});

describe('Catalog.select', () => {
  const token = (address: Address, symbol: string, decimals = 6): ServedToken => ({ address, name: symbol, version: '2', symbol, decimals, form: 'bytes' });
  const served = (id: string, tokens: ServedToken[]): ServedNetwork => ({ network: id, chainId: chainIdOfNetwork(id), name: id, tokens });
  const usdcBase = token(TOKEN_A, 'USDC');
  const usdcEth = token(TOKEN_B, 'USDC');
  const eurc = token(`0x${'c3'.repeat(20)}`, 'EURC');

  it('one network with one token: a request naming neither is on it', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase])]);
    expect(catalog.single).toBe(true);
    const selected = catalog.select({});
    expect(selected).toMatchObject({ network: 'eip155:8453', token: TOKEN_A, served: usdcBase });
    expect(selected.servedNetwork.network).toBe('eip155:8453');
    expect(catalog.select({ network: null, token: null })).toMatchObject({ network: 'eip155:8453', token: TOKEN_A });
    expect(catalog.defaultRef).toEqual({ network: 'eip155:8453', token: TOKEN_A });
  });

  it('two networks: naming neither is a validation_error asking for the network', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase]), served('eip155:1', [usdcEth])]);
    expect(catalog.single).toBe(false);
    const err = authcapError(() => catalog.select({}), 'validation_error');
    expect(err.message).toMatch(/name the network/);
    expect(err.message).toContain('USDC on eip155:8453');
    expect(err.message).toContain('USDC on eip155:1');
  });

  it('one network with two tokens: naming none asks for the token only', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase, eurc])]);
    const err = authcapError(() => catalog.select({ network: 'eip155:8453' }), 'validation_error');
    expect(err.message).toMatch(/^name the token:/);
  });

  it('a token by symbol, in any case and with blanks around it', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase, eurc]), served('eip155:1', [usdcEth])]);
    expect(catalog.select({ token: ' eurc ' })).toMatchObject({ network: 'eip155:8453', token: eurc.address, served: eurc });
    expect(catalog.select({ network: 'eip155:1', token: 'usdc' })).toMatchObject({ network: 'eip155:1', token: TOKEN_B });
  });

  it('a token by address, in any case; the answer carries the configured spelling', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase, eurc]), served('eip155:1', [usdcEth])]);
    const selected = catalog.select({ token: TOKEN_B.toUpperCase().replace('0X', '0x') });
    expect(selected).toMatchObject({ network: 'eip155:1', token: TOKEN_B });
    expect(selected.servedNetwork.chainId).toBe(1);
  });

  it('an unknown network is network_not_served, listing the served ones', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase]), served('eip155:1', [usdcEth])]);
    const err = authcapError(() => catalog.select({ network: 'eip155:10', token: 'USDC' }), 'network_not_served');
    expect(err.message).toContain('eip155:10');
    expect(err.message).toContain('served: eip155:8453, eip155:1');
  });

  it('an unknown token is token_not_served, listing what is served where', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase, eurc]), served('eip155:1', [usdcEth])]);
    const err = authcapError(() => catalog.select({ network: 'eip155:1', token: 'EURC' }), 'token_not_served');
    expect(err.message).toContain('token EURC is not served on eip155:1');
    expect(err.message).toContain(`USDC (${TOKEN_B}) on eip155:1`);
    expect(err.message).not.toContain('eip155:8453');
    const anywhere = authcapError(() => catalog.select({ token: `0x${'dd'.repeat(20)}` }), 'token_not_served');
    expect(anywhere.message).toContain(`EURC (${eurc.address}) on eip155:8453`);
  });

  it('a symbol served on two networks, without the network, is a validation_error asking for the network', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase]), served('eip155:1', [usdcEth])]);
    const err = authcapError(() => catalog.select({ token: 'USDC' }), 'validation_error');
    expect(err.message).toMatch(/name the network/);
    // With the network, the same symbol is one token.
    expect(catalog.select({ network: 'eip155:8453', token: 'USDC' }).token).toBe(TOKEN_A);
  });

  it('the same token address served on two networks is told apart by the network', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase]), served('eip155:84532', [usdcBase])]);
    authcapError(() => catalog.select({ token: TOKEN_A }), 'validation_error');
    expect(catalog.select({ network: 'eip155:84532', token: TOKEN_A }).network).toBe('eip155:84532');
  });

  it('tokenOf: what a reference leaves out is the default token; otherwise the token named', () => {
    const catalog = new Catalog([served('eip155:8453', [usdcBase, eurc]), served('eip155:1', [usdcEth])]);
    expect(catalog.tokenOf(undefined)).toBe(usdcBase);
    expect(catalog.tokenOf({})).toBe(usdcBase);
    expect(catalog.tokenOf({ network: 'eip155:1', token: TOKEN_B })).toBe(usdcEth);
    expect(catalog.tokenOf({ token: eurc.address.toUpperCase().replace('0X', '0x') as Address })).toBe(eurc);
    expect(catalog.tokenOf({ network: 'eip155:10', token: TOKEN_A })).toBeUndefined();
  });

  it('refuses an empty catalog', () => {
    expect(() => new Catalog([])).toThrow(/at least one network/);
  });
});

describe('LoadedDeployment shape', () => {
  it('is plain data (it crosses process and workflow boundaries as JSON)', () => {
    const loaded: LoadedDeployment = parseDeployment(text([network({ wsUrl: 'wss://x.example' })]), 'conf.json', env);
    expect(JSON.parse(JSON.stringify(loaded))).toEqual(loaded);
  });
});

describe('network names', () => {
  it('reads x402 v1 names as their CAIP-2 ids, passes CAIP-2 through, and knows no other word', async () => {
    const { normalizeNetwork } = await import('../../../runtime/deployment/schema.js');
    expect(normalizeNetwork('base')).toBe('eip155:8453');
    expect(normalizeNetwork('Base-Sepolia')).toBe('eip155:84532');
    expect(normalizeNetwork('eip155:42161')).toBe('eip155:42161');
    expect(normalizeNetwork('solana')).toBeUndefined();
    expect(normalizeNetwork('eip155:0')).toBeUndefined();
  });
});
