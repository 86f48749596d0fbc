// The payer's cancel page (/checkout/{id}/cancel?token=…): signs CancelAuthorization for a stored
// authorization; the merchant relays it onchain, after which the authorization can never be used.
import type { CheckoutSession } from '../sessionTypes.js';
import { checkoutPath, submitCancellation, type CheckoutLink } from './api.js';
import { h } from './dom.js';
import { startPage } from './flow.js';
import { formatTime, shortAddress } from './format.js';
import { capturedAmount, heldNow, isHold } from './holdWords.js';
import { amountOf, merchantOf, para, type Status } from './view.js';

function settled(s: CheckoutSession, link: CheckoutLink): Status {
  const merchant = merchantOf(s);
  switch (s.state) {
    case 'drafting':
      return { view: 'loading', tone: 'waiting', title: 'Loading…' };
    case 'drafted':
      return {
        view: 'not-authorized',
        tone: 'info',
        title: 'Nothing to cancel',
        body: ['You have not authorized this payment, so there is nothing to cancel. Without your signature nothing can be collected.'],
        actions: [{ label: 'Go to the payment page', href: checkoutPath(link) }],
      };
    case 'canceling':
      return { view: 'canceling', tone: 'waiting', title: 'Canceling…', body: ['Your cancellation is being recorded onchain. This takes a few seconds.'] };
    case 'canceled':
      return {
        view: 'canceled',
        tone: 'success',
        title: 'Canceled',
        body: [
          para([merchant], ' can no longer collect ', [amountOf(s)], '. Nothing was collected.'),
          ...(s.cancellation?.transactionHash
            ? [
                h(
                  'p',
                  { class: 'tx' },
                  'Recorded in transaction ',
                  h('code', { text: shortAddress(s.cancellation.transactionHash), attrs: { title: s.cancellation.transactionHash } }),
                ),
              ]
            : []),
        ],
      };
    case 'capturing':
      return { view: 'too-late', tone: 'warning', title: 'Too late to cancel', body: [para([merchant], ' is collecting this payment right now.')] };
    // A hold is placed as soon as it is signed: there is no signed, unused authorization left to cancel.
    case 'holding':
    case 'held':
      return {
        view: 'held',
        tone: 'info',
        title: 'A hold cannot be canceled',
        body: isHold(s) ? heldNow(s).map((words) => para(...words)) : [`This authorization is ${s.state}.`],
      };
    case 'captured':
      return {
        view: 'captured',
        tone: 'info',
        title: 'Already paid',
        body: [para([isHold(s) ? capturedAmount(s) : amountOf(s)], ' was collected by ', [merchant], '; it can no longer be canceled.')],
      };
    case 'voided':
      return { view: 'voided', tone: 'info', title: 'Nothing to cancel', body: [para([merchant], ' withdrew this payment request. Nothing was collected.')] };
    case 'expired':
      return expired(s);
    default:
      return { view: 'unknown', tone: 'info', title: 'Nothing to cancel', body: [`This authorization is ${s.state}.`] };
  }
}

function expired(s: CheckoutSession): Status {
  return {
    view: 'expired',
    tone: 'info',
    title: 'Nothing to cancel: it has expired',
    body: [
      para('This authorization ended at ', [s.validBefore ? formatTime(s.validBefore) : 'its deadline'], ' without being collected. It can no longer be used.'),
    ],
  };
}

startPage({
  kind: 'cancel',
  payload: (s) => (s.state === 'stored' ? s.cancellationTypedData : null),
  submit: submitCancellation,
  settled,
  expired,
  explain: (s) => [
    para('Cancelling makes this authorization unusable: ', [merchantOf(s)], ' can no longer collect ', [amountOf(s)], '.'),
    'The merchant records the cancellation onchain for you; it costs you nothing and no money moves.',
  ],
  words: {
    ready: 'Connect your wallet to cancel',
    sign: 'Sign cancellation',
    signing: 'Confirm the cancellation in your wallet…',
    submitting: 'Sending your cancellation…',
    rejected: 'Nothing was canceled: the authorization still stands.',
    remaining: (inTime) => `Unless canceled, it can be collected until it expires ${inTime}.`,
  },
});
