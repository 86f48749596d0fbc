// Records workflow histories for the replay tests (test/unit/workflows/replay.test.ts): closed authorizations of
// every final state, runs that continued as new, relayer and nonce-claim runs. The payloads stay
// encrypted as recorded; the test-only key that sealed them (AUTHCAP_CODEC_KEYS of the recording run,
// a throwaway key of the test suite, never a production one) is kept beside them so they replay.
//   AUTHCAP_RECORD_HISTORIES=1 AUTHCAP_HISTORY_SET=<name> npx vitest run --project integration
// AUTHCAP_HISTORY_ONLY=<kind,kind> records only those kinds (a set that adds what a change brought, say
// held payments, beside the sets that already prove the rest).
// (the suite's teardown runs this). Each set lives in its own folder and is kept while runs of that
// code may still exist: histories recorded by older workflow code must keep replaying after every
// later change (docs/contributing.md says when a set, and the patch it proves, may go).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { dataConverterFromEnv } from '../runtime/temporal.js';

const out = join(import.meta.dirname, '..', 'test', 'replay', 'histories', process.env.AUTHCAP_HISTORY_SET ?? 'latest');
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const connection = await Connection.connect({ address });
const client = new Client({ connection, namespace, dataConverter: dataConverterFromEnv() });
mkdirSync(out, { recursive: true });
for (const file of readdirSync(out)) if (file.endsWith('.json') || file.endsWith('.binpb')) rmSync(join(out, file));
writeFileSync(join(out, 'codec-keys.txt'), `${process.env.AUTHCAP_CODEC_KEYS ?? ''}\n`);

const wanted: [string, string][] = [
  ['captured', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'captured' AND ExecutionStatus = 'Completed'`],
  ['canceled', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'canceled' AND ExecutionStatus = 'Completed'`],
  ['voided', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'voided' AND ExecutionStatus = 'Completed'`],
  ['expired', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'expired' AND ExecutionStatus = 'Completed'`],
  ['rejected', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'rejected' AND ExecutionStatus = 'Completed'`],
  ['continued', `WorkflowType = 'authorizationWorkflow' AND ExecutionStatus = 'ContinuedAsNew'`],
  ['relayer', `WorkflowType = 'merchantRelayerWorkflow' AND ExecutionStatus = 'ContinuedAsNew'`],
  // The relayer rarely rolls over in a test run: its open history (as far as it got) replays too.
  ['relayer-running', `WorkflowType = 'merchantRelayerWorkflow' AND ExecutionStatus = 'Running'`],
  ['nonce-claim', `WorkflowType = 'nonceClaimWorkflow'`],
  ['webhook-endpoints', `WorkflowType = 'webhookEndpointsWorkflow'`],
  ['refunds', `WorkflowType = 'refundsWorkflow' AND ExecutionStatus = 'Completed'`],
  ['refunds-running', `WorkflowType = 'refundsWorkflow' AND ExecutionStatus = 'Running'`],
  // A dispatcher ends when its endpoint is deleted (the tests delete theirs), or rolls over.
  ['webhook-dispatch', `WorkflowType = 'webhookDispatchWorkflow' AND ExecutionStatus != 'Running'`],
  ['webhook-dispatch-running', `WorkflowType = 'webhookDispatchWorkflow' AND ExecutionStatus = 'Running'`],
  // A network's watcher runs for the whole suite: its open history (slices so far) replays.
  ['chain-watcher', `WorkflowType = 'chainWatcherWorkflow' AND ExecutionStatus != 'Running'`],
  ['chain-watcher-running', `WorkflowType = 'chainWatcherWorkflow' AND ExecutionStatus = 'Running'`],
];
/** Captured authorizations whose memo holds a partial capture's release (no search attribute names them). */
const partialCaptures = `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'captured' AND ExecutionStatus = 'Completed'`;
/** Held payments (their memo's view names a hold), by how they ended. */
const heldPayments: [string, string][] = [
  ['held-captured', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'captured' AND ExecutionStatus = 'Completed'`],
  ['held-voided', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'voided' AND ExecutionStatus = 'Completed'`],
  ['held-continued', `WorkflowType = 'authorizationWorkflow' AND ExecutionStatus = 'ContinuedAsNew'`],
];
const only = process.env.AUTHCAP_HISTORY_ONLY?.split(',').map((k) => k.trim());
const wants = (name: string) => !only || only.includes(name);
let written = 0;
/** Each file's workflow id: payloads are sealed for their workflow, so a history replays under its own id. */
const workflowIds: Record<string, string> = {};
for (const [name, query] of wanted) {
  if (!wants(name)) continue;
  let n = 0;
  for await (const execution of client.workflow.list({ query, pageSize: 3 })) {
    // Binary protobuf, encoded and decoded by the very proto classes the SDK uses (its JSON helper
    // trips over two protobufjs copies in the dependency tree).
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    writeFileSync(join(out, `${name}-${n}.binpb`), proto.temporal.api.history.v1.History.encode(history as never).finish());
    workflowIds[`${name}-${n}.binpb`] = execution.workflowId;
    written += 1;
    if (++n >= 2) break;
  }
  if (n === 0) console.warn(`recordHistories: no ${name} execution found`);
}
for (const [name, query] of heldPayments) {
  if (!wants(name)) continue;
  let n = 0;
  for await (const execution of client.workflow.list({ query, pageSize: 100 })) {
    const view = execution.memo?.authorization as { hold?: unknown } | undefined;
    if (!view?.hold) continue;
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    writeFileSync(join(out, `${name}-${n}.binpb`), proto.temporal.api.history.v1.History.encode(history as never).finish());
    workflowIds[`${name}-${n}.binpb`] = execution.workflowId;
    written += 1;
    if (++n >= 2) break;
  }
  if (n === 0) console.warn(`recordHistories: no ${name} execution found`);
}
if (wants('partial-captured')) {
  let n = 0;
  for await (const execution of client.workflow.list({ query: partialCaptures, pageSize: 100 })) {
    if (!execution.memo?.release) continue;
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    writeFileSync(join(out, `partial-captured-${n}.binpb`), proto.temporal.api.history.v1.History.encode(history as never).finish());
    workflowIds[`partial-captured-${n}.binpb`] = execution.workflowId;
    written += 1;
    if (++n >= 2) break;
  }
  if (n === 0) console.warn('recordHistories: no partial-captured execution found');
}
writeFileSync(join(out, 'workflow-ids.json'), `${JSON.stringify(workflowIds, null, 2)}\n`);
console.log(`recordHistories: wrote ${written} histories to ${out}`);
await connection.close();
