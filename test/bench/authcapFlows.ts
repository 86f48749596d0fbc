// authcap as an order service uses it: over the HTTP API with an order-service key, signing as the
// payer's wallet would (eth-sig-util, not the code that verifies), and polling GET as a checkout
// page does. Nothing here reaches around the API.
import { randomUUID } from 'node:crypto';
import { SignTypedDataVersion, signTypedData } from '@metamask/eth-sig-util';
import type { Address, Hex } from 'viem';

export interface Payer {
  address: Address;
  privateKey: Hex;
}

export interface ApiAnswer {
  status: number;
  body: any;
  ms: number;
}

export interface LifecycleTiming {
  id: string;
  /** POST /v1/authorizations answered 201. */
  createMs: number;
  /** create + the payer's signature stored. */
  storedMs: number;
  /** POST …/capture sent → the capture's AuthorizationUsed log seen in the pending view. */
  captureToPreconfirmedMs: number;
  /** POST …/capture sent → captured (answered, or seen by polling GET). */
  captureToCapturedMs: number;
  /** create → captured. */
  lifecycleMs: number;
  transactionHash: Hex;
}

export class AuthcapApi {
  readonly getLatencies: number[] = [];
  /** Answers of 503/429 the bench waited out (Retry-After) and retried, as a real client does. */
  retries = 0;

  private readonly urls: string[];
  private turn = 0;

  /** Several API processes (the production shape): calls go to each in turn, as a load balancer sends them. */
  constructor(
    url: string | string[],
    private readonly key: string,
  ) {
    this.urls = [url].flat();
  }

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> {
    const started = performance.now();
    for (let attempt = 1; ; attempt += 1) {
      const res = await fetch(`${this.urls[this.turn++ % this.urls.length]}${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.key}`, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = { status: res.status, body: (await res.json()) as any, ms: performance.now() - started };
      // Overloaded (503 temporal_unavailable / worker_unavailable, 429): wait as told and ask again.
      if ((res.status === 503 || res.status === 429) && attempt < 10) {
        this.retries += 1;
        await new Promise((r) => setTimeout(r, Math.max(250, Number(res.headers.get('retry-after') ?? 1) * 1000)));
        continue;
      }
      if (method === 'GET' && !path.includes('wait=')) this.getLatencies.push(answer.ms);
      return answer;
    }
  }

  /** `chain`: the network (and token) to create on, where the deployment serves several. */
  async create(payer: Payer, label: string, chain: { network?: string; token?: string } = {}): Promise<{ id: string; typedData: unknown }> {
    // An order service sends an Idempotency-Key, so a create retried after a 503 is not a second one.
    const orderId = `${label}-${randomUUID()}`;
    let res = await this.call('POST', '/v1/authorizations', { orderId, payer: payer.address, amount: '0.01', ...chain }, { 'idempotency-key': orderId });
    if (res.status === 409 && res.body.error?.code === 'order_has_open_authorization' && res.body.error.details?.id) {
      // The timed-out first try did start it: carry on with that one.
      res = await this.call('GET', `/v1/authorizations/${res.body.error.details.id}`);
      if (res.status === 200 && res.body.state === 'drafted') res.status = 201;
    }
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
    return { id: res.body.id, typedData: res.body.typedData };
  }

  async store(payer: Payer, created: { id: string; typedData: unknown }): Promise<void> {
    const signature = signTypedData({
      privateKey: Buffer.from(payer.privateKey.slice(2), 'hex'),
      data: created.typedData as never,
      version: SignTypedDataVersion.V4,
    });
    const res = await this.call('POST', `/v1/authorizations/${created.id}/signature`, { signature });
    if (res.status !== 200 || res.body.state !== 'stored') throw new Error(`signature answered ${res.status}: ${JSON.stringify(res.body)}`);
  }

  /**
   * Captures and waits for `captured` the way the README recommends: the POST answers when the
   * capture is final (or 202 past the API's own wait); after a 202 the caller long-polls
   * GET …?wait=30&state=<the state it has>, which answers the moment the state changes.
   */
  async capture(id: string, amount?: string): Promise<{ ms: number; body: any }> {
    const started = performance.now();
    // With `amount` (less than authorized) a partial capture: `captured` once the rest is back with the payer.
    let res = await this.call('POST', `/v1/authorizations/${id}/capture`, amount === undefined ? undefined : { amount });
    if (res.status !== 200 && res.status !== 202) throw new Error(`capture answered ${res.status}: ${JSON.stringify(res.body)}`);
    while (res.body.state !== 'captured') {
      if (['canceled', 'voided', 'expired', 'rejected'].includes(res.body.state)) throw new Error(`authorization ${id} ended ${res.body.state}`);
      res = await this.call('GET', `/v1/authorizations/${id}?wait=30&state=${res.body.state}`);
      if (res.status !== 200) throw new Error(`wait answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    return { ms: performance.now() - started, body: res.body };
  }

  /** POST /v1/webhook_endpoints, as a merchant registers its receiver (the secret is in this answer only). */
  async registerWebhookEndpoint(url: string, events: string[]): Promise<{ id: string; secret: string }> {
    const res = await this.call('POST', '/v1/webhook_endpoints', { url, events });
    if (res.status !== 201) throw new Error(`webhook endpoint answered ${res.status}: ${JSON.stringify(res.body)}`);
    return { id: res.body.id, secret: res.body.secret };
  }

  async lifecycle(payer: Payer, label: string, chain: { network?: string; token?: string } = {}): Promise<LifecycleTiming> {
    const started = performance.now();
    const created = await this.create(payer, label, chain);
    const createMs = performance.now() - started;
    await this.store(payer, created);
    const storedMs = performance.now() - started;
    const wallStart = Date.now();
    const captured = await this.capture(created.id);
    const preconfirmedAt = Date.parse(captured.body.capture.preconfirmedAt ?? captured.body.capture.confirmedAt);
    return {
      id: created.id,
      createMs,
      storedMs,
      captureToPreconfirmedMs: Math.max(0, preconfirmedAt - wallStart),
      captureToCapturedMs: captured.ms,
      lifecycleMs: performance.now() - started,
      transactionHash: captured.body.capture.transactionHash,
    };
  }
}
