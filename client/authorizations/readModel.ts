// The authorization as a read sees it: the view its workflow keeps current in its memo, read with one
// server call and no workflow task, so reads stay fast under load and answer while every worker is
// down. Beside the view, the memo holds a partial capture's release (a refund of sorts), and a capture
// in flight shows what its follower has seen so far in its heartbeat.
import type { WorkflowExecutionDescription, WorkflowExecutionInfo } from '@temporalio/client';
import type { CaptureOnchainProgress } from '../../domain/activityContract.js';
import { VIEW_MEMO_KEY, type AuthorizationResource, type AuthorizationView } from '../../domain/authorization.js';
import { RELEASE_MEMO_KEY, type RefundRecord } from '../../domain/refunds.js';
import { sealedEntries } from '../../domain/sealed.js';
import type { Catalog } from '../../runtime/deployment/catalog.js';
import { statusQuery } from '../../workflows/messages.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { attemptHandle, attemptOf } from './attempt.js';
import { asResource } from '../../domain/captures.js';

/** What a read needs: the way to Temporal, and what the deployment serves (absent: a client given none). */
export interface ReadContext {
  transport: TemporalTransport;
  catalog?: Catalog;
}

export interface AuthorizationRecord {
  resource: AuthorizationResource;
  /** A partial capture's release: the part of the authorization given back, shown as the first refund. */
  release: RefundRecord | null;
  /** The attempt as the server names it: refunds are kept, and their nonces derived, by this one name. */
  firstRunId: string;
}

/** The authorization's own record (its memo), and a partial capture's release beside it. */
export async function readAuthorization(ctx: ReadContext, id: string): Promise<AuthorizationRecord> {
  const { transport } = ctx;
  const attempt = attemptOf(id);
  const latest = await transport.describeRun(attempt.workflowId);
  let run = latest.firstRunId === attempt.runId ? latest : undefined;
  let described = latest;
  if (!run) {
    const first = await transport.describeRun(attempt.workflowId, attempt.runId);
    described = first;
    // An older attempt that never rolled over is its own last run; one that did needs a query.
    if (!first.continuedAsNew) run = first;
  }
  // The attempt as the server names it (whatever run of it, in whatever spelling, the id gave).
  const firstRunId = described.firstRunId;
  // Only what authcap sealed counts: a workflow started by a client without the codec key has none.
  const memo = run ? sealedEntries(await run.memo([VIEW_MEMO_KEY, RELEASE_MEMO_KEY])) : undefined;
  const view = memo?.[VIEW_MEMO_KEY] as AuthorizationView | undefined;
  if (view) {
    const resource = withChain(ctx.catalog, asResource(id, view));
    // A capture is followed by one activity: what it has seen so far is in its heartbeat.
    const progress = resource.state === 'capturing' && !resource.capture ? await run!.captureProgress() : undefined;
    return {
      resource: progress ? withCaptureProgress(resource, progress) : resource,
      release: (memo?.[RELEASE_MEMO_KEY] as RefundRecord | undefined) ?? null,
      firstRunId,
    };
  }
  const handle = attemptHandle(transport, id);
  const queried = await transport.worker(() => handle.query(statusQuery));
  return { resource: withChain(ctx.catalog, asResource(id, queried)), release: null, firstRunId };
}

/** An authorization started without a network (by a client given no deployment) names none in its view: it is on the deployment's first. */
function withChain(catalog: Catalog | undefined, resource: AuthorizationResource): AuthorizationResource {
  if (resource.network || !catalog) return resource;
  const { network, token } = catalog.defaultRef;
  const served = catalog.token({ network, token })!;
  return { ...resource, network, token: { address: served.address, symbol: served.symbol, decimals: served.decimals } };
}

/** The capture as its follower has seen it so far (the memo records it when the follower ends). */
function withCaptureProgress(resource: AuthorizationResource, progress: CaptureOnchainProgress): AuthorizationResource {
  if (!progress.transactionHash) return resource;
  return {
    ...resource,
    capture: {
      transactionHash: progress.transactionHash,
      blockNumber: progress.blockNumber ?? null,
      blockHash: progress.blockHash ?? null,
      submittedAt: progress.submittedAt,
      preconfirmedAt: progress.preconfirmedAt ?? null,
      confirmedAt: null,
      by: 'authcap',
      amount: resource.amountCapturing ?? resource.amount,
    },
  };
}

/** The first run of the attempt a run belongs to: the run id in resource ids. */
export function firstRunIdOf(run: WorkflowExecutionDescription | WorkflowExecutionInfo): string {
  const raw = run.raw as { workflowExecutionInfo?: { firstRunId?: string | null } | null; firstRunId?: string | null };
  return raw.workflowExecutionInfo?.firstRunId || raw.firstRunId || run.runId;
}
