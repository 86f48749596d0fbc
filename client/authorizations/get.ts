// `authorizations.get`: the authorization as it stands, from its memo (one server call, no workflow
// task), with what refunds gave back of a captured one.
import type { AuthorizationResource } from '../../domain/authorization.js';
import { formatAmount } from '../../domain/amount.js';
import { amountRefunded } from '../refunds/ledger.js';
import { readAuthorization, type ReadContext } from './readModel.js';

export async function get(ctx: ReadContext, id: string): Promise<AuthorizationResource> {
  const { resource, firstRunId } = await readAuthorization(ctx, id);
  if (resource.state !== 'captured') return resource;
  // Refunds after the capture live in the authorization's refunds workflow: only a captured
  // authorization can have one, so only its reads pay for the look.
  const refunded = await amountRefunded(ctx.transport, firstRunId);
  return refunded > 0n ? { ...resource, amountRefunded: formatAmount(refunded, resource.token?.decimals) } : resource;
}
