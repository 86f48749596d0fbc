// The start of an attempt: draft the typed data for the payer to sign, or check and store an
// authorization signed elsewhere. The create's caller waits for this first read of the chain, so it
// has a short budget of its own (workflows/activities.ts); one the node could not answer ends the
// attempt `rejected` with the reason: a node outage ends no workflow failed, and leaves no record
// `drafting` for ever. The worker's policy comes with the read, and is kept for the attempt's life.
import { log, workflowInfo } from '@temporalio/workflow';
import type { WorkerPolicy } from '../domain/activityContract.js';
import type { AuthorizationWorkflowInput, PresignedAuthorization } from '../domain/authorization.js';
import { draftReads } from './activities.js';
import { indexNonce } from './authorizationView.js';
import { failureOf } from './failures.js';
import type { Lifecycle } from './lifecycle.js';
import type { MachineInput } from './machine.js';
import { claimNonce } from './nonceClaim.js';
import type { ChainWindow } from './procedures.js';

type FreshStart = Exclude<AuthorizationWorkflowInput, { resume: unknown }>;
type DraftRequest = Extract<FreshStart, { draft: unknown }>['draft'];

/** What the machine starts from: a draft is a ReceiveWithAuthorization of what the merchant asked; a pre-signed one is what was signed. */
export function requestOf(input: FreshStart): MachineInput {
  const chain = input.chain ? { chain: input.chain } : {};
  if ('presigned' in input) {
    const { authorization, primaryType } = input.presigned;
    return { orderId: input.orderId, payer: authorization.from, value: authorization.value, primaryType, ...chain };
  }
  return { orderId: input.orderId, payer: input.draft.payer, value: input.draft.value, primaryType: 'ReceiveWithAuthorization', ...chain };
}

/** Opens the attempt; its policy, or undefined when the first read failed (the attempt is `rejected`). */
export async function openAuthorization(input: FreshStart, lifecycle: Lifecycle, window: ChainWindow): Promise<WorkerPolicy | undefined> {
  const policy = 'presigned' in input ? await storePresigned(input.orderId, input.presigned, lifecycle, window) : await draft(input.draft, lifecycle, window);
  return policy && { ...policy, ...input.policyOverrides };
}

async function draft(request: DraftRequest, lifecycle: Lifecycle, window: ChainWindow): Promise<WorkerPolicy | undefined> {
  const { hold, ...asked } = request;
  const drafted = await firstReadOrRefusal(lifecycle, () =>
    draftReads.draftAuthorization({
      ...asked,
      primaryType: lifecycle.context.primaryType,
      // A hold's terms are this authorization's own: its id salts them.
      ...(hold ? { hold: { authorizationId: workflowInfo().workflowId } } : {}),
    }),
  );
  if (!drafted) return undefined;
  window.fromBlock = drafted.fromBlock;
  // Voided while it was being drafted: the draft is dropped.
  if (lifecycle.can({ type: 'DRAFTED', ...drafted })) {
    lifecycle.send({ type: 'DRAFTED', domain: drafted.domain, authorization: drafted.authorization, ...(drafted.hold ? { hold: drafted.hold } : {}) });
    // The payer will sign this exact nonce: it must not be posted again as a pre-signed authorization
    // for another order. A draft's nonce carries a keyed tag the pre-signed check refuses
    // (activities/draftNonce.ts), so it needs no claim of its own.
    indexNonce(drafted.nonceKey);
  }
  return drafted.policy;
}

async function storePresigned(
  orderId: string,
  presigned: PresignedAuthorization,
  lifecycle: Lifecycle,
  window: ChainWindow,
): Promise<WorkerPolicy | undefined> {
  const checked = await firstReadOrRefusal(lifecycle, () => draftReads.checkPresignedAuthorization(presigned));
  if (!checked) return undefined;
  const { domain, check, fromBlock, nonceKey, policy, hold } = checked;
  window.fromBlock = fromBlock;
  // One (payer, nonce) pays one order: a payload authcap already holds is refused, never stored twice.
  const claimed = check.valid && (await claimNonce(orderId, presigned.authorization, nonceKey));
  const verdict =
    check.valid && !claimed
      ? { valid: false, code: 'nonce_already_held' as const, reason: 'this signed authorization already belongs to another order' }
      : check;
  lifecycle.send({
    type: 'PRESIGNED_CHECKED',
    domain,
    authorization: presigned.authorization,
    signature: presigned.signature,
    check: verdict,
    // A pre-signed hold goes to the escrow once checked, as a drafted one does once signed.
    ...(hold && presigned.hold ? { hold } : {}),
  });
  if (lifecycle.state === 'stored' || lifecycle.state === 'holding') indexNonce(nonceKey);
  return policy;
}

/** The attempt's first read of the chain: one the node could not answer ends the attempt `rejected` (undefined here). */
async function firstReadOrRefusal<T>(lifecycle: Lifecycle, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    const why = failureOf(err);
    log.warn('the first read failed; the attempt ends rejected', { orderId: lifecycle.context.orderId, code: why.code, error: why.message });
    lifecycle.send({ type: 'COMMAND_FAILED', failure: why });
    return undefined;
  }
}
