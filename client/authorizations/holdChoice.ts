// Whether a new draft holds its funds in escrow (docs/holds.md): as the request says, else as the
// deployment says for its token (networks[].escrow.holdsByDefault). Decided before anything starts.
import type { AuthorizationChain } from '../../domain/chain.js';
import { AuthcapError } from '../../domain/errors.js';
import type { Catalog } from '../../runtime/deployment/catalog.js';

/** A network without an escrow refuses `hold: true` (holds_not_available); a client given no deployment holds only when asked. */
export function holdsFunds(catalog: Catalog | undefined, asked: unknown, chain: AuthorizationChain | undefined): boolean {
  if (asked !== undefined && typeof asked !== 'boolean') throw new AuthcapError('validation_error', 'hold must be true or false', { field: 'hold' });
  const network = chain && catalog?.network(chain.network);
  const escrow = network ? network.escrow : undefined;
  if (asked === true && network && !escrow)
    throw new AuthcapError('holds_not_available', `${network.network} has no escrow configured: its authorizations cannot hold funds`);
  if (asked !== undefined) return asked;
  return !!escrow && !!chain && escrow.holdsByDefault.some((t) => t.toLowerCase() === chain.token.toLowerCase());
}
