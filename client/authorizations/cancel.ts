// `authorizations.cancel`: relays the payer's CancelAuthorization signature onchain, and waits (at most
// `waitMs`) for the cancellation to settle; past that it carries on in the workflow.
import type { Hex } from 'viem';
import { WorkflowUpdateStage } from '@temporalio/client';
import { parseSignature } from '../../domain/address.js';
import { cancelUpdate } from '../../workflows/messages.js';
import { budgeted, screenSignature, type ScreenContext } from './abuseScreen.js';
import { attemptHandle } from './attempt.js';
import { boundedCommand } from './commands.js';
import type { CancelOptions, CaptureOutcome } from './types.js';

export async function cancel(ctx: ScreenContext, id: string, signature: string, options: CancelOptions = {}): Promise<CaptureOutcome> {
  const parsed = parseSignature(signature) as Hex;
  const handle = attemptHandle(ctx.transport, id);
  const request = await screenSignature(ctx, id, 'cancel', parsed);
  return budgeted(ctx, id, 'cancel', () =>
    boundedCommand(
      ctx,
      id,
      handle,
      'cancel',
      () => handle.startUpdate(cancelUpdate, { args: [request], waitForStage: WorkflowUpdateStage.ACCEPTED }),
      options.waitMs,
    ),
  );
}
