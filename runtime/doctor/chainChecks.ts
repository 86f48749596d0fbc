// The doctor's chain checks, per network: each node URL answers and serves the chain its id names
// (with a recent head), each token is an EIP-3009 contract authcap can use, each merchant key has gas.
// The node and token checks are the worker's own start checks (runtime/deployment/resolve.ts), run
// one URL and one token at a time so each gets its own line; the gas rule is the capture precheck's.
import { erc20Abi, formatEther, formatUnits, type Address, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import * as knownChains from 'viem/chains';
import { captureGasCost } from '../chain/captureGas.js';
import type { ServedToken } from '../deployment/catalog.js';
import type { LoadedDeployment, LoadedNetwork } from '../deployment/load.js';
import { networkReader, resolveDeployment } from '../deployment/resolve.js';
import { redactUrl, whyNodeFails } from './nodeProbe.js';
import { bounded, CALL_TIMEOUT_MS, check, firstLine, type DoctorCheck } from './report.js';

/** A head older than this: the node has stopped following its chain (or the chain has stopped). */
export const STALE_HEAD_SECONDS = 300;
/** Below gas for this many captures, a merchant key is a warning: it runs dry under load. */
export const GAS_WARN_CAPTURES = 100n;

// The resolver's messages start with their source; the doctor's lines say where themselves.
const SOURCE = 'doctor';

interface Where {
  network: LoadedNetwork;
  index: number;
  /** The deployment file. */
  file: string;
}

/** Where to fix a field: its path in the deployment file. */
function pathOf(where: Where, field: 'rpcUrls' | 'tokens' | 'merchantKeys' | 'id', j = 0): string {
  const indexed = field === 'rpcUrls' || field === 'tokens' ? `[${j}]` : '';
  return `networks[${where.index}].${field}${indexed} in ${where.file}`;
}

/** The resolver's reason, without the "doctor: eip155:1: token 0x…:" it starts with. */
function reasonAfter(err: unknown, marker: string): string {
  const message = firstLine(err);
  const at = message.lastIndexOf(marker);
  return at >= 0 ? message.slice(at + marker.length) : message.replace(`${SOURCE}: `, '');
}

function nativeSymbol(chainId: number): string {
  const chain = Object.values(knownChains).find((c) => (c as { id?: number }).id === chainId) as { nativeCurrency?: { symbol: string } } | undefined;
  return chain?.nativeCurrency?.symbol ?? 'native coin';
}

export async function chainChecks(loaded: LoadedDeployment, keysLoaded: boolean): Promise<DoctorCheck[]> {
  const perNetwork = await Promise.all(loaded.networks.map((network, index) => networkChecks({ network, index, file: loaded.source }, keysLoaded)));
  return perNetwork.flat();
}

async function networkChecks(where: Where, keysLoaded: boolean): Promise<DoctorCheck[]> {
  const { network } = where;
  const nodes = await Promise.all(network.rpcUrls.map((url, j) => nodeCheck(where, url, j)));
  const answering = nodes.filter((n) => n.chainId !== undefined);
  const id = network.id;
  const checks = nodes.map((n) => n.check);
  if (answering.length === 0) {
    const why = `not checked: no node of ${id} answers`;
    checks.push(...network.tokens.map((address) => check('skip', 'token', `${id} token ${address}`, why)));
    if (keysLoaded)
      checks.push(...network.merchantPrivateKeys.map((key) => check('skip', 'merchant', `${id} merchant ${privateKeyToAccount(key).address}`, why)));
    return checks;
  }
  const urls = answering.map((n) => n.url);
  const tokens = await Promise.all(network.tokens.map((address, j) => tokenCheck(where, id, urls, address as Address, j)));
  checks.push(...tokens.map((t) => t.check));
  if (!keysLoaded) return [...checks, check('skip', 'merchant', `${id} merchant keys`, 'not checked: the merchant keys do not load (see the deployment line)')];
  const reader = networkReader(urls, CALL_TIMEOUT_MS);
  const served = tokens.flatMap((t) => (t.token ? [t.token] : []));
  checks.push(...(await Promise.all(network.merchantPrivateKeys.map((key) => merchantCheck(where, id, answering[0]!.chainId!, reader, key, served)))));
  return checks;
}

interface NodeResult {
  url: string;
  chainId?: number;
  check: DoctorCheck;
}

async function nodeCheck(where: Where, url: string, j: number): Promise<NodeResult> {
  const { network } = where;
  const label = network.id;
  const subject = network.rpcUrls.length > 1 ? `${label} rpcUrls[${j}]` : label;
  const shown = redactUrl(url);
  const one: LoadedDeployment = { source: SOURCE, networks: [{ ...network, rpcUrls: [url], tokens: [] }] };
  let resolved: Awaited<ReturnType<typeof resolveDeployment>>['networks'][number];
  try {
    resolved = (await bounded(resolveDeployment(one, { timeoutMs: CALL_TIMEOUT_MS }), `the node at ${shown}`)).networks[0]!;
  } catch (err) {
    const failed = (found: string, fix: string): NodeResult => ({ url, check: check('fail', 'network', subject, found, fix) });
    if (/serves chain/.test(firstLine(err)))
      return failed(reasonAfter(err, `${label}: `), `point ${pathOf(where, 'rpcUrls', j)} at a node of ${label}, or correct ${pathOf(where, 'id')}`);
    return failed(`the node at ${shown} does not answer (${await whyNodeFails(url)})`, `check ${pathOf(where, 'rpcUrls', j)}, and that the node is up`);
  }
  try {
    const head = await bounded(networkReader([url], CALL_TIMEOUT_MS).getBlock({ blockTag: 'latest' }), `the head block of ${shown}`);
    const age = Math.round(Date.now() / 1000 - Number(head.timestamp));
    const found = `the node at ${shown} serves chain ${resolved.chainId}; head block ${head.number}, ${age >= 0 ? `${age} s old` : `${-age} s ahead of this host's clock`}`;
    if (age > STALE_HEAD_SECONDS)
      return {
        url,
        chainId: resolved.chainId,
        check: check(
          'warn',
          'network',
          subject,
          `${found}: stale (older than ${STALE_HEAD_SECONDS / 60} minutes)`,
          'check that the node is synced (or use another provider)',
        ),
      };
    return { url, chainId: resolved.chainId, check: check('ok', 'network', subject, found) };
  } catch (err) {
    return {
      url,
      chainId: resolved.chainId,
      check: check(
        'warn',
        'network',
        subject,
        `the node at ${shown} serves chain ${resolved.chainId} but its head block could not be read (${firstLine(err)})`,
      ),
    };
  }
}

async function tokenCheck(where: Where, id: string, urls: string[], address: Address, j: number): Promise<{ check: DoctorCheck; token?: ServedToken }> {
  const subject = `${id} token ${address}`;
  const one: LoadedDeployment = { source: SOURCE, networks: [{ ...where.network, rpcUrls: urls, tokens: [address] }] };
  try {
    const resolved = await bounded(resolveDeployment(one, { timeoutMs: CALL_TIMEOUT_MS }), `token ${address}`, 2 * CALL_TIMEOUT_MS);
    const token = resolved.networks[0]!.tokens[0]!;
    const form = token.form === 'bytes' ? 'bytes signatures (v2.2: contract wallets too)' : 'v, r, s signatures only (v2.1)';
    return {
      token,
      check: check('ok', 'token', subject, `${token.symbol}: "${token.name}" version "${token.version}", ${token.decimals} decimals, EIP-3009 with ${form}`),
    };
  } catch (err) {
    return {
      check: check(
        'fail',
        'token',
        subject,
        reasonAfter(err, `token ${address}: `),
        `check ${pathOf(where, 'tokens', j)}: it must be the token's contract address on ${id}`,
      ),
    };
  }
}

async function merchantCheck(where: Where, id: string, chainId: number, reader: PublicClient, key: `0x${string}`, tokens: ServedToken[]): Promise<DoctorCheck> {
  const address = privateKeyToAccount(key).address;
  const subject = `${id} merchant ${address}`;
  try {
    const [balance, block, holdings] = await bounded(
      Promise.all([
        reader.getBalance({ address, blockTag: 'pending' }),
        reader.getBlock({ blockTag: 'pending' }),
        Promise.all(tokens.map((t) => reader.readContract({ address: t.address, abi: erc20Abi, functionName: 'balanceOf', args: [address] }))),
      ]),
      `the balances of ${address}`,
    );
    // What the capture precheck asks a merchant key to hold (runtime/chain/captureGas.ts).
    const perCapture = captureGasCost(block.baseFeePerGas);
    const captures = balance / perCapture;
    const tokenText = tokens.length ? `; holds ${tokens.map((t, i) => `${formatUnits(holdings[i]!, t.decimals)} ${t.symbol}`).join(', ')} (for refunds)` : '';
    const held = `holds ${formatEther(balance)} ${nativeSymbol(chainId)} for gas`;
    const fund = `send ${nativeSymbol(chainId)} to ${address} on ${id}`;
    if (captures < 1n)
      return check(
        'fail',
        'merchant',
        subject,
        `${held}: less than one capture needs (${formatEther(perCapture)}); captures fail with insufficient_merchant_gas${tokenText}`,
        fund,
      );
    if (captures < GAS_WARN_CAPTURES)
      return check('warn', 'merchant', subject, `${held}: below the gas for ${GAS_WARN_CAPTURES} captures (~${captures} at the current fee)${tokenText}`, fund);
    return check('ok', 'merchant', subject, `${held}: ~${captures} captures at the current fee${tokenText}`);
  } catch (err) {
    return check('warn', 'merchant', subject, `its balances could not be read (${firstLine(err)})`, `check ${pathOf(where, 'rpcUrls')}`);
  }
}
