// What an API error code means to a payer, in plain words. Codes are the stable contract
// (domain/errors.ts); the API's own message is kept as a detail where it helps.
import { ApiProblem } from './api.js';
import type { Status } from './view.js';

/** Errors that pass by themselves: the page keeps polling instead of giving up. */
export const TRANSIENT = new Set(['network', 'rate_limited', 'temporal_unavailable', 'worker_unavailable', 'chain_unavailable', 'internal_error']);

export function problemStatus(err: unknown, retry: () => void): Status {
  const problem = err instanceof ApiProblem ? err : new ApiProblem('internal_error', (err as Error)?.message ?? String(err), 0);
  const again = [{ label: 'Try again', onClick: retry, primary: true }];
  switch (problem.code) {
    case 'not_found':
      return {
        view: 'invalid-link',
        tone: 'error',
        title: 'This link is not valid',
        body: ['Open the link exactly as the merchant sent it: it may have been mistyped or cut short.'],
      };
    case 'invalid_signature':
      return {
        view: 'invalid-signature',
        tone: 'error',
        title: 'The signature was not accepted',
        body: ['It does not match this payment, so nothing was authorized. Make sure the wallet signs with the account shown under From, then try again.'],
        actions: again,
      };
    case 'contract_wallet_unsupported':
      // Trying again cannot help: the same wallet gets the same answer from the same token.
      return {
        view: 'contract-wallet-unsupported',
        tone: 'error',
        title: 'This wallet cannot pay with this token',
        body: [
          'Your account is a smart-contract wallet, and this token cannot check its signatures, so nothing was authorized. Pay from an ordinary account, or ask the merchant for another way to pay.',
        ],
      };
    case 'authorization_expired':
      return {
        view: 'expired',
        tone: 'warning',
        title: 'This request has expired',
        body: ['Nothing was signed and nothing moves. Ask the merchant for a new link.'],
      };
    case 'invalid_state':
      return {
        view: 'invalid-state',
        tone: 'warning',
        title: 'This can no longer be done',
        body: [problem.message],
        actions: [{ label: 'Show where it stands', onClick: retry, primary: true }],
      };
    case 'rate_limited':
      return { view: 'busy', tone: 'warning', title: 'Too many requests', body: ['Wait a moment, then try again.'], actions: again };
    case 'network':
      return {
        view: 'offline',
        tone: 'error',
        title: 'Cannot reach the payment service',
        body: ['Check your connection. Nothing was lost: try again in a moment.'],
        actions: again,
      };
    default:
      if (TRANSIENT.has(problem.code)) {
        return { view: 'busy', tone: 'warning', title: 'The payment service is busy', body: ['Nothing was lost. Try again in a moment.'], actions: again };
      }
      return { view: 'error', tone: 'error', title: 'Something went wrong', body: [problem.message], actions: again };
  }
}
