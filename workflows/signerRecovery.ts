// The signer recovery (viem's EIP-712 hashing and noble's secp256k1), loaded only by an authorization
// that may need it. The sandbox gives every workflow its own copy of every module it evaluates, and
// recovering a key with a fresh copy of the curve builds its precomputed tables again: about 30 ms of
// worker CPU per authorization, spent on a check the chain makes anyway while the attempt budget
// lasts. So the validators look at a signer only once a budget is spent (workflows/signatureScreen.ts),
// and this module is loaded as soon as a first attempt fails, long before a budget can be spent.
type Recovery = typeof import('../domain/signatureRecovery.js');

let recovery: Recovery | undefined;
// biome-ignore lint/correctness/noUnusedVariables: read by ??= below, so the module is imported once
let loading: Promise<void> | undefined;

/** Starts loading the recovery (the same bundle: it is evaluated, not fetched; ready a few microtasks later). */
export function prepareSignerRecovery(): void {
  loading ??= import(/* webpackMode: "eager" */ '../domain/signatureRecovery.js').then((module) => {
    recovery = module;
  });
}

/** The recovery, once prepareSignerRecovery's load has finished. */
export function loadedSignerRecovery(): Recovery | undefined {
  return recovery;
}
