// `authorizations.capture`: captures now, and waits up to `waitMs` for the capture to reach its
// confirmation depth; past that it answers `settled: false` and the capture carries on in the
// workflow. `amount` captures less: the rest goes back to the payer.
import { WorkflowUpdateStage } from '@temporalio/client';
import { formatAmount } from '../../domain/amount.js';
import { AuthcapError } from '../../domain/errors.js';
import { captureUpdate } from '../../workflows/messages.js';
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
  const command = options.amount === undefined ? {} : { amount: parseAmount(options.amount, await decimalsOf(ctx, id)).toString() };
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
    // Capturing what is captured, or already being captured, is the same request arriving again
    // (a retry after a timeout, a second worker of the order service): answer with where it stands.
    if (!(err instanceof AuthcapError) || err.code !== 'invalid_state') throw err;
    const current = await get(ctx, id);
    if (current.state !== 'captured' && current.state !== 'capturing') throw err;
    // The same request again, unless it asks to keep another amount than the capture under way or
    // done (`{}` asks for all of it): then the answer says what is kept, never "capturing" for it.
    const kept = current.amountCapturing ?? current.capture?.amount ?? current.amount;
    const decimals = current.token?.decimals;
    const asked = command.amount === undefined ? current.amount : formatAmount(BigInt(command.amount), decimals);
    if (parseAmount(asked, decimals) !== parseAmount(kept, decimals)) {
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
