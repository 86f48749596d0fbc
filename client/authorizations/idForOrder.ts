// `authorizations.idForOrder`: the id of an order's newest attempt (open or not), read from its
// workflow id, so it needs no visibility query and sees an attempt started a moment ago.
import { AuthcapError } from '../../domain/errors.js';
import { resourceId, workflowIdForOrder } from '../../domain/ids.js';
import { parseOrderId } from '../requests.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { firstRunIdOf } from './readModel.js';

export async function idForOrder(transport: TemporalTransport, orderId: string): Promise<string> {
  const parsed = parseOrderId(orderId);
  const latest = await transport.describeIfExists(workflowIdForOrder(parsed));
  if (!latest) throw new AuthcapError('not_found', `no authorization for order ${parsed}`);
  return resourceId(parsed, firstRunIdOf(latest));
}
