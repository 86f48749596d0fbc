// authcap as an x402 v2 facilitator, driven by the x402 SDK's own parts: an express 5 resource server
// (@x402/express, x402ResourceServer, HTTPFacilitatorClient pointed at `<apiUrl>/x402` with the
// facilitator key, the `exact` EVM server scheme), a buyer's paying fetch (@x402/fetch with the
// `exact` EVM client scheme, spend controls off: our token is no asset the SDK knows), `exact`
// payloads signed by hand for what the fetch client never sends (expired, wrong recipient, …), and
// direct calls to /x402/verify and /x402/settle. Also the chain reads the x402 cases check against.
import type { AuthorizationMessage } from '../../domain/eip3009.js';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, decodePaymentSignatureHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { HTTPFacilitatorClient, type FacilitatorClient } from '@x402/core/server';
import type {
  Network,
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  ResourceInfo,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { getAddress, parseEventLogs, toHex, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { authorizationTypes } from '../../domain/eip3009.js';
import { tokenAbi } from '../../domain/tokenAbi.js';

export type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse, VerifyResponse, SupportedResponse };

/** The CAIP-2 id of an EVM chain. */
export const networkOf = (chainId: number): Network => `eip155:${chainId}`;

/** The token's EIP-712 name and version, read from the token (what `extra` carries). */
export async function tokenEip712(client: PublicClient, token: Address): Promise<{ name: string; version: string }> {
  const [name, version] = await Promise.all([
    client.readContract({ address: token, abi: tokenAbi, functionName: 'name' }),
    client.readContract({ address: token, abi: tokenAbi, functionName: 'version' }),
  ]);
  return { name, version };
}

// --- the resource server -------------------------------------------------------------------------

export interface PaidRoute {
  /** `/paid`: served as GET. */
  path: string;
  /** Atomic units of the token. */
  amount: bigint;
  /** Default: the server's payTo (the merchant). */
  payTo?: Address;
  /** Default: the server's token. */
  asset?: Address;
  /** Default 60. */
  maxTimeoutSeconds?: number;
}

export interface ResourceServerOptions {
  /** authcap's API: the facilitator is `${apiUrl}/x402`. */
  apiUrl: string;
  /** A key of role `facilitator`. */
  facilitatorKey: string;
  chainId: number;
  tokenAddress: Address;
  /** The token's EIP-712 name and version (tokenEip712). */
  domain: { name: string; version: string };
  /** Who the routes are paid to unless a route says otherwise: authcap's merchant address. */
  payTo: Address;
  routes: PaidRoute[];
  /** The facilitator client's timeout per request (the SDK's default is 90 s). */
  timeoutMs?: number;
  /** Runs in a route's handler: after the payment was verified, before it is settled. */
  onHandle?: (path: string) => void | Promise<void>;
}

export interface FacilitatorCall {
  kind: 'verify' | 'settle' | 'supported';
  /** The payload's authorization nonce (verify, settle). */
  nonce?: Hex;
  result?: VerifyResponse | SettleResponse | SupportedResponse;
  /** What the facilitator client threw instead (its message). */
  error?: string;
}

export interface ResourceServer {
  url: string;
  network: Network;
  /** How often each route's handler ran: a request that got through verification. */
  handled: Map<string, number>;
  /** What the resource server asked authcap and what it was answered, in order. */
  calls: FacilitatorCall[];
  /** The requirements the server advertises for a route (as its 402 says them). */
  requirements(path: string): PaymentRequirements;
  close(): Promise<void>;
}

const nonceOfPayload = (payload: PaymentPayload): Hex | undefined => (payload.payload as { authorization?: { nonce?: Hex } } | undefined)?.authorization?.nonce;

/** The HTTP facilitator client, recording every call and its answer (what the resource server based its answer on). */
class RecordingFacilitator implements FacilitatorClient {
  constructor(
    private readonly inner: FacilitatorClient,
    readonly calls: FacilitatorCall[],
  ) {}

  private async record<T extends VerifyResponse | SettleResponse | SupportedResponse>(call: FacilitatorCall, run: () => Promise<T>): Promise<T> {
    this.calls.push(call);
    try {
      const result = await run();
      call.result = result;
      return result;
    } catch (err) {
      call.error = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }

  verify(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<VerifyResponse> {
    return this.record({ kind: 'verify', nonce: nonceOfPayload(paymentPayload) }, () => this.inner.verify(paymentPayload, paymentRequirements));
  }

  settle(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<SettleResponse> {
    return this.record({ kind: 'settle', nonce: nonceOfPayload(paymentPayload) }, () => this.inner.settle(paymentPayload, paymentRequirements));
  }

  getSupported(): Promise<SupportedResponse> {
    return this.record({ kind: 'supported' }, () => this.inner.getSupported());
  }
}

/** The `exact` requirements a route advertises (what the server scheme makes of `{asset, amount, extra}`). */
export function exactRequirements(options: {
  chainId: number;
  asset: Address;
  amount: bigint;
  payTo: Address;
  domain: { name: string; version: string };
  maxTimeoutSeconds?: number;
}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: networkOf(options.chainId),
    asset: options.asset,
    amount: options.amount.toString(),
    payTo: options.payTo,
    maxTimeoutSeconds: options.maxTimeoutSeconds ?? 60,
    extra: { name: options.domain.name, version: options.domain.version },
  };
}

const openServers = new Set<ResourceServer>();

/** An express resource server on 127.0.0.1 (a free port) charging for `routes` through authcap. */
export async function startResourceServer(options: ResourceServerOptions): Promise<ResourceServer> {
  const network = networkOf(options.chainId);
  const calls: FacilitatorCall[] = [];
  const http = new HTTPFacilitatorClient({
    url: `${options.apiUrl}/x402`,
    timeoutMs: options.timeoutMs ?? 120_000,
    createAuthHeaders: async () => {
      const headers = { Authorization: `Bearer ${options.facilitatorKey}` };
      return { verify: headers, settle: headers, supported: headers };
    },
  });
  const resourceServer = new x402ResourceServer(new RecordingFacilitator(http, calls)).register(network, new ExactEvmScheme());
  const routeRequirements = new Map<string, PaymentRequirements>();
  const routes: Record<string, { accepts: object; description: string; mimeType: string }> = {};
  for (const route of options.routes) {
    const payTo = route.payTo ?? options.payTo;
    const asset = route.asset ?? options.tokenAddress;
    const maxTimeoutSeconds = route.maxTimeoutSeconds ?? 60;
    routes[`GET ${route.path}`] = {
      accepts: {
        scheme: 'exact',
        network,
        payTo,
        price: { asset, amount: route.amount.toString(), extra: { name: options.domain.name, version: options.domain.version } },
        maxTimeoutSeconds,
      },
      description: `authcap x402 test resource ${route.path}`,
      mimeType: 'application/json',
    };
    routeRequirements.set(
      route.path,
      exactRequirements({ chainId: options.chainId, asset, amount: route.amount, payTo, domain: options.domain, maxTimeoutSeconds }),
    );
  }
  const handled = new Map<string, number>();
  const app = express();
  app.use(paymentMiddleware(routes as never, resourceServer));
  for (const route of options.routes) {
    app.get(route.path, async (_req, res) => {
      handled.set(route.path, (handled.get(route.path) ?? 0) + 1);
      await options.onHandle?.(route.path);
      res.json({ ok: true, path: route.path });
    });
  }
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const { port } = server.address() as AddressInfo;
  const started: ResourceServer = {
    url: `http://127.0.0.1:${port}`,
    network,
    handled,
    calls,
    requirements(path) {
      const r = routeRequirements.get(path);
      if (!r) throw new Error(`no route ${path}`);
      return r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        openServers.delete(started);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  openServers.add(started);
  return started;
}

/** Closes every resource server this process started (afterAll). */
export async function closeResourceServers(): Promise<void> {
  await Promise.all([...openServers].map((s) => s.close()));
}

// --- the buyer -----------------------------------------------------------------------------------

export interface Buyer {
  address: Address;
  /** fetch that pays a 402 with an `exact` EIP-3009 authorization signed by this buyer. */
  fetch(input: string, init?: RequestInit): Promise<Response>;
  /** Every PAYMENT-SIGNATURE header this buyer sent, in order (base64 JSON PaymentPayload). */
  sent: string[];
}

/** A buyer paying with @x402/fetch (wrapFetchWithPayment, x402Client, registerExactEvmScheme). */
export function payingFetch(privateKey: Hex): Buyer {
  const account = privateKeyToAccount(privateKey);
  const client = new x402Client().setSpendControls(false);
  registerExactEvmScheme(client, { signer: account });
  const sent: string[] = [];
  // The wrapped fetch hands a Request to the inner one: the payment header is read off it.
  const inner = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const header = request.headers.get('PAYMENT-SIGNATURE');
    if (header) sent.push(header);
    return fetch(request);
  };
  const paying = wrapFetchWithPayment(inner as typeof fetch, client);
  return { address: account.address, fetch: (input, init) => paying(input, init), sent };
}

/** The settlement a response carries in PAYMENT-RESPONSE, if any. */
export function paymentResponseOf(res: Response): SettleResponse | undefined {
  const header = res.headers.get('PAYMENT-RESPONSE');
  return header ? (decodePaymentResponseHeader(header) as SettleResponse) : undefined;
}

/** The PaymentRequired a 402 carries in PAYMENT-REQUIRED (its `error` is the refusal's reason), if any. */
export function paymentRequiredOf(res: Response): PaymentRequired | undefined {
  const header = res.headers.get('PAYMENT-REQUIRED');
  return header ? decodePaymentRequiredHeader(header) : undefined;
}

export const decodePaymentHeader = (header: string): PaymentPayload => decodePaymentSignatureHeader(header);
export const encodePaymentHeader = (payload: PaymentPayload): string => encodePaymentSignatureHeader(payload);

/** What a resource server says a route costs: its 402 for a request without payment. */
export async function advertised(url: string): Promise<PaymentRequired> {
  const res = await fetch(url);
  await res.arrayBuffer();
  if (res.status !== 402) throw new Error(`GET ${url} answered ${res.status}, not 402`);
  const required = paymentRequiredOf(res);
  if (!required) throw new Error(`GET ${url}: a 402 without PAYMENT-REQUIRED`);
  return required;
}

// --- exact payloads signed by hand ---------------------------------------------------------------

/** The EIP-3009 message an `exact` payload carries (wire form): the domain's own type. */
export type ExactAuthorization = AuthorizationMessage;

export const randomNonce = (): Hex => toHex(randomBytes(32));

/** The EIP-3009 authorization an `exact` payload carries. */
export function authorizationOf(payload: PaymentPayload): ExactAuthorization {
  const authorization = (payload.payload as { authorization?: ExactAuthorization }).authorization;
  if (!authorization) throw new Error('not an exact EIP-3009 payload');
  return authorization;
}

export interface SignOptions {
  /** The payer. */
  privateKey: Hex;
  /** What the payload accepts (and, by default, what its signature is for). */
  requirements: PaymentRequirements;
  resource?: ResourceInfo;
  /** Fields of the authorization other than the defaults (to = payTo, value = amount, validAfter 0, validBefore now + 120 s, a random nonce). */
  authorization?: Partial<ExactAuthorization>;
  /** Sign with this key instead of the payer's. */
  signerKey?: Hex;
  /** Sign over another domain than the requirements' (chainId, verifyingContract, name, version). */
  domain?: Partial<{ name: string; version: string; chainId: number; verifyingContract: Address }>;
}

/** A v2 PaymentPayload `{x402Version, resource, accepted, payload: {authorization, signature}}` signed with viem. */
export async function signExactPayload(options: SignOptions): Promise<PaymentPayload> {
  const { requirements } = options;
  const payer = privateKeyToAccount(options.privateKey);
  const now = Math.floor(Date.now() / 1000);
  const authorization: ExactAuthorization = {
    from: payer.address,
    to: getAddress(requirements.payTo),
    value: requirements.amount,
    validAfter: '0',
    validBefore: String(now + 120),
    nonce: randomNonce(),
    ...options.authorization,
  };
  const chainId = Number(requirements.network.split(':')[1]);
  const domain = {
    name: String(requirements.extra?.name ?? ''),
    version: String(requirements.extra?.version ?? ''),
    chainId,
    verifyingContract: getAddress(requirements.asset),
    ...options.domain,
  };
  const signer = privateKeyToAccount(options.signerKey ?? options.privateKey);
  const signature = await signer.signTypedData({
    domain,
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: authorization.from,
      to: authorization.to,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce,
    },
  });
  return {
    x402Version: 2,
    ...(options.resource ? { resource: options.resource } : {}),
    accepted: requirements,
    payload: { authorization, signature },
  };
}

export const signatureOf = (payload: PaymentPayload): Hex => (payload.payload as { signature: Hex }).signature;

// --- authcap's /x402 routes, called directly -----------------------------------------------------

export interface FacilitatorAnswer<T = any> {
  status: number;
  body: T;
}

/** One call to authcap's /x402 routes; `key` null sends no Authorization header. */
export async function facilitatorCall<T = any>(
  apiUrl: string,
  key: string | null,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<FacilitatorAnswer<T>> {
  const res = await fetch(`${apiUrl}/x402${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the failure message
  }
  return { status: res.status, body: parsed as T };
}

/** The body HTTPFacilitatorClient sends to /verify and /settle. */
export function facilitatorBody(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements = paymentPayload.accepted) {
  return { x402Version: paymentPayload.x402Version, paymentPayload, paymentRequirements };
}

// --- the chain -----------------------------------------------------------------------------------

export interface TransferLog {
  from: Address;
  to: Address;
  value: bigint;
  transactionHash: Hex;
}

/** Every Transfer the token ever logged out of `from` (one account or several). */
export async function transfersFrom(client: PublicClient, token: Address, from: Address | Address[], fromBlock = 0n): Promise<TransferLog[]> {
  const logs = await client.getContractEvents({ address: token, abi: tokenAbi, eventName: 'Transfer', args: { from }, fromBlock, toBlock: 'latest' });
  return logs.map((l) => ({ from: l.args.from!, to: l.args.to!, value: l.args.value!, transactionHash: l.transactionHash! }));
}

/** The token's Transfer logs in one transaction (its receipt must be successful). */
export async function transfersIn(client: PublicClient, token: Address, hash: Hex): Promise<TransferLog[]> {
  const receipt = await client.getTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  return parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'Transfer' })
    .filter((l) => l.address.toLowerCase() === token.toLowerCase())
    .map((l) => ({ from: l.args.from, to: l.args.to, value: l.args.value, transactionHash: l.transactionHash }));
}

export function balanceOf(client: PublicClient, token: Address, account: Address): Promise<bigint> {
  return client.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [account] });
}

export function nonceUsed(client: PublicClient, token: Address, authorizer: Address, nonce: Hex): Promise<boolean> {
  return client.readContract({ address: token, abi: tokenAbi, functionName: 'authorizationState', args: [authorizer, nonce] });
}
