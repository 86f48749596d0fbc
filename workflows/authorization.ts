// One workflow per authorization attempt. It reads like the business process: draft, wait for the
// payer's signature, capture when the merchant says so, and stop at the deadline. The machine in
// machine.ts decides every step; this file gathers facts through activities and feeds them to it.
import {
  ApplicationFailure, allHandlersFinished, condition, log, proxyActivities, setHandler,
} from '@temporalio/workflow';
import type { AuthorizationActivities } from '../domain/activityContract.js';
import type { AuthorizationView, AuthorizationWorkflowInput } from '../domain/authorization.js';
import type { ErrorCode } from '../domain/errors.js';
import { errorCodes } from '../domain/errors.js';
import { Lifecycle } from './lifecycle.js';
import { captureUpdate, draftReadyUpdate, statusQuery, submitSignatureUpdate, voidSignal, voidUpdate, type VoidRequest } from './messages.js';

// Business refusals are final answers; retrying them would not change the chain's mind.
const nonRetryableErrorTypes = Object.keys(errorCodes).filter((code) => code !== 'chain_unavailable');

const reads = proxyActivities<AuthorizationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', nonRetryableErrorTypes },
});
const submission = proxyActivities<AuthorizationActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', nonRetryableErrorTypes },
});
const waits = proxyActivities<AuthorizationActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', nonRetryableErrorTypes },
});

const now = () => new Date().toISOString();

function failure(code: ErrorCode, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message, nonRetryable: true });
}

export async function authorizationWorkflow(input: AuthorizationWorkflowInput): Promise<AuthorizationView> {
  if (!('draft' in input)) throw failure('validation_error', 'pre-signed authorizations are not supported yet');
  const lifecycle = new Lifecycle(
    { orderId: input.orderId, payer: input.draft.payer, value: input.draft.value, primaryType: 'ReceiveWithAuthorization' },
    now,
  );

  setHandler(statusQuery, () => lifecycle.view());

  setHandler(draftReadyUpdate, async () => {
    await condition(() => !lifecycle.matches('drafting'));
    return lifecycle.view();
  });

  setHandler(
    submitSignatureUpdate,
    async ({ signature }: { signature: `0x${string}` }): Promise<AuthorizationView> => {
      lifecycle.send({ type: 'SIGNATURE_SUBMITTED' });
      const { domain, authorization, primaryType } = lifecycle.context;
      const check = await reads.verifyAuthorizationSignature({ domain: domain!, authorization: authorization!, primaryType, signature });
      lifecycle.send({ type: 'SIGNATURE_CHECKED', signature, check });
      if (lifecycle.state !== 'stored') {
        if (!check.valid) throw failure(check.code ?? 'invalid_signature', check.reason ?? 'invalid signature');
        throw failure('invalid_state', `the authorization became ${lifecycle.state} while the signature was checked`);
      }
      return lifecycle.view();
    },
    { validator: (_request: { signature: `0x${string}` }) => lifecycle.assertCan({ type: 'SIGNATURE_SUBMITTED' }, 'accept a signature') },
  );

  setHandler(captureUpdate, () => capture(lifecycle), {
    validator: () => lifecycle.assertCan({ type: 'CAPTURE_REQUESTED' }, 'capture'),
  });

  const voidAuthorization = ({ reason, by }: VoidRequest) => {
    lifecycle.send({ type: 'VOID', reason, by });
    return lifecycle.view();
  };
  setHandler(voidUpdate, voidAuthorization, {
    validator: (request) => {
      if (!request || typeof request.reason !== 'string' || !request.reason.trim()) {
        throw failure('validation_error', 'void needs a reason');
      }
      lifecycle.assertCan({ type: 'VOID', reason: request.reason, by: request.by }, 'void');
    },
  });
  // Signals cannot be refused, so a void sent from the Temporal UI that arrives too late is logged and dropped.
  setHandler(voidSignal, (request) => {
    const command = { type: 'VOID' as const, reason: String(request?.reason ?? 'voided from the Temporal UI'), by: String(request?.by ?? 'operator') };
    if (lifecycle.can(command)) voidAuthorization(command);
    else log.warn('void signal ignored', { state: lifecycle.describeState() });
  });

  const draft = await reads.draftAuthorization({ payer: input.draft.payer, value: input.draft.value, primaryType: lifecycle.context.primaryType });
  lifecycle.send({ type: 'DRAFTED', domain: draft.domain, authorization: draft.authorization });

  // The deadline is a durable timer to validBefore, not polling.
  const untilDeadline = Math.max(Number(draft.authorization.validBefore) * 1000 - Date.now(), 1);
  const settledInTime = await condition(() => lifecycle.isFinal, untilDeadline);
  if (!settledInTime) await expireAtDeadline(lifecycle);

  await condition(allHandlersFinished);
  return lifecycle.view();
}

async function capture(lifecycle: Lifecycle): Promise<AuthorizationView> {
  lifecycle.send({ type: 'CAPTURE_REQUESTED' });
  const request = lifecycle.captureRequest();
  const facts = await reads.precheckCapture(request);
  lifecycle.send({ type: 'PRECHECKED', facts });
  if (!lifecycle.matches('capturing')) throw lastErrorFailure(lifecycle);

  const submitted = await submission.submitCapture(request);
  if (submitted.status === 'failed') {
    lifecycle.send({ type: 'CAPTURE_FAILED', failure: submitted.failure });
    throw lastErrorFailure(lifecycle);
  }
  if (submitted.status === 'consumed') {
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain: submitted.onchain });
    if (lifecycle.state === 'captured') return lifecycle.view();
    throw failure('nonce_already_used', `the nonce was ${submitted.onchain.status} onchain in ${submitted.onchain.transactionHash}`);
  }
  // The hash is in history before we wait on it: a crash from here on follows the same transaction.
  lifecycle.send({ type: 'CAPTURE_SUBMITTED', transactionHash: submitted.transactionHash });

  for (;;) {
    const included = await waits.awaitCaptureInclusion({ ...request, transactionHash: submitted.transactionHash });
    if (included.status === 'failed') {
      lifecycle.send({ type: 'CAPTURE_FAILED', failure: included.failure });
      throw lastErrorFailure(lifecycle);
    }
    lifecycle.send({ type: 'CAPTURE_PRECONFIRMED', blockNumber: included.blockNumber, blockHash: included.blockHash });
    const confirmed = await waits.awaitCaptureConfirmation({ ...request, transactionHash: included.transactionHash, blockHash: included.blockHash });
    if (confirmed.status === 'confirmed') {
      lifecycle.send({ type: 'CAPTURE_CONFIRMED', ...confirmed });
      return lifecycle.view();
    }
    lifecycle.send({ type: 'CAPTURE_REORGED' });
  }
}

/** At validBefore: let an in-flight capture finish, then ask the chain what really happened. */
async function expireAtDeadline(lifecycle: Lifecycle): Promise<void> {
  await condition(() => !lifecycle.matches('capturing') && !lifecycle.matches('canceling'));
  if (lifecycle.isFinal) return;
  const authorization = lifecycle.context.authorization;
  const onchain = authorization
    ? await reads.readNonceState({ authorizer: authorization.from, nonce: authorization.nonce })
    : ({ status: 'unused' } as const);
  lifecycle.send({ type: 'DEADLINE_REACHED', onchain });
}

function lastErrorFailure(lifecycle: Lifecycle): ApplicationFailure {
  const last = lifecycle.context.lastError;
  return last ? failure(last.code, last.message) : failure('internal_error', `capture stopped in state ${lifecycle.state}`);
}
