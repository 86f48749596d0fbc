// The CLI's view of a held payment's parts (docs/holds.md):
//   authcap captures <id | --order ID> [--json]
// A plain authorization lists its one capture the same way.
import Table from 'cli-table3';
import type { AuthorizationResource, CaptureView } from '../domain/authorization.js';
import type { AuthcapClient } from './authcapClient.js';
import { tokenUnits } from './cliAmounts.js';

type Out = (line: string) => void;
type Values = Record<string, string | boolean | undefined>;

/** One row per part, in the order asked: its id, amount, whether it was the last, where it stands. */
export function capturesTable(a: Pick<AuthorizationResource, 'captures' | 'token'>): string {
  const t = new Table({
    head: ['id', 'amount', 'final', 'status', 'requested', 'succeeded', 'transaction / failure'],
    style: { head: [], border: [] },
    wordWrap: true,
  });
  for (const c of a.captures) t.push(captureRow(c, a.token));
  return t.toString();
}

function captureRow(c: CaptureView, token: AuthorizationResource['token']): string[] {
  const detail = c.failure ? `${c.failure.code}: ${c.failure.message}` : (c.transactionHash ?? '—');
  return [c.id, tokenUnits(c.amount, token) ?? c.amount, c.final ? 'yes' : 'no', c.status, c.requestedAt || '—', c.succeededAt ?? '—', detail];
}

export async function capturesCommand(client: AuthcapClient, id: string, values: Values, out: Out): Promise<number> {
  const a = await client.authorizations.get(id);
  if (values.json) out(JSON.stringify(a.captures, null, 2));
  else out(a.captures.length ? capturesTable(a) : `no captures (${a.id} is ${a.state})`);
  return 0;
}
