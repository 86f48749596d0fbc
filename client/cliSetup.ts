// `authcap temporal-setup`: makes a Temporal namespace ready for authcap (the namespace, then its
// search attributes through the operator service). Run once per cluster before the first worker;
// it is idempotent, so a deploy script may run it every time. The dev stacks run the same code.
import { Connection } from '@temporalio/client';
import { loadTemporalSettings } from '../runtime/temporal.js';
import { DEFAULT_RETENTION_DAYS, ensureNamespaceReady } from '../runtime/temporalSetup.js';
import { AuthcapError } from '../domain/errors.js';

export async function temporalSetupCommand(
  values: { json?: boolean; 'retention-days'?: string },
  out: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const retentionDays = values['retention-days'] === undefined ? DEFAULT_RETENTION_DAYS : Number(values['retention-days']);
  if (!Number.isInteger(retentionDays) || retentionDays < 1)
    throw new AuthcapError('validation_error', '--retention-days must be a whole number of days, at least 1');
  const settings = loadTemporalSettings({}, env);
  const connection = await Connection.connect(settings.connectionOptions);
  try {
    const report = await ensureNamespaceReady(connection, settings.namespace, { retentionDays });
    if (values.json) out(JSON.stringify({ namespace: settings.namespace, ...report }, null, 2));
    else {
      out(`namespace ${settings.namespace}: ${report.namespaceCreated ? `registered (closed workflows kept ${retentionDays} days)` : 'already there'}`);
      out(`search attributes: ${report.searchAttributesAdded.length > 0 ? `registered ${report.searchAttributesAdded.join(', ')}` : 'all already registered'}`);
    }
    return 0;
  } finally {
    await connection.close();
  }
}
