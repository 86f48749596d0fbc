// A partial capture's release: the capture moved the whole signed value, and the part the merchant
// does not keep goes back to the payer before the capture counts as done. Driven by the capture
// command that made it, or by the authorization's main loop when the chain settled the capture.
import { condition, log, sleep, workflowInfo } from '@temporalio/workflow';
import { PARTIAL_CAPTURE_REASON } from '../domain/refunds.js';
import type { Lifecycle } from './lifecycle.js';
import { keptAmount } from './machine.js';
import type { Relay } from './relayClient.js';

/** Longest pause between rounds of a release that keeps failing (the token paused for days, say). */
const MAX_RELEASE_PAUSE_MS = 30 * 60_000;

/**
 * A partial capture moved the whole signed value: the difference goes back to the payer before the
 * capture counts as done. It is a refund like any other (same machine, same exactly-once nonce), but
 * it cannot be given up: until it succeeds the payer is over-charged, so it starts over after a pause
 * whatever failed. Its record is in the machine's context, so a crash resumes it where it was.
 */
export async function completePartialCapture(lifecycle: Lifecycle, relay: Relay): Promise<void> {
  if (!lifecycle.matches({ capturing: 'releasing' })) return;
  // One driver at a time (the capture command, or the main loop when the chain settled it): the other waits.
  if (lifecycle.releaseDriven) return void (await condition(() => !lifecycle.matches({ capturing: 'releasing' })));
  lifecycle.releaseDriven = true;
  try {
    await releaseDifference(lifecycle, relay);
  } finally {
    lifecycle.releaseDriven = false;
  }
}

async function releaseDifference(lifecycle: Lifecycle, relay: Relay): Promise<void> {
  // Loaded by the few authorizations that need it: the sandbox evaluates every module each workflow imports.
  const [{ openRefund }, { retryRefund, runRefund }] = await Promise.all([
    import(/* webpackMode: "eager" */ './refundMachine.js'),
    import(/* webpackMode: "eager" */ './refundProcedure.js'),
  ]);
  const { context } = lifecycle;
  const authorization = context.authorization!;
  if (!context.release) {
    const release = openRefund({
      sequence: 0,
      ...(context.chain ? { chain: context.chain } : {}),
      authorizationRunId: workflowInfo().firstExecutionRunId,
      orderId: context.orderId,
      payer: authorization.from,
      merchant: authorization.to,
      captureTransactionHash: context.capture?.transactionHash ?? null,
      amountMinor: (BigInt(context.value) - BigInt(keptAmount(context))).toString(),
      reason: PARTIAL_CAPTURE_REASON,
      createdAt: new Date().toISOString(),
      requestKey: null,
      requestFingerprint: null,
    });
    lifecycle.send({ type: 'RELEASE_UPDATED', release });
  }
  for (let round = 1; lifecycle.matches({ capturing: 'releasing' }); round += 1) {
    const outcome = await runRefund(lifecycle.context.release!, {
      relay,
      // A release cannot give up: one that failed this round is pending again (its reason in lastError),
      // never `failed`, which callers read as final.
      onChange: (release) => lifecycle.send({ type: 'RELEASE_UPDATED', release: release.stage === 'failed' ? retryRefund(release) : release }),
    });
    if (outcome.stage === 'succeeded') return;
    log.warn('the partial capture release failed; starting it over', { orderId: context.orderId, round, code: outcome.failure?.code });
    await sleep(Math.min(10_000 * 2 ** (round - 1), MAX_RELEASE_PAUSE_MS));
    lifecycle.send({ type: 'RELEASE_UPDATED', release: retryRefund(outcome) });
  }
}
