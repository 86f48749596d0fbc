// `authcap dev sign <authorization id> [--payer N]`: the payer's step of a first payment, in the
// terminal, on the dev stack. It signs the draft's typed data with one of dev.json's demo payer keys
// and submits the signature through the API, as the checkout page would.
//
// Those keys are anvil's well-known accounts (or, on a chain of your own, AUTHCAP_DEMO_PAYER_KEYS): a
// signature is money on whatever chain the typed data names. So it signs only for a chain the dev
// stack itself lists in dev.json, whose node answers that chain id AND is anvil. Anything else is
// refused before a key is touched, with exit code 1.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createPublicClient, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { authorizationMessageValues, isAuthorizationPrimaryType, type AuthorizationMessage, type TypedDataPayload } from '../domain/eip3009.js';

interface DevJsonForSigning {
  apiUrl: string;
  apiKey: string;
  rpcUrl?: string;
  chainId?: number;
  payers: { address: Address; privateKey: Hex }[];
  networks?: { network: string; chainId: number; rpcUrl: string }[];
}

interface DraftedResource {
  id: string;
  state: string;
  amount?: string;
  token?: { symbol: string } | null;
  typedData: TypedDataPayload<string, AuthorizationMessage> | null;
}

/** Why nothing was signed, in words for the person at the terminal. */
class Refusal extends Error {}

type Out = (line: string) => void;

export async function devCommand(values: { payer?: string; json?: boolean }, positionals: string[], stateDir: string, out: Out, err: Out): Promise<number> {
  if (positionals[1] !== 'sign') {
    err('dev needs a subcommand: authcap dev sign <authorization id> [--payer N]');
    return 2;
  }
  const id = positionals[2];
  if (!id) {
    err('dev sign needs an authorization id: authcap dev sign <authorization id> [--payer N]');
    return 2;
  }
  try {
    const signed = await devSign(id, values.payer, stateDir);
    if (values.json) out(JSON.stringify(signed.resource, null, 2));
    else out(`signed as demo payer ${signed.payerIndex} (${signed.payer}) on chain ${signed.chainId}: ${id} is ${signed.resource.state}`);
    return 0;
  } catch (e) {
    if (!(e instanceof Refusal)) throw e;
    err(`refused: ${e.message}`);
    return 1;
  }
}

async function devSign(id: string, payerOption: string | undefined, stateDir: string) {
  const dev = readDevJson(stateDir);
  const resource = (await callApi(dev, 'GET', `/v1/authorizations/${encodeURIComponent(id)}`)) as DraftedResource;
  const typedData = resource.typedData;
  if (resource.state !== 'drafted' || !typedData) {
    throw new Refusal(`${id} is ${resource.state}; only a drafted authorization waits for the payer's signature`);
  }
  if (!isAuthorizationPrimaryType(typedData.primaryType)) throw new Refusal(`the typed data is a ${typedData.primaryType}, not an authorization to sign`);
  const chainId = Number(typedData.domain.chainId);
  await requireDevChain(dev, chainId);
  const { index, payer } = pickPayer(dev, typedData.message.from, payerOption);
  const { EIP712Domain: _, ...types } = typedData.types;
  const signature = await privateKeyToAccount(payer.privateKey).signTypedData({
    domain: typedData.domain,
    types,
    primaryType: typedData.primaryType,
    message: authorizationMessageValues(typedData.message),
  });
  const stored = (await callApi(dev, 'POST', `/v1/authorizations/${encodeURIComponent(id)}/signature`, { signature })) as DraftedResource;
  return { resource: stored, payerIndex: index, payer: payer.address, chainId };
}

function readDevJson(stateDir: string): DevJsonForSigning {
  const file = resolve(join(stateDir, 'dev.json'));
  let dev: DevJsonForSigning;
  try {
    dev = JSON.parse(readFileSync(file, 'utf8')) as DevJsonForSigning;
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Refusal(
      missing
        ? `there is no dev stack here: ${file} does not exist (run npm start, or set AUTHCAP_STATE_DIR to its state dir)`
        : `${file} cannot be read: ${(e as Error).message}`,
    );
  }
  if (typeof dev?.apiUrl !== 'string' || typeof dev.apiKey !== 'string' || !Array.isArray(dev.payers)) {
    throw new Refusal(`${file} is not a dev stack's dev.json (it needs apiUrl, apiKey and payers)`);
  }
  return dev;
}

/** The chain must be the dev stack's own and an anvil: never a key's signature for a real chain. */
async function requireDevChain(dev: DevJsonForSigning, chainId: number): Promise<void> {
  const networks =
    dev.networks ?? (dev.rpcUrl && dev.chainId !== undefined ? [{ network: `eip155:${dev.chainId}`, chainId: dev.chainId, rpcUrl: dev.rpcUrl }] : []);
  const network = networks.find((n) => n.chainId === chainId);
  if (!network) {
    const listed = networks.map((n) => n.chainId).join(', ') || 'none';
    throw new Refusal(`the authorization is for chain ${chainId}, which is not one of this dev stack's chains (dev.json lists ${listed})`);
  }
  const node = createPublicClient({ transport: http(network.rpcUrl, { retryCount: 0, timeout: 5_000 }) });
  let answered: number;
  let clientVersion: string;
  try {
    [answered, clientVersion] = await Promise.all([node.getChainId(), node.request({ method: 'web3_clientVersion' }) as Promise<string>]);
  } catch (e) {
    throw new Refusal(`the dev chain's node at ${network.rpcUrl} did not answer (${(e as Error).message.split('\n')[0]}); is npm start running?`);
  }
  if (answered !== chainId) {
    throw new Refusal(`the node at ${network.rpcUrl} is on chain ${answered}, not chain ${chainId} as dev.json says: not signing`);
  }
  if (typeof clientVersion !== 'string' || !clientVersion.toLowerCase().startsWith('anvil')) {
    throw new Refusal(
      `the node at ${network.rpcUrl} is ${JSON.stringify(clientVersion)}, not anvil: dev sign signs only on the dev chain. Sign on a real chain with the payer's own wallet (the checkout link).`,
    );
  }
}

function pickPayer(dev: DevJsonForSigning, from: Address, option: string | undefined) {
  const same = (p: { address: Address }) => p.address.toLowerCase() === from.toLowerCase();
  if (option === undefined) {
    const index = dev.payers.findIndex(same);
    if (index < 0) throw new Refusal(`the authorization's payer ${from} is not one of dev.json's demo payers`);
    return { index, payer: dev.payers[index]! };
  }
  const index = Number(option);
  const payer = Number.isSafeInteger(index) && index >= 0 ? dev.payers[index] : undefined;
  if (!payer) throw new Refusal(`--payer must be a demo payer's number, 0 to ${dev.payers.length - 1}, got ${JSON.stringify(option)}`);
  if (!same(payer)) throw new Refusal(`demo payer ${index} is ${payer.address}, but the authorization is for payer ${from}: only the payer can sign`);
  return { index, payer };
}

async function callApi(dev: DevJsonForSigning, method: string, path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${dev.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${dev.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new Refusal(`the API at ${dev.apiUrl} did not answer (${(e as Error).message}); is npm start running?`);
  }
  const text = await res.text();
  let parsed: { error?: { code: string; message: string } } | undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const why = parsed?.error ? `${parsed.error.code}: ${parsed.error.message}` : `HTTP ${res.status}`;
    throw new Refusal(`${method} ${path} was refused (${why})`);
  }
  return parsed;
}
