// `authorizations.capture`: captures now, and waits up to `waitMs` for the capture to reach its
// confirmation depth; past that it answers `settled: false` and the capture carries on in the
// workflow. `amount` captures less: the rest goes back to the payer. A held payment's capture is one
// part (`final` ends the hold and gives the rest back); its Idempotency-Key makes it one.
import { createHash, randomUUID } from 'node:crypto';
import { WorkflowUpdateStage } from '@temporalio/client';
import { formatAmount } from '../../domain/amount.js';
import { AuthcapError } from '../../domain/errors.js';
import { captureUpdate } from '../../workflows/messages.js';
import { RepeatedCaptureError } from '../transport/errors.js';
import { parseAmount } from '../requests.js';
import { budgeted, type ScreenContext } from './abuseScreen.js';
import { attemptHandle } from './attempt.js';
import { boundedCommand } from './commands.js';
import { get } from './get.js';
import type { ReadContext } from './readModel.js';
import type { CaptureOptions, CaptureOutcome } from './types.js';

export async function capture(ctx: ScreenContext, id: string, options: CaptureOptions = {}): Promise<CaptureOutcome> {
  const handle = attemptHandle(ctx.transport, id);
  // A partial capture keeps `amount` and gives the rest back; the workflow checks it against what was authorized.
  const decimals = await decimalsOf(ctx, id);
  const command = {
    ...(options.amount === undefined ? {} : { amount: parseAmount(options.amount, decimals).toString() }),
    ...partOf(options),
  };
  try {
    ctx.screen.refusals.screen(id, 'capture');
    return await budgeted(ctx, id, 'capture', () =>
      boundedCommand(
        ctx,
        id,
        handle,
        'capture',
        () => handle.startUpdate(captureUpdate, { args: [command], waitForStage: WorkflowUpdateStage.ACCEPTED }),
        options.waitMs,
      ),
    );
  } catch (err) {
    if (err instanceof RepeatedCaptureError) return repeatedPart(ctx, id, err);
    if (err instanceof AuthcapError && err.code === 'amount_exceeds_capturable') throw inDecimals(err, decimals);
    // Capturing what is captured, or already being captured, is the same request arriving again
    // (a retry after a timeout, a second worker of the order service): answer with where it stands.
    if (!(err instanceof AuthcapError) || err.code !== 'invalid_state') throw err;
    const current = await get(ctx, id);
    // A held payment's parts are told apart by their Idempotency-Keys, never by their amounts.
    if (current.hold || (current.state !== 'captured' && current.state !== 'capturing')) throw err;
    // The same request again, unless it asks to keep another amount than the capture under way or
    // done (`{}` asks for all of it): then the answer says what is kept, never "capturing" for it.
    const kept = current.amountCapturing ?? current.capture?.amount ?? current.amount;
    const tokenDecimals = current.token?.decimals;
    const asked = command.amount === undefined ? current.amount : formatAmount(BigInt(command.amount), tokenDecimals);
    if (parseAmount(asked, tokenDecimals) !== parseAmount(kept, tokenDecimals)) {
      throw new AuthcapError('invalid_state', `cannot capture ${asked}: the authorization is ${current.state}, keeping ${kept}`, {
        state: current.state,
        amountKept: kept,
      });
    }
    return { authorization: current, settled: current.state === 'captured' };
  }
}

/** The decimals of an authorization's token: read from it only where the deployment has a token with other than 6. */
async function decimalsOf(ctx: ReadContext, id: string): Promise<number> {
  const { catalog } = ctx;
  if (!catalog || catalog.networks.every((n) => n.tokens.every((t) => t.decimals === 6))) return 6;
  return (await get(ctx, id)).token?.decimals ?? 6;
}

/**
 * What makes a held payment's part one part: the caller's Idempotency-Key (a fresh one when it sent
 * none: each such request is a new part) and a digest of what it asked, so the same key with another
 * amount is refused. A plain authorization's workflow ignores them.
 */
function partOf(options: CaptureOptions): { final?: boolean; requestKey: string; requestFingerprint: string } {
  const asked = { amount: options.amount === undefined ? null : String(options.amount), final: options.final === true };
  return {
    ...(options.final === undefined ? {} : { final: options.final }),
    requestKey: options.idempotencyKey ?? `auto:${randomUUID()}`,
    requestFingerprint: createHash('sha256').update(JSON.stringify(asked)).digest('hex').slice(0, 32),
  };
}

/** The same part asked again: answered with where that part stands (its failure, when it failed). */
async function repeatedPart(ctx: ScreenContext, id: string, err: RepeatedCaptureError): Promise<CaptureOutcome> {
  const current = await get(ctx, id);
  const sequence = Number(err.part.sequence);
  const part = current.captures.find((c) => c.id.endsWith(`_${sequence}`));
  if (part?.status === 'failed' && part.failure) throw new AuthcapError(part.failure.code, part.failure.message);
  return { authorization: current, settled: part?.status === 'succeeded' };
}

/** The hold's refusal in the token's decimals (the workflow counts in minor units). */
function inDecimals(err: AuthcapError, decimals: number): AuthcapError {
  const capturable = err.details?.capturableMinor;
  if (typeof capturable !== 'string') return err;
  const amountCapturable = formatAmount(BigInt(capturable), decimals);
  return new AuthcapError('amount_exceeds_capturable', `that is more than the ${amountCapturable} still capturable`, { amountCapturable });
}
