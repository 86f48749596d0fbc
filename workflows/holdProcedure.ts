// Placing a hold: once the payer's signature is checked, the escrow's authorize is prechecked and
// simulated (one local activity), handed to the relayer and followed to its PaymentAuthorized at depth.
// Only the chain ends it otherwise: a decline sent nothing; trouble from the relayer is checked
// against the payer's nonce (used: the authorize landed after all and is followed again).
import { workflowInfo } from '@temporalio/workflow';
import type { EscrowCall } from '../domain/escrowCall.js';
import { localReads } from './activities.js';
import { failureOf } from './failures.js';
import { followEscrowUnlessTroubled } from './followEscrow.js';
import type { Lifecycle } from './lifecycle.js';
import type { Relay } from './relayClient.js';

/** The follower is given until the payer's deadline (after it nothing can land), and then some. */
const FOLLOW_MARGIN_MS = 10 * 60_000;

export async function placeHold(lifecycle: Lifecycle, relay: Relay): Promise<void> {
  const hold = lifecycle.context.hold;
  if (!hold || !lifecycle.matches('holding')) return;
  const request = lifecycle.captureRequest();
  const call: EscrowCall = {
    kind: 'escrow',
    action: 'authorize',
    paymentInfo: hold.terms,
    amount: hold.terms.maxAmount,
    signature: request.signature,
    nonce: request.authorization.nonce,
  };
  // Where the follower looks from: the block the precheck read (the authorize cannot be older).
  let fromBlock: string | undefined;
  if (lifecycle.matches({ holding: 'prechecking' })) {
    const attempt = await localReads.prepareHoldAttempt({ ...request, call }).catch((err: unknown) => {
      lifecycle.send({ type: 'COMMAND_FAILED', failure: failureOf(err) });
      return undefined;
    });
    if (!attempt) return;
    fromBlock = attempt.fromBlock;
    lifecycle.send({ type: 'PRECHECKED', facts: attempt.facts });
    if (attempt.prepared?.status === 'failed' && lifecycle.matches({ holding: 'submitting' })) {
      lifecycle.send({ type: 'HOLD_FAILED', failure: attempt.prepared.failure });
      return;
    }
    if (!lifecycle.matches('holding')) return;
  }
  const { workflowId, runId } = workflowInfo();
  // One request per hold: the relayer answers it once, and the escrow takes the payer's nonce once.
  const requestId = `hold:${workflowId}`;
  const deadline = Number(hold.terms.preApprovalExpiry) * 1000;
  for (;;) {
    const follow = { requestId, replyTo: { workflowId, runId }, call, counted: [], ...(fromBlock ? { fromBlock } : {}) };
    const outcome = await followEscrowUnlessTroubled(relay, follow, hold.paymentInfoHash, {
      scheduleToCloseTimeout: Math.max(deadline - Date.now(), 0) + FOLLOW_MARGIN_MS,
      summary: `hold of ${lifecycle.context.orderId}`,
    });
    if ('result' in outcome) {
      const { transactionHash, blockNumber, amountMinor, confirmedAt } = outcome.result;
      if (lifecycle.matches({ holding: 'submitting' })) lifecycle.send({ type: 'HOLD_SUBMITTED', transactionHash });
      lifecycle.send({ type: 'HOLD_CONFIRMED', transactionHash, blockNumber, amountMinor }, confirmedAt);
      return;
    }
    // The relayer refused or its transaction failed, or the follower gave up: the payer's nonce says
    // whether the authorize landed after all (then follow it again) or nothing is held.
    const onchain = await localReads.readNonceState({ authorizer: request.authorization.from, nonce: request.authorization.nonce });
    if (onchain.status === 'used') continue;
    if (onchain.status === 'canceled') {
      lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain });
      return;
    }
    const answer = relay.answer(requestId);
    lifecycle.send({
      type: 'HOLD_FAILED',
      failure: answer?.failure ?? ('error' in outcome ? failureOf(outcome.error) : { code: 'capture_reverted', message: 'the relayer did not send the hold' }),
    });
    return;
  }
}
