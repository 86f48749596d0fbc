// What a deployment serves, as every process sees it after the start checks: networks by CAIP-2 id,
// their tokens with what the chain says of them. JSON-safe, without keys: the API validates
// requests against it, the checkout page and tables format amounts with it.
import type { Address } from 'viem';
import { AuthcapError } from '../../domain/errors.js';

/** `bytes`: FiatToken v2.2's `bytes signature` overloads (ERC-1271 too); `vrs`: v2.1's `v, r, s` only. */
export type SignatureForm = 'bytes' | 'vrs';

export interface ServedToken {
  address: Address;
  name: string;
  version: string;
  symbol: string;
  decimals: number;
  form: SignatureForm;
}

export interface ServedNetwork {
  /** CAIP-2, e.g. "eip155:8453". */
  network: string;
  chainId: number;
  name: string;
  /** What a payer's wallet may be given to add the network (configured; never the provider URLs). */
  publicRpcUrls?: string[];
  tokens: ServedToken[];
}

/** Which network and token an authorization is on. */
export interface ChainRef {
  network: string;
  token: Address;
}

export class Catalog {
  constructor(readonly networks: readonly ServedNetwork[]) {
    if (networks.length === 0) throw new Error('a deployment serves at least one network');
  }

  /** The first network's first token: what requests that name neither are on, with one configured. */
  get defaultRef(): ChainRef {
    const network = this.networks[0]!;
    return { network: network.network, token: network.tokens[0]!.address };
  }

  get single(): boolean {
    return this.networks.length === 1 && this.networks[0]!.tokens.length === 1;
  }

  network(id: string): ServedNetwork | undefined {
    return this.networks.find((n) => n.network === id);
  }

  token(ref: ChainRef): ServedToken | undefined {
    return this.network(ref.network)?.tokens.find((t) => t.address.toLowerCase() === ref.token.toLowerCase());
  }

  /**
   * The network and token a request names. Either may be left out when only one would fit; a token
   * is named by address or symbol (case-insensitive). Refused with `network_not_served` /
   * `token_not_served` naming what is served, or `validation_error` when a choice is needed.
   */
  select(request: { network?: string | null; token?: string | null }): ChainRef & { served: ServedToken; servedNetwork: ServedNetwork } {
    const networks = request.network ? [this.network(request.network)].filter((n): n is ServedNetwork => !!n) : [...this.networks];
    if (request.network && networks.length === 0)
      throw new AuthcapError('network_not_served', `network ${request.network} is not served here; served: ${this.networks.map((n) => n.network).join(', ')}`);
    const wanted = request.token?.trim().toLowerCase();
    const candidates = networks.flatMap((n) =>
      n.tokens.filter((t) => !wanted || t.address.toLowerCase() === wanted || t.symbol.toLowerCase() === wanted).map((t) => ({ n, t })),
    );
    if (candidates.length === 0) {
      const where = request.network ? ` on ${request.network}` : '';
      const served = networks.flatMap((n) => n.tokens.map((t) => `${t.symbol} (${t.address}) on ${n.network}`)).join(', ');
      throw new AuthcapError('token_not_served', `token ${request.token} is not served${where}; served: ${served}`);
    }
    if (candidates.length > 1) {
      const networksLeft = new Set(candidates.map((c) => c.n.network)).size;
      const missing = [!request.network && networksLeft > 1 ? 'network' : null, !wanted || networksLeft === 1 ? 'token' : null].filter(Boolean);
      const options = candidates.map((c) => `${c.t.symbol} on ${c.n.network}`).join(', ');
      throw new AuthcapError('validation_error', `name the ${missing.join(' and ')}: this deployment serves ${options}`);
    }
    const { n, t } = candidates[0]!;
    return { network: n.network, token: t.address, served: t, servedNetwork: n };
  }

  /** The token an existing authorization is on (records from before networks: the default). */
  tokenOf(ref: Partial<ChainRef> | undefined): ServedToken | undefined {
    return this.token({ ...this.defaultRef, ...(ref?.network ? { network: ref.network } : {}), ...(ref?.token ? { token: ref.token } : {}) });
  }
}
