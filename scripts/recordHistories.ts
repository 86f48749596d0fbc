// Records workflow histories for the replay tests (test/unit/replay.test.ts): one closed authorization
// per final state, runs that continued as new, and a relayer run. Point it at a Temporal server that
// ran the integration suite with the payload codec off (AUTHCAP_CODEC=off), so the histories replay
// without keys:  TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx scripts/recordHistories.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';

const out = join(import.meta.dirname, '..', 'test', 'replay', 'histories');
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
mkdirSync(out, { recursive: true });

const wanted: [string, string][] = [
  ['captured', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'captured' AND ExecutionStatus = 'Completed'`],
  ['canceled', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'canceled' AND ExecutionStatus = 'Completed'`],
  ['voided', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'voided' AND ExecutionStatus = 'Completed'`],
  ['expired', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'expired' AND ExecutionStatus = 'Completed'`],
  ['rejected', `WorkflowType = 'authorizationWorkflow' AND AuthorizationState = 'rejected' AND ExecutionStatus = 'Completed'`],
  ['continued', `WorkflowType = 'authorizationWorkflow' AND ExecutionStatus = 'ContinuedAsNew'`],
  ['relayer', `WorkflowType = 'merchantRelayerWorkflow' AND ExecutionStatus = 'ContinuedAsNew'`],
  ['nonce-claim', `WorkflowType = 'nonceClaimWorkflow'`],
];
let written = 0;
for (const [name, query] of wanted) {
  let n = 0;
  for await (const execution of client.workflow.list({ query, pageSize: 3 })) {
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    writeFileSync(join(out, `${name}-${n}.json`), historyToJSON(history));
    written += 1;
    if (++n >= 2) break;
  }
  if (n === 0) console.warn(`recordHistories: no ${name} execution found`);
}
console.log(`recordHistories: wrote ${written} histories to ${out}`);
await connection.close();
