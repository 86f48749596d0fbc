// The checkout page's chain logic without a browser: which chain a signature must be made on, how it
// is named, what a wallet that does not know it is given (EIP-3085), and the switch-or-add sequence
// against a fake EIP-1193 wallet.
import { describe, expect, it } from 'vitest';
import { moveFailureText, moveWalletTo, movedAwayBeforeSigning, onOtherChain, wrongChainStatus } from '../../../api/checkout/browser/chainStep.js';
import type { Eip1193Provider } from '../../../api/checkout/browser/dom.js';
import { addChainParams, chainLabel, describeChain, onRequiredChain, requiredChain, type RequiredChain } from '../../../api/checkout/browser/network.js';
import type { CheckoutNetwork } from '../../../api/checkout/sessionTypes.js';

const devChain2: CheckoutNetwork = { id: 'eip155:31338', chainId: 31338, name: 'Dev chain 2', rpcUrls: ['http://127.0.0.1:8546'] };
const token = (chainId: number | null) => ({ address: null, symbol: 'USDC', decimals: 6, chainId });

describe('requiredChain', () => {
  it('is the network the session names, with its name and public RPC URLs', () => {
    expect(requiredChain({ network: devChain2, token: token(31338) })).toEqual({
      chainId: 31338,
      id: 'eip155:31338',
      name: 'Dev chain 2',
      rpcUrls: ['http://127.0.0.1:8546'],
    });
  });

  it('follows the signed domain when the network disagrees with it (the signature is bound to the domain)', () => {
    expect(requiredChain({ network: devChain2, token: token(31337) })).toEqual({ chainId: 31337, id: null, name: 'chain 31337', rpcUrls: [] });
  });

  it('uses the network before the typed data exists, and is null when nothing names a chain', () => {
    expect(requiredChain({ network: devChain2, token: token(null) })?.chainId).toBe(31338);
    expect(requiredChain({ network: null, token: token(null) })).toBeNull();
    expect(requiredChain({ network: null, token: token(1) })).toEqual({ chainId: 1, id: null, name: 'chain 1', rpcUrls: [] });
  });
});

describe('the decision to sign', () => {
  const required = requiredChain({ network: devChain2, token: token(31338) });

  it('only on the required chain', () => {
    expect(onRequiredChain(31338, required)).toBe(true);
    expect(onRequiredChain(31337, required)).toBe(false);
    expect(onRequiredChain(1, required)).toBe(false);
  });

  it('on any chain when no chain is required (nothing is bound to one yet)', () => {
    expect(onRequiredChain(1, null)).toBe(true);
  });
});

describe('naming the chain', () => {
  const named = requiredChain({ network: devChain2, token: token(31338) })!;
  const bare: RequiredChain = { chainId: 31337, id: null, name: 'chain 31337', rpcUrls: [] };
  const idOnly: RequiredChain = { chainId: 8453, id: 'eip155:8453', name: 'eip155:8453', rpcUrls: [] };

  it('labels the button with the number wallets show and the deployment’s name', () => {
    expect(chainLabel(named)).toBe('chain 31338 (Dev chain 2)');
    expect(chainLabel(bare)).toBe('chain 31337');
    expect(chainLabel(idOnly)).toBe('chain 8453');
  });

  it('describes it with the CAIP-2 id too', () => {
    expect(describeChain(named)).toBe('chain 31338 (Dev chain 2, eip155:31338)');
    expect(describeChain(bare)).toBe('chain 31337');
    expect(describeChain(idOnly)).toBe('chain 8453 (eip155:8453)');
  });

  it('says where the wallet is and where the payment is, and that nothing was signed when it moved', () => {
    expect(onOtherChain(31337, named)).toBe('Your wallet is on chain 31337; this payment is on chain 31338 (Dev chain 2, eip155:31338).');
    expect(movedAwayBeforeSigning(31337, named)).toContain('Nothing was signed');
    expect(movedAwayBeforeSigning(31337, named)).toContain('chain 31337');
    const status = wrongChainStatus(named, 'why', () => undefined);
    expect(status.view).toBe('wrong-chain');
    expect(status.actions?.[0]?.label).toBe('Switch to chain 31338 (Dev chain 2)');
  });
});

describe('addChainParams (EIP-3085)', () => {
  it('gives the hex chain id, the name, ETH as gas and the public RPC URLs', () => {
    expect(addChainParams(requiredChain({ network: devChain2, token: token(31338) })!)).toEqual({
      chainId: '0x7a6a',
      chainName: 'Dev chain 2',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: ['http://127.0.0.1:8546'],
    });
  });

  it('is null without public RPC URLs: the payer adds the network themselves', () => {
    expect(addChainParams({ ...requiredChain({ network: devChain2, token: token(31338) })!, rpcUrls: [] })).toBeNull();
  });
});

/** A wallet that knows some chains, can be told to decline, and records every request. */
function fakeWallet(options: { known: number[]; decline?: string[]; failWith?: { method: string; code: number; message: string } }) {
  const calls: { method: string; params?: unknown[] }[] = [];
  let chainId = options.known[0]!;
  const known = new Set(options.known);
  const wallet: Eip1193Provider = {
    async request({ method, params }) {
      calls.push({ method, params });
      if (options.decline?.includes(method)) throw Object.assign(new Error('User rejected the request.'), { code: 4001 });
      if (options.failWith?.method === method) throw Object.assign(new Error(options.failWith.message), { code: options.failWith.code });
      const wanted = Number.parseInt((params?.[0] as { chainId?: string } | undefined)?.chainId ?? '', 16);
      if (method === 'wallet_addEthereumChain') known.add(wanted);
      else if (!known.has(wanted)) throw Object.assign(new Error(`Unrecognized chain ID ${wanted}`), { code: 4902 });
      else chainId = wanted;
      return null;
    },
  };
  return { wallet, calls, chainId: () => chainId };
}

describe('moveWalletTo', () => {
  const required = requiredChain({ network: devChain2, token: token(31338) })!;
  const methods = (calls: { method: string }[]) => calls.map((c) => c.method);

  it('switches a wallet that knows the chain, and adds nothing', async () => {
    const w = fakeWallet({ known: [31337, 31338] });
    expect(await moveWalletTo(w.wallet, required)).toEqual({ ok: true, added: false });
    expect(w.calls).toEqual([{ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x7a6a' }] }]);
    expect(w.chainId()).toBe(31338);
  });

  it('on 4902 adds the chain with its parameters, says so first, then switches', async () => {
    const w = fakeWallet({ known: [31337] });
    let told = 0;
    expect(await moveWalletTo(w.wallet, required, () => (told += 1))).toEqual({ ok: true, added: true });
    expect(told).toBe(1);
    expect(methods(w.calls)).toEqual(['wallet_switchEthereumChain', 'wallet_addEthereumChain', 'wallet_switchEthereumChain']);
    expect(w.calls[1]!.params).toEqual([addChainParams(required)]);
    expect(w.chainId()).toBe(31338);
  });

  it('without public RPC URLs never calls wallet_addEthereumChain and keeps "add it in the wallet"', async () => {
    const w = fakeWallet({ known: [31337] });
    const noUrls = { ...required, rpcUrls: [] };
    const move = await moveWalletTo(w.wallet, noUrls, () => expect.unreachable('nothing to add'));
    expect(methods(w.calls)).toEqual(['wallet_switchEthereumChain']);
    expect(move).toMatchObject({ ok: false, step: 'switch', failure: { code: 4902 } });
    if (!move.ok)
      expect(moveFailureText(move, noUrls)).toBe('Your wallet does not know chain 31338 (Dev chain 2, eip155:31338): add it in the wallet, then try again.');
  });

  it('a declined switch or add is said as such; other failures keep the wallet’s message', async () => {
    const declinedSwitch = await moveWalletTo(fakeWallet({ known: [31337, 31338], decline: ['wallet_switchEthereumChain'] }).wallet, required);
    expect(!declinedSwitch.ok && moveFailureText(declinedSwitch, required)).toBe('You declined the switch.');

    const w = fakeWallet({ known: [31337], decline: ['wallet_addEthereumChain'] });
    const declinedAdd = await moveWalletTo(w.wallet, required);
    expect(methods(w.calls)).toEqual(['wallet_switchEthereumChain', 'wallet_addEthereumChain']);
    expect(!declinedAdd.ok && moveFailureText(declinedAdd, required)).toBe('You declined to add chain 31338 (Dev chain 2, eip155:31338) to your wallet.');

    const broken = await moveWalletTo(
      fakeWallet({ known: [31337], failWith: { method: 'wallet_addEthereumChain', code: -32602, message: 'bad rpcUrls' } }).wallet,
      required,
    );
    expect(!broken.ok && moveFailureText(broken, required)).toBe('Your wallet could not add chain 31338 (Dev chain 2, eip155:31338): bad rpcUrls');
  });
});
