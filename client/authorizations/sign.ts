// `authorizations.sign`: stores the payer's signature over the draft. The workflow checks it against
// the exact draft; before that, a stranger's is refused here (abuseScreen.ts).
import type { Hex } from 'viem';
import { parseSignature } from '../../domain/address.js';
import type { AuthorizationResource } from '../../domain/authorization.js';
import { submitSignatureUpdate } from '../../workflows/messages.js';
import { budgeted, screenSignature, type ScreenContext } from './abuseScreen.js';
import { attemptHandle } from './attempt.js';
import { command } from './commands.js';
import { asResource } from '../../domain/captures.js';

export async function sign(ctx: ScreenContext, id: string, signature: string): Promise<AuthorizationResource> {
  const parsed = parseSignature(signature) as Hex;
  const handle = attemptHandle(ctx.transport, id);
  const request = await screenSignature(ctx, id, 'signature', parsed);
  const view = await budgeted(ctx, id, 'signature', () =>
    command(ctx.transport, handle, 'accept a signature', () => handle.executeUpdate(submitSignatureUpdate, { args: [request] })),
  );
  return asResource(id, view);
}
