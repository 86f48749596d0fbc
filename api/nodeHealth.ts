// Whether a network's node answers, as the API asks it: for /readyz, and before a create starts a
// workflow. A create on a network whose node does not answer is refused at once with
// `chain_unavailable` (503, Retry-After) and starts nothing, instead of holding the caller while the
// workflow's draft waits out its budget. A node that answered within the last moments is not asked
// again, so creates under load cost no extra round trip each.
import { AuthcapError } from '../domain/errors.js';

export interface NodeAnswer {
  ok: boolean;
  detail?: string;
}

/** One endpoint's answer to eth_blockNumber. */
export async function nodeReady(rpcUrl: string | undefined, timeoutMs = 2_000): Promise<NodeAnswer> {
  if (!rpcUrl) return { ok: true, detail: 'no node configured for this API' };
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const answer = (await res.json()) as { result?: string };
    return answer.result ? { ok: true } : { ok: false, detail: 'the node gave no block number' };
  } catch (err) {
    return { ok: false, detail: `the node did not answer: ${(err as Error).message}` };
  }
}

/** A network is up when any of its endpoints answers (the others are its fallbacks). */
export async function firstNodeReady(rpcUrls: readonly string[], timeoutMs = 2_000): Promise<NodeAnswer> {
  let last: NodeAnswer = { ok: false, detail: 'no endpoint' };
  for (const url of rpcUrls) {
    last = await nodeReady(url, timeoutMs);
    if (last.ok) return last;
  }
  return last;
}

export class NodeHealth {
  private readonly answered = new Map<string, number>();
  private readonly asking = new Map<string, Promise<NodeAnswer>>();

  /**
   * @param urlsOf a network's endpoints (undefined network: the default one's); none: nothing to ask.
   * @param freshMs how long a node's answer stands for the next creates.
   */
  constructor(
    private readonly urlsOf: (network: string | undefined) => readonly string[] | undefined,
    private readonly options: { freshMs?: number; timeoutMs?: number } = {},
  ) {}

  /** Refuses with `chain_unavailable` when the network's node does not answer now. */
  async require(network: string | undefined): Promise<void> {
    const urls = this.urlsOf(network);
    if (!urls?.length) return;
    const key = network ?? '';
    const at = this.answered.get(key);
    if (at !== undefined && Date.now() - at < (this.options.freshMs ?? 2_000)) return;
    let asking = this.asking.get(key);
    if (!asking) {
      asking = firstNodeReady(urls, this.options.timeoutMs ?? 2_000).finally(() => this.asking.delete(key));
      this.asking.set(key, asking);
    }
    const answer = await asking;
    if (answer.ok) {
      this.answered.set(key, Date.now());
      return;
    }
    this.answered.delete(key);
    throw new AuthcapError('chain_unavailable', `the node of ${network ?? 'the network'} does not answer; nothing was started, retry shortly`);
  }
}
