// What stands between a payer's link and the workflow's attempt budget. A signature or cancellation
// that is not the payer's is refused here when a chain node can say so (signatureCheck.ts), and an
// authorization that answered `too_many_attempts` refuses the same kind of attempt from memory until
// its cool-down ends (refusalCache.ts): a flood through a checkout link never reaches Temporal.
import type { Address, Hex } from 'viem';
import { AuthcapError } from '../../domain/errors.js';
import { authorizationDigest, cancelDigest } from '../../domain/signatureRecovery.js';
import type { ResolvedDeployment } from '../../runtime/deployment/resolve.js';
import { get } from './get.js';
import type { ReadContext } from './readModel.js';
import { RefusalCache, type RefusedKind } from './refusalCache.js';
import { SignatureChecker, type SignatureKind } from './signatureCheck.js';

/** The screen a client keeps for its lifetime: the chain nodes that judge signatures, and the refusals remembered. */
export class AbuseScreen {
  /** Attempt budgets the workflows reported spent: a flood is answered from here, not by Temporal. */
  readonly refusals = new RefusalCache();
  /** Each network's signatures are judged by its own node. */
  private readonly byChain = new Map<number, SignatureChecker>();
  /** A client given one node and no deployment: it judges every signature. */
  private readonly anyChain?: SignatureChecker;

  constructor(options: { rpcUrl?: string; deployment?: ResolvedDeployment } = {}) {
    if (options.rpcUrl) this.anyChain = new SignatureChecker(options.rpcUrl);
    // Those waiting for their node too (resolveDeployment's `degraded`): theirs says chain_unavailable until it answers.
    for (const network of [...(options.deployment?.networks ?? []), ...(options.deployment?.unavailable ?? [])])
      this.byChain.set(network.chainId, new SignatureChecker(network.rpcUrls[0]!));
  }

  /** The checker for a chain; undefined without a node to ask. */
  checkerFor(chainId: number): SignatureChecker | undefined {
    return this.byChain.get(chainId) ?? this.anyChain;
  }

  get hasNode(): boolean {
    return this.anyChain !== undefined || this.byChain.size > 0;
  }
}

export interface ScreenContext extends ReadContext {
  screen: AbuseScreen;
}

/** The update's request for a payer's signature: marked checked when the chain said it is the payer's. */
export interface ScreenedSignature {
  signature: Hex;
  checkedOnchain?: true;
}

/**
 * Judges a payer's signature before it is sent. Refused here: a signature the chain says is not the
 * payer's (`invalid_signature`), and any but the payer's own while a cool-down holds.
 */
export async function screenSignature(ctx: ScreenContext, id: string, kind: SignatureKind, signature: Hex): Promise<ScreenedSignature> {
  const verdict = await chainVerdict(ctx, id, kind, signature);
  if (!verdict) ctx.screen.refusals.screen(id, kind, signature);
  return verdict === 'chain' ? { signature, checkedOnchain: true } : { signature };
}

/**
 * The chain's word on a signature (undefined: no node to ask, or the authorization is not where the
 * signature could apply, which the workflow then says).
 */
async function chainVerdict(ctx: ScreenContext, id: string, kind: SignatureKind, signature: Hex) {
  if (!ctx.screen.hasNode) return undefined;
  const { state, domain, primaryType, authorization } = await get(ctx, id);
  if (!domain || !authorization || state !== (kind === 'signature' ? 'drafted' : 'stored')) return undefined;
  return ctx.screen.checkerFor(Number(domain.chainId))?.check(kind, { domain, primaryType, authorization }, signature);
}

/** Runs an attempt; a `too_many_attempts` answer is remembered until its cool-down ends. */
export async function budgeted<T>(ctx: ScreenContext, id: string, kind: RefusedKind, attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (err) {
    if (err instanceof AuthcapError && err.code === 'too_many_attempts') {
      ctx.screen.refusals.remember(id, kind, err, kind === 'capture' ? undefined : await signedDigest(ctx, id, kind).catch(() => undefined));
    }
    throw err;
  }
}

/** What the payer signs for this kind of attempt, read from the resource: their own signature always passes. */
async function signedDigest(ctx: ReadContext, id: string, kind: SignatureKind): Promise<{ digest: Hex; signer: Address } | undefined> {
  const { domain, authorization, primaryType } = await get(ctx, id);
  if (!domain || !authorization) return undefined;
  const digest = kind === 'signature' ? authorizationDigest(domain, primaryType, authorization) : cancelDigest(domain, authorization.from, authorization.nonce);
  return { digest, signer: authorization.from };
}
