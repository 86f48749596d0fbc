// How an authorization workflow sends a transaction: it asks the merchant's relayer and waits for
// the answer signal. The request id makes asking twice (after a timeout or a replay) harmless.
import { ApplicationFailure, condition, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Address } from 'viem';
import type { RelayCall, RelayResult } from '../domain/relay.js';
import { committedCalls, localReads } from './activities.js';
import { relayResultSignal } from './messages.js';

const MAX_ASKS = 5;

/** Asks the relayer of `sender` (the merchant key) to send this call: it builds and checks the transaction itself. */
export type Relay = ((requestId: string, call: RelayCall, sender: Address) => Promise<RelayResult>) & {
  /** The relayer's answer to a request, once it came (a requester answered only on failure: its failure). */
  answer(requestId: string): RelayResult | undefined;
};

/**
 * Registers the answer handler for this workflow and returns its `relay` function.
 *
 * `committed: true` asks the relayer from a regular activity, which runs only once the workflow task
 * that decided the transaction is in history. A local activity runs inside that task: should the task
 * be thrown away (a worker killed, a task timed out) the relayer has the request all the same, while
 * the decision is taken again, possibly otherwise. An authorization's transactions are fixed by what
 * the payer signed, so asking twice asks for the same one; a refund's amount and nonce are decided by
 * its workflow, which must never send one that its history does not hold.
 */
export function createRelayClient(options: { committed?: boolean } = {}): Relay {
  const requests = options.committed ? committedCalls : localReads;
  const results = new Map<string, RelayResult>();
  setHandler(relayResultSignal, (result) => {
    results.set(result.requestId, result);
  });
  const relay = async (requestId: string, call: RelayCall, sender: Address): Promise<RelayResult> => {
    const { workflowId, runId } = workflowInfo();
    // Asked again each minute (a lost signal, a relayer mid-rollover), and not for ever: a command
    // must end. If the relayer sends it later after all, reconciliation reads the outcome.
    for (let asked = 0; asked < MAX_ASKS; asked += 1) {
      // A signal-with-start keyed by the request id: asking again is harmless, so it runs locally.
      await requests.requestRelay({ requestId, replyTo: { workflowId, runId }, sender, call });
      if (await condition(() => results.has(requestId), '1 minute')) return results.get(requestId)!;
    }
    throw ApplicationFailure.create({ type: 'chain_unavailable', nonRetryable: true, message: `the merchant's relayer did not answer in ${MAX_ASKS} minutes` });
  };
  return Object.assign(relay, { answer: (requestId: string) => results.get(requestId) });
}
