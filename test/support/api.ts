// Test helpers that talk to the running stack the way an order service would: HTTP and JSON.
import { inject } from 'vitest';
import { createPublicClient, http, type Address, type Hex } from 'viem';
import { SignTypedDataVersion, signTypedData } from '@metamask/eth-sig-util';
import { tokenAbi } from '../../domain/tokenAbi.js';

export const dev = () => {
  // The suite's payload keys, for every client this test process makes (library, CLI, workers).
  const keys = inject('codecKeys');
  if (keys && !process.env.AUTHCAP_CODEC_KEYS) process.env.AUTHCAP_CODEC_KEYS = keys;
  return inject('devJson');
};

export interface ApiResult<T = any> {
  status: number;
  body: T;
  headers?: Headers;
}

export interface ApiCallOptions {
  /** Another key than the order-service one in dev.json; null sends none. */
  key?: string | null;
  headers?: Record<string, string>;
}

export async function api<T = any>(method: string, path: string, body?: unknown, options: ApiCallOptions = {}): Promise<ApiResult<T>> {
  const key = options.key === undefined ? dev().apiKey : options.key;
  const res = await fetch(`${dev().apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...options.headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return readApiResult<T>(res);
}

/** An API answer: its status, its body as JSON (as text when it is not JSON) and its headers. */
export async function readApiResult<T>(res: Response): Promise<ApiResult<T>> {
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed as T, headers: res.headers } as ApiResult<T>;
}

let orderCounter = 0;
export function newOrderId(label = 'order'): string {
  orderCounter += 1;
  return `${label}-${process.pid}-${Date.now()}-${orderCounter}`;
}

/**
 * Signs an eth_signTypedData_v4 payload with MetaMask's own implementation — a different library
 * from the viem code authcap verifies with, so the payload is proven signable as a wallet gets it.
 */
export function walletSign(typedData: unknown, privateKey: Hex): Hex {
  return signTypedData({
    privateKey: Buffer.from(privateKey.slice(2), 'hex'),
    data: typedData as never,
    version: SignTypedDataVersion.V4,
  }) as Hex;
}

export function chain() {
  return createPublicClient({ transport: http(dev().rpcUrl), pollingInterval: 100 });
}

export async function tokenBalance(account: Address): Promise<bigint> {
  return chain().readContract({ address: dev().tokenAddress, abi: tokenAbi, functionName: 'balanceOf', args: [account] });
}

/** Payers are shared by test files running in parallel; each file takes its own. */
export function payer(index: number) {
  const payers = dev().payers;
  const p = payers[index % payers.length];
  if (!p) throw new Error('no demo payers in dev.json');
  return p;
}
