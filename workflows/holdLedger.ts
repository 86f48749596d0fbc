// The parts of one held payment, inside its authorization workflow: it decides a capture before it
// enters history (the update's validator: a refused capture leaves no trace), hands the chain one part
// at a time with what the escrow must still hold for it (the relayer sends nothing otherwise, so a part
// is captured once whatever either side forgot), and records what the chain showed. Pure: no Temporal
// API, no clock (times come in), so unit tests drive it directly.
import { capturableMinor, capturableOnchainMinor, MAX_CAPTURES_PER_HOLD, type HoldCapture, type HoldRecord } from '../domain/holds.js';
import type { ErrorCode, RecordedError } from '../domain/errors.js';
import type { Hex } from 'viem';

export interface HoldCaptureCommand {
  /** Minor units; absent: everything still capturable. */
  amountMinor?: string;
  final?: boolean;
  requestKey: string;
  requestFingerprint: string;
}

/** A refusal: a stable code and what to tell the caller. Thrown by the validator; nothing was recorded. */
export class HoldRefusal extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A capture asked again with its Idempotency-Key: answered with the part it made, recorded nothing. */
export class HoldCaptureRepeated extends Error {
  constructor(readonly capture: HoldCapture) {
    super('this capture was requested already');
  }
}

export class HoldLedger {
  constructor(readonly hold: HoldRecord) {}

  /** Everything decided without the chain is decided here, before history: a refused capture leaves no trace. */
  validate(command: HoldCaptureCommand, at: { nowSeconds: number }): bigint {
    const earlier = this.hold.captures.find((c) => c.requestKey === command.requestKey);
    if (earlier) {
      if (earlier.requestFingerprint !== command.requestFingerprint)
        throw new HoldRefusal('idempotency_key_reused', 'this Idempotency-Key was used for a different capture');
      throw new HoldCaptureRepeated(earlier);
    }
    if (BigInt(this.hold.heldMinor) === 0n) throw new HoldRefusal('invalid_state', 'nothing is held yet: the hold is not at depth onchain');
    if (this.hold.release)
      throw new HoldRefusal(
        'invalid_state',
        `the hold was ${this.hold.release.kind === 'void' ? 'voided' : 'reclaimed by the payer'}: nothing is left to capture`,
      );
    if (this.hold.captures.some((c) => c.final && c.stage !== 'failed'))
      throw new HoldRefusal('invalid_state', 'a final capture was asked for: nothing more can be captured');
    if (at.nowSeconds >= Number(this.hold.terms.authorizationExpiry))
      throw new HoldRefusal('hold_expired', 'the capture window closed: the escrow takes no capture after its authorizationExpiry');
    if (this.hold.captures.length >= MAX_CAPTURES_PER_HOLD)
      throw new HoldRefusal('too_many_captures', `a hold takes at most ${MAX_CAPTURES_PER_HOLD} captures`);
    const capturable = capturableMinor(this.hold);
    const amount = command.amountMinor === undefined ? capturable : BigInt(command.amountMinor);
    if (amount <= 0n)
      throw new HoldRefusal(
        capturable === 0n ? 'invalid_state' : 'validation_error',
        capturable === 0n ? 'nothing is left to capture' : 'a capture takes a positive amount',
      );
    if (amount > capturable)
      throw new HoldRefusal('amount_exceeds_capturable', `a capture of ${amount} is more than the ${capturable} still capturable`, {
        capturableMinor: capturable.toString(),
      });
    return amount;
  }

  /** Records a validated capture, waiting its turn. */
  request(command: HoldCaptureCommand, amount: bigint, at: string): HoldCapture {
    const capture: HoldCapture = {
      sequence: this.hold.captures.length + 1,
      amountMinor: amount.toString(),
      final: command.final === true,
      requestKey: command.requestKey,
      requestFingerprint: command.requestFingerprint,
      stage: 'pending',
      transactionHash: null,
      blockNumber: null,
      failure: null,
      requestedAt: at,
      succeededAt: null,
    };
    this.hold.captures.push(capture);
    return capture;
  }

  /** The part to send now, with what the escrow must hold for it: none while one is on the chain. */
  next(): { capture: HoldCapture; expectCapturableMinor: string } | undefined {
    if (this.hold.captures.some((c) => c.stage === 'submitted')) return undefined;
    const capture = this.hold.captures.find((c) => c.stage === 'pending');
    return capture && { capture, expectCapturableMinor: capturableOnchainMinor(this.hold).toString() };
  }

  submitted(sequence: number, transactionHash: Hex): void {
    Object.assign(this.part(sequence), { stage: 'submitted', transactionHash });
  }

  succeeded(sequence: number, facts: { transactionHash: Hex; blockNumber: string; at: string }): void {
    Object.assign(this.part(sequence), { stage: 'succeeded', transactionHash: facts.transactionHash, blockNumber: facts.blockNumber, succeededAt: facts.at });
  }

  /** A part that failed took nothing: what it asked for is capturable again. */
  failed(sequence: number, failure: RecordedError): void {
    Object.assign(this.part(sequence), { stage: 'failed', failure });
  }

  /** What is left once every part is done: released now when a final part succeeded. */
  get releaseDue(): boolean {
    return !this.hold.release && !this.next() && this.hold.captures.some((c) => c.final && c.stage === 'succeeded') && capturableOnchainMinor(this.hold) > 0n;
  }

  released(kind: 'void' | 'reclaim', amountMinor: string, transactionHash: Hex | null, at: string): void {
    this.hold.release = { kind, amountMinor, transactionHash, at };
  }

  private part(sequence: number): HoldCapture {
    const found = this.hold.captures.find((c) => c.sequence === sequence);
    if (!found) throw new Error(`no capture ${sequence} in this hold`);
    return found;
  }
}
