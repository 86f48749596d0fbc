// `refunds.get`: one refund by its id, which names its authorization and its place in the ledger
// (0: a partial capture's release, kept in the authorization's own memo).
import { AuthcapError } from '../../domain/errors.js';
import { parseRefundId, publicRefund, type Refund } from '../../domain/refunds.js';
import { readAuthorization, type ReadContext } from '../authorizations/readModel.js';
import { readLedger } from './ledger.js';

export async function get(ctx: ReadContext, refundId: string): Promise<Refund> {
  const parsed = parseRefundId(refundId);
  if (!parsed) throw new AuthcapError('not_found', `no refund with id ${String(refundId).slice(0, 100)}`);
  const found =
    parsed.sequence === 0
      ? (await readAuthorization(ctx, parsed.authorizationId).catch(notFound(refundId))).release
      : (await readLedger(ctx.transport, parsed.authorizationRunId))?.refunds.find((r) => r.sequence === parsed.sequence);
  if (!found || found.orderId !== parsed.orderId) throw new AuthcapError('not_found', `no refund with id ${refundId}`);
  return publicRefund(found);
}

function notFound(refundId: string) {
  return (err: unknown) => {
    if (err instanceof AuthcapError && err.code === 'not_found') throw new AuthcapError('not_found', `no refund with id ${refundId}`);
    throw err;
  };
}
