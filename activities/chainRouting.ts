// Which network and token an activity works on. Workflows put their authorization's chain in a
// header of every activity they schedule (workflows/chainHeader.ts); the worker's activity
// interceptor reads it into an async context, and the routed activities below run on that
// network's clients and that token's contract. An activity scheduled without one (a test's, or a
// workflow's that names no chain) runs on the default chain: the first network's first token.
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApplicationFailure } from '@temporalio/common';
import type { Address } from 'viem';
import type { ChainRef } from '../domain/chain.js';
import type { ChainContext } from './chainContext.js';

const current = new AsyncLocalStorage<Partial<ChainRef>>();

export function runOnChain<T>(ref: Partial<ChainRef> | undefined, fn: () => T): T {
  return ref ? current.run(ref, fn) : fn();
}

export function currentChain(): Partial<ChainRef> | undefined {
  return current.getStore();
}

const key = (network: string, token: string) => `${network}/${token.toLowerCase()}`;

/** Every (network, token) this worker serves, and the default one (the first configured). */
export class ChainContexts {
  private readonly byKey = new Map<string, ChainContext>();
  readonly defaultContext: ChainContext;
  /**
   * Networks whose node has not answered since the worker started (each network its own failure
   * domain): their activities fail with a retryable `chain_unavailable` until available() is called.
   */
  private readonly waiting = new Map<string, string>();

  constructor(readonly all: readonly ChainContext[]) {
    if (all.length === 0) throw new Error('a worker serves at least one network');
    for (const ctx of all) this.byKey.set(key(ctx.network, ctx.tokenAddress), ctx);
    this.defaultContext = all[0]!;
  }

  /** A network waits for its node: nothing runs on it until available(network). */
  unavailable(network: string, reason: string): void {
    this.waiting.set(network, reason);
  }

  available(network: string): void {
    this.waiting.delete(network);
  }

  /** Networks waiting for their node, with why. */
  get waitingNetworks(): ReadonlyMap<string, string> {
    return this.waiting;
  }

  /** The context of a chain reference; the default without one. Refused (not retried) when not served. */
  get(ref?: Partial<ChainRef>): ChainContext {
    const ctx = this.lookup(ref);
    const waiting = this.waiting.get(ctx.network);
    if (waiting !== undefined)
      throw ApplicationFailure.create({
        type: 'chain_unavailable',
        message: `the node of ${ctx.network} has not answered since this worker started; retry shortly (${waiting.split('\n')[0]})`,
      });
    return ctx;
  }

  private lookup(ref?: Partial<ChainRef>): ChainContext {
    if (!ref?.network) return this.defaultContext;
    const ctx = ref.token ? this.byKey.get(key(ref.network, ref.token)) : this.all.find((c) => c.network === ref.network);
    if (!ctx)
      throw ApplicationFailure.create({
        type: ref.token && this.all.some((c) => c.network === ref.network) ? 'token_not_served' : 'network_not_served',
        nonRetryable: true,
        message: `this worker does not serve ${ref.token ? `token ${ref.token} on ` : ''}${ref.network}`,
      });
    return ctx;
  }

  /** A token's context on the same network as `ctx` (a relayer sends for every token of its network). */
  sibling(ctx: ChainContext, token: Address | undefined): ChainContext | undefined {
    return token ? this.byKey.get(key(ctx.network, token)) : ctx;
  }

  /** One context per network (their first token's): what network-wide duties (watcher, heads) use. */
  networks(): ChainContext[] {
    const seen = new Set<string>();
    return this.all.filter((ctx) => !seen.has(ctx.network) && seen.add(ctx.network));
  }

  tokensOf(network: string): ChainContext[] {
    return this.all.filter((ctx) => ctx.network === network);
  }
}

/**
 * The activities of every served chain behind one set of names: each call runs the set built for
 * the chain its workflow named. Sets are built lazily, once per chain.
 */
export function routedActivities<T extends object>(contexts: ChainContexts, build: (ctx: ChainContext) => T): T {
  const sets = new Map<ChainContext, T>([[contexts.defaultContext, build(contexts.defaultContext)]]);
  const setFor = (ctx: ChainContext) => {
    let set = sets.get(ctx);
    if (!set) sets.set(ctx, (set = build(ctx)));
    return set as Record<string, (...args: unknown[]) => Promise<unknown>>;
  };
  const names = Object.keys(sets.get(contexts.defaultContext)!);
  return Object.fromEntries(names.map((name) => [name, (...args: unknown[]) => setFor(contexts.get(currentChain()))[name]!(...args)])) as T;
}
