// What an order service does in the fault cases: create, have the payer sign, capture; all through
// the typed client library (the API process is exercised by its own case).
import { SignTypedDataVersion, signTypedData } from '@metamask/eth-sig-util';
import type { Hex } from 'viem';
import { eventually, kill, sleep, type World } from './harness.js';

let counter = 0;

export function sign(typedData: unknown, privateKey: Hex): Hex {
  return signTypedData({ privateKey: Buffer.from(privateKey.slice(2), 'hex'), data: typedData as never, version: SignTypedDataVersion.V4 }) as Hex;
}

export async function createStored(world: World, i: number, amount = '0.01', validForSeconds?: number, network?: string): Promise<string> {
  const p = world.payers[i % world.payers.length]!;
  counter += 1;
  const drafted = await world.client.authorizations.create({
    orderId: `fault-${process.pid}-${Date.now()}-${counter}`,
    payer: p.address,
    amount,
    validForSeconds,
    ...(network ? { network } : {}),
  });
  const stored = await world.client.authorizations.sign(drafted.id, sign(drafted.typedData, p.privateKey));
  return stored.id;
}

/** Fires a capture and forgets its answer: the audit reads the outcome from authcap and the chain. */
export function captureInBackground(world: World, id: string): Promise<unknown> {
  return world.client.authorizations.capture(id, { waitMs: 60_000 }).catch((err: unknown) => err);
}

/**
 * After a fault: captures cut off by it go on in their workflows, and the ones left stored are
 * captured again, as an order service would. Resolves with each authorization once it is captured
 * (or as it stands when `timeoutMs` runs out).
 */
export async function settleCaptures(world: World, ids: string[], captures: Promise<unknown>[], timeoutMs: number) {
  await Promise.all(captures);
  for (const id of ids) {
    const a = await world.client.authorizations.get(id);
    if (a.state === 'stored') await captureInBackground(world, id);
  }
  return Promise.all(
    ids.map((id) =>
      eventually(
        () => world.client.authorizations.get(id),
        (a) => a.state === 'captured',
        timeoutMs,
      ),
    ),
  );
}

/** SIGKILLs the first worker `times` times at random moments, starting a new one after each. */
export async function killWorkerRepeatedly(world: World, times: number, maxDelayMs: number): Promise<void> {
  for (let k = 0; k < times; k += 1) {
    await sleep(150 + Math.floor(Math.random() * maxDelayMs));
    await kill(world.workers[0]!);
    world.workers.shift();
    world.workers.unshift(await world.startWorker());
  }
}

// ---- Through the HTTP API, as an order service drives it (the refund cases) ----

export interface ApiAnswer<T = any> {
  status: number;
  body: T;
  replayed: boolean;
  retryAfterMs: number;
}

/**
 * One HTTP call to an API process (`api`: which of world.apiUrls, default the first); undefined when
 * the connection failed or the caller's own timeout (`timeoutMs`, default 20 s) ran out, as a
 * merchant's HTTP client gives up on a slow answer.
 */
export async function apiCall<T = any>(
  world: World,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  options: { api?: number; idempotencyKey?: string; timeoutMs?: number } = {},
): Promise<ApiAnswer<T> | undefined> {
  const url = world.apiUrls[(options.api ?? 0) % world.apiUrls.length]!;
  try {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${world.apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // a proxy's or a dying process's non-JSON answer: kept as text
    }
    const retryAfter = Number(res.headers.get('retry-after'));
    return {
      status: res.status,
      body: parsed as T,
      replayed: res.headers.get('idempotent-replayed') === 'true',
      retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 5) * 1000 : 0,
    };
  } catch {
    return undefined;
  }
}

/** What a merchant retries with the same Idempotency-Key: no answer, 5xx, 429, or "still processing that key". */
export function isRetryable(answer: ApiAnswer | undefined): boolean {
  return !answer || answer.status >= 500 || answer.status === 429 || (answer.status === 409 && answer.body?.error?.code === 'idempotency_key_in_use');
}

/**
 * A POST sent as a merchant sends it: retried with the same Idempotency-Key after no answer, a 5xx,
 * a 429 or a 409 idempotency_key_in_use (after Retry-After, or a second), until a final answer or
 * `budgetMs`. Every answer is passed to `onAnswer` (the refund cases record which refunds a key named).
 */
export async function postAsMerchant<T = any>(
  world: World,
  path: string,
  body: unknown,
  key: string,
  options: { api?: number; budgetMs?: number; onAnswer?: (answer: ApiAnswer<T>) => void } = {},
): Promise<ApiAnswer<T> & { tries: number }> {
  const until = Date.now() + (options.budgetMs ?? 240_000);
  for (let tries = 1; ; tries += 1) {
    // A load balancer in front of several APIs: a retry may land on another one.
    const answer = await apiCall<T>(world, 'POST', path, body, { api: (options.api ?? 0) + tries - 1, idempotencyKey: key });
    if (answer) options.onAnswer?.(answer);
    if (!isRetryable(answer)) return { ...answer!, tries };
    if (Date.now() > until) return { ...(answer ?? { status: 0, body: undefined as T, replayed: false, retryAfterMs: 0 }), tries };
    await sleep(answer?.retryAfterMs || 1_000);
  }
}

/** A GET retried through outages until `ok` holds or `timeoutMs` runs out; the last answer. */
export async function getUntil<T = any>(world: World, path: string, ok: (body: T) => boolean, timeoutMs: number, api = 0): Promise<ApiAnswer<T> | undefined> {
  const until = Date.now() + timeoutMs;
  let last: ApiAnswer<T> | undefined;
  for (let round = 0; ; round += 1) {
    const answer = await apiCall<T>(world, 'GET', path, undefined, { api: api + round });
    if (answer?.status === 200) last = answer;
    if ((answer?.status === 200 && ok(answer.body)) || Date.now() > until) return last;
    await sleep(250);
  }
}

let orders = 0;

/** Creates and signs through the API (retrying outages as a merchant would): the stored authorization's id. */
export async function storedViaApi(world: World, i: number, amount: string, api = 0): Promise<string> {
  const payer = world.payers[i % world.payers.length]!;
  orders += 1;
  const orderId = `refund-fault-${process.pid}-${Date.now()}-${orders}`;
  const created = await postAsMerchant(world, '/v1/authorizations', { orderId, payer: payer.address, amount }, `create-${orderId}`, { api });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  const signature = sign(created.body.typedData, payer.privateKey);
  const signed = await postAsMerchant(world, `/v1/authorizations/${created.body.id}/signature`, { signature }, `sign-${orderId}`, { api });
  if (signed.status !== 200) throw new Error(`sign: ${signed.status} ${JSON.stringify(signed.body)}`);
  return created.body.id as string;
}
