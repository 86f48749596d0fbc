// The steps every command of an authorization shares, and the short ones: each gathers facts with
// activities and lets the machine decide. Whatever an activity does, a command ends with the
// authorization resting or final (`asCommand`). The long commands have their own modules: the
// capture (captureProcedure.ts), a partial capture's release (partialCaptureRelease.ts) and the
// payer's cancellation (cancelProcedure.ts).
import { ApplicationFailure, condition, log } from '@temporalio/workflow';
import type { Hex } from 'viem';
import type { AuthorizationView } from '../domain/authorization.js';
import { isErrorCode } from '../domain/errors.js';
import { localReads } from './activities.js';
import { failure, failureOf } from './failures.js';
import type { Lifecycle } from './lifecycle.js';

export function lastErrorFailure(lifecycle: Lifecycle): ApplicationFailure {
  const last = lifecycle.context.lastError;
  return last ? failure(last.code, last.message) : failure('invalid_state', `the authorization is ${lifecycle.state}`);
}

/**
 * Runs a command. If an activity fails for good (a revert, an invalid-params answer, a retry budget
 * spent), the machine gets COMMAND_FAILED and rests again, so void, reconciliation and the deadline
 * keep working; the caller gets the reason.
 */
export async function asCommand<T>(lifecycle: Lifecycle, command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (err) {
    if (err instanceof ApplicationFailure && isErrorCode(err.type) && lifecycle.isResting) throw err;
    const why = failureOf(err);
    if (!lifecycle.isResting && lifecycle.can({ type: 'COMMAND_FAILED', failure: why })) {
      lifecycle.send({ type: 'COMMAND_FAILED', failure: why });
    }
    log.warn('command failed', { orderId: lifecycle.context.orderId, code: why.code, state: lifecycle.describeState() });
    throw failure(why.code, why.message);
  }
}

/**
 * While a command waits on an activity, the chain may settle the authorization another way (the
 * watcher or a periodic check saw the nonce consumed). Then the command reports that truth: the
 * capture it asked for happened (by someone) or the authorization is final in another state.
 */
export function settledMeanwhile(lifecycle: Lifecycle, wanted: 'captured' | 'canceled'): AuthorizationView | undefined {
  if (!lifecycle.isFinal) return undefined;
  if (lifecycle.state === wanted) return lifecycle.view();
  throw failure('invalid_state', `the authorization became ${lifecycle.state} meanwhile`);
}

export async function submitSignature(lifecycle: Lifecycle, signature: Hex): Promise<AuthorizationView> {
  lifecycle.send({ type: 'SIGNATURE_SUBMITTED' });
  const { domain, authorization, primaryType } = lifecycle.context;
  const check = await localReads.verifyAuthorizationSignature({ domain: domain!, authorization: authorization!, primaryType, signature });
  lifecycle.send({ type: 'SIGNATURE_CHECKED', signature, check });
  if (lifecycle.state === 'stored') return lifecycle.view();
  // A hold's signature goes to the escrow (the main loop places it): answered once the funds are held, or why not.
  if (lifecycle.state === 'holding') {
    await condition(() => !lifecycle.matches('holding'));
    if (lifecycle.matches('held')) return lifecycle.view();
    throw lastErrorFailure(lifecycle);
  }
  if (!check.valid) throw failure(check.code ?? 'invalid_signature', check.reason ?? 'invalid signature');
  throw failure('invalid_state', `the authorization became ${lifecycle.state} while the signature was checked`);
}

export interface ChainWindow {
  /** No log of this authorization's nonce is older than this block. */
  fromBlock?: string;
}

/** Reads the nonce's fate from the chain; moves to captured/canceled if someone consumed it. */
export async function reconcile(lifecycle: Lifecycle, window: ChainWindow): Promise<void> {
  const authorization = lifecycle.context.authorization;
  if (!authorization) return;
  const onchain = await localReads.readNonceState({ authorizer: authorization.from, nonce: authorization.nonce, fromBlock: window.fromBlock });
  if (onchain.status !== 'unused' && lifecycle.can({ type: 'NONCE_CONSUMED_ONCHAIN', onchain })) {
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain });
  }
}

/** At validBefore: let an in-flight command finish, then ask the chain what really happened. */
export async function expireAtDeadline(lifecycle: Lifecycle, window: ChainWindow): Promise<void> {
  await condition(() => lifecycle.isResting);
  if (lifecycle.isFinal) return;
  const authorization = lifecycle.context.authorization;
  const onchain = authorization
    ? await localReads.readNonceState({ authorizer: authorization.from, nonce: authorization.nonce, fromBlock: window.fromBlock })
    : ({ status: 'unused' } as const);
  lifecycle.send({ type: 'DEADLINE_REACHED', onchain });
}
