// The checkout page (/checkout/{id}?token=…): shows what the payer authorizes, has the wallet sign
// the draft's typed data, hands the signature to the merchant, and follows the authorization live.
import type { CheckoutSession } from '../sessionTypes.js';
import { checkoutPath, submitSignature, type CheckoutLink } from './api.js';
import { h } from './dom.js';
import { startPage } from './flow.js';
import { formatTime, shortAddress } from './format.js';
import { capturedAmount, collectorNote, heldNow, holdExplain, isHold, placingHold, releasedWords, type HeldSession } from './holdWords.js';
import { amountOf, merchantOf, para, type Status } from './view.js';

/** What the merchant kept: less than authorized after a partial capture. */
const collected = (s: CheckoutSession) => (s.capture?.keptMinor ? amountOf({ ...s, amountMinor: s.capture.keptMinor }) : amountOf(s));

/** After a partial capture, the payer is told the rest came back. */
function returned(s: CheckoutSession): string[] {
  const kept = s.capture?.keptMinor;
  if (!kept || s.amountMinor === null || BigInt(kept) >= BigInt(s.amountMinor)) return [];
  const back = amountOf({ ...s, amountMinor: (BigInt(s.amountMinor) - BigInt(kept)).toString() });
  return [`You authorized ${amountOf(s)}; the other ${back} went back to your account.`];
}

const until = (s: CheckoutSession) => (s.validBefore ? formatTime(s.validBefore) : 'its deadline');

function settled(s: CheckoutSession, link: CheckoutLink): Status {
  const amount = amountOf(s);
  const merchant = merchantOf(s);
  switch (s.state) {
    case 'drafting':
      return { view: 'loading', tone: 'waiting', title: 'Preparing the payment…' };
    case 'stored':
      return {
        view: 'stored',
        tone: 'success',
        title: 'Authorized',
        body: [
          para([merchant], ' can now collect ', [amount], ' until ', [until(s)], '. Nothing has moved yet.'),
          'You can cancel until the merchant collects it. Keep this page or its link to do so.',
        ],
        actions: [{ label: 'Cancel this authorization', href: checkoutPath(link, '/cancel') }],
      };
    case 'capturing':
      return { view: 'capturing', tone: 'waiting', title: 'Being collected', body: [para([merchant], ' is collecting ', [amount], ' now.')] };
    case 'holding':
      return { view: 'holding', tone: 'waiting', title: 'Placing the hold…', body: isHold(s) ? [para(...placingHold(s))] : [] };
    case 'held':
      return { view: 'held', tone: 'success', title: 'Held', body: isHold(s) ? heldNow(s).map((words) => para(...words)) : [] };
    case 'captured':
      if (isHold(s)) return heldCaptured(s);
      return {
        view: 'captured',
        tone: 'success',
        title: 'Paid',
        body: [
          para(
            [collected(s)],
            ' was collected by ',
            [merchant],
            s.capture?.confirmedAt ? ` on ${formatTime(Date.parse(s.capture.confirmedAt) / 1000)}` : '',
            '.',
          ),
          ...returned(s),
          ...(s.capture
            ? [
                h(
                  'p',
                  { class: 'tx' },
                  'Transaction ',
                  h('code', { text: shortAddress(s.capture.transactionHash), attrs: { title: s.capture.transactionHash } }),
                ),
              ]
            : []),
        ],
      };
    case 'canceling':
      return { view: 'canceling', tone: 'waiting', title: 'Canceling…', body: ['Your cancellation is being recorded onchain.'] };
    case 'canceled':
      return { view: 'canceled', tone: 'info', title: 'Canceled', body: ['This authorization was canceled. Nothing was collected, and it can never be used.'] };
    case 'voided':
      return {
        view: 'voided',
        tone: 'info',
        title: 'Withdrawn by the merchant',
        body: [para([merchant], ' withdrew this payment request. Nothing was collected.'), ...backFromHold(s)],
      };
    case 'expired':
      return expired(s);
    case 'rejected':
      return {
        view: 'rejected-authorization',
        tone: 'error',
        title: 'Not accepted',
        body: [s.lastError?.message ?? 'This authorization was refused. Nothing was collected.'],
      };
    default:
      return { view: 'unknown', tone: 'info', title: `State: ${s.state}` };
  }
}

/** A hold that ended with captures: what the merchant collected, and what came back. */
function heldCaptured(s: HeldSession): Status {
  return {
    view: 'captured',
    tone: 'success',
    title: 'Paid',
    body: [para([capturedAmount(s)], ' was collected by ', [merchantOf(s)], '.'), ...backFromHold(s)],
  };
}

/** What a hold gave back once it ended (nothing when it was never placed). */
function backFromHold(s: CheckoutSession): ReturnType<typeof para>[] {
  const words = isHold(s) ? releasedWords(s) : null;
  return words ? [para(...words)] : [];
}

function expired(s: CheckoutSession): Status {
  // A hold that ran out: nothing was captured before the escrow's window ended, and it all came back.
  if (isHold(s) && s.hold.release) {
    return {
      view: 'expired',
      tone: 'info',
      title: 'The hold has ended',
      body: [para([merchantOf(s)], ' collected nothing before the hold ended.'), ...backFromHold(s)],
    };
  }
  return {
    view: 'expired',
    tone: 'warning',
    title: 'This payment request has expired',
    body: [
      para('It was open until ', [until(s)], '. Nothing was collected and nothing will move.'),
      `Ask ${merchantOf(s)} for a new link if you still want to pay.`,
    ],
  };
}

startPage({
  kind: 'checkout',
  payload: (s) => (s.state === 'drafted' ? s.typedData : null),
  submit: submitSignature,
  settled,
  expired,
  explain: (s) =>
    isHold(s)
      ? holdExplain(s).map((words) => para(...words))
      : [
          para('Signing authorizes ', [merchantOf(s)], ' to collect exactly ', [amountOf(s)], ' from your wallet until ', [until(s)], '.'),
          'Nothing moves now: the money stays in your wallet until the merchant collects it.',
          'You can cancel before it is collected, from the link this page gives you.',
        ],
  // A hold is signed to the escrow's collector, and placed while the signature is sent: say both.
  notes: {
    signing: (s) => (isHold(s) && s.hold.collector ? [para(...collectorNote(s))] : []),
    submitting: (s) => (isHold(s) ? [para(...placingHold(s))] : []),
  },
  words: {
    ready: 'Connect your wallet to authorize',
    sign: 'Sign authorization',
    signing: 'Confirm in your wallet…',
    submitting: 'Sending your authorization…',
    rejected: 'Nothing was signed and nothing moves. You can sign when you are ready.',
    remaining: (inTime) => `This request expires ${inTime}.`,
  },
});
