// Renders a checkout page: what is being authorized (the summary), what signing means in plain words,
// and where things stand (the status, with at most a couple of actions). Mobile first; every state
// is one call to render().
import type { CheckoutSession } from '../sessionTypes.js';
import { h, type El } from './dom.js';
import { formatUnits, formatUntil, formatWindow, shortAddress } from './format.js';
import { hasOwnName, requiredChain } from './network.js';

export type Tone = 'info' | 'waiting' | 'success' | 'warning' | 'error';

export interface Action {
  label: string;
  onClick?: () => void;
  href?: string;
  primary?: boolean;
  disabled?: boolean;
}

export interface Status {
  /** A stable name for the state shown (tests and screenshots find it as data-view). */
  view: string;
  tone: Tone;
  title: string;
  body?: (El | string)[];
  actions?: Action[];
}

export interface Screen {
  kind: 'checkout' | 'cancel';
  session: CheckoutSession | undefined;
  status: Status;
  /** The plain-words explanation, when the page is asking for a signature. */
  explain?: (El | string)[];
}

export const amountOf = (s: CheckoutSession): string =>
  s.amountMinor === null ? '—' : `${formatUnits(s.amountMinor, s.token.decimals)} ${s.token.symbol}`.trim();

export const merchantOf = (s: CheckoutSession): string => s.merchant.name;

function fact(label: string, ...value: (El | string)[]): El {
  return h('div', { class: 'fact' }, h('dt', { text: label }), h('dd', {}, ...value));
}

function summary(kind: Screen['kind'], s: CheckoutSession): El {
  const [amount, symbol] = s.amountMinor === null ? ['—', ''] : [formatUnits(s.amountMinor, s.token.decimals), s.token.symbol];
  return h(
    'section',
    { class: 'card summary', attrs: { 'aria-label': 'Payment details' } },
    h('p', { class: 'eyebrow', text: kind === 'cancel' ? `Authorization for ${merchantOf(s)}` : `Pay ${merchantOf(s)}` }),
    h('p', { class: 'amount', attrs: { 'data-testid': 'amount' } }, amount, ' ', h('span', { class: 'symbol', text: symbol })),
    onNetwork(s),
    h(
      'dl',
      { class: 'facts' },
      fact(
        'To',
        h('span', { text: merchantOf(s) }),
        ' ',
        s.merchant.address ? h('code', { text: shortAddress(s.merchant.address), attrs: { title: s.merchant.address } }) : '',
      ),
      s.payer ? fact('From', h('code', { text: shortAddress(s.payer), attrs: { title: s.payer } }), ' (your wallet)') : null,
      s.validAfter && s.validBefore
        ? fact(
            'Valid',
            h(
              'span',
              { attrs: { 'data-testid': 'window' } },
              // A hold's authorization is valid from 0 (the epoch): only its end means anything to the payer.
              ...(Number(s.validAfter) === 0 ? formatUntil(s.validBefore) : formatWindow(s.validAfter, s.validBefore)).map((line) =>
                h('span', { class: 'line', text: line }),
              ),
            ),
          )
        : null,
      s.hold
        ? fact(
            'Hold',
            h('span', { attrs: { 'data-testid': 'held-until' } }, ...formatUntil(s.hold.captureBefore).map((line) => h('span', { class: 'line', text: line }))),
            s.hold.collector
              ? h('span', { class: 'line' }, 'in escrow, via ', h('code', { text: shortAddress(s.hold.collector), attrs: { title: s.hold.collector } }))
              : '',
          )
        : null,
      fact('Order', h('span', { class: 'order', text: s.orderId })),
      s.token.chainId !== null || s.network
        ? fact(
            'Network',
            ...networkLines(s),
            s.token.address
              ? h(
                  'span',
                  { class: 'line' },
                  `${s.token.symbol || 'token'} contract `,
                  h('code', { text: shortAddress(s.token.address), attrs: { title: s.token.address } }),
                )
              : '',
          )
        : null,
    ),
  );
}

/** "USDC on Dev chain 2": which token and network the amount is in, beside it. */
function onNetwork(s: CheckoutSession): El | null {
  const chain = requiredChain(s);
  if (!chain) return null;
  const token = s.token.symbol ? `${s.token.symbol} on ` : 'On ';
  return h('p', { class: 'on-network', attrs: { 'data-testid': 'network' } }, token, h('strong', { text: chain.name }));
}

/** The network's name, then its chain number and CAIP-2 id: what a payer may need to find it in the wallet. */
function networkLines(s: CheckoutSession): El[] {
  const chain = requiredChain(s)!;
  const number = `chain ${chain.chainId}`;
  const named = hasOwnName(chain);
  const name = h('span', { class: 'line', text: named ? chain.name : number, attrs: { 'data-testid': 'network-name' } });
  if (!chain.id) return [name];
  return [name, h('span', { class: 'line', attrs: { 'data-testid': 'network-id' } }, named ? `${number} · ` : '', h('code', { text: chain.id }))];
}

function actionButton(action: Action): El {
  const cls = action.primary ? 'button primary' : 'button secondary';
  if (action.href) return h('a', { class: cls, href: action.href, text: action.label });
  return h('button', { class: cls, text: action.label, onClick: action.onClick, disabled: action.disabled, attrs: { type: 'button' } });
}

function statusBox(status: Status): El {
  const waiting = status.tone === 'waiting' ? h('span', { class: 'spinner', attrs: { 'aria-hidden': 'true' } }) : null;
  return h(
    'section',
    { class: `status tone-${status.tone}`, attrs: { role: 'status', 'aria-live': 'polite', 'data-view': status.view } },
    h('h2', {}, waiting, status.title),
    ...(status.body ?? []).map((part) => (typeof part === 'string' ? h('p', { text: part }) : part)),
    status.actions?.length ? h('div', { class: 'actions' }, ...status.actions.map(actionButton)) : null,
  );
}

export function render(root: El, screen: Screen): void {
  const heading = screen.kind === 'cancel' ? 'Cancel an authorization' : 'Authorize a payment';
  root.replaceChildren(
    h('header', { class: 'top' }, h('span', { class: 'logo', text: 'authcap' }), h('h1', { text: heading })),
    screen.session ? summary(screen.kind, screen.session) : '',
    statusBox(screen.status),
    screen.explain
      ? h(
          'section',
          { class: 'card explain', attrs: { 'aria-label': 'What signing means' } },
          h('h2', { text: screen.kind === 'cancel' ? 'What cancelling means' : 'What signing means' }),
          ...screen.explain.map((p) => (typeof p === 'string' ? h('p', { text: p }) : p)),
        )
      : '',
    h('footer', { class: 'foot', text: 'You sign a message in your wallet, not a transaction: signing costs no gas.' }),
  );
  root.setAttribute('data-view', screen.status.view);
  root.setAttribute('data-state', screen.session?.state ?? '');
}

/** A paragraph mixing text, emphasised parts ([text]) and elements. */
export function para(...parts: (string | [string] | El)[]): El {
  return h('p', {}, ...parts.map((part) => (typeof part === 'string' ? part : Array.isArray(part) ? h('strong', { text: part[0] }) : part)));
}

/** An address, shortened, never broken across lines; the full one on hover. */
export function addr(address: string | null | undefined): El | string {
  return address ? h('code', { text: shortAddress(address), attrs: { title: address } }) : 'the paying account';
}
