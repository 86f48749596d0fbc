// A held payment's capture update: the hold's ledger decides it in the validator (a refused capture
// leaves no trace; the same Idempotency-Key again is answered with the part it made), the handler
// records the part and answers once it succeeded or failed (the main loop carries it to the chain).
import { ApplicationFailure, condition } from '@temporalio/workflow';
import type { AuthorizationView } from '../domain/authorization.js';
import type { HoldRecord } from '../domain/holds.js';
import { failure } from './failures.js';
import { HoldCaptureRepeated, HoldLedger, HoldRefusal } from './holdLedger.js';
import type { Lifecycle } from './lifecycle.js';
import type { CaptureCommand } from './messages.js';

const AMOUNT = /^[1-9]\d{0,77}$/;

const ledgerOf = (lifecycle: Lifecycle) => new HoldLedger(JSON.parse(JSON.stringify(lifecycle.context.hold)) as HoldRecord);
const nowSeconds = () => Math.floor(Date.now() / 1000);

export function validatePart(lifecycle: Lifecycle, request: CaptureCommand | undefined): void {
  if (!lifecycle.matches({ held: 'open' })) throw failure('invalid_state', `cannot capture: the authorization is ${lifecycle.describeState()}`);
  if (request?.amount !== undefined && (typeof request.amount !== 'string' || !AMOUNT.test(request.amount)))
    throw failure('validation_error', 'the capture amount must be a positive whole number of minor units');
  if (request?.final !== undefined && typeof request.final !== 'boolean') throw failure('validation_error', 'final must be true or false');
  if (typeof request?.requestKey !== 'string' || !request.requestKey) throw failure('validation_error', "a held payment's capture needs its Idempotency-Key");
  try {
    ledgerOf(lifecycle).validate(command(request), { nowSeconds: nowSeconds() });
  } catch (err) {
    if (err instanceof HoldRefusal)
      throw ApplicationFailure.create({ type: err.code, nonRetryable: true, message: err.message, ...(err.details ? { details: [err.details] } : {}) });
    // The same part asked again: refused, so it leaves no trace, with the part in the refusal's details.
    if (err instanceof HoldCaptureRepeated)
      throw ApplicationFailure.create({ type: 'capture_already_requested', nonRetryable: true, message: err.message, details: [err.capture] });
    throw err;
  }
}

export async function capturePart(lifecycle: Lifecycle, request: CaptureCommand): Promise<AuthorizationView> {
  const ledger = ledgerOf(lifecycle);
  const part = ledger.request(command(request), ledger.validate(command(request), { nowSeconds: nowSeconds() }), new Date().toISOString());
  lifecycle.send({ type: 'PART_REQUESTED', capture: part });
  const done = () => {
    const now = lifecycle.context.hold?.captures.find((c) => c.sequence === part.sequence);
    return now?.stage === 'succeeded' || now?.stage === 'failed';
  };
  await condition(done);
  const settled = lifecycle.context.hold!.captures.find((c) => c.sequence === part.sequence)!;
  if (settled.stage === 'failed') throw failure(settled.failure?.code ?? 'capture_reverted', settled.failure?.message ?? 'the capture moved nothing');
  return lifecycle.view();
}

function command(request: CaptureCommand) {
  return {
    ...(request.amount === undefined ? {} : { amountMinor: request.amount }),
    final: request.final === true,
    requestKey: request.requestKey!,
    requestFingerprint: request.requestFingerprint ?? '',
  };
}
