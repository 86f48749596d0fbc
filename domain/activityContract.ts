// The activities a workflow may call, as an interface. Workflows proxy it; activities/ implements it.
// Living in domain/ keeps the dependency direction one way (design.md): neither side imports the other.
import type { EscrowOnchainRequest, EscrowOnchainResult, EscrowRefundFacts, EscrowRefundFactsRequest } from './holds.js';
import type { EscrowCall, WirePaymentInfo } from './escrowCall.js';
import type { Address, Hex } from 'viem';
import type { AuthorizationMessage, AuthorizationPrimaryType, TokenDomain } from './eip3009.js';
import type { CaptureFailure, CapturePrecheckFacts, OnchainConsumption, OnchainNonceFacts, RefundPrecheckFacts, SignatureCheck } from './facts.js';
import type { CaptureCall, RefundCall, RelayRequest } from './relay.js';
import type { DispatchCursor, DispatchRun } from './webhookDispatch.js';

export interface DraftResult {
  domain: TokenDomain;
  authorization: AuthorizationMessage;
  /** The chain's head when the authorization was made: no log of its nonce can be older. */
  fromBlock: string;
  /** The AuthorizationNonce search attribute's value (a digest: the nonce itself stays encrypted). */
  nonceKey: string;
  /** The worker's policy, read with the draft: the workflow keeps it for its whole life. */
  policy: WorkerPolicy;
  /** A hold's terms (the authorization is the collector's ReceiveWithAuthorization of them). */
  hold?: { terms: WirePaymentInfo; paymentInfoHash: Hex };
}

export interface CaptureRequest {
  primaryType: AuthorizationPrimaryType;
  authorization: AuthorizationMessage;
  signature: Hex;
}

/** A capture (or a refund) handed to the relayer and followed to depth by one activity. */
export interface CaptureOnchainRequest {
  requestId: string;
  /** Where the relayer signals a refusal, a revert or an abandoned transaction (and nothing else). */
  replyTo: { workflowId: string; runId: string };
  /** A capture (sent by its payee), or a refund (sent by the merchant key that signed it). */
  call: CaptureCall | RefundCall;
  /** Where to look for the nonce's log from, read before the decision to send (every attempt uses it). */
  fromBlock?: string;
}

/** What the activity heartbeats: enough for a retried attempt to go on, and for a read to show the capture. */
export interface CaptureOnchainProgress {
  submittedAt: string;
  /** No log of the nonce is older than this block. */
  fromBlock: string;
  transactionHash?: Hex;
  blockNumber?: string;
  blockHash?: Hex;
  preconfirmedAt?: string;
  reorgs?: number;
}

/** What a follower saw become of the nonce it followed. */
export type FollowedOutcome =
  | {
      status: 'confirmed';
      by: 'authcap' | 'onchain';
      transactionHash: Hex;
      blockNumber: string;
      blockHash: Hex;
      submittedAt: string;
      preconfirmedAt: string;
      confirmedAt: string;
    }
  /** The nonce was canceled (the payer) before any capture landed. */
  | { status: 'consumed'; onchain: OnchainConsumption }
  /** validBefore passed by block time with the nonce unused: nothing can land any more. */
  | { status: 'expired' };

/**
 * The follower's answer names the authorizer and nonce it is about: the workflow believes an answer
 * only for its own (workflows/followOnchain.ts).
 */
export type CaptureOnchainResult = FollowedOutcome & { authorizer: Hex; nonce: Hex };

/** Precheck and simulation in one local activity. */
export interface CaptureAttempt {
  facts: CapturePrecheckFacts;
  /** Absent when the precheck already refuses (nothing to simulate). */
  prepared?: PrepareResult;
  /** A block no log of this capture's nonce sent from now on can be below. */
  fromBlock?: string;
}

export type PrepareResult =
  /** The call would succeed: the relayer builds its transaction itself. */
  | { status: 'ready' }
  | { status: 'failed'; failure: CaptureFailure }
  /** The nonce was already consumed onchain, by us earlier or by someone else. */
  | { status: 'consumed'; onchain: OnchainConsumption };

export type CaptureInclusion =
  | { status: 'included'; transactionHash: Hex; blockNumber: string; blockHash: Hex }
  | { status: 'failed'; failure: CaptureFailure }
  /** The nonce was consumed by another transaction (the payer canceled, someone settled it). */
  | { status: 'consumed'; onchain: OnchainConsumption };

export type CaptureConfirmation =
  | { status: 'confirmed'; transactionHash: Hex; blockNumber: string; blockHash: Hex }
  /** The block that held the transfer was reorganized away: the transaction must be seen again. */
  | { status: 'reorged' };

export interface NonceStateRequest {
  authorizer: Address;
  nonce: Hex;
  /** No log of this nonce is older than this block (the authorization's creation); default: 0. */
  fromBlock?: string;
}

export interface CancelRequest {
  authorizer: Address;
  nonce: Hex;
  signature: Hex;
}

export type CancelConfirmation = { status: 'confirmed'; transactionHash: Hex; blockNumber: string } | { status: 'failed'; failure: CaptureFailure };

/** Settings of the worker that shape a workflow's schedule. Read once per workflow, kept in history. */
export interface WorkerPolicy {
  /** How often an open authorization re-reads the chain for a nonce consumed by someone else; 0: only when the watcher nudges it, and at its deadline. */
  reconcileIntervalSeconds: number;
  /** The longest window a pre-signed authorization may have (AUTHCAP_MAX_VALIDITY_SECONDS). */
  maxValiditySeconds: number;
  /** History length past which a resting authorization continues as new (AUTHCAP_HISTORY_LIMIT). */
  historyLimit: number;
}

export interface AuthorizationActivities extends RefundActivities {
  /** Builds the typed data to sign: token domain read from the chain, fresh random nonce, window. */
  draftAuthorization(request: {
    payer: Address;
    value: string;
    primaryType: AuthorizationPrimaryType;
    validForSeconds?: number;
    /** Hold the funds in the network's escrow: the terms are this authorization's own (its id salts them). */
    hold?: { authorizationId: string };
  }): Promise<DraftResult>;
  /**
   * Checks an authorization signed elsewhere against the configured token's domain and the merchant
   * as recipient, then its signature. Returns the token's domain to store with it.
   */
  checkPresignedAuthorization(request: {
    primaryType: AuthorizationPrimaryType;
    authorization: AuthorizationMessage;
    signature: Hex;
    domain?: TokenDomain;
    /** A pre-signed hold's terms: checked against this merchant and the authorization (domain/hold.ts presignedHoldRefusal). */
    hold?: { paymentInfo: WirePaymentInfo };
  }): Promise<{
    domain: TokenDomain;
    check: SignatureCheck;
    fromBlock: string;
    nonceKey: string;
    policy: WorkerPolicy;
    /** A pre-signed hold, once its terms were taken: what the machine holds. */
    hold?: { terms: WirePaymentInfo; paymentInfoHash: Hex };
  }>;
  /** Checks the payer's CancelAuthorization(authorizer, nonce) signature on the token's domain. */
  verifyCancelSignature(request: CancelRequest & { domain: TokenDomain }): Promise<SignatureCheck>;
  /** Checks the nonce is unused and simulates cancelAuthorization; returns the call to relay. */
  prepareCancel(request: CancelRequest): Promise<PrepareResult>;
  /** Waits for the AuthorizationCanceled log at the confirmation depth. */
  awaitCancelConfirmation(request: CancelRequest & { transactionHash: Hex }): Promise<CancelConfirmation>;
  /** Checks a payer's signature against the exact typed data (EOA or ERC-1271 wallet). */
  verifyAuthorizationSignature(request: {
    domain: TokenDomain;
    primaryType: AuthorizationPrimaryType;
    authorization: AuthorizationMessage;
    signature: Hex;
  }): Promise<SignatureCheck>;
  /** Hands a transaction to the merchant's relayer workflow (signal-with-start; idempotent by requestId). */
  requestRelay(request: RelayRequest): Promise<void>;
  /** Waits until a transfer already sent (a refund's attempt that landed) is in a block, or reverted. */
  awaitCaptureInclusion(request: CaptureRequest & { transactionHash: Hex }): Promise<CaptureInclusion>;
  /** Waits until its block is at the confirmation depth, re-checking the log is still there. */
  awaitCaptureConfirmation(request: CaptureRequest & { transactionHash: Hex; blockHash: Hex }): Promise<CaptureConfirmation>;
  /** What the token's logs say about the nonce right now. */
  readNonceState(request: NonceStateRequest): Promise<OnchainNonceFacts>;
  /** Reads the `pending` view (nonce state, balances, token policy, chain time, gas) and simulates the capture there, in one local activity. */
  prepareCaptureAttempt(request: CaptureRequest): Promise<CaptureAttempt>;
  /** A hold's precheck and its authorize simulated at `pending` from the operator, in one local activity. */
  prepareHoldAttempt(request: CaptureRequest & { call: EscrowCall }): Promise<CaptureAttempt>;
  /** Hands the capture (or a refund) to the relayer and follows it to the confirmation depth. */
  captureOnchain(request: CaptureOnchainRequest): Promise<CaptureOnchainResult>;
  /** A held payment's escrow call: sent by the relayer, followed to its own event at depth (activities/escrowOnchain.ts). */
  escrowOnchain(request: EscrowOnchainRequest): Promise<EscrowOnchainResult>;
  /** What a refund through the escrow is decided on, at the pending block (activities/escrowRefund.ts). */
  escrowRefundFacts(request: EscrowRefundFactsRequest): Promise<EscrowRefundFacts>;
}

/** One attempt of a refund: what the merchant key will sign, and for whom. */
export interface RefundAttemptRequest {
  merchant: Address;
  payer: Address;
  amountMinor: string;
  /** The refund's place: its EIP-3009 nonce is derived from these, the same for every attempt. */
  authorizationRunId: string;
  sequence: number;
  /** Where the refund's first attempt was signed: a log of its nonce is no older. */
  fromBlock?: string;
  /** The capture the refund gives back from: the key signs nothing its receipt does not back. */
  captureTransactionHash?: Hex | null;
}

/**
 * What a refund attempt found, and what it prepared: the facts of the `pending` view, and (when
 * the nonce is unused) the merchant's signed TransferWithAuthorization and its simulation. Nothing
 * signed leaves the worker unless the refund machine decides to send it.
 */
export interface RefundAttempt {
  nonce: Hex;
  facts: RefundPrecheckFacts;
  /** The signed call (a CaptureRequest: the follower follows it as it follows a capture). */
  prepared: { request: CaptureRequest } | null;
  /** Why simulating the signed call at `pending` reverted, when it did. */
  simulationFailure: CaptureFailure | null;
}

export interface RefundActivities {
  /** Reads the pending view for a refund and signs its attempt (short validity), simulating it. */
  prepareRefund(request: RefundAttemptRequest): Promise<RefundAttempt>;
  /**
   * Waits until the chain's time has passed `validBefore` (a signed attempt can no longer land),
   * then says what became of the nonce: unused (nothing moved), or the log that used it.
   */
  awaitAuthorizationExpiry(request: NonceStateRequest & { validBefore: string }): Promise<OnchainNonceFacts>;
}

/** Events and webhooks (activities/events.ts): the worker's Temporal client does the I/O. */
export interface EventActivities {
  /**
   * An endpoint's dispatcher, for a slice of time: delivers the events of the workflows that keep
   * them in their memo (activities/webhookDispatch.ts), heartbeating its cursor, and returns it.
   */
  dispatchWebhooks(request: { endpointId: string; cursor?: DispatchCursor }): Promise<DispatchRun>;
}
