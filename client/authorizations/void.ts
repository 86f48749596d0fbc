// `authorizations.void`: voids offchain. authcap never submits the authorization afterwards.
import type { AuthorizationResource } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import { voidUpdate } from '../../workflows/messages.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { attemptHandle } from './attempt.js';
import { command } from './commands.js';
import type { VoidRequest } from './types.js';
import { asResource } from '../../domain/captures.js';

/** Named for what it does: `void` is a word of the language. */
export async function voidAuthorization(transport: TemporalTransport, id: string, request: VoidRequest): Promise<AuthorizationResource> {
  if (typeof request?.reason !== 'string' || !request.reason.trim()) {
    throw new AuthcapError('validation_error', 'reason is required to void an authorization');
  }
  const args = [{ reason: request.reason.trim(), by: request.by?.trim() || 'merchant' }] as const;
  const handle = attemptHandle(transport, id);
  const view = await command(transport, handle, 'void', () => handle.executeUpdate(voidUpdate, { args: [...args] }));
  return asResource(id, view);
}
