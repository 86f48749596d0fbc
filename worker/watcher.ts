// Watches the token for AuthorizationUsed / AuthorizationCanceled and tells the workflow that owns
// the (payer, nonce). Subscribes with eth_subscribe("logs") over WebSocket (and "pendingLogs" where
// the node offers it); falls back to polling eth_getLogs. Its cursor (the last block fully handled)
// is kept by its caller: in Temporal, by the network's watcher workflow (worker/chainWatchActivity.ts);
// a watcher started on its own (the watcher tests) keeps it in a file. A restart catches up from there. A log nudges its workflow once (worker/nudgeOnce.ts);
// workflows re-read the chain on the nudge, and one never delivered is still found by their own checks.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Client } from '@temporalio/client';
import { createPublicClient, webSocket, type Address, type Chain, type PublicClient, type Transport } from 'viem';
import { AuthorizationNonceAttribute, AuthorizationStateAttribute, PayerAttribute } from '../domain/searchAttributes.js';
import { nonceSearchKey } from '../activities/nonceKey.js';
import { LogReader, type DecodedLog } from '../activities/rpc/logReader.js';
import { authorizationCanceledTopic, authorizationUsedTopic } from '../activities/nonceState.js';
import { WORKFLOW_TYPE } from '../workflows/messages.js';
import { nudgeOnce, nudgeRequestId } from './nudgeOnce.js';

export interface WatcherOptions {
  client: Client;
  publicClient: PublicClient<Transport, Chain>;
  /**
   * The network's tokens, each with the scope of its nonce digests (activities/nonceKey.ts): one
   * watcher reads every token of its network in the same calls.
   */
  tokens: { address: Address; nonceScope: string }[];
  /** ws:// URL for subscriptions; without it the watcher polls. */
  wsUrl?: string;
  /** Where the cursor is kept: a file (`cursorFile`), or the caller's store (`cursor`). */
  cursorFile?: string;
  cursor?: CursorStore;
  /** The network's CAIP-2 id: part of each nudge's request id, so one log nudges once. */
  network?: string;
  pollIntervalMs?: number;
  /**
   * Authorizers whose logs name no authorization: the merchant keys, whose own EIP-3009 transfers are
   * refunds, followed by the workflow that sent them. Skipping them saves a visibility query each.
   */
  ignoreAuthorizers?: readonly string[];
  /**
   * Whether one of this worker's activities is following the nonce itself (a capture on its way):
   * its workflow learns of the log from that activity, so the watcher neither lists nor nudges.
   */
  isFollowed?: (authorizer: string, nonce: string) => boolean;
  log?: (line: string) => void;
}

export interface Watcher {
  /** Resolves once the catch-up from the cursor is done. */
  ready: Promise<void>;
  mode(): 'subscription' | 'polling';
  stop(): Promise<void>;
  /** Signals sent to running workflows so far. */
  delivered(): number;
  /** Transactions whose logs this watcher has handled (owned by a running workflow or not). */
  handledTransactions(): string[];
}

/** The last block fully handled: read once at start, written after each scanned range. */
export interface CursorStore {
  read(): bigint | undefined;
  write(lastBlock: bigint): void;
}

export function fileCursor(file: string): CursorStore {
  return { read: () => readCursor(file), write: (lastBlock) => writeCursor(file, lastBlock) };
}

const GRPC_NOT_FOUND = 5;

const topics = [[authorizationUsedTopic, authorizationCanceledTopic]] as const;

export function startWatcher(options: WatcherOptions): Watcher {
  const log = options.log ?? (() => undefined);
  const ignored = new Set((options.ignoreAuthorizers ?? []).map((a) => a.toLowerCase()));
  const scopes = new Map(options.tokens.map((t) => [t.address.toLowerCase(), t.nonceScope]));
  const address = options.tokens.length === 1 ? options.tokens[0]!.address : options.tokens.map((t) => t.address);
  const reader = new LogReader(options.publicClient);
  const seen = new Set<string>();
  const handled: string[] = [];
  let delivered = 0;
  let stopped = false;
  let mode: 'subscription' | 'polling' = 'polling';
  let unsubscribe: (() => void) | undefined;
  const store = options.cursor ?? fileCursor(options.cursorFile ?? missingCursor());
  let cursor = store.read();
  let sweeping: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  async function deliver(entry: DecodedLog): Promise<void> {
    if (entry.topics.length < 3) return;
    const key = `${entry.transactionHash}:${entry.logIndex}:${entry.blockHash}:${entry.removed}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (seen.size > 50_000) seen.clear();
    handled.push(entry.transactionHash ?? '');
    if (handled.length > 10_000) handled.splice(0, handled.length - 10_000);
    const payer = `0x${entry.topics[1]!.slice(26)}`.toLowerCase();
    if (ignored.has(payer)) return;
    const nonce = entry.topics[2]!.toLowerCase();
    if (options.isFollowed?.(payer, nonce)) return;
    const scope = scopes.get(entry.address.toLowerCase());
    if (scope === undefined) return;
    const query = `WorkflowType = '${WORKFLOW_TYPE}' AND ${AuthorizationNonceAttribute.name} = "${nonceSearchKey(payer, nonce, scope)}" AND ExecutionStatus = 'Running'`;
    try {
      await nudgeOwners(entry, query, payer);
    } catch (err) {
      // Not delivered (visibility or the signal failed): the next scan handles this log again, its
      // cursor still before it; the nudge's request id keeps a second delivery from counting twice.
      seen.delete(key);
      throw err;
    }
  }

  async function nudgeOwners(entry: DecodedLog, query: string, payer: string): Promise<void> {
    for await (const execution of options.client.workflow.list({ query })) {
      const attrs = execution.typedSearchAttributes;
      const owner = String(attrs.get(PayerAttribute) ?? '').toLowerCase();
      if (owner && owner !== payer) continue;
      // A capturing authorization follows its own transaction to this very log (inclusion is judged by
      // the AuthorizationUsed log, whoever sent it): a nudge would only cost it a workflow task. If
      // visibility lags a capture that has just failed, its deadline check still reads the chain.
      if (attrs.get(AuthorizationStateAttribute) === 'capturing') continue;
      const requestId = nudgeRequestId(options.network ?? '', {
        transactionHash: entry.transactionHash ?? '',
        logIndex: entry.logIndex ?? '',
        blockHash: entry.blockHash ?? '',
        removed: entry.removed,
      });
      await nudgeOnce(
        options.client,
        { workflowId: execution.workflowId, runId: execution.runId },
        { transactionHash: entry.transactionHash ?? '', blockNumber: String(entry.blockNumber ?? ''), removed: entry.removed },
        requestId,
      ).catch((err: Error & { code?: number }) => {
        // Closed since it was listed: nothing to tell it.
        if (err.code === GRPC_NOT_FOUND) return;
        log(`watcher: could not signal ${execution.workflowId}, will try again: ${err.message}`);
        throw err;
      });
      delivered += 1;
    }
  }

  async function scan(fromBlock: bigint, toBlock: bigint): Promise<void> {
    if (fromBlock > toBlock) return;
    const logs = await reader.getLogs({ address, topics, fromBlock, toBlock });
    for (const entry of logs) await deliver(entry);
    cursor = toBlock;
    store.write(cursor);
  }

  async function catchUp(): Promise<void> {
    const latest = await options.publicClient.getBlockNumber({ cacheTime: 0 });
    // First start: from now on (older authorizations have their own periodic checks).
    const from = cursor === undefined ? latest : cursor + 1n;
    await scan(from, latest);
  }

  async function poll(): Promise<void> {
    while (!stopped) {
      try {
        await catchUp();
      } catch (err) {
        log(`watcher: poll failed, retrying: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, options.pollIntervalMs ?? 1_000));
    }
  }

  async function subscribe(): Promise<boolean> {
    if (!options.wsUrl) return false;
    try {
      const ws = createPublicClient({ transport: webSocket(options.wsUrl, { retryCount: 0, reconnect: false }) });
      const { subscribe } = ws.transport as unknown as {
        subscribe: (args: {
          params: unknown[];
          onData: (data: { result: unknown }) => void;
          onError: (err: Error) => void;
        }) => Promise<{ unsubscribe: () => Promise<unknown> }>;
      };
      const onData = (data: { result: unknown }) => {
        void handleRaw(data.result as Record<string, unknown>).catch((err) => log(`watcher: ${(err as Error).message}`));
      };
      const onError = (err: Error) => {
        log(`watcher: subscription lost (${err.message}); polling instead`);
        mode = 'polling';
        void poll();
      };
      const logsSub = await subscribe({ params: ['logs', { address, topics }], onData, onError });
      // Preconfirmed logs, where the node offers them (Flashblocks); anvil does not.
      const pendingSub = await subscribe({ params: ['pendingLogs', { address, topics }], onData, onError: () => undefined }).catch(() => undefined);
      unsubscribe = () => {
        void logsSub.unsubscribe().catch(() => undefined);
        void pendingSub?.unsubscribe().catch(() => undefined);
        void (ws.transport as unknown as { getRpcClient: () => Promise<{ close: () => void }> }).getRpcClient().then(
          (c) => c.close(),
          () => undefined,
        );
      };
      mode = 'subscription';
      return true;
    } catch (err) {
      log(`watcher: subscriptions unavailable (${(err as Error).message}); polling eth_getLogs`);
      return false;
    }
  }

  async function handleRaw(raw: Record<string, unknown>): Promise<void> {
    const [decoded] = await reader.decodeRaw([raw]);
    if (!decoded) return;
    await deliver(decoded);
    // The cursor only moves past blocks that were scanned whole; a periodic sweep below does that.
  }

  const ready = (async () => {
    await catchUp();
    if (!(await subscribe())) {
      void poll();
      return;
    }
    // Even with a subscription, sweep now and then: it moves the cursor and covers a dropped message.
    sweeping = (async () => {
      while (!stopped && (mode as string) === 'subscription') {
        await new Promise<void>((r) => {
          const timer = setTimeout(r, (options.pollIntervalMs ?? 1_000) * 5);
          wake = () => {
            clearTimeout(timer);
            r();
          };
        });
        // Stopped while it slept: a stopped watcher must not move the cursor past what its successor
        // has yet to deliver.
        if (stopped) break;
        await catchUp().catch((err) => stopped || log(`watcher: sweep failed: ${(err as Error).message}`));
      }
    })();
  })();

  return {
    ready,
    mode: () => mode,
    delivered: () => delivered,
    handledTransactions: () => [...handled],
    async stop() {
      stopped = true;
      wake?.();
      unsubscribe?.();
      await ready.catch(() => undefined);
      await sweeping;
    },
  };
}

function missingCursor(): never {
  throw new Error('a watcher needs a cursor: cursorFile or cursor');
}

function readCursor(file: string): bigint | undefined {
  if (!existsSync(file)) return undefined;
  // A file made under a looser umask (by hand, or copied in): private from now on.
  chmodSync(file, CURSOR_MODE);
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { lastBlock?: string };
  return parsed.lastBlock === undefined ? undefined : BigInt(parsed.lastBlock);
}

/** Like every file in the state dir: only the dev stack sets a 077 umask, a worker run alone may not. */
const CURSOR_MODE = 0o600;

export function writeCursor(file: string, lastBlock: bigint): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ lastBlock: lastBlock.toString() })}\n`, { mode: CURSOR_MODE });
  // `mode` applies only when the file is created: a temp file left by a crash keeps its old mode.
  chmodSync(tmp, CURSOR_MODE);
  renameSync(tmp, file);
}
