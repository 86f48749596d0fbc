// `npm start` on a chain of the operator's own (RPC_URL, TOKEN_ADDRESS, MERCHANT_PRIVATE_KEY) instead
// of anvil. There authcap cannot fund demo payers, so the operator names some (AUTHCAP_DEMO_PAYER_KEYS)
// for dev.json, and the README's first payment works the same on either chain. Settings that only mean
// something on anvil are said to be ignored at start, never silently dropped.
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const CHAIN_VARIABLES = ['RPC_URL', 'TOKEN_ADDRESS', 'MERCHANT_PRIVATE_KEY'] as const;
const KEY = /^0x[0-9a-fA-F]{64}$/;

/**
 * True when RPC_URL, TOKEN_ADDRESS and MERCHANT_PRIVATE_KEY name the chain. Some of them without the
 * others is refused: the stack would otherwise start anvil, and the operator believe it is on theirs.
 */
export function usesExternalChain(env: NodeJS.ProcessEnv = process.env): boolean {
  const set = CHAIN_VARIABLES.filter((name) => env[name]);
  if (set.length === 0) return false;
  if (set.length === CHAIN_VARIABLES.length) return true;
  const missing = CHAIN_VARIABLES.filter((name) => !env[name]);
  throw new Error(
    `${CHAIN_VARIABLES.join(', ')} go together: ${set.join(' and ')} set without ${missing.join(' and ')}. ` +
      'Set all three to use your chain and token, or none for the dev chain (anvil)',
  );
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
    if (env.AUTHCAP_RPC_PORT) notices.push(`AUTHCAP_RPC_PORT=${env.AUTHCAP_RPC_PORT} is ignored: RPC_URL names the chain, so no anvil is started`);
    if (env.AUTHCAP_MERCHANT_KEYS) notices.push('AUTHCAP_MERCHANT_KEYS is ignored on your chain: name more merchant keys with MERCHANT_PRIVATE_KEYS');
    if (env.AUTHCAP_DEV_NETWORKS) notices.push('AUTHCAP_DEV_NETWORKS is ignored on your chain: list your networks in a deployment file (AUTHCAP_CONFIG)');
    if (!env.AUTHCAP_DEMO_PAYER_KEYS?.trim()) {
      notices.push(
        "dev.json will list no payers: set AUTHCAP_DEMO_PAYER_KEYS=0x…,0x… (keys of accounts holding the token on your chain) to try the README's examples",
      );
    }
  } else {
    if (env.AUTHCAP_DEMO_PAYER_KEYS) notices.push("AUTHCAP_DEMO_PAYER_KEYS is ignored on anvil: dev.json lists anvil's funded demo payers");
    // The stack writes its own file for the dev chain and hands it to every process.
    if (env.AUTHCAP_CONFIG) notices.push('AUTHCAP_CONFIG is ignored on anvil: the dev stack writes its own deployment.json in the state dir');
  }
  return notices;
}
