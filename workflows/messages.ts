// The workflow's message surface: what order services, the API, the CLI and the Temporal UI send.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AuthorizationView } from '../domain/authorization.js';
import type { RelayRequest, RelayResult } from '../domain/relay.js';

export const WORKFLOW_TYPE = 'authorizationWorkflow';

/** The authorization as it stands; cheap, answers from workflow state. */
export const statusQuery = defineQuery<AuthorizationView>('status');

/** Resolves once the typed data exists (the authorization is `drafted`, or further). */
/** The draft (or pre-signed authorization) as stored, and the attempt's first run id, which names it. */
export type DraftReady = AuthorizationView & { firstRunId?: string };
export const draftReadyUpdate = defineUpdate<DraftReady>('draftReady');

/**
 * A payer's signature, and whether the (authenticated) caller already had the chain judge it. A
 * contract wallet's signature checked that way counts against a budget of its own, which strangers
 * cannot spend (they are refused before sending): only the wallet itself could exhaust it.
 */
export interface SignatureCommand {
  signature: `0x${string}`;
  checkedOnchain?: boolean;
}

/** The payer's signature over the drafted typed data. Fails `invalid_signature` and changes nothing. */
export const submitSignatureUpdate = defineUpdate<AuthorizationView, [SignatureCommand]>('submitSignature');

/**
 * What a capture keeps: `amount` in minor units, at most the authorized value (absent: all of it).
 * A capture sent with no argument at all (the `temporal` CLI, say) captures all of it.
 */
export interface CaptureCommand {
  amount?: string;
  /** A held payment's last capture: what is left goes back to the payer once it succeeded. */
  final?: boolean;
  /** A held payment's capture is one part among several: its Idempotency-Key (and what it asked) makes it one. */
  requestKey?: string;
  requestFingerprint?: string;
}

/**
 * Capture now: precheck, submit, follow to the confirmation depth; for a partial capture, then give
 * the difference back. Fails with the reason and stays `stored`.
 */
export const captureUpdate = defineUpdate<AuthorizationView, [CaptureCommand]>('capture');

/** The payer's CancelAuthorization signature: verified, relayed from the merchant key, confirmed by log. */
export const cancelUpdate = defineUpdate<AuthorizationView, [SignatureCommand]>('cancel');

export interface VoidRequest {
  reason: string;
  by: string;
}

/** Void offchain: nothing is ever submitted afterwards. Refused while a capture is in flight. */
export const voidUpdate = defineUpdate<AuthorizationView, [VoidRequest]>('void');

/** The same void as a signal, for the Temporal UI's "send signal" with plain JSON `{"reason","by"}`. */
export const voidSignal = defineSignal<[Partial<VoidRequest>]>('void');

/**
 * To the merchant's relayer: send this call (typed: the relayer builds the transaction) from the
 * merchant key. Anything else that arrives under this name is refused (workflows/relayer.ts).
 */
export const relayRequestSignal = defineSignal<[RelayRequest]>('relayRequest');

/** From the relayer back to the authorization workflow: the transaction hash, or why not. */
export const relayResultSignal = defineSignal<[RelayResult]>('relayResult');

/** From the log watcher: a log names this authorization's nonce. The workflow re-reads the chain itself. */
export const nonceActivitySignal = defineSignal<[{ transactionHash: string; blockNumber: string; removed: boolean }]>('nonceActivity');
