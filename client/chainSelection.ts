// Which network and token a request is on, chosen against what the deployment serves before
// anything starts: a request naming one it does not serve is refused with nothing recorded.
import type { Address } from 'viem';
import type { AuthorizationChain } from '../domain/chain.js';
import type { TokenDomain } from '../domain/eip3009.js';
import { AuthcapError } from '../domain/errors.js';
import type { Catalog } from '../runtime/deployment/catalog.js';
import { normalizeNetwork } from '../runtime/deployment/schema.js';

export interface ChainRequest {
  network?: unknown;
  token?: unknown;
}

/**
 * The chain of a new authorization. Without a catalog (a client given no deployment) only requests
 * that name neither are taken: they go to whatever one network the worker serves.
 */
export function selectChain(catalog: Catalog | undefined, request: ChainRequest, domain?: TokenDomain): AuthorizationChain | undefined {
  const named = optionalText(request.network, 'network');
  const network = named === undefined ? undefined : (normalizeNetwork(named) ?? named);
  const token = optionalText(request.token, 'token');
  if (!catalog) {
    // A payload's own domain is checked by the worker against the token it serves.
    if (network || token)
      throw new AuthcapError(
        'network_not_served',
        'this client was not given the deployment configuration (AUTHCAP_CONFIG), so it takes no network or token by name',
      );
    return undefined;
  }
  // A pre-signed payload names its chain in its domain: what the request names must agree with it.
  const fromDomain = domain ? { network: `eip155:${domain.chainId}`, token: domain.verifyingContract as string } : undefined;
  if (fromDomain && network && network !== fromDomain.network)
    throw new AuthcapError('domain_mismatch', `the payload was signed for ${fromDomain.network}, not ${network}`);
  const chosen = catalog.select({ network: network ?? fromDomain?.network, token: token ?? fromDomain?.token });
  if (fromDomain && chosen.token.toLowerCase() !== fromDomain.token.toLowerCase())
    throw new AuthcapError('domain_mismatch', `the payload was signed for token ${fromDomain.token}, not ${chosen.served.symbol} (${chosen.token})`);
  return { network: chosen.network, token: chosen.token as Address, symbol: chosen.served.symbol, decimals: chosen.served.decimals };
}

function optionalText(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || value.length > 100) throw new AuthcapError('validation_error', `${field} must be a string`, { field });
  return value;
}
