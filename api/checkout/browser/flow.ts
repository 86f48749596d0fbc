// The flow both pages share: load the session and keep it live, connect the wallet, check it holds
// the payer's account on the token's chain (offering a switch), sign the page's typed data with
// eth_signTypedData_v4, submit, and show where the authorization stands until it is final.
import type { CheckoutSession, TypedDataJson } from '../sessionTypes.js';
import { ApiProblem, linkFrom, loadSession, type CheckoutLink } from './api.js';
import { doc, here, injectedWallet, type El } from './dom.js';
import { movedAwayBeforeSigning, moveFailureText, moveWalletTo, onOtherChain, wrongChainStatus } from './chainStep.js';
import { formatRemaining, sameAddress } from './format.js';
import { chainLabel, onRequiredChain, requiredChain, type RequiredChain } from './network.js';
import { problemStatus, TRANSIENT } from './problems.js';
import { addr, para, render, type Status } from './view.js';
import { accountsOf, chainIdOf, onWalletChange, signTypedData, USER_REJECTED, walletFailure } from './wallet.js';
import { addingChain, connecting, connectRejected, declinedToSign, noWallet, switching, walletError, wrongAccount } from './walletStatuses.js';

export interface PageSpec {
  kind: 'checkout' | 'cancel';
  /** The payload this page signs, or null when the session's state is not one it acts on. */
  payload(session: CheckoutSession): TypedDataJson | null;
  submit(link: CheckoutLink, signature: string): Promise<CheckoutSession>;
  /** Where things stand when the page has nothing to sign. */
  settled(session: CheckoutSession, link: CheckoutLink): Status;
  /** The window closed while the page still had something to sign. */
  expired(session: CheckoutSession): Status;
  explain(session: CheckoutSession): (El | string)[];
  /** More to say while the wallet signs and while the signature is sent (a hold: where the money goes). */
  notes?: { signing?(session: CheckoutSession): (El | string)[]; submitting?(session: CheckoutSession): (El | string)[] };
  words: { sign: string; ready: string; signing: string; submitting: string; rejected: string; remaining: (inTime: string) => string };
}

const FINAL = new Set(['captured', 'canceled', 'voided', 'expired', 'rejected']);
/** Live while something is happening; slower once nothing has changed for a while (a tab left open for hours). */
const POLL_MS = 1_000;
const IDLE_POLL_MS = 5_000;
const IDLE_AFTER_MS = 120_000;

type Phase = 'idle' | 'busy';

export function startPage(spec: PageSpec): void {
  const root = doc().getElementById('app');
  if (!root) return;
  const link = linkFrom(here().pathname, here().search);
  if (!link) {
    render(root, {
      kind: spec.kind,
      session: undefined,
      status: problemStatus(new ApiProblem('not_found', 'no token in the link', 404), () => here().reload()),
    });
    return;
  }
  new Flow(spec, root, link).start();
}

class Flow {
  private session: CheckoutSession | undefined;
  /** Server clock minus this device's, in seconds: expiry is judged on the API's clock. */
  private skew = 0;
  private phase: Phase = 'idle';
  /** What the wallet side last established (wrong account, ready to sign, rejected, …). */
  private walletStatus: Status | undefined;
  private connected = false;
  private problem: Status | undefined;
  private shownKey = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private changedAt = Date.now();
  /** Only the latest refresh schedules the next one: one polling loop, however often it is kicked. */
  private generation = 0;

  constructor(
    private readonly spec: PageSpec,
    private readonly root: El,
    private readonly link: CheckoutLink,
  ) {}

  start(): void {
    this.paint({ view: 'loading', tone: 'waiting', title: 'Loading the payment…' }, 'loading');
    const wallet = injectedWallet();
    // The payer may switch account or network in the wallet at any time: look again when they do.
    if (wallet) onWalletChange(wallet, () => void (this.connected && this.phase === 'idle' && this.check(false)));
    void this.refresh();
  }

  /** Reads the session; keeps polling while the authorization can still change. */
  private async refresh(): Promise<void> {
    clearTimeout(this.timer);
    const generation = ++this.generation;
    let delay = Date.now() - this.changedAt < IDLE_AFTER_MS ? POLL_MS : IDLE_POLL_MS;
    try {
      if (!doc().hidden || !this.session) {
        const session = await loadSession(this.link);
        // An older read finishing late must not put an older state back on screen.
        if (generation === this.generation) this.accept(session);
      }
    } catch (err) {
      const code = err instanceof ApiProblem ? err.code : 'internal_error';
      // A blip while the page already shows the payment keeps the page as it is; polling goes on.
      if (!this.session || !TRANSIENT.has(code)) {
        this.problem = problemStatus(err, () => {
          this.problem = undefined;
          void this.refresh();
        });
        this.shownKey = '';
        this.show();
      }
      if (!TRANSIENT.has(code)) return;
      delay = 3_000;
    }
    if (generation !== this.generation || (this.session && FINAL.has(this.session.state))) return;
    this.timer = setTimeout(() => void this.refresh(), delay);
  }

  private accept(session: CheckoutSession): void {
    const moved = this.session !== undefined && this.session.state !== session.state;
    if (moved) this.changedAt = Date.now();
    this.session = session;
    this.skew = session.now - Date.now() / 1000;
    this.problem = undefined;
    // A new state makes what the wallet side said stale (signed elsewhere, voided, expired, …).
    if (moved && this.phase === 'idle') this.walletStatus = undefined;
    if (this.phase === 'idle') this.show();
  }

  private now(): number {
    return Date.now() / 1000 + this.skew;
  }

  private show(): void {
    const s = this.session;
    if (this.problem) {
      this.paint(this.problem, 'problem');
      return;
    }
    if (!s) return;
    const payload = this.spec.payload(s);
    if (!payload) {
      // A held payment's parts change what the page says while its state stays `held`.
      this.paint(this.spec.settled(s, this.link), `settled:${s.state}:${s.updatedAt}:${s.hold?.capturedMinor ?? ''}:${s.hold?.release?.at ?? ''}`);
      return;
    }
    const secondsLeft = Number(s.validBefore) - this.now();
    if (s.validBefore && secondsLeft <= 0) {
      this.paint(this.spec.expired(s), 'expired');
      return;
    }
    if (!injectedWallet()) {
      this.paint(noWallet, 'no-wallet', true);
      return;
    }
    if (this.walletStatus) {
      this.paint(this.walletStatus, `wallet:${this.walletStatus.view}`, true);
      return;
    }
    this.paint(
      {
        view: 'ready',
        tone: 'info',
        title: this.spec.words.ready,
        body: [para('Use the wallet that holds ', addr(s.payer), `. ${this.spec.words.remaining(formatRemaining(secondsLeft))}`)],
        actions: [{ label: 'Connect wallet', primary: true, onClick: () => void this.connect() }],
      },
      'ready',
      true,
    );
  }

  /** Renders unless the same thing is already on screen (polling must not rebuild buttons under a finger). */
  private paint(status: Status, key: string, explain = false): void {
    if (key === this.shownKey) return;
    this.shownKey = key;
    const s = this.session;
    render(this.root, { kind: this.spec.kind, session: s, status, explain: explain && s ? this.spec.explain(s) : undefined });
  }

  private setWallet(status: Status | undefined): void {
    this.walletStatus = status;
    // Always repaint: the same view can come back with other words (a declined switch, a new account).
    this.shownKey = '';
    this.show();
  }

  private async connect(): Promise<void> {
    const wallet = injectedWallet();
    if (!wallet || this.phase !== 'idle') return;
    this.phase = 'busy';
    this.setWallet(connecting);
    try {
      const accounts = await accountsOf(wallet, true);
      this.connected = true;
      this.phase = 'idle';
      await this.check(true, accounts);
    } catch (err) {
      this.phase = 'idle';
      const failure = walletFailure(err);
      this.setWallet(failure.code === USER_REJECTED ? connectRejected(() => void this.connect()) : this.walletError(failure.message));
    }
  }

  /** Is the connected account the payer, on the token's chain? Says what to fix when not. */
  private async check(prompted: boolean, known?: string[]): Promise<void> {
    const wallet = injectedWallet();
    const s = this.session;
    if (!wallet || !s) return;
    try {
      // After a change event, eth_accounts (no prompt); a button press may prompt.
      const accounts = known ?? (await accountsOf(wallet, prompted));
      if (!accounts.some((account) => sameAddress(account, s.payer))) {
        return this.setWallet(wrongAccount(s.payer, accounts[0], () => void this.check(true)));
      }
      const chainId = await chainIdOf(wallet);
      const required = requiredChain(s);
      if (required && !onRequiredChain(chainId, required)) return this.setWallet(this.wrongChain(required, onOtherChain(chainId, required)));
      this.setWallet({
        view: 'sign',
        tone: 'info',
        title: 'Ready to sign',
        body: [para('Connected as ', addr(s.payer), ` on ${required ? chainLabel(required) : `chain ${chainId}`}.`)],
        actions: [{ label: this.spec.words.sign, primary: true, onClick: () => void this.sign() }],
      });
    } catch (err) {
      this.setWallet(this.walletError(walletFailure(err).message));
    }
  }

  private wrongChain(required: RequiredChain, reason: string): Status {
    return wrongChainStatus(required, reason, () => void this.switchTo(required));
  }

  private async switchTo(required: RequiredChain): Promise<void> {
    const wallet = injectedWallet();
    if (!wallet || this.phase !== 'idle') return;
    this.phase = 'busy';
    const label = chainLabel(required);
    this.setWallet(switching(label));
    const move = await moveWalletTo(wallet, required, () => this.setWallet(addingChain(label)));
    this.phase = 'idle';
    if (move.ok) await this.check(false);
    else this.setWallet(this.wrongChain(required, moveFailureText(move, required)));
  }

  private async sign(): Promise<void> {
    const wallet = injectedWallet();
    const s = this.session;
    const payload = s && this.spec.payload(s);
    if (!wallet || !s || !payload || this.phase !== 'idle') return;
    this.phase = 'busy';
    this.setWallet({
      view: 'signing',
      tone: 'waiting',
      title: this.spec.words.signing,
      body: ['Check the amount and the merchant in your wallet, then sign.', ...(this.spec.notes?.signing?.(s) ?? [])],
    });
    let signature: string;
    try {
      // The payer may have moved the wallet since the check, and not every wallet says so (or refuses
      // a domain of another chain): ask for a signature only on the authorization's own chain.
      const chainId = await chainIdOf(wallet);
      const required = requiredChain(s);
      if (required && !onRequiredChain(chainId, required)) {
        this.phase = 'idle';
        this.setWallet(this.wrongChain(required, movedAwayBeforeSigning(chainId, required)));
        return;
      }
      signature = await signTypedData(wallet, s.payer!, payload);
    } catch (err) {
      this.phase = 'idle';
      const failure = walletFailure(err);
      this.setWallet(failure.code === USER_REJECTED ? declinedToSign(this.spec.words.rejected, () => void this.sign()) : this.walletError(failure.message));
      return;
    }
    this.setWallet({ view: 'submitting', tone: 'waiting', title: this.spec.words.submitting, body: this.spec.notes?.submitting?.(s) });
    try {
      const next = await this.spec.submit(this.link, signature);
      this.phase = 'idle';
      this.walletStatus = undefined;
      this.accept(next);
      void this.refresh();
    } catch (err) {
      this.phase = 'idle';
      this.setWallet(
        problemStatus(err, () => {
          this.walletStatus = undefined;
          void this.refresh().then(() => this.show());
        }),
      );
    }
  }

  private walletError(message: string): Status {
    return walletError(message, () => void this.check(true));
  }
}
