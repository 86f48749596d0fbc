// Getting the wallet onto the authorization's chain: switch to it, or first add it when the wallet
// does not know it and the deployment gives public RPC URLs; and what the payer is told meanwhile.
import type { Eip1193Provider } from './dom.js';
import { addChainParams, chainLabel, describeChain, type RequiredChain } from './network.js';
import type { Status } from './view.js';
import { addChain, switchChain, UNRECOGNIZED_CHAIN, USER_REJECTED, walletFailure, type WalletFailure } from './wallet.js';

export type ChainMove = { ok: true; added: boolean } | { ok: false; step: 'switch' | 'add'; failure: WalletFailure };

/**
 * Switches the wallet to the chain, adding it first when the wallet answers 4902 and the page can
 * (`onAdd` says so to the payer before the wallet asks them); never throws.
 */
export async function moveWalletTo(wallet: Eip1193Provider, required: RequiredChain, onAdd?: () => void): Promise<ChainMove> {
  const first = await attempt('switch', () => switchChain(wallet, required.chainId));
  const params = addChainParams(required);
  if (first.ok || first.failure.code !== UNRECOGNIZED_CHAIN || !params) return first;
  onAdd?.();
  const added = await attempt('add', () => addChain(wallet, params));
  if (!added.ok) return added;
  // Wallets differ on whether adding also switches: switching again is harmless when it did.
  const switched = await attempt('switch', () => switchChain(wallet, required.chainId));
  return switched.ok ? { ok: true, added: true } : switched;
}

async function attempt(step: 'switch' | 'add', call: () => Promise<void>): Promise<ChainMove> {
  try {
    await call();
    return { ok: true, added: step === 'add' };
  } catch (err) {
    return { ok: false, step, failure: walletFailure(err) };
  }
}

/** Why the wallet is still not on the chain after a failed move, in the payer's words. */
export function moveFailureText(move: Extract<ChainMove, { ok: false }>, required: RequiredChain): string {
  const { step, failure } = move;
  if (step === 'add') {
    return failure.code === USER_REJECTED
      ? `You declined to add ${describeChain(required)} to your wallet.`
      : `Your wallet could not add ${describeChain(required)}: ${failure.message}`;
  }
  if (failure.code === USER_REJECTED) return 'You declined the switch.';
  if (failure.code === UNRECOGNIZED_CHAIN) return `Your wallet does not know ${describeChain(required)}: add it in the wallet, then try again.`;
  return failure.message;
}

export const onOtherChain = (walletChainId: number, required: RequiredChain): string =>
  `Your wallet is on chain ${walletChainId}; this payment is on ${describeChain(required)}.`;

/** The wallet moved between the check and the signature: the page asked for nothing. */
export const movedAwayBeforeSigning = (walletChainId: number, required: RequiredChain): string =>
  `Nothing was signed: your wallet is now on chain ${walletChainId}, and this payment can only be signed on ${describeChain(required)}.`;

/** The switch step: says what is wrong and offers to move the wallet. */
export function wrongChainStatus(required: RequiredChain, reason: string, onSwitch: () => void): Status {
  return {
    view: 'wrong-chain',
    tone: 'error',
    title: 'Wrong network',
    body: [reason],
    actions: [{ label: `Switch to ${chainLabel(required)}`, primary: true, onClick: onSwitch }],
  };
}
