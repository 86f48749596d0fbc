// One (payer, nonce) belongs to one order. A claim is a tiny workflow whose id is the pair itself:
// Temporal refuses a second execution with that id, so two orders can never hold the same signed
// payment, however many API processes race. It lives until the authorization can no longer be used
// (validBefore), after which the token itself refuses the nonce.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, WorkflowIdReusePolicy, sleep, startChild } from '@temporalio/workflow';
import type { AuthorizationMessage } from '../domain/eip3009.js';

/** Kept a little past validBefore: block time may trail the clock. */
const MARGIN_MS = 60 * 60 * 1000;

/** The claim's id: the (payer, nonce) digest, never the nonce itself (workflow ids are not encrypted). */
export function nonceClaimId(nonceKey: string): string {
  return `nonce-${nonceKey}`;
}

export async function nonceClaimWorkflow(claim: { orderId: string; validBefore: string }): Promise<{ orderId: string }> {
  const until = Number(claim.validBefore) * 1000 + MARGIN_MS - Date.now();
  if (until > 0) await sleep(until);
  return { orderId: claim.orderId };
}

/** Claims the pair for this order; false when another authorization already holds it. */
export async function claimNonce(orderId: string, authorization: AuthorizationMessage, nonceKey: string): Promise<boolean> {
  try {
    await startChild(nonceClaimWorkflow, {
      workflowId: nonceClaimId(nonceKey),
      args: [{ orderId, validBefore: authorization.validBefore }],
      // The claim outlives this run (continue-as-new) and this attempt (void, expiry): the payment
      // stays with its first order until the token itself would refuse it.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
