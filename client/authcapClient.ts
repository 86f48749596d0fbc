// The typed client library order services use. Every method validates its input before anything
// reaches Temporal, and every failure is an AuthcapError with a stable code.
import type { ResolvedDeployment } from '../runtime/deployment/resolve.js';
import {
  Client,
  Connection,
  WithStartWorkflowOperation,
  WorkflowUpdateStage,
  type WorkflowExecutionDescription,
  type WorkflowExecutionInfo,
  type WorkflowHandle,
} from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import { describeRun, withCaptureProgress } from './describedRun.js';
import type { temporal as proto } from '@temporalio/proto';
import type { Address, Hex } from 'viem';
import { authorizationDigest, cancelDigest } from '../domain/signatureRecovery.js';
import { RefusalCache, type RefusedKind } from './refusalCache.js';
import { historyChanges } from './stateWatch.js';
import { MAX_WAIT_SECONDS, WatchHub } from './watchHub.js';
import { parseAddress, parseSignature } from '../domain/address.js';
import {
  FIRST_RUN_MEMO_KEY,
  VIEW_MEMO_KEY,
  finalStates,
  type AuthorizationResource,
  type AuthorizationView,
  type AuthorizationWorkflowInput,
} from '../domain/authorization.js';
import { AuthcapError } from '../domain/errors.js';
import {
  AmountMinorAttribute,
  AuthorizationStateAttribute,
  NetworkAttribute,
  OrderIdAttribute,
  PayerAttribute,
  TokenAttribute,
  ValidBeforeAttribute,
} from '../domain/searchAttributes.js';
import { loadTemporalSettings, type TemporalSettings } from '../runtime/temporal.js';
import {
  WORKFLOW_TYPE,
  cancelUpdate,
  captureUpdate,
  draftReadyUpdate,
  statusQuery,
  submitSignatureUpdate,
  voidUpdate,
  type DraftReady,
} from '../workflows/messages.js';
import { parseResourceId, resourceId, workflowIdForOrder } from './ids.js';
import { formatAmount } from '../domain/amount.js';
import { RELEASE_MEMO_KEY, type Refund, type RefundRecord } from '../domain/refunds.js';
import { Refunds, type RefundOptions, type RefundOutcome, type RefundRequest } from './refunds.js';
import { authorizationBusy, toAuthcapError } from './temporalErrors.js';
import { closeWhenSettled, serverCall, workerCall, withDeadline } from './temporalCalls.js';
import { tracingPluginFromEnv } from '../runtime/tracing.js';
import { parseAmount, parseOrderId, parsePresigned, parseState, parseStoredOrderId, parseValidFor, type PresignedRequest } from './requests.js';
import { WebhookEndpoints } from './webhookEndpoints.js';
import { listEvents, type EventPage, type ListEventsRequest } from './eventFeed.js';
import { quote } from './visibilityQuery.js';
import { sealedEntries } from '../domain/sealed.js';
import { selectChain } from './chainSelection.js';
import { normalizeNetwork } from '../runtime/deployment/schema.js';
import type { Catalog } from '../runtime/deployment/catalog.js';
import { SignatureChecker, type SignatureKind, type SignatureVerdict } from './signatureCheck.js';

export interface CreateAuthorizationRequest {
  orderId: string;
  /** The payer's address. */
  payer: string;
  /** Decimal token amount with at most 6 decimals, e.g. "12.50". */
  amount: string | number;
  /** A shorter window than the worker's AUTHCAP_VALIDITY_SECONDS, if the order needs one. */
  validForSeconds?: number;
  /** CAIP-2 network id, e.g. "eip155:8453"; optional when the deployment serves one network. */
  network?: string;
  /** The token's address or symbol, e.g. "USDC"; optional when the network has one token. */
  token?: string;
}

/** An authorization signed elsewhere (for example an x402-style TransferWithAuthorization). */
export interface CreatePresignedRequest extends PresignedRequest {
  orderId: string;
  /** The network the payload was signed for (its domain's chain when it carries one). */
  network?: string;
  /** The token it was signed for, by address or symbol (its domain's verifyingContract when it carries one). */
  token?: string;
}

export interface AuthorizationSummary {
  id: string;
  orderId: string;
  state: string;
  payer: string | null;
  amountMinor: string | null;
  validBefore: string | null;
  createdAt: string;
  /** CAIP-2 network id; null for an authorization started without one (it is on the worker's first). */
  network: string | null;
  /** Token contract; null for an authorization started without a network. */
  token: string | null;
}

export interface ListRequest {
  orderId?: string;
  state?: string;
  payer?: string;
  network?: string;
  /** A token contract, or a symbol the deployment serves. */
  token?: string;
  limit?: number;
}

export interface ListPage {
  data: AuthorizationSummary[];
  /** Pass back as `pageToken` for the next page; null on the last one. */
  nextPageToken: string | null;
}

export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

export interface Readiness {
  temporal: ReadinessCheck;
  worker: ReadinessCheck;
}

export interface AuthcapClientOptions {
  /**
   * A JSON-RPC URL of the token's chain. With it, a payer's signature or cancellation that is not the
   * payer's own ECDSA signature (a contract wallet's) is checked against the chain before it is sent,
   * and only a valid one reaches the workflow: a stranger's attempts never spend the payer's budget.
   */
  rpcUrl?: string;
  /**
   * The networks and tokens this deployment serves (runtime/deployment/): requests name theirs, and
   * amounts are read in that token's decimals. Absent: one network, whatever the worker serves.
   */
  deployment?: ResolvedDeployment;
}

export interface CaptureOutcome {
  authorization: AuthorizationResource;
  /** False when the capture was still in flight after the wait: poll `get` for the outcome. */
  settled: boolean;
}

export class AuthcapClient {
  /** Attempt budgets the workflows reported spent: a flood is answered from here, not by Temporal. */
  private readonly refusals = new RefusalCache();

  /** Checks payers' signatures before they reach a workflow (with a chain node to ask); absent: the workflow's budget screens them. */
  private readonly signatures?: SignatureChecker;

  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
    options: AuthcapClientOptions = {},
  ) {
    if (options.rpcUrl) this.signatures = new SignatureChecker(options.rpcUrl);
    // Each network's signatures are judged by its own node.
    // Those waiting for their node too (resolveDeployment's `degraded`): theirs says chain_unavailable until it answers.
    for (const network of [...(options.deployment?.networks ?? []), ...(options.deployment?.unavailable ?? [])])
      this.signaturesByChain.set(network.chainId, new SignatureChecker(network.rpcUrls[0]!));
    this.catalog = options.deployment?.catalog;
  }

  private readonly signaturesByChain = new Map<number, SignatureChecker>();

  /** What the deployment serves (absent: a client given no configuration; one network, by default). */
  private readonly catalog?: Catalog;

  /** An authorization started without a network (by a client given no deployment) names none in its view: it is on the deployment's first. */
  private withChain(resource: AuthorizationResource): AuthorizationResource {
    if (resource.network || !this.catalog) return resource;
    const { network, token } = this.catalog.defaultRef;
    const served = this.catalog.token({ network, token })!;
    return { ...resource, network, token: { address: served.address, symbol: served.symbol, decimals: served.decimals } };
  }

  /**
   * List filters by network and token. With the deployment at hand a token may be named by symbol;
   * without it (the CLI given no AUTHCAP_CONFIG) by address only, and the network as given.
   */
  private chainClauses(request: { network?: string; token?: string }): string[] {
    if (this.catalog) {
      const chain = selectChain(this.catalog, request);
      return [
        ...(request.network !== undefined ? [`Network = ${quote(chain!.network)}`] : []),
        ...(request.token !== undefined ? [`Token = ${quote(chain!.token.toLowerCase())}`] : []),
      ];
    }
    const network = request.network === undefined ? undefined : normalizeNetwork(request.network);
    if (request.network !== undefined && !network) throw new AuthcapError('validation_error', 'network must be a CAIP-2 network id such as "eip155:8453"');
    return [
      ...(network !== undefined ? [`Network = ${quote(network)}`] : []),
      ...(request.token !== undefined ? [`Token = ${quote(parseAddress(request.token, 'token').toLowerCase())}`] : []),
    ];
  }

  /** The decimals of an authorization's token: read from it only where the deployment has a token with other than 6. */
  private async decimalsOf(id: string): Promise<number> {
    if (!this.catalog || this.catalog.networks.every((n) => n.tokens.every((t) => t.decimals === 6))) return 6;
    return (await this.getAuthorization(id)).token?.decimals ?? 6;
  }

  static async connect(settings: TemporalSettings = loadTemporalSettings(), options: AuthcapClientOptions = {}): Promise<AuthcapClient> {
    const connection = await Connection.connect(settings.connectionOptions);
    const tracing = tracingPluginFromEnv('authcap-client');
    return new AuthcapClient(
      new Client({ connection, namespace: settings.namespace, dataConverter: settings.dataConverter, plugins: tracing ? [tracing] : [] }),
      settings.taskQueue,
      options,
    );
  }

  async close(): Promise<void> {
    // Open waits' long polls end now rather than hold the close for their deadlines.
    this.watches?.close();
    await closeWhenSettled(this.temporal);
  }

  private endpoints?: WebhookEndpoints;

  /** Webhook endpoints: `create` (returns the signing secret once), `list`, `get`, `delete`. */
  get webhookEndpoints(): WebhookEndpoints {
    return (this.endpoints ??= new WebhookEndpoints(this.temporal, this.taskQueue, () => this.ping()));
  }

  /** The events feed, oldest first after `after` (an event id), filtered by type or order. */
  listEvents(request: ListEventsRequest = {}): Promise<EventPage> {
    return listEvents(this.temporal, request);
  }

  /** Drafts a new authorization for the payer to sign; resolves once its typed data exists. */
  async createAuthorization(request: CreateAuthorizationRequest): Promise<AuthorizationResource> {
    const orderId = parseOrderId(request?.orderId);
    const payer = parseAddress(request?.payer, 'payer');
    const chain = selectChain(this.catalog, request ?? {});
    const value = parseAmount(request?.amount, chain?.decimals);
    const validForSeconds = parseValidFor(request?.validForSeconds);
    return this.start(orderId, payer, value, {
      orderId,
      draft: { payer, value: value.toString(), validForSeconds },
      ...(chain ? { chain } : {}),
    });
  }

  /**
   * Stores an authorization the payer signed elsewhere, after checking it against this merchant's
   * token domain and recipient. A TransferWithAuthorization is captured with transferWithAuthorization.
   */
  async createPresignedAuthorization(request: CreatePresignedRequest): Promise<AuthorizationResource> {
    const orderId = parseOrderId(request?.orderId);
    const presigned = parsePresigned(request);
    const chain = selectChain(this.catalog, request, presigned.domain);
    const value = BigInt(presigned.authorization.value);
    return this.start(orderId, presigned.authorization.from, value, { orderId, presigned, ...(chain ? { chain } : {}) });
  }

  /**
   * `first`: the order's first attempt is started at once, refused by Temporal itself if the order has
   * any run already (its id is taken), so the common create asks nothing before it starts; a refused
   * one comes back here to look at the earlier attempt first.
   */
  private async start(
    orderId: string,
    payer: string,
    value: bigint,
    input: AuthorizationWorkflowInput,
    retried = false,
    first = true,
  ): Promise<AuthorizationResource> {
    const workflowId = workflowIdForOrder(orderId);
    const chain = 'chain' in input ? input.chain : undefined;
    // Operators search and sort by AmountMinor (an integer attribute): an amount it cannot hold exactly
    // is refused for 6-decimal tokens (no payment is that large); an 18-decimal token's amounts pass
    // 2^53 minor units at 0.009 of a token, so theirs are recorded only while exact.
    const exact = value <= BigInt(Number.MAX_SAFE_INTEGER);
    if (!exact && (chain?.decimals ?? 6) <= 6) {
      throw new AuthcapError('validation_error', `amount is larger than authcap records (at most ${Number.MAX_SAFE_INTEGER} minor units)`);
    }
    // One order, one charge: a new attempt is allowed only after one that moved no money.
    const previous = first ? undefined : await this.untilClosedIfFinal(workflowId, await this.latestRun(workflowId));
    if (previous && previous.status.name !== 'RUNNING') await this.refuseIfAnyRunCaptured(orderId, workflowId, previous);
    // One round trip: the start and the first update travel together (update-with-start), and the
    // update is answered in the workflow's first task, once the draft (or the refusal) exists.
    const startOperation = new WithStartWorkflowOperation(WORKFLOW_TYPE, {
      taskQueue: this.taskQueue,
      workflowId,
      // Stamped now, not when the order was first looked at: the run refuses a start long after it.
      args: [{ ...input, requestedAt: new Date().toISOString() }],
      // One open authorization per order; a new attempt may start once the previous one is final (and
      // moved no money, which the look above decided). A first try takes only a free id.
      workflowIdReusePolicy: first ? 'REJECT_DUPLICATE' : 'ALLOW_DUPLICATE',
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: [
        { key: OrderIdAttribute, value: orderId },
        { key: PayerAttribute, value: payer },
        { key: AuthorizationStateAttribute, value: 'drafting' },
        ...(exact ? [{ key: AmountMinorAttribute, value: Number(value) }] : []),
        ...(chain
          ? [
              { key: NetworkAttribute, value: chain.network },
              { key: TokenAttribute, value: chain.token.toLowerCase() },
            ]
          : []),
      ],
    });
    let view: DraftReady | undefined;
    let failed: AuthcapError | undefined;
    try {
      // Not this.update: a start operation is sent once, never retried by us.
      view = await workerCall(
        this.temporal,
        () => this.ping(),
        () => this.temporal.workflow.executeUpdateWithStart(draftReadyUpdate, { startWorkflowOperation: startOperation }),
        30_000,
      );
    } catch (err) {
      failed = toAuthcapError(err);
    }
    // The answer names the run; without an answer (the update failed, the run may have ended) the
    // run's description does.
    const handle = view?.firstRunId ? undefined : await startOperation.workflowHandle().catch(() => undefined);
    const started = view?.firstRunId ?? (handle ? firstRunIdOf(await serverCall(this.temporal, () => handle.describe())) : undefined);
    if (!started) {
      // The id is taken (an earlier attempt, open or closed): look at it, then try as a later attempt.
      if (first && failed?.code === 'order_has_open_authorization') return this.start(orderId, payer, value, input, retried, false);
      if (failed?.code === 'order_has_open_authorization') {
        const open = await this.latestRun(workflowId);
        // It became final after we looked: once it has closed, this is a new attempt after all.
        if (!retried && open && isFinalRun(open)) return this.start(orderId, payer, value, input, true, false);
        throw new AuthcapError('order_has_open_authorization', `order ${orderId} already has an open authorization`, {
          id: resourceId(orderId, open ? firstRunIdOf(open) : ''),
        });
      }
      throw failed ?? new AuthcapError('internal_error', 'the authorization did not start');
    }
    const runId = started;
    // The previous attempt was still running when we looked and may have ended captured since:
    // look again, and withdraw this attempt if it did.
    if (previous && previous.status.name === 'RUNNING') {
      const settled = await serverCall(this.temporal, () => this.temporal.workflow.getHandle(workflowId, previous.runId).describe());
      try {
        this.refuseIfCaptured(orderId, settled);
      } catch (err) {
        await serverCall(this.temporal, () => this.temporal.workflow.getHandle(workflowId, runId).terminate('the order was captured by an earlier attempt'));
        throw err;
      }
    }
    const id = resourceId(orderId, runId);
    if (view) {
      const { firstRunId: _, ...stored } = view;
      return { id, ...stored };
    }
    // A refused pre-signed authorization can end its workflow (rejected) before the update's answer
    // is read back; the workflow's own record then says why.
    if (failed?.code !== 'not_found') throw failed!;
    const ended = await this.getAuthorization(id);
    if (ended.state === 'rejected' && ended.lastError) throw new AuthcapError(ended.lastError.code, ended.lastError.message);
    return ended;
  }

  /**
   * A final authorization's workflow closes a moment after its final answer, once its handlers have
   * finished: a new attempt right after a void (or the refusal after a capture) waits for that
   * rather than calling the order still open.
   */
  private async untilClosedIfFinal(workflowId: string, run: WorkflowExecutionDescription | undefined): Promise<WorkflowExecutionDescription | undefined> {
    const deadline = Date.now() + CLOSING_WAIT_MS;
    while (run && isFinalRun(run) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      run = await this.latestRun(workflowId);
    }
    return run;
  }

  /**
   * Only a run that completed ran authcap's code to its end: its memo is its own. The latest run ended
   * otherwise (failed at its first task, a start nobody authcap sealed; terminated) says nothing of
   * the order's earlier attempts, and a start can carry a memo copied from one of them: every run of
   * the id is looked at then, and one that captured refuses the new attempt.
   */
  private async refuseIfAnyRunCaptured(orderId: string, workflowId: string, latest: WorkflowExecutionDescription): Promise<void> {
    if (latest.status.name === 'COMPLETED') return this.refuseIfCaptured(orderId, latest);
    let looked = 0;
    for await (const run of this.temporal.workflow.list({ query: `WorkflowId = ${quote(workflowId)}`, pageSize: 100 })) {
      this.refuseIfCaptured(orderId, run);
      // Each run someone starts under the id costs them a start; the look stops somewhere all the same.
      if (++looked >= MAX_RUNS_LOOKED_AT) break;
    }
    this.refuseIfCaptured(orderId, latest);
  }

  private refuseIfCaptured(orderId: string, run: WorkflowExecutionDescription | WorkflowExecutionInfo): void {
    // The sealed memo says what the run was; search attributes are whatever its starter set. A run
    // whose input nobody sealed fails at once (workflows/sealedInputs.ts) and charged nobody.
    const view = sealedEntries(run.memo)?.[VIEW_MEMO_KEY] as AuthorizationView | undefined;
    const state = view ? view.state : run.status.name === 'FAILED' ? undefined : run.typedSearchAttributes.get(AuthorizationStateAttribute);
    if (state === 'captured') {
      throw new AuthcapError('order_already_captured', `order ${orderId} was already paid by an earlier authorization; a new one would charge twice`, {
        id: resourceId(orderId, firstRunIdOf(run)),
      });
    }
  }

  private async latestRun(workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
    try {
      return await serverCall(this.temporal, () => this.temporal.workflow.getHandle(workflowId).describe());
    } catch (err) {
      if (err instanceof AuthcapError && err.code === 'not_found') return undefined;
      throw err;
    }
  }

  /**
   * The authorization as it stands, from the memo the workflow keeps current: one server call, no
   * workflow task, so reads stay fast under load and answer while every worker is down.
   */
  async getAuthorization(id: string): Promise<AuthorizationResource> {
    const { resource, firstRunId } = await this.readAuthorization(id);
    if (resource.state !== 'captured') return resource;
    // Refunds after the capture live in the authorization's refunds workflow: only a captured
    // authorization can have one, so only its reads pay for the look.
    const refunded = await this.refunds.amountRefunded(firstRunId);
    return refunded > 0n ? { ...resource, amountRefunded: formatAmount(refunded, resource.token?.decimals) } : resource;
  }

  /** The authorization's own record (its memo), and a partial capture's release beside it. */
  private async readAuthorization(id: string): Promise<{ resource: AuthorizationResource; release: RefundRecord | null; firstRunId: string }> {
    const parsed = this.parse(id);
    const latest = await serverCall(this.temporal, () => describeRun(this.temporal, parsed.workflowId));
    let run = latest.firstRunId === parsed.runId ? latest : undefined;
    let described = latest;
    if (!run) {
      const first = await serverCall(this.temporal, () => describeRun(this.temporal, parsed.workflowId, parsed.runId));
      described = first;
      // An older attempt that never rolled over is its own last run; one that did needs a query.
      if (!first.continuedAsNew) run = first;
    }
    // The attempt as the server names it (whatever run of it, in whatever spelling, the id gave):
    // refunds are kept, and their nonces derived, by this one name.
    const firstRunId = described.firstRunId;
    // Only what authcap sealed counts: a workflow started by a client without the codec key has none.
    const memo = run ? sealedEntries(await run.memo([VIEW_MEMO_KEY, RELEASE_MEMO_KEY])) : undefined;
    const view = memo?.[VIEW_MEMO_KEY] as AuthorizationView | undefined;
    if (view) {
      const resource = this.withChain(withAmounts({ id, ...view }));
      // A capture is followed by one activity: what it has seen so far is in its heartbeat.
      const progress = resource.state === 'capturing' && !resource.capture ? await run!.captureProgress() : undefined;
      return {
        resource: progress ? withCaptureProgress(resource, progress) : resource,
        release: (memo?.[RELEASE_MEMO_KEY] as RefundRecord | undefined) ?? null,
        firstRunId,
      };
    }
    const handle = this.handle(id);
    const queried = await workerCall(
      this.temporal,
      () => this.ping(),
      () => handle.query(statusQuery),
    );
    return { resource: this.withChain(withAmounts({ id, ...queried })), release: null, firstRunId };
  }

  private refundsApi?: Refunds;

  private get refunds(): Refunds {
    return (this.refundsApi ??= new Refunds({
      temporal: this.temporal,
      taskQueue: this.taskQueue,
      ping: () => this.ping(),
      readAuthorization: (id) => this.readAuthorization(id),
    }));
  }

  /**
   * Gives money back from a captured authorization (all that is left when no amount is given), from
   * the merchant key that received the capture. Resolves once the refund is final (succeeded, or
   * failed with nothing moved), or after `waitMs` with it pending (`settled: false`).
   */
  refund(authorizationId: string, request: RefundRequest = {}, options: RefundOptions = {}): Promise<RefundOutcome> {
    this.parse(authorizationId);
    return this.refunds.refund(authorizationId, request, options);
  }

  /** The authorization's refunds, oldest first (a partial capture's release first). */
  listRefunds(authorizationId: string): Promise<Refund[]> {
    this.parse(authorizationId);
    return this.refunds.listRefunds(authorizationId);
  }

  getRefund(refundId: string): Promise<Refund> {
    return this.refunds.getRefund(refundId);
  }

  /**
   * The authorization once its state differs from `state` (default: its state now), or as it stands
   * after `waitSeconds` (at most 30): wait for a capture, a signature or a cancellation without polling.
   * Every wait on one authorization in this process shares one watch of it (client/watchHub.ts).
   */
  async waitForAuthorization(id: string, options: { waitSeconds: number; state?: string }): Promise<AuthorizationResource> {
    if (!Number.isFinite(options.waitSeconds) || options.waitSeconds < 0 || options.waitSeconds > MAX_WAIT_SECONDS) {
      throw new AuthcapError('validation_error', `wait must be from 0 to ${MAX_WAIT_SECONDS} seconds`, { field: 'wait' });
    }
    const knownState = options.state === undefined ? undefined : parseState(options.state);
    return this.watchHub.wait(id, { waitSeconds: options.waitSeconds, knownState });
  }

  private watches?: WatchHub;

  /** The watches of this client's waits: the memo read as GET reads it, woken by Temporal's history long poll. */
  private get watchHub(): WatchHub {
    return (this.watches ??= new WatchHub({
      read: (target) => this.getAuthorization(target),
      changes: (target, signal) => historyChanges(this.temporal, target, signal),
    }));
  }

  /** Stores the payer's signature after checking it against the exact draft. */
  async submitSignature(id: string, signature: string): Promise<AuthorizationResource> {
    const parsed = parseSignature(signature) as Hex;
    const handle = this.handle(id);
    const verdict = await this.checkSignature(id, 'signature', parsed);
    if (!verdict) this.refusals.screen(id, 'signature', parsed);
    const request = verdict === 'chain' ? { signature: parsed, checkedOnchain: true } : { signature: parsed };
    const view = await this.budgeted(id, 'signature', () =>
      this.command(handle, 'accept a signature', () => handle.executeUpdate(submitSignatureUpdate, { args: [request] })),
    );
    return { id, ...view };
  }

  /**
   * The chain's word on a signature, before it is sent (undefined: this client has no node to ask, or
   * the authorization is not where the signature could apply, which the workflow then says). A
   * signature that is not the payer's is refused here, so it never reaches Temporal.
   */
  private async checkSignature(id: string, kind: SignatureKind, signature: Hex): Promise<SignatureVerdict | undefined> {
    if (!this.signatures && this.signaturesByChain.size === 0) return undefined;
    const { state, domain, primaryType, authorization } = await this.getAuthorization(id);
    if (!domain || !authorization || state !== (kind === 'signature' ? 'drafted' : 'stored')) return undefined;
    const checker = this.signaturesByChain.get(Number(domain.chainId)) ?? this.signatures;
    return checker?.check(kind, { domain, primaryType, authorization }, signature);
  }

  /** Runs an attempt; a `too_many_attempts` answer is remembered until its cool-down ends. */
  private async budgeted<T>(id: string, kind: RefusedKind, attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof AuthcapError && err.code === 'too_many_attempts') {
        this.refusals.remember(id, kind, err, kind === 'capture' ? undefined : await this.signedDigest(id, kind).catch(() => undefined));
      }
      throw err;
    }
  }

  /** What the payer signs for this kind of attempt, read from the resource: their own signature always passes. */
  private async signedDigest(id: string, kind: 'signature' | 'cancel'): Promise<{ digest: Hex; signer: Address } | undefined> {
    const { domain, authorization, primaryType } = await this.getAuthorization(id);
    if (!domain || !authorization) return undefined;
    const digest =
      kind === 'signature' ? authorizationDigest(domain, primaryType, authorization) : cancelDigest(domain, authorization.from, authorization.nonce);
    return { digest, signer: authorization.from };
  }

  /**
   * Captures now. Waits up to `waitMs` for the capture to reach the confirmation depth; past that it
   * returns `settled: false` and the capture carries on in the workflow.
   */
  async capture(id: string, options: { waitMs?: number; amount?: string | number } = {}): Promise<CaptureOutcome> {
    const handle = this.handle(id);
    // A partial capture keeps `amount` and gives the rest back; the workflow checks it against what was authorized.
    const command = options.amount === undefined ? {} : { amount: parseAmount(options.amount, await this.decimalsOf(id)).toString() };
    try {
      this.refusals.screen(id, 'capture');
      return await this.budgeted(id, 'capture', () =>
        this.boundedCommand(
          id,
          handle,
          'capture',
          () => handle.startUpdate(captureUpdate, { args: [command], waitForStage: WorkflowUpdateStage.ACCEPTED }),
          options.waitMs,
        ),
      );
    } catch (err) {
      // Capturing what is captured, or already being captured, is the same request arriving again
      // (a retry after a timeout, a second worker of the order service): answer with where it stands.
      if (!(err instanceof AuthcapError) || err.code !== 'invalid_state') throw err;
      const current = await this.getAuthorization(id);
      if (current.state !== 'captured' && current.state !== 'capturing') throw err;
      // The same request again, unless it asks to keep another amount than the capture under way or
      // done (`{}` asks for all of it): then the answer says what is kept, never "capturing" for it.
      const kept = current.amountCapturing ?? current.capture?.amount ?? current.amount;
      const decimals = current.token?.decimals;
      const asked = command.amount === undefined ? current.amount : formatAmount(BigInt(command.amount), decimals);
      if (parseAmount(asked, decimals) !== parseAmount(kept, decimals)) {
        throw new AuthcapError('invalid_state', `cannot capture ${asked}: the authorization is ${current.state}, keeping ${kept}`, {
          state: current.state,
          amountKept: kept,
        });
      }
      return { authorization: current, settled: current.state === 'captured' };
    }
  }

  /** Relays the payer's CancelAuthorization signature; resolves once the cancellation is onchain (or the wait ends). */
  async cancel(id: string, signature: string): Promise<AuthorizationResource> {
    return (await this.cancelWithOutcome(id, signature)).authorization;
  }

  /** Like cancel, but says whether the cancellation settled within `waitMs` (else it carries on). */
  async cancelWithOutcome(id: string, signature: string, options: { waitMs?: number } = {}): Promise<CaptureOutcome> {
    const parsed = parseSignature(signature) as Hex;
    const handle = this.handle(id);
    const verdict = await this.checkSignature(id, 'cancel', parsed);
    if (!verdict) this.refusals.screen(id, 'cancel', parsed);
    const request = verdict === 'chain' ? { signature: parsed, checkedOnchain: true } : { signature: parsed };
    return this.budgeted(id, 'cancel', () =>
      this.boundedCommand(
        id,
        handle,
        'cancel',
        () => handle.startUpdate(cancelUpdate, { args: [request], waitForStage: WorkflowUpdateStage.ACCEPTED }),
        options.waitMs,
      ),
    );
  }

  /** Starts an update, then waits at most `waitMs` for its outcome; past that the workflow carries on. */
  private async boundedCommand(
    id: string,
    handle: WorkflowHandle,
    action: string,
    start: () => Promise<{ result(): Promise<AuthorizationView> }>,
    waitMs = 15_000,
  ): Promise<CaptureOutcome> {
    const update = await this.command(handle, action, start);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    try {
      const view = await this.call(() => Promise.race([update.result(), timedOut]));
      if (view) return { authorization: withAmounts({ id, ...view }), settled: true };
      const current = await this.getAuthorization(id);
      // The workflow accepted the command and is still on it, but its record may not say so yet: the
      // record is written when the workflow's task ends, and a chain read the node does not answer
      // holds that task. The answer says what is under way, never the resting state it left.
      const underWay = ({ capture: 'capturing', cancel: 'canceling' } as const)[action as 'capture' | 'cancel'];
      const resting = current.state === 'stored' || current.state === 'drafted';
      return { authorization: underWay && resting ? { ...current, state: underWay } : current, settled: false };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Lists authorizations from Temporal visibility (search attributes), newest first. */
  async list(request: ListRequest = {}): Promise<AuthorizationSummary[]> {
    return (await this.listPage(request)).data;
  }

  /** One page of the list; pass `nextPageToken` back as `pageToken` for the next one. */
  async listPage(request: ListRequest & { pageToken?: string } = {}): Promise<ListPage> {
    // Runs that rolled over (continue-as-new) are the same authorization as their successor.
    const clauses = [`WorkflowType = '${WORKFLOW_TYPE}'`, `ExecutionStatus != 'ContinuedAsNew'`];
    const orderId = request.orderId === undefined ? undefined : parseOrderId(request.orderId);
    if (orderId !== undefined) clauses.push(`OrderId = ${quote(orderId)}`);
    const state = parseState(request.state);
    if (state) clauses.push(`AuthorizationState = ${quote(state)}`);
    if (request.payer !== undefined) clauses.push(`Payer = ${quote(parseAddress(request.payer, 'payer'))}`);
    if (request.network !== undefined || request.token !== undefined) clauses.push(...this.chainClauses(request));
    const limit = request.limit ?? 20;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) {
      throw new AuthcapError('validation_error', 'limit must be a whole number from 1 to 100');
    }
    let nextPageToken: Uint8Array | undefined;
    if (request.pageToken !== undefined) {
      if (typeof request.pageToken !== 'string' || !/^[A-Za-z0-9_-]{1,4096}$/.test(request.pageToken)) {
        throw new AuthcapError('validation_error', 'pageToken is not one this API returned');
      }
      nextPageToken = Buffer.from(request.pageToken, 'base64url');
    }
    const response = await serverCall(this.temporal, () =>
      this.temporal.workflowService.listWorkflowExecutions({
        namespace: this.temporal.options.namespace,
        query: clauses.join(' AND '),
        pageSize: limit,
        nextPageToken,
      }),
    ).catch((err: unknown) => {
      if (nextPageToken && err instanceof AuthcapError && err.code === 'internal_error') {
        throw new AuthcapError('validation_error', 'pageToken is not one this API returned');
      }
      throw err;
    });
    const converter = this.temporal.workflow.options.loadedDataConverter;
    const data = await Promise.all(
      (response.executions ?? []).slice(0, limit).map(async (execution) => {
        // Only the first run id is read (the memo also holds the view and the events).
        const firstRun = execution.memo?.fields?.[FIRST_RUN_MEMO_KEY];
        const memo = sealedEntries(
          await decodeMapFromPayloads(converter, (firstRun ? { [FIRST_RUN_MEMO_KEY]: firstRun } : {}) as never).catch(() => undefined),
        );
        return summaryOf(execution, memo?.[FIRST_RUN_MEMO_KEY] as string | undefined);
      }),
    );
    const token = response.nextPageToken && response.nextPageToken.length > 0 ? Buffer.from(response.nextPageToken).toString('base64url') : null;
    // Visibility's answer is re-checked, as the events feed does: a store that matches loosely
    // (another backend's collation or escaping) must never hand out another order's authorization.
    return { data: orderId === undefined ? data : data.filter((summary) => summary.orderId === orderId), nextPageToken: token };
  }

  /** Whether this client's Temporal answers and a worker is polling the task queue. */
  async checkReadiness(): Promise<Readiness> {
    const temporal = await this.ping().then(
      () => ({ ok: true }),
      (err: Error) => ({ ok: false, detail: err.message }),
    );
    if (!temporal.ok) return { temporal, worker: { ok: false, detail: 'Temporal is not reachable' } };
    const worker = await serverCall(this.temporal, () =>
      this.temporal.workflowService.describeTaskQueue({
        namespace: this.temporal.options.namespace,
        // TASK_QUEUE_KIND_NORMAL and TASK_QUEUE_TYPE_WORKFLOW (the proto package is CommonJS: no named ESM enums).
        taskQueue: { name: this.taskQueue, kind: 1 },
        taskQueueType: 1,
      }),
    ).then(
      (answer) => {
        const pollers = answer.pollers ?? [];
        return pollers.length > 0 ? { ok: true } : { ok: false, detail: `no worker is polling task queue ${this.taskQueue}` };
      },
      (err: Error) => ({ ok: false, detail: err.message }),
    );
    return { temporal, worker };
  }

  private ping(): Promise<unknown> {
    return withDeadline(this.temporal, 2_000, () => this.temporal.workflowService.getSystemInfo({}));
  }

  /** The id of the newest authorization attempt for an order (open or not). */
  async idForOrder(orderId: string): Promise<string> {
    const parsed = parseStoredOrderId(orderId);
    const description = await this.latestRun(workflowIdForOrder(parsed));
    if (!description) throw new AuthcapError('not_found', `no authorization for order ${parsed}`);
    return resourceId(parsed, firstRunIdOf(description));
  }

  /** Voids offchain: authcap never submits this authorization afterwards. */
  async voidAuthorization(id: string, request: { reason: string; by?: string }): Promise<AuthorizationResource> {
    if (typeof request?.reason !== 'string' || !request.reason.trim()) {
      throw new AuthcapError('validation_error', 'reason is required to void an authorization');
    }
    const args = [{ reason: request.reason.trim(), by: request.by?.trim() || 'merchant' }] as const;
    const handle = this.handle(id);
    const view = await this.command(handle, 'void', () => handle.executeUpdate(voidUpdate, { args: [...args] }));
    return { id, ...view };
  }

  private parse(id: string): { orderId: string; workflowId: string; runId: string } {
    const parsed = parseResourceId(String(id));
    if (!parsed) throw new AuthcapError('not_found', `no authorization with id ${id}`);
    return parsed;
  }

  /** The id names the attempt's first run; the handle follows it across continue-as-new. */
  private handle(id: string): WorkflowHandle {
    const parsed = this.parse(id);
    return this.temporal.workflow.getHandle(parsed.workflowId, undefined, { firstExecutionRunId: parsed.runId });
  }

  /** An update that needs a worker: bounded, and a missing worker is told apart from a missing server. */
  private async update<T>(_handle: WorkflowHandle, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await workerCall(this.temporal, () => this.ping(), fn, 30_000);
      } catch (err) {
        // The server drops an update a workflow task carried but did not answer (a burst of updates at
        // one workflow, a task that failed): nothing was applied, so asking again is safe.
        if (!isUpdateNotProcessed(err) || attempt >= 3) throw isUpdateNotProcessed(err) ? authorizationBusy() : err;
      }
    }
  }

  /**
   * Runs an update. Temporal answers an update to a finished workflow with "not found"; callers
   * need to hear that the authorization exists but is final, so that becomes invalid_state.
   */
  private async command<T>(handle: WorkflowHandle, action: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await this.update(handle, fn);
    } catch (err) {
      if (!(err instanceof AuthcapError) || err.code !== 'not_found') throw err;
      const description = await serverCall(this.temporal, () => handle.describe());
      const state = description.typedSearchAttributes.get(AuthorizationStateAttribute) ?? 'closed';
      throw new AuthcapError('invalid_state', `cannot ${action}: the authorization is ${state}`);
    }
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toAuthcapError(err);
    }
  }
}

/**
 * An update the server let go of without applying it: one a task carried but did not answer, or one
 * whose task failed (the server drops that task's effects). Never an aborted one: the server aborts
 * accepted updates too, and asking again (a new update id) would apply it twice.
 */
function isUpdateNotProcessed(err: unknown): boolean {
  return err instanceof AuthcapError && err.code === 'internal_error' && /wasn't processed by worker|unexpected workflow task failure/i.test(err.message);
}

/**
 * Views recorded before refunds existed carry no amountCaptured / amountRefunded: they are derived,
 * so every resource has them.
 */
function withAmounts(resource: AuthorizationResource): AuthorizationResource {
  if (resource.amountCaptured !== undefined && resource.amountRefunded !== undefined) return resource;
  const captured = resource.state === 'captured' ? (resource.capture?.amount ?? resource.amount) : '0';
  return { ...resource, amountCaptured: resource.amountCaptured ?? captured, amountRefunded: resource.amountRefunded ?? '0' };
}

/** How long a create waits for a final authorization's workflow to close (normally one workflow task). */
const CLOSING_WAIT_MS = 5_000;
/** How many runs of an order's id a new attempt looks at when the latest did not complete. */
const MAX_RUNS_LOOKED_AT = 1_000;

/** Still running, but its state is final: it is handing over its last events and closing. */
function isFinalRun(run: WorkflowExecutionDescription): boolean {
  const state = run.typedSearchAttributes.get(AuthorizationStateAttribute);
  return run.status.name === 'RUNNING' && state !== undefined && (finalStates as readonly string[]).includes(state);
}

/** The first run of the attempt a run belongs to: the run id in resource ids. */
function firstRunIdOf(run: WorkflowExecutionDescription | WorkflowExecutionInfo): string {
  const raw = run.raw as { workflowExecutionInfo?: { firstRunId?: string | null } | null; firstRunId?: string | null };
  return raw.workflowExecutionInfo?.firstRunId || raw.firstRunId || run.runId;
}

const fromPayload = (payload: proto.api.common.v1.IPayload | null | undefined): unknown =>
  payload ? defaultPayloadConverter.fromPayload(payload as never) : undefined;

function summaryOf(execution: proto.api.workflow.v1.IWorkflowExecutionInfo, firstRunId?: string): AuthorizationSummary {
  // Search attributes are never encrypted: plain JSON payloads.
  const fields = execution.searchAttributes?.indexedFields ?? {};
  const attr = (name: string) => {
    const value = fromPayload(fields[name]);
    return Array.isArray(value) ? value[0] : value;
  };
  const workflowId = execution.execution?.workflowId ?? '';
  const orderId = (attr(OrderIdAttribute.name) as string | undefined) ?? workflowId.replace(/^authorization-/, '');
  const amount = attr(AmountMinorAttribute.name);
  const validBefore = attr(ValidBeforeAttribute.name) as string | undefined;
  const rawSeconds = execution.startTime?.seconds as unknown;
  const seconds = typeof rawSeconds === 'object' && rawSeconds !== null ? (rawSeconds as { toNumber(): number }).toNumber() : Number(rawSeconds ?? 0);
  return {
    id: resourceId(orderId, firstRunId || execution.firstRunId || execution.execution?.runId || ''),
    orderId,
    state: (attr(AuthorizationStateAttribute.name) as string | undefined) ?? 'unknown',
    payer: (attr(PayerAttribute.name) as string | undefined) ?? null,
    amountMinor: amount === undefined ? null : String(amount),
    validBefore: validBefore ? new Date(validBefore).toISOString() : null,
    network: (attr(NetworkAttribute.name) as string | undefined) ?? null,
    token: (attr(TokenAttribute.name) as string | undefined) ?? null,
    createdAt: new Date(seconds * 1000 + Math.floor(Number(execution.startTime?.nanos ?? 0) / 1e6)).toISOString(),
  };
}

export type { AuthorizationResource, AuthorizationView };
export type { Refund } from '../domain/refunds.js';
export type { RefundOptions, RefundOutcome, RefundRequest } from './refunds.js';
export { AuthcapError } from '../domain/errors.js';
export type { AuthcapEvent, EventType, WebhookEndpoint } from '../domain/events.js';
export type { EventPage, ListEventsRequest } from './eventFeed.js';
export type { CreateWebhookEndpointRequest, CreatedWebhookEndpoint } from './webhookEndpoints.js';
// Receivers verify deliveries with this (it needs no Temporal connection).
export { signWebhook, verifyWebhook, WebhookVerificationError, SIGNATURE_HEADER, EVENT_ID_HEADER } from '../runtime/webhookSignature.js';
