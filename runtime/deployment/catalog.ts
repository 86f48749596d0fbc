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

/** A network's escrow, checked at start (runtime/deployment/escrowCheck.ts). */
export interface ServedEscrow {
  address: Address;
  paymentCollector: Address;
  refundCollector: Address;
  /** The tokens whose authorizations hold unless they say otherwise. */
  holdsByDefault: Address[];
}

export interface ServedNetwork {
  /** CAIP-2, e.g. "eip155:8453". */
  network: string;
  chainId: number;
  name: string;
  /** What a payer's wallet may be given to add the network (configured; never the provider URLs). */
  publicRpcUrls?: string[];
  tokens: ServedToken[];
  /** Where holds go; absent: this network's authorizations cannot hold funds. */
  escrow?: ServedEscrow;
}

/** Which network and token an authorization is on. */
export interface ChainRef {
  network: string;
  token: Address;
}

export class Catalog {
  private readonly served: ServedNetwork[];
  /** Networks configured but not served yet: their node did not answer at start (by CAIP-2 id, why). */
  private readonly waiting = new Map<string, { reason: string; tokens: readonly Address[] }>();
  /** Configured order, so a network that comes up late takes its own place (the first stays the default). */
  private readonly order_: string[];
  private readonly configuredDefault?: ChainRef;

  constructor(
    networks: readonly ServedNetwork[],
    options: {
      /** Networks configured but not answering yet, in configured order with the served ones (`order`). */
      unavailable?: readonly { network: string; tokens: readonly Address[]; reason: string }[];
      order?: readonly string[];
    } = {},
  ) {
    const unavailable = options.unavailable ?? [];
    if (networks.length === 0 && unavailable.length === 0) throw new Error('a deployment serves at least one network');
    this.served = [...networks];
    for (const u of unavailable) this.waiting.set(u.network, { reason: u.reason, tokens: u.tokens });
    this.order_ = [...(options.order ?? [...networks.map((n) => n.network), ...unavailable.map((u) => u.network)])];
    // The default is the configured first network's first token, whether or not its node answers yet:
    // what names no chain (a run a client without the deployment started) is on it, and a late node
    // must not move that to another.
    const first = this.order_[0]!;
    const firstServed = networks.find((n) => n.network === first);
    const firstWaiting = unavailable.find((u) => u.network === first);
    // (A deployment of one network without tokens, as the doctor resolves a node on its own, has none.)
    const firstToken = firstServed ? firstServed.tokens[0]?.address : firstWaiting?.tokens[0];
    this.configuredDefault = firstToken ? { network: first, token: firstToken } : undefined;
    this.sort();
  }

  /** The networks served now, in configured order (a network whose node answered late included). */
  get networks(): readonly ServedNetwork[] {
    return this.served;
  }

  /** Configured networks not served yet (their node has not answered since this process started), with why. */
  get unavailable(): ReadonlyMap<string, string> {
    return new Map([...this.waiting].map(([network, { reason }]) => [network, reason]));
  }

  /** A network whose node answered late: served from now on. */
  add(network: ServedNetwork): void {
    this.waiting.delete(network.network);
    if (!this.served.some((n) => n.network === network.network)) this.served.push(network);
    this.sort();
  }

  /** A network's place in the configuration (unknown ones last). */
  order(network: string): number {
    const i = this.order_.indexOf(network);
    return i < 0 ? this.order_.length : i;
  }

  private sort(): void {
    this.served.sort((a, b) => this.order(a.network) - this.order(b.network));
  }

  /** The first network's first token: what requests that name neither are on, with one configured. */
  get defaultRef(): ChainRef {
    if (this.configuredDefault) return this.configuredDefault;
    const network = this.served[0]!;
    return { network: network.network, token: network.tokens[0]!.address };
  }

  get single(): boolean {
    return this.waiting.size === 0 && this.networks.length === 1 && this.networks[0]!.tokens.length === 1;
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
    if (request.network && this.waiting.has(request.network)) throw this.notAnswering(request.network);
    const networks = request.network ? [this.network(request.network)].filter((n): n is ServedNetwork => !!n) : [...this.networks];
    if (request.network && networks.length === 0)
      throw new AuthcapError('network_not_served', `network ${request.network} is not served here; served: ${this.networks.map((n) => n.network).join(', ')}`);
    const wanted = request.token?.trim().toLowerCase();
    const candidates = networks.flatMap((n) =>
      n.tokens.filter((t) => !wanted || t.address.toLowerCase() === wanted || t.symbol.toLowerCase() === wanted).map((t) => ({ n, t })),
    );
    // Without a network named, a network not answering yet might be the one meant: it cannot be told.
    if (!request.network) {
      const mightBe = [...this.waiting].filter(([, w]) => !wanted || !/^0x[0-9a-f]{40}$/.test(wanted) || w.tokens.some((t) => t.toLowerCase() === wanted));
      if (mightBe.length > 0) throw this.notAnswering(mightBe.map(([network]) => network).join(', '));
    }
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

  private notAnswering(network: string): AuthcapError {
    return new AuthcapError('chain_unavailable', `the node of ${network} has not answered since this process started; retry shortly`);
  }

  /** The token a reference names; what it leaves out is the default's. */
  tokenOf(ref: Partial<ChainRef> | undefined): ServedToken | undefined {
    return this.token({ ...this.defaultRef, ...(ref?.network ? { network: ref.network } : {}), ...(ref?.token ? { token: ref.token } : {}) });
  }
}
