// One workflow per authorization attempt. It reads like the business process: draft (or take a
// pre-signed authorization), wait for the payer's signature, capture when the merchant says so,
// watch the chain for outside consumption, and stop at the deadline. The machine decides each step.
import { allHandlersFinished, condition, log, setHandler } from '@temporalio/workflow';
import type { AuthorizationView, AuthorizationWorkflowInput } from '../domain/authorization.js';
import { reads } from './activities.js';
import { Lifecycle } from './lifecycle.js';
import {
  cancelUpdate, captureUpdate, draftReadyUpdate, nonceActivitySignal, statusQuery, submitSignatureUpdate, voidSignal, voidUpdate, type VoidRequest,
} from './messages.js';
import { cancel, capture, expireAtDeadline, failure, reconcile, submitSignature } from './procedures.js';
import { createRelayClient } from './relayClient.js';

const now = () => new Date().toISOString();

export async function authorizationWorkflow(input: AuthorizationWorkflowInput): Promise<AuthorizationView> {
  const presigned = 'presigned' in input ? input.presigned : undefined;
  const draftRequest = 'draft' in input ? input.draft : undefined;
  const lifecycle = new Lifecycle(
    {
      orderId: input.orderId,
      payer: presigned ? presigned.authorization.from : draftRequest!.payer,
      value: presigned ? presigned.authorization.value : draftRequest!.value,
      primaryType: presigned ? presigned.primaryType : 'ReceiveWithAuthorization',
    },
    now,
  );

  setHandler(statusQuery, () => lifecycle.view());
  const relay = createRelayClient();
  setHandler(draftReadyUpdate, async () => {
    await condition(() => !lifecycle.matches('drafting'));
    if (lifecycle.state === 'rejected') {
      const why = lifecycle.context.lastError;
      throw failure(why?.code ?? 'invalid_signature', why?.message ?? 'the pre-signed authorization was refused');
    }
    return lifecycle.view();
  });
  setHandler(submitSignatureUpdate, ({ signature }) => submitSignature(lifecycle, signature), {
    validator: (_request) => lifecycle.assertCan({ type: 'SIGNATURE_SUBMITTED' }, 'accept a signature'),
  });
  setHandler(captureUpdate, () => capture(lifecycle, relay), {
    validator: () => lifecycle.assertCan({ type: 'CAPTURE_REQUESTED' }, 'capture'),
  });
  setHandler(cancelUpdate, ({ signature }) => cancel(lifecycle, relay, signature), {
    validator: (_request) => lifecycle.assertCan({ type: 'CANCEL_REQUESTED' }, 'cancel'),
  });

  const voidAuthorization = ({ reason, by }: VoidRequest) => {
    lifecycle.send({ type: 'VOID', reason: reason.trim(), by: by?.trim() || 'merchant' });
    return lifecycle.view();
  };
  setHandler(voidUpdate, voidAuthorization, {
    validator: (request) => {
      if (typeof request?.reason !== 'string' || !request.reason.trim()) throw failure('validation_error', 'void needs a reason');
      lifecycle.assertCan({ type: 'VOID', reason: request.reason, by: request.by }, 'void');
    },
  });
  // A signal cannot be refused. One sent from the Temporal UI while a command is in flight waits for
  // it to finish; if the authorization is final by then (or a capture went out), it is logged and dropped.
  setHandler(voidSignal, async (request) => {
    const text = (value: unknown, fallback: string) => (typeof value === 'string' && value.trim() ? value.trim() : fallback);
    const command = { type: 'VOID' as const, reason: text(request?.reason, 'voided from the Temporal UI'), by: text(request?.by, 'operator') };
    await condition(() => lifecycle.isResting);
    if (lifecycle.can(command)) voidAuthorization(command);
    else log.warn('void signal ignored', { state: lifecycle.describeState() });
  });

  // The log watcher's nudge: something happened to our nonce onchain. Check now, not at the next tick.
  let checkRequested = false;
  setHandler(nonceActivitySignal, () => {
    checkRequested = true;
  });

  const policy = await reads.workerPolicy();
  if (presigned) {
    const { domain, check } = await reads.checkPresignedAuthorization(presigned);
    lifecycle.send({ type: 'PRESIGNED_CHECKED', domain, authorization: presigned.authorization, signature: presigned.signature, check });
  } else {
    const draft = await reads.draftAuthorization({ ...draftRequest!, primaryType: lifecycle.context.primaryType });
    if (lifecycle.can({ type: 'DRAFTED', ...draft })) lifecycle.send({ type: 'DRAFTED', ...draft });
  }

  // Until the deadline (a durable timer at validBefore, not polling), look at the chain every so
  // often: the payer may cancel elsewhere, or someone may settle a TransferWithAuthorization.
  const validBefore = lifecycle.context.authorization ? Number(lifecycle.context.authorization.validBefore) * 1000 : Date.now();
  while (!lifecycle.isFinal) {
    const untilDeadline = validBefore - Date.now();
    if (untilDeadline <= 0) {
      await expireAtDeadline(lifecycle, () => condition(() => lifecycle.isResting));
      break;
    }
    const settled = await condition(() => lifecycle.isFinal || checkRequested, Math.min(untilDeadline, policy.reconcileIntervalSeconds * 1000));
    checkRequested = false;
    if (!lifecycle.isFinal && lifecycle.isResting && Date.now() < validBefore) await reconcile(lifecycle);
    else if (settled && !lifecycle.isFinal) await condition(() => lifecycle.isResting || lifecycle.isFinal);
  }

  await condition(allHandlersFinished);
  return lifecycle.view();
}
