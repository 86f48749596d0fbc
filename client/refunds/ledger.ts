// The refunds of one captured authorization live in its refunds workflow (workflows/refunds.ts),
// started by its first refund. Reads come from that workflow's memo, open or closed: one server
// call, no workflow task.
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { ledgerFromMemo, refundsWorkflowId, type RefundLedgerView } from '../../domain/refunds.js';
import { sealedEntries } from '../../domain/sealed.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';

/** The refunds workflow's run as the server describes it; undefined when it never started. */
export function describeLedger(transport: TemporalTransport, authorizationRunId: string): Promise<WorkflowExecutionDescription | undefined> {
  return transport.describeIfExists(refundsWorkflowId(authorizationRunId));
}

/** The ledger from the refunds workflow's memo; undefined when it never started. */
export async function readLedger(transport: TemporalTransport, authorizationRunId: string): Promise<RefundLedgerView | undefined> {
  return ledgerFromMemo(sealedEntries((await describeLedger(transport, authorizationRunId))?.memo));
}

/** What the refunds have given back of a captured authorization, in minor units (0n: none). */
export async function amountRefunded(transport: TemporalTransport, authorizationRunId: string): Promise<bigint> {
  return BigInt((await readLedger(transport, authorizationRunId))?.amountRefundedMinor ?? '0');
}
