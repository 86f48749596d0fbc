// A refund after it was asked for: followed from the ledger's memo (one describe a look, no workflow
// task) until it is final or the caller's wait ends.
import { publicRefund, refundStateOf, type RefundRecord } from '../../domain/refunds.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { readLedger } from './ledger.js';
import type { RefundOutcome } from './types.js';

export async function followRefund(transport: TemporalTransport, runId: string, record: RefundRecord, waitMs: number): Promise<RefundOutcome> {
  const deadline = Date.now() + waitMs;
  let current = record;
  const started = Date.now();
  while (refundStateOf(current.stage) === 'pending' && Date.now() < deadline) {
    // A refund takes about a capture's time (its block, then its depth): look first when it can be
    // done, then often while it usually ends, then calmly.
    const elapsed = Date.now() - started;
    const pause = elapsed < 250 ? 250 - elapsed : elapsed < 3_000 ? 150 : 500;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(deadline - Date.now(), 0))));
    const ledger = await readLedger(transport, runId).catch(() => undefined);
    current = ledger?.refunds.find((r) => r.sequence === record.sequence) ?? current;
  }
  const refund = publicRefund(current);
  return { refund, settled: refund.state !== 'pending' };
}
