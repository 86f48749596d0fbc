// One refunds workflow per captured authorization that gives money back (`refunds-<authorization's
// first run id>`), started by its first refund. It is the authorization's ledger: Temporal runs it
// single-threaded, so refunds asked for at the same moment are decided one after the other and
// their sum can never pass what was captured. It reads as its process: take refunds (each decided
// when it is asked for), carry each out to its end (refundProcedure.ts), close when nothing is left to
// refund or the window has ended, and roll over when history grows long.
import { allHandlersFinished, condition, makeContinueAsNewFunc, proxySinks, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import { refundsWorkflowId, type RefundLedgerView, type RefundRecord } from '../domain/refunds.js';
import type { AuthcapSinks } from '../domain/telemetry.js';
import { chainRefOf, useChain } from './chainHeader.js';
import { refusedStart, staleStart } from './freshStart.js';
import { RefundLedger } from './refundLedger.js';
import { isRefundFinal } from './refundMachine.js';
import { refundUpdate, type RefundsWorkflowInput } from './refundMessages.js';
import { runEscrowRefund } from './escrowRefundProcedure.js';
import { expiryDueAt, runRefund } from './refundProcedure.js';
import { createRelayClient, type Relay } from './relayClient.js';

const { telemetry } = proxySinks<AuthcapSinks>();

/** History length past which a ledger with nothing in flight rolls over, unless its input names another. */
const HISTORY_LIMIT = 2_000;

export async function refundsWorkflow(input: RefundsWorkflowInput): Promise<RefundLedgerView> {
  refuseMisplacedStart(input);
  // Refunds go out on the authorization's network, in its token (workflows/chainHeader.ts says why
  // this one setting is module-level); amounts are in its decimals, which the ledger reads from the input.
  useChain(chainRefOf(input.chain));
  const ledger = new RefundLedger(input);
  // Money leaves only on decisions already in history: the relay request is a regular activity.
  const relay = createRelayClient({ committed: true });
  const runner = new RefundRunner(ledger, relay, input);

  // The update answers as soon as the refund is recorded (pending), not when it ends: Temporal admits
  // only a few updates in flight per workflow, and a burst of refunds must each get its answer. The
  // caller follows the refund in the memo; the loop below carries the refunds out, in order.
  const queue: RefundRecord[] = [];
  setHandler(
    refundUpdate,
    (command) => {
      const record = ledger.open(command);
      queue.push(record);
      return record;
    },
    { validator: (command) => ledger.validate(command) },
  );
  ledger.publish(...ledger.refunds);

  // One timer, to the end of the refund window.
  let windowEnded = Date.now() >= Date.parse(ledger.refundableUntil);
  if (!windowEnded) void sleep(Date.parse(ledger.refundableUntil) - Date.now()).then(() => (windowEnded = true));
  const idle = () => queue.length === 0 && allHandlersFinished() && ledger.allFinal;
  const closable = () => idle() && (ledger.remaining() === 0n || windowEnded);
  // Whether history is long is asked after each refund carried out, never in a wait's predicate: that
  // also runs in the task of a refused update, which a replay never sees (as in the authorization).
  let rollOverDue = false;
  const historyLimit = input.historyLimit ?? HISTORY_LIMIT;
  const historyIsLong = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > historyLimit;
  // Carry out each accepted refund, one at a time (each was decided when it was accepted; one after the
  // other keeps this workflow's steps in one order, so a replay meets them in the order they happened).
  for (;;) {
    const woken = () => queue.length > 0 || closable() || (rollOverDue && idle()) || runner.dueAside() !== undefined;
    await (runner.settingAside ? condition(woken, Math.max(runner.nextDue(), 1)) : condition(woken));
    const next = runner.takeDueAside() ?? queue.shift();
    if (next) {
      await runner.carryOut(next);
      rollOverDue = historyIsLong();
      continue;
    }
    // Woken with nothing to carry out and nothing to close: history has grown long.
    if (!closable()) break;
    // Close: refused from now on; whatever was accepted before this line runs to its end first.
    ledger.closing = true;
    ledger.publish();
    await condition(() => queue.length > 0 || idle());
    if (queue.length === 0) return { ...ledger.summary(), refunds: ledger.refunds };
    ledger.closing = false;
  }
  // The next run starts with this run's memo (its events among it): between the two, readers (GET
  // a refund, the totals, the events feed) would otherwise find a ledger with nothing in it.
  const memo = { ...workflowInfo().memo, ...ledger.memo() };
  return makeContinueAsNewFunc<typeof refundsWorkflow>({ memo })({ ...input, carried: ledger.carried() });
}

/**
 * The ledger of one authorization runs under that authorization's id and no other (an input that
 * names another, a start under a squatted id, is refused before anything runs), and only as the API
 * started it: fresh, or carried over by its own continue-as-new. A start input copied out of history
 * (the id terminated, then started again) would rewind the ledger.
 */
function refuseMisplacedStart(input: RefundsWorkflowInput): void {
  const own = refundsWorkflowId(input.authorizationRunId);
  if (workflowInfo().workflowId !== own) throw refusedStart(`it is the ledger of ${own}, not of ${workflowInfo().workflowId}`);
  const stale = staleStart(input, input.carried !== undefined);
  if (stale) throw refusedStart(stale);
}

/**
 * Carries accepted refunds out. A refund whose refused or reverted attempt waits for its window to
 * close is set aside, so the next refunds do not wait behind it; it is carried on once its window has
 * closed (expiryDueAt).
 */
class RefundRunner {
  private readonly aside: RefundRecord[] = [];
  /** When each refund set aside was first carried out (its settle time is measured from there). */
  private readonly startedAt = new Map<number, number>();

  constructor(
    private readonly ledger: RefundLedger,
    private readonly relay: Relay,
    private readonly input: RefundsWorkflowInput,
  ) {}

  get settingAside(): boolean {
    return this.aside.length > 0;
  }

  dueAside(): RefundRecord | undefined {
    return this.aside.find((r) => Date.now() >= expiryDueAt(r));
  }

  /** Milliseconds until the first refund set aside is due. */
  nextDue(): number {
    return Math.min(...this.aside.map(expiryDueAt)) - Date.now();
  }

  /** The refund set aside whose window has closed, taken off the list (as the ledger holds it now). */
  takeDueAside(): RefundRecord | undefined {
    const due = this.dueAside();
    if (!due) return undefined;
    this.aside.splice(this.aside.indexOf(due), 1);
    return this.ledger.current(due);
  }

  /** Carries a refund to its end (succeeded, or failed with nothing moved), or sets it aside while an attempt's window closes. */
  async carryOut(record: RefundRecord): Promise<void> {
    const started = this.startedAt.get(record.sequence) ?? Date.now();
    this.startedAt.delete(record.sequence);
    const deps = { relay: this.relay, onChange: (next: RefundRecord) => this.ledger.update(next), setAsideWhileExpiring: true };
    // A held payment's refunds go through the escrow, each after the ones before it (their events counted).
    const { hold } = this.input;
    const final = hold ? await runEscrowRefund(record, hold, this.ledger.refundTransactions(), deps) : await runRefund(record, deps);
    if (!isRefundFinal(final)) {
      this.aside.push(final);
      this.startedAt.set(final.sequence, started);
      return;
    }
    telemetry.refundSettled({
      orderId: this.input.orderId,
      network: this.input.chain?.network,
      outcome: final.stage === 'succeeded' ? 'succeeded' : 'failed',
      ms: Date.now() - started,
      code: final.failure?.code,
    });
  }
}
