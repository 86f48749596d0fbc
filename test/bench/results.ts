// The shape of one bench run, as written to test/bench/results/*.json.
import type { SplitRow } from './profileSplit.js';
import type { FloorFigures } from './temporalFloor.js';
import type { TwoNetworksRow } from './twoNetworks.js';
import type { WatchingRow } from './watcherCalls.js';
import type { ServerCallsPerLifecycle } from './temporalServerCalls.js';
import type { ProfileSummary } from './cpuProfile.js';
import type { TemporalCost } from './temporalCost.js';
import type { TemporalPerLifecycle } from './lifecycleCost.js';
import type { Distribution } from './stats.js';
import type { UsageByProcess } from './processUsage.js';
import type { ExactlyOnceFindings } from './exactlyOnce.js';
import type { KeysRun } from './keysComparison.js';
import type { WebhookFigures } from './webhookReceiver.js';
import type { TemporalFigures } from './lifecycleCost.js';
import type { AnswerAudit } from './facilitatorFlows.js';

export interface RpcCost {
  byMethod: Record<string, number>;
  total: number;
}

export interface ConcurrencyRow {
  concurrency: number;
  authorizations: number;
  baselineA: { capturesPerSecond: number; captured: Distribution };
  authcap: {
    /** Whole lifecycles (create → sign → store → capture → captured) finished per second. */
    lifecyclesPerSecond: number;
    capturedFromRequest: Distribution;
    preconfirmedFromRequest: Distribution;
    lifecycle: Distribution;
    get: Distribution;
    ratioToA: { throughput: number | null; capturedP50: number | null; capturedP95: number | null };
  };
  usage: UsageByProcess;
  /** What one completed lifecycle cost in this row (test/bench/lifecycleCost.ts, test/bench/cpuTime.ts). */
  costPerLifecycle?: LifecycleCost;
  /** The Temporal server's requests and persistence work in this row, per lifecycle (test/bench/temporalServerCalls.ts). */
  serverCalls?: ServerCallsPerLifecycle;
  /** Webhook deliveries the bench's receiver got while the row ran (absent in runs without one). */
  webhookDeliveries?: number;
}

export interface LifecycleCost {
  /** CPU ms of each stack process over the whole phase ÷ lifecycles (the bench's own CPU excluded). */
  cpuMs: Record<string, number>;
  cpuMsTotal: number;
  /** Temporal figures over every workflow a lifecycle causes; null when reading histories failed. */
  temporal: TemporalPerLifecycle | null;
}

export interface Target {
  name: string;
  target: string;
  got: string;
  met: boolean;
}

/** One of the cost targets (test/bench/costTargets.ts), judged against this run's figures (`met` null: not measurable in this run). */
export interface CostTarget {
  figure: string;
  got: string;
  target: string;
  met: boolean | null;
}

/** The refund rows against their floor (test/bench/refundFlows.ts). */
export interface RefundResults {
  amount: string;
  floor: { included: Distribution; settled: Distribution; rpc: RpcCost };
  rows: RefundRow[];
  /** Node calls per refund one at a time, by method (the worker's /metrics; its idle background included). */
  rpcPerRefund: RpcCost;
  /** Mean gas of each transaction kind, from receipts. */
  gasUsed: { transfer: number; transferWithAuthorization: number; receiveWithAuthorization: number };
  partialCapture: { n: number; kept: string; captured: Distribution; floor: Distribution; ratio: { p50: number | null; p95: number | null } };
  /** GET /v1/authorizations/{id} one at a time on the same authorizations: ms, and Temporal describes per read. */
  reads: Record<'stored' | 'captured' | 'refunded', { latency: Distribution; describesPerRead: number }>;
}

/** One row of refunds through the HTTP API (test/bench/refundRow.ts). */
export interface RefundRow {
  concurrency: number;
  n: number;
  /** Request → succeeded (the POST's 201, or the GET that first saw it after a 202). */
  succeeded: Distribution;
  /** Request → the refund's succeededAt as its workflow recorded it (before the API saw it). */
  recorded: Distribution;
  answers: Record<string, number>;
  refundsPerSecond: number;
  floor: { transfersPerSecond: number; settled: Distribution };
  ratioToFloor: { p50: number | null; p95: number | null; p99: number | null; throughput: number | null };
  cost: LifecycleCost;
  serverCalls: ServerCallsPerLifecycle;
}

/** Gas of one kind of transaction over a run's receipts. */
export interface GasFigures {
  n: number;
  mean: number;
  min: number;
  max: number;
}

/** Held payments against their floor, beside plain payments on the same stack (test/bench/holdRow.ts). */
export interface HoldResults {
  /** What each held payment does: hold `amount`, capture each of `parts`, void the rest. */
  amounts: { amount: string; parts: string[]; rest: string };
  rows: HoldRow[];
  /** Node calls per held payment one at a time (the worker's /metrics, its idle background included), and the floor's. */
  rpcPerHeldPayment: { authcap: RpcCost; floor: RpcCost };
  /** Gas from the receipts of the rows' transactions (the warm-up's apart), by step; authcap's and the floor's (the same calls). */
  gasUsed: {
    /** The run's first held payment (authcap's, before any other): the first authorize and capture of a fresh chain. */
    warmUp: Record<'authorize' | 'capture1' | 'capture2' | 'void', number>;
    authcap: Record<'authorize' | 'capture1' | 'capture2' | 'void', GasFigures>;
    floor: Record<'authorize' | 'capture1' | 'capture2' | 'void', GasFigures>;
    /** The plain payments' receiveWithAuthorization captures in the same run. */
    plainCapture: GasFigures;
  };
  /**
   * What each step costs Temporal, one at a time, per payment: the events recorded between a step's
   * request and the next step's, of the payment's own workflows (its last step keeps all after its last
   * answer) and of the relayer and webhook dispatcher (by the payment whose step was under way).
   */
  steps: {
    held: StepFigures;
    plain: StepFigures;
  } | null;
  /** Every authcap hold's escrow events (one each of PaymentAuthorized, two PaymentCaptured, PaymentVoided of its amounts, in the transactions authcap reported) and the merchant key's transaction count. */
  audit: {
    holds: number;
    holdsWrong: string[];
    merchantTransactions: number;
    merchantTransactionsExpected: number;
    ok: boolean;
  };
  webhookDeliveries: number;
  apiRetries: number;
}

/** Temporal per step of a payment, by workflow type; and its own workflows' history by event type (per payment). */
export interface StepFigures {
  sampled: number;
  byStep: Record<string, Record<string, TemporalFigures>>;
  ownByEventType: Record<string, { events: number; bytes: number }>;
}

/** One concurrency of held payments, the floor's and plain payments' beside them. */
export interface HoldRow {
  concurrency: number;
  n: number;
  authcap: {
    heldPerSecond: number;
    /** ms by step (create, sign → held, capture1, capture2, void → left held) and whole. */
    latency: Record<string, Distribution>;
    answers: Record<string, number>;
    cost: LifecycleCost;
    serverCalls: ServerCallsPerLifecycle;
    /** Sampled authorization workflows still open a few seconds after the phase (a held payment's closes once captured). */
    openAfter: number;
    /** The relayer's largest history event in the phase (Temporal's payload limit is 2 MB). */
    largestRelayerEvent: { eventType: string; bytes: number } | null;
    /** Mean gas of this row's escrow calls, by step (set after the rows, from the receipts). */
    gasMean?: Record<'authorize' | 'capture1' | 'capture2' | 'void', number>;
  };
  floor: { heldPerSecond: number; latency: Record<string, Distribution> };
  /** authcap ÷ floor: whole (authcap's includes its create) p50 / p95, throughput; each chain step's p50 (sign → held against authorize). */
  ratioToFloor: { p50: number | null; p95: number | null; throughput: number | null; byStepP50: Record<string, number | null> };
  plain: {
    lifecyclesPerSecond: number;
    latency: Record<string, Distribution>;
    cost: LifecycleCost;
    serverCalls: ServerCallsPerLifecycle;
    largestRelayerEvent: { eventType: string; bytes: number } | null;
  };
}

/** One facilitator's payments in one phase of the facilitator row (test/bench/facilitatorRow.ts). */
export interface FacilitatorSide {
  n: number;
  /** Payments answered success. */
  settled: number;
  /** The other answers, by reason: `verify: <reason>`, the settle's errorReason, or the HTTP error / what was thrown. */
  notSettled: Record<string, number>;
  seconds: number;
  settledPerSecond: number;
  /** The settled payments, ms: sign + verify + settle (the whole), sign + verify, and the settle alone. */
  latency: Distribution;
  verify: Distribution;
  settle: Distribution;
  /**
   * CPU ms per settled payment by process, over the phase, from /proc: the stack's (worker, api,
   * temporal, anvil) and the bench process's own (`bench`: the payers' signing and the HTTP client; for
   * baseline B also the facilitator itself, which runs in it).
   */
  cpuMsPerSettled: Record<string, number>;
  /** The facilitator's share: authcap worker + API + Temporal + anvil; B bench + anvil. */
  cpuMsPerSettledTotal: number;
  /** settle answers of `settlement_pending` settled once more, as the SDK's resource server does. */
  pendingAnswers: number;
  /** One message for each reason in notSettled (the facilitator's errorMessage, or the error itself). */
  examples: Record<string, string>;
  /**
   * One at a time, in blocks of the chain (0.2 s each): the head before the signature to the block that
   * included the transfer, and that block to the head right after the answer (how many blocks the
   * answer waited for once the transfer was in one). Counts of payments by number of blocks.
   */
  blocks?: { toInclusion: Record<string, number>; afterInclusion: Record<string, number> };
}

/** Payments made to be refused, or raced, to judge authcap's answers where they can go wrong (test/bench/facilitatorRow.ts). */
export interface FacilitatorProbes {
  /** Payers holding nothing: verify's answers, and settle's when it is sent anyway (a server that skips verify). */
  unfunded: { n: number; verify: Record<string, number>; settle: Record<string, number> };
  /** Payers holding one amount, two payloads each settled at once (both verified valid first): one should pay, the other be refused. */
  oneAmountTwoPayloads: { payers: number; oneSettled: number; bothSettled: number; noneSettled: number; answers: Record<string, number> };
  /** One payload settled twice at once (the second 0, 8, … 152 ms after the first): both answers should name the one transaction. */
  race: {
    n: number;
    sameTransaction: number;
    differentTransaction: number;
    otherAnswers: string[];
    /** The first pair that did not answer the one transaction twice: the request (sent twice at once) and both answers. */
    example?: { request: unknown; answers: unknown[] };
  };
  /** Transactions the merchant key sent over the probes, those of them that reverted, and the settled payments. */
  merchantTransactions: number;
  merchantReverted: number;
  settled: number;
}

/** authcap's /x402/verify + /x402/settle over HTTP against x402's own facilitator in process (test/bench/facilitatorRow.ts). */
export interface FacilitatorResults {
  /** Atomic units of the token per payment; every payment from a payer of its own, minted `held`. */
  amount: string;
  held: string;
  oneAtATime: {
    authcap: FacilitatorSide;
    baselineB: FacilitatorSide;
    /** authcap ÷ B, whole payment. */
    ratio: { p50: number | null; p95: number | null };
    /** Not timed with the rows: ms from the settle's start to its transfer in the node's pool (the sender's pending nonce polled every 5 ms), 10 payments each. */
    sent: { authcap: Distribution; baselineB: Distribution };
  };
  concurrent: {
    concurrency: number;
    authcap: FacilitatorSide;
    /** One facilitator key, as the library sets it up (the pending nonce fetched per send). */
    baselineB: FacilitatorSide;
    /** The same with viem's nonce manager on the facilitator's account. */
    baselineBNonceManager: FacilitatorSide;
    /** Settled per second, authcap ÷ B, and ÷ B with a nonce manager. */
    ratio: number | null;
    ratioToNonceManager: number | null;
  };
  audit: {
    authcap: AnswerAudit;
    baselineB: AnswerAudit;
    /** Settled payloads settled again after the run: each must answer success with the same transaction. */
    resettle: { sampled: number; sameTransaction: number; differentTransaction: number; otherAnswers: string[]; latency: Distribution };
    /** Transactions the merchant key sent over the row's timed phases, against authcap's settled payments there (one each), and those that reverted. */
    merchantTransactions: number;
    merchantReverted: number;
    authcapSettled: number;
    /** Seconds waited after the last phase for refused payments' validBefore to pass before reading them. */
    waitedSeconds: number;
    ok: boolean;
  };
  probes: FacilitatorProbes;
  targets: Target[];
  webhookDeliveries: number;
}

export interface BenchResults {
  version: 1;
  mode: 'quick' | 'full';
  startedAt: string;
  durationSeconds: number;
  command: string;
  machine: { cpus: number; model: string; memoryGb: number; node: string; platform: string };
  /** Which Temporal the run used: the dev server, the Temporal server on PostgreSQL, or an external cluster. */
  temporalTopology?: string;
  configuration: string;
  latency: {
    baselineA: { preconfirmed: Distribution; captured: Distribution };
    baselineB: { settled: Distribution } | { error: string };
    authcap: { preconfirmed: Distribution; captured: Distribution };
    ratioToA: { preconfirmed: Record<'p50' | 'p95' | 'p99', number | null>; captured: Record<'p50' | 'p95' | 'p99', number | null> };
  };
  rpcPerCapture: { baselineA: RpcCost; baselineB: RpcCost | null; authcap: RpcCost; authcapIdlePerSecond: RpcCost };
  temporalPerAuthorization: TemporalCost;
  /** Where one capture's time goes (ms, mean over the sequential captures), from workflow history. */
  captureProfileMs: Record<string, number>;
  concurrency: ConcurrencyRow[];
  creates: { concurrency: number; n: number; perSecond: number; latency: Distribution };
  createAndSign: { concurrency: number; n: number; perSecond: number; latency: Distribution };
  captureBurst: { callers: number; n: number; capturesPerSecond: number; captured: Distribution; get: Distribution };
  idle: { open: number; seconds: number; rpcPerSecond: RpcCost; usage: UsageByProcess }[];
  exactlyOnce: ExactlyOnceFindings;
  /** 503/429 answers the bench's callers waited out (Retry-After) and retried. */
  apiRetries: number;
  /** The capture burst on a stack with one merchant key and on one with four. */
  keys: KeysRun[];
  /** Concurrency 50 on one network, then spread over two, on a stack serving both; absent in older results (latest-full.json). */
  networks?: TwoNetworksRow;
  /** Node calls per block for watching, idle, with one worker process and with two. */
  watching?: WatchingRow;
  targets: Target[];
  /** The cost targets (test/bench/costTargets.ts); absent in older results (latest-full.json). */
  costTargets?: CostTarget[];
  /** The merchant's webhook endpoint the rows ran with (test/bench/webhookReceiver.ts); absent in older results (latest-full.json). */
  webhook?: WebhookFigures;
  /** Refunds and partial captures against their floor; absent in older results (latest-full.json). */
  refunds?: RefundResults;
  /** authcap as an x402 facilitator against x402's own (--only facilitator, and the full bench on a stack of its own); absent in older results. */
  facilitator?: FacilitatorResults;
  /** Held payments (--only holds); absent from the other runs. */
  holds?: HoldResults;
  /** With --profile: where the worker's and the API's CPU went in the highest-concurrency row (self time; the profiler's own overhead is in this run's CPU figures). */
  profile?: Record<string, ProfileSummary>;
  /** With --floor: Temporal's own floor (variant A, 300 at concurrency 50), run first in the same sitting. */
  floor?: FloorFigures;
  /** With --profile: the worker's and the API's CPU per lifecycle by part (test/bench/profileSplit.ts), the workflows in the worker's profiled thread. */
  profileSplit?: { lifecycles: number; concurrency: number; worker: SplitRow[]; api: SplitRow[] };
}
