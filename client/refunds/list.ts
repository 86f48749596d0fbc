// `refunds.list`: an authorization's refunds, oldest first; a partial capture's release (what the
// capture gave back) comes first, from the authorization's own memo.
import { publicRefund, type Refund } from '../../domain/refunds.js';
import { readAuthorization, type ReadContext } from '../authorizations/readModel.js';
import { readLedger } from './ledger.js';

export async function list(ctx: ReadContext, authorizationId: string): Promise<Refund[]> {
  const { release, firstRunId } = await readAuthorization(ctx, authorizationId);
  const ledger = await readLedger(ctx.transport, firstRunId);
  return [...(release ? [release] : []), ...(ledger?.refunds ?? [])].map(publicRefund);
}
