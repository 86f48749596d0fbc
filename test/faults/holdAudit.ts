// Holds in the fault suite: a fault world (harness.ts) with authcap's escrow deployed on its anvil and
// named in its deployment file before any worker or API starts, behind a second JSON-RPC proxy that
// misbehaves per method (the harness's proxy misbehaves for every call alike); and the audit every
// hold case ends with: what the escrow's events and balances prove against what authcap says.
//
//   lost          a hold whose state or parts disagree with the escrow's events: a succeeded part
//                 without its one PaymentCaptured of its amount in its transaction, a failed part whose
//                 transaction captured, a release without its PaymentVoided/Reclaimed (or one without
//                 a release), amountCaptured ≠ Σ succeeded parts, the escrow's paymentState ≠ held −
//                 captured − released; money: the operator's token store's change ≠ Σ what is still
//                 held, the merchant's ≠ Σ captured, a payer's ≠ −Σ (held − released) of its holds
//   capturedTwice more than one PaymentAuthorized for a hold, a part's transaction captured twice, a
//                 PaymentCaptured that is none of the hold's succeeded parts, two releases
//   stuck         a hold still `holding`, a part still pending or submitted, or a void still under way
//   nonceGaps     the merchant's pending and latest transaction counts still differ after the wait
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { defineChain, formatUnits, parseEventLogs, parseUnits, type Address, type Hex } from 'viem';
import { deployDevEscrow } from '../../devstack/escrow.js';
import { DEPLOYMENT_FILE, writeDeploymentFile } from '../../devstack/deploymentFile.js';
import type { EscrowAddresses } from '../../domain/escrow.js';
import { escrowAbi } from '../../domain/escrowAbi.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { DeploymentFile } from '../../runtime/deployment/schema.js';
import { RESULTS_DIR } from './audit.js';
import { apiCall } from './drive.js';
import { eventually, startWorld, type World } from './harness.js';

/** The dev token's decimals (devstack/token.ts: a USDC-like token). */
export const DECIMALS = 6;
export const units = (amount: string | null | undefined): bigint => (amount ? parseUnits(amount, DECIMALS) : 0n);
export const show = (minor: bigint): string => formatUnits(minor, DECIMALS);

// ---- A per-method fault proxy in front of the harness's ----

export type MethodFaultKind =
  /** Forwarded to the node, then the connection dropped: the node acted, the caller never hears of it. */
  | 'lose-answer'
  /** HTTP 503, nothing forwarded. */
  | 'http503'
  /** Held for stallMs, then forwarded (the caller may have given up by then). */
  | 'stall'
  /** Forwarded and answered as usual: a trigger for `afterwards`. */
  | 'pass';

export interface MethodFault {
  kind: MethodFaultKind;
  methods: string[];
  /** How many matching requests to hit (default: every one until cleared). */
  times?: number;
  stallMs?: number;
  /**
   * Once a matching request has been forwarded (the node acted on it), and afterMs later (0: before
   * its answer goes back): this fault replaces the current one, for forMs, then none.
   */
  afterwards?: { fault: MethodFault; forMs: number; afterMs?: number };
}

export interface MethodProxy {
  url: string;
  set(fault: MethodFault): void;
  clear(): void;
  /** Requests hit, by method. */
  hits: Record<string, number>;
  /** Requests seen, by method (a batch counts each of its calls). */
  seen: Record<string, number>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** viem batches concurrent calls into one JSON array: a batch is hit when any of its calls matches. */
export async function startMethodProxy(target: string): Promise<MethodProxy> {
  let current: (MethodFault & { left: number }) | undefined;
  const install = (fault: MethodFault) => {
    current = { ...fault, left: fault.times ?? Number.POSITIVE_INFINITY };
  };
  const hits: Record<string, number> = {};
  const seen: Record<string, number> = {};
  const server = createServer((req, res) => {
    void readBody(req).then(async (body) => {
      let methods: string[] = [];
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { method?: string } | { method?: string }[];
        methods = (Array.isArray(parsed) ? parsed : [parsed]).map((c) => String(c?.method));
      } catch {
        // not JSON: forwarded as it is
      }
      for (const m of methods) seen[m] = (seen[m] ?? 0) + 1;
      const fault = current;
      const matched = fault && fault.left > 0 ? methods.find((m) => fault.methods.includes(m)) : undefined;
      if (fault && matched) {
        fault.left -= 1;
        hits[matched] = (hits[matched] ?? 0) + 1;
        if (fault.kind === 'http503') return void res.writeHead(503).end('unavailable');
        if (fault.kind === 'stall') await new Promise((r) => setTimeout(r, fault.stallMs ?? 12_000));
      }
      try {
        const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const bytes = Buffer.from(await answer.arrayBuffer());
        if (fault && matched && fault.afterwards && current === fault) {
          const next = fault.afterwards;
          const begin = () => {
            install(next.fault);
            const installed = current;
            setTimeout(() => {
              if (current === installed) current = undefined;
            }, next.forMs);
          };
          if (next.afterMs) {
            // Nothing else in between: the trigger is spent.
            current = undefined;
            setTimeout(begin, next.afterMs);
          } else begin();
        }
        if (fault && matched && fault.kind === 'lose-answer') return void req.socket.destroy();
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(bytes);
      } catch {
        req.socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    set: install,
    clear() {
      current = undefined;
    },
    hits,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- The world ----

export interface HoldWorld {
  world: World;
  escrow: EscrowAddresses;
  /** In front of the harness's proxy: every worker and API process talks to the node through both. */
  methods: MethodProxy;
  /** Where the escrow keeps the merchant's (the operator's) held funds. */
  tokenStore: Address;
  /** Balances when the holds began (the escrow deployed, nothing held). */
  at: { block: bigint; tokenStore: bigint; merchant: bigint; payers: Map<string, bigint> };
  stop(): Promise<void>;
}

const balanceOf = (world: World, account: Address, blockNumber?: bigint) =>
  world.publicClient.readContract({
    address: world.tokenAddress,
    abi: tokenAbi,
    functionName: 'balanceOf',
    args: [account],
    ...(blockNumber === undefined ? {} : { blockNumber }),
  }) as Promise<bigint>;

/**
 * A fault world whose network holds: the escrow deployed on its anvil (as the dev stack deploys it),
 * its deployment file naming it, the node reached through the per-method proxy and then the
 * harness's, no WebSocket (new blocks polled, through the proxies too); then the workers and the API.
 */
export async function startHoldWorld(options: { workers?: number; env?: Record<string, string>; temporal?: 'dev' | 'postgres' } = {}): Promise<HoldWorld> {
  const world = await startWorld({ workers: 0, api: false, env: options.env, ...(options.temporal ? { temporal: options.temporal } : {}) });
  const methods = await startMethodProxy(world.proxy.url);
  try {
    const chain = defineChain({
      id: world.anvil.chainId,
      name: 'faults',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [world.anvil.rpcUrl] } },
    });
    const escrow = await deployDevEscrow({ rpcUrl: world.anvil.rpcUrl, chain });
    const file = JSON.parse(readFileSync(join(world.stateDir, DEPLOYMENT_FILE), 'utf8')) as DeploymentFile;
    const network = file.networks[0]!;
    delete network.wsUrl;
    network.rpcUrls = [methods.url];
    network.escrow = { address: escrow.escrow, paymentCollector: escrow.paymentCollector, refundCollector: escrow.refundCollector };
    writeDeploymentFile(world.stateDir, file);
    const tokenStore = (await world.publicClient.readContract({
      address: escrow.escrow,
      abi: escrowAbi,
      functionName: 'getTokenStore',
      args: [world.merchant.address],
    })) as Address;
    const block = await world.publicClient.getBlockNumber();
    const payers = new Map<string, bigint>();
    for (const p of world.payers) payers.set(p.address.toLowerCase(), await balanceOf(world, p.address, block));
    const at = { block, tokenStore: await balanceOf(world, tokenStore, block), merchant: await balanceOf(world, world.merchant.address, block), payers };
    for (let i = 0; i < (options.workers ?? 1); i += 1) await world.startWorker();
    await world.startApi();
    // The API answers once its network is resolved (the escrow checked).
    await eventually(
      () => apiCall(world, 'GET', '/v1/authorizations?limit=1'),
      (a) => a?.status === 200,
      60_000,
    );
    return {
      world,
      escrow,
      methods,
      tokenStore,
      at,
      async stop() {
        await world.stop();
        await methods.close().catch(() => undefined);
      },
    };
  } catch (err) {
    await world.stop().catch(() => undefined);
    await methods.close().catch(() => undefined);
    throw err;
  }
}

// ---- The audit ----

export interface HoldAuditCounts {
  audited: number;
  lost: number;
  capturedTwice: number;
  stuck: number;
  nonceGaps: number;
}

type Part = {
  id: string;
  amount: string;
  final: boolean;
  status: 'pending' | 'submitted' | 'succeeded' | 'failed';
  transactionHash: Hex | null;
  blockNumber: string | null;
  failure: { code: string; message: string } | null;
};

export type HoldResource = {
  id: string;
  state: string;
  amount: string;
  amountCaptured: string;
  amountCapturable: string;
  authorization?: { from: Address } | null;
  captures: Part[];
  hold: {
    paymentInfoHash: Hex;
    amountHeld: string;
    authorizeTransactionHash: Hex | null;
    release: { kind: 'void' | 'reclaim'; amount: string; transactionHash: Hex | null } | null;
  } | null;
  [key: string]: unknown;
};

const FINAL_STATES = ['captured', 'voided', 'expired', 'rejected', 'canceled'];

/** The resource as an order service reads it (GET through the API, retried through outages). */
export async function readHold(world: World, id: string): Promise<HoldResource | undefined> {
  const answer = await eventually(
    () => apiCall<HoldResource>(world, 'GET', `/v1/authorizations/${id}`),
    (a) => a?.status === 200,
    30_000,
  );
  return answer?.status === 200 ? answer.body : undefined;
}

export async function auditHolds(
  hw: HoldWorld,
  ids: string[],
  options: { caseName: string; payerOf: Map<string, Address> },
): Promise<HoldAuditCounts & { details: string[] }> {
  const { world } = hw;
  const details: string[] = [];
  const counts: HoldAuditCounts = { audited: ids.length, lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 };
  const lost = (why: string) => {
    counts.lost += 1;
    details.push(why);
  };
  const twice = (why: string) => {
    counts.capturedTwice += 1;
    details.push(why);
  };

  // Nothing of ours still in the pool before the chain is read.
  const merchant = world.merchant.address;
  const drained = await eventually(
    async () => {
      const [latest, pending] = await Promise.all([
        world.publicClient.getTransactionCount({ address: merchant, blockTag: 'latest' }),
        world.publicClient.getTransactionCount({ address: merchant, blockTag: 'pending' }),
      ]);
      return { latest, pending };
    },
    (c) => c.latest === c.pending,
    60_000,
  );
  if (!drained || drained.latest !== drained.pending) {
    counts.nonceGaps += 1;
    details.push(`merchant pending ${drained?.pending} ≠ latest ${drained?.latest}`);
  }

  const logs = await world.publicClient.getContractEvents({ address: hw.escrow.escrow, abi: escrowAbi, fromBlock: hw.at.block, toBlock: 'latest' });
  const events = parseEventLogs({ abi: escrowAbi, logs }).flatMap((l) => {
    const args = l.args as { paymentInfoHash?: Hex; amount?: bigint };
    if (!args.paymentInfoHash) return [];
    return [
      { name: l.eventName, hash: args.paymentInfoHash.toLowerCase(), amount: args.amount ?? 0n, tx: l.transactionHash.toLowerCase(), block: l.blockNumber },
    ];
  });

  let stillHeld = 0n;
  let capturedAll = 0n;
  const paidBy = new Map<string, bigint>();
  const ours = new Set<string>();
  for (const id of ids) {
    const a = await readHold(world, id);
    if (!a?.hold) {
      lost(`${id}: no hold on the resource (${a ? a.state : 'unreadable'})`);
      continue;
    }
    const hash = a.hold.paymentInfoHash.toLowerCase();
    ours.add(hash);
    const mine = events.filter((e) => e.hash === hash);
    const authorized = mine.filter((e) => e.name === 'PaymentAuthorized');
    const captured = mine.filter((e) => e.name === 'PaymentCaptured');
    const released = mine.filter((e) => e.name === 'PaymentVoided' || e.name === 'PaymentReclaimed');
    const held = units(a.hold.amountHeld);

    if (a.state === 'holding') {
      counts.stuck += 1;
      details.push(`${id}: still holding`);
    }
    if (authorized.length > 1) twice(`${id}: ${authorized.length} PaymentAuthorized for one hold`);
    if (held > 0n) {
      const one = authorized[0];
      if (authorized.length !== 1 || !one || one.amount !== held)
        lost(`${id}: holds ${a.hold.amountHeld}, the escrow authorized ${authorized.map((e) => show(e.amount)).join(', ') || 'nothing'}`);
      else if (a.hold.authorizeTransactionHash?.toLowerCase() !== one.tx)
        lost(`${id}: authorizeTransactionHash ${a.hold.authorizeTransactionHash}, the PaymentAuthorized is in ${one.tx}`);
    } else if (authorized.length > 0 && a.state !== 'holding') {
      lost(`${id}: ${a.state} with nothing held, but the escrow authorized ${show(authorized[0]!.amount)} in ${authorized[0]!.tx}`);
    }

    // Each succeeded part: its transaction's one PaymentCaptured of its amount; nothing for a failed one.
    let succeeded = 0n;
    const partTxs = new Set<string>();
    for (const part of a.captures) {
      const tx = part.transactionHash?.toLowerCase();
      const inTx = tx ? captured.filter((e) => e.tx === tx) : [];
      if (part.status === 'succeeded') {
        succeeded += units(part.amount);
        if (!tx) {
          lost(`${id}: part ${part.id} succeeded without a transaction`);
          continue;
        }
        if (partTxs.has(tx)) twice(`${id}: two parts name one transaction ${tx}`);
        partTxs.add(tx);
        if (inTx.length === 0) lost(`${id}: part ${part.id} (${part.amount}) succeeded, no PaymentCaptured in ${tx}`);
        else if (inTx.length > 1) twice(`${id}: part ${part.id}'s transaction has ${inTx.length} PaymentCaptured`);
        else if (inTx[0]!.amount !== units(part.amount)) lost(`${id}: part ${part.id} says ${part.amount}, its PaymentCaptured ${show(inTx[0]!.amount)}`);
      } else if (part.status === 'failed') {
        if (inTx.length > 0) lost(`${id}: part ${part.id} failed (${part.failure?.code}) but its transaction ${tx} captured ${show(inTx[0]!.amount)}`);
        if (!part.failure?.code) lost(`${id}: part ${part.id} failed without a failure code`);
      } else {
        counts.stuck += 1;
        details.push(`${id}: part ${part.id} still ${part.status}`);
      }
    }
    for (const e of captured)
      if (!partTxs.has(e.tx))
        twice(
          `${id}: PaymentCaptured of ${show(e.amount)} in ${e.tx} is none of its succeeded parts (${a.captures.map((c) => `${c.amount} ${c.status}`).join(', ')})`,
        );
    if (units(a.amountCaptured) !== succeeded) lost(`${id}: amountCaptured ${a.amountCaptured}, its succeeded parts sum to ${show(succeeded)}`);

    // What went back: one event, of the release's amount, in its transaction.
    const release = a.hold.release;
    if (released.length > 1) twice(`${id}: ${released.length} releases onchain`);
    if (release) {
      const one = released[0];
      const kind = release.kind === 'void' ? 'PaymentVoided' : 'PaymentReclaimed';
      if (released.length !== 1 || !one || one.name !== kind || one.amount !== units(release.amount))
        lost(
          `${id}: released ${release.amount} (${release.kind}), the escrow shows ${released.map((e) => `${e.name} ${show(e.amount)}`).join(', ') || 'nothing'}`,
        );
      else if (release.transactionHash && release.transactionHash.toLowerCase() !== one.tx)
        lost(`${id}: release in ${release.transactionHash}, its ${kind} is in ${one.tx}`);
    } else if (released.length > 0) {
      lost(`${id}: no release on the resource, the escrow shows ${released[0]!.name} of ${show(released[0]!.amount)}`);
    }
    const releasedAmount = units(release?.amount);
    const left = held - succeeded - releasedAmount;
    if (left < 0n) twice(`${id}: captured ${show(succeeded)} + released ${show(releasedAmount)} of ${a.hold.amountHeld} held`);

    // The state agrees with the money.
    if (FINAL_STATES.includes(a.state) && held > 0n && left !== 0n) lost(`${id}: ${a.state} but ${show(left)} is still held by authcap's word`);
    if (a.state === 'captured' && succeeded === 0n) lost(`${id}: captured with no part succeeded`);
    if (a.state === 'voided' && (succeeded !== 0n || !release)) lost(`${id}: voided, with ${show(succeeded)} captured and release ${JSON.stringify(release)}`);
    // What a new part may take: what is left, less the parts asked and not ended (none, once all is settled).
    const open = a.captures.filter((c) => c.status === 'pending' || c.status === 'submitted').reduce((sum, c) => sum + units(c.amount), 0n);
    if (a.state === 'held' && units(a.amountCapturable) !== left - open)
      lost(`${id}: held, amountCapturable ${a.amountCapturable}, held − captured − released − parts under way = ${show(left - open)}`);
    if (held > 0n) {
      const [, capturable, refundable] = (await world.publicClient.readContract({
        address: hw.escrow.escrow,
        abi: escrowAbi,
        functionName: 'paymentState',
        args: [a.hold.paymentInfoHash],
      })) as readonly [boolean, bigint, bigint];
      if (capturable !== left || refundable !== succeeded)
        lost(
          `${id}: the escrow's paymentState says ${show(capturable)} capturable / ${show(refundable)} refundable, authcap ${show(left)} / ${show(succeeded)}`,
        );
    }
    stillHeld += left;
    capturedAll += succeeded;
    const payer = (options.payerOf.get(id) ?? a.authorization?.from)?.toLowerCase();
    if (payer) paidBy.set(payer, (paidBy.get(payer) ?? 0n) + held - releasedAmount);
  }
  // Any escrow event of a payment none of these holds is (nothing else uses this escrow here).
  for (const e of events) if (!ours.has(e.hash)) twice(`an escrow ${e.name} of ${show(e.amount)} in ${e.tx} is of no audited hold (${e.hash})`);

  // Money: the token store holds what is still held; the merchant got what was captured; each payer paid the rest.
  const store = await balanceOf(world, hw.tokenStore);
  if (store - hw.at.tokenStore !== stillHeld)
    lost(`the escrow's token store changed by ${show(store - hw.at.tokenStore)}, Σ held − captured − released = ${show(stillHeld)}`);
  const merchantNow = await balanceOf(world, merchant);
  if (merchantNow - hw.at.merchant !== capturedAll) lost(`the merchant changed by ${show(merchantNow - hw.at.merchant)}, Σ captured = ${show(capturedAll)}`);
  for (const [payer, start] of hw.at.payers) {
    const now = await balanceOf(world, payer as Address);
    const expected = -(paidBy.get(payer) ?? 0n);
    if (now - start !== expected) lost(`payer ${payer} changed by ${show(now - start)}, its holds say ${show(expected)}`);
  }
  details.push(
    `note: ${ids.length} holds, ${events.length} escrow events, ${show(capturedAll)} captured, ${show(stillHeld)} still held, merchant at nonce ${drained?.latest}`,
  );
  mkdirSync(RESULTS_DIR, { recursive: true });
  appendFileSync(join(RESULTS_DIR, 'results.jsonl'), `${JSON.stringify({ case: options.caseName, ...counts, details })}\n`);
  return { ...counts, details };
}
