// What the page says while it works with the wallet: each status a pure function of what happened,
// with the flow's next step as the button, so flow.ts keeps only the order of things.
import type { El } from './dom.js';
import { addr, para, type Status } from './view.js';

export const noWallet: Status = {
  view: 'no-wallet',
  tone: 'warning',
  title: 'No wallet found',
  body: ['Open this page in a browser with an Ethereum wallet (a browser extension or a wallet app’s browser), then reload it.'],
};

export const connecting: Status = {
  view: 'connecting',
  tone: 'waiting',
  title: 'Connecting to your wallet…',
  body: ['Approve the connection in your wallet.'],
};

export const connectRejected = (onConnect: () => void): Status => ({
  view: 'connect-rejected',
  tone: 'warning',
  title: 'The wallet was not connected',
  body: ['You declined the connection. Nothing was signed.'],
  actions: [{ label: 'Connect wallet', primary: true, onClick: onConnect }],
});

export function wrongAccount(payer: string | null, current: string | undefined, onCheck: () => void): Status {
  const using: (El | string)[] = current ? ['is using ', addr(current)] : ['shared no account'];
  return {
    view: 'wrong-account',
    tone: 'error',
    title: 'Wrong account',
    body: [
      para('This payment must be signed by ', addr(payer), ', but your wallet ', ...using, '.'),
      'Switch to that account in your wallet; this page updates by itself.',
    ],
    actions: [{ label: 'Check again', primary: true, onClick: onCheck }],
  };
}

export const switching = (label: string): Status => ({
  view: 'switching',
  tone: 'waiting',
  title: 'Switching network…',
  body: [`Approve the switch to ${label} in your wallet.`],
});

export const addingChain = (label: string): Status => ({
  view: 'adding-chain',
  tone: 'waiting',
  title: 'Adding the network…',
  body: [`Your wallet does not know ${label} yet: approve adding it.`],
});

export const declinedToSign = (words: string, onRetry: () => void): Status => ({
  view: 'rejected',
  tone: 'warning',
  title: 'You declined to sign',
  body: [words],
  actions: [{ label: 'Try again', primary: true, onClick: onRetry }],
});

export const walletError = (message: string, onRetry: () => void): Status => ({
  view: 'wallet-error',
  tone: 'error',
  title: 'The wallet reported a problem',
  body: [message],
  actions: [{ label: 'Try again', primary: true, onClick: onRetry }],
});
