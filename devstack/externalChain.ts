// `npm start` on a chain of the operator's own, named by their deployment file (AUTHCAP_CONFIG),
// instead of anvil. There authcap cannot fund demo payers, so the operator names some
// (AUTHCAP_DEMO_PAYER_KEYS) for dev.json, and the README's first payment works the same on either
// chain. Settings that only mean something on anvil are said to be ignored at start, never silently dropped.
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const KEY = /^0x[0-9a-fA-F]{64}$/;

/** True when the operator's deployment file (AUTHCAP_CONFIG) names the chain; else the stack runs anvil. */
export function usesExternalChain(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.AUTHCAP_CONFIG?.trim();
}

/**
 * AUTHCAP_DEMO_PAYER_KEYS on an external chain: comma-separated private keys of accounts holding the
 * token there, listed in dev.json as `payers` (with their keys, as anvil's are: dev.json is 0600).
 */
export function demoPayersFromEnv(merchants: Address[], env: NodeJS.ProcessEnv = process.env): { address: Address; privateKey: Hex }[] {
  const raw = env.AUTHCAP_DEMO_PAYER_KEYS?.trim();
  if (!raw) return [];
  const payers = new Map<string, { address: Address; privateKey: Hex }>();
  raw
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .forEach((key, i) => {
      // The position, never the value: it is a private key.
      if (!KEY.test(key)) throw new Error(`AUTHCAP_DEMO_PAYER_KEYS must be 32-byte 0x-prefixed hex private keys separated by commas; entry ${i + 1} is not`);
      const address = privateKeyToAccount(key as Hex).address;
      if (merchants.some((m) => m.toLowerCase() === address.toLowerCase())) {
        throw new Error(`AUTHCAP_DEMO_PAYER_KEYS entry ${i + 1} is a merchant key (${address}): the API refuses the merchant as payer`);
      }
      payers.set(address.toLowerCase(), { address, privateKey: key.toLowerCase() as Hex });
    });
  return [...payers.values()];
}

/** What `npm start` says before it starts: settings it will not use here, and what dev.json will lack. */
export function startNotices(env: NodeJS.ProcessEnv = process.env): string[] {
  const notices: string[] = [];
  if (usesExternalChain(env)) {
    if (env.AUTHCAP_RPC_PORT) notices.push(`AUTHCAP_RPC_PORT=${env.AUTHCAP_RPC_PORT} is ignored: AUTHCAP_CONFIG names the chain, so no anvil is started`);
    if (env.AUTHCAP_DEV_NETWORKS) notices.push('AUTHCAP_DEV_NETWORKS is ignored on your chain: your deployment file lists the networks');
    if (env.AUTHCAP_MERCHANT_KEYS) notices.push("AUTHCAP_MERCHANT_KEYS is ignored on your chain: your deployment file's merchantKeys name the keys");
    for (const [name, field] of [
      ['AUTHCAP_CONFIRMATIONS', 'confirmations'],
      ['AUTHCAP_WS_URL', 'wsUrl'],
    ] as const)
      if (env[name] !== undefined) notices.push(`${name} is ignored on your chain: your deployment file says it per network (${field})`);
    if (!env.AUTHCAP_DEMO_PAYER_KEYS?.trim()) {
      notices.push(
        "dev.json will list no payers: set AUTHCAP_DEMO_PAYER_KEYS=0x…,0x… (keys of accounts holding the token on your chain) to try the README's examples",
      );
    }
  } else if (env.AUTHCAP_DEMO_PAYER_KEYS) notices.push("AUTHCAP_DEMO_PAYER_KEYS is ignored on anvil: dev.json lists anvil's funded demo payers");
  return notices;
}
