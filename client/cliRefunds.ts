// The CLI's refund commands:
//   authcap refund <id | --order ID> [--amount A] --reason TEXT [--json]
//   authcap refunds <id | --order ID> [--json]
import Table from 'cli-table3';
import { AuthcapError } from '../domain/errors.js';
import type { Refund } from '../domain/refunds.js';
import type { AuthcapClient } from './authcapClient.js';
import { tokenUnits } from './cliAmounts.js';

type Out = (line: string) => void;
type Values = Record<string, string | boolean | undefined>;

function refundsTable(refunds: Refund[]): string {
  const t = new Table({
    head: ['id', 'amount', 'state', 'reason', 'created', 'succeeded', 'transaction / failure'],
    style: { head: [], border: [] },
    wordWrap: true,
  });
  for (const r of refunds) {
    const detail = r.failure ? `${r.failure.code}: ${r.failure.message}` : (r.transactionHash ?? '—');
    t.push([r.id, tokenUnits(r.amount, r.token), r.state, r.reason ?? '—', r.createdAt, r.succeededAt ?? '—', detail]);
  }
  return t.toString();
}

/** Gives money back; exit 0 once it succeeded, 1 when it failed, 3 while still pending (like capture). */
export async function refundCommand(client: AuthcapClient, id: string, values: Values, out: Out): Promise<number> {
  if (typeof values.reason !== 'string' || !values.reason.trim()) throw new AuthcapError('validation_error', 'refund needs --reason TEXT');
  const amount = typeof values.amount === 'string' ? values.amount : undefined;
  const { refund, settled } = await client.refunds.create(id, { amount, reason: values.reason });
  out(values.json ? JSON.stringify(refund, null, 2) : refundsTable([refund]));
  if (!settled) return 3;
  return refund.state === 'succeeded' ? 0 : 1;
}

export async function refundsCommand(client: AuthcapClient, id: string, values: Values, out: Out): Promise<number> {
  const refunds = await client.refunds.list(id);
  out(values.json ? JSON.stringify(refunds, null, 2) : refunds.length ? refundsTable(refunds) : 'no refunds');
  return 0;
}
