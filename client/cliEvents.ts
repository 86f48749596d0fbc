// The CLI's events and webhook commands:
//   authcap events [--after ID] [--type T] [--order ID] [--limit N] [--follow] [--json]
//   authcap webhooks create --url URL [--events a,b|*] [--label TEXT] | webhooks list | webhooks delete <id>
import Table from 'cli-table3';
import { AuthcapError } from '../domain/errors.js';
import type { AuthcapEvent } from '../domain/events.js';
import type { AuthcapClient } from './authcapClient.js';
import { tokenUnits } from './cliAmounts.js';

type Out = (line: string) => void;
type Values = Record<string, string | boolean | undefined>;

const eventRow = (e: AuthcapEvent) => {
  if (e.type.startsWith('refund.')) {
    // A refund's line: its own state and amount, and why it failed or the transaction that proves it.
    const refund = (e as Extract<AuthcapEvent, { type: `refund.${string}` }>).data.object;
    const detail = refund.failure ? `${refund.failure.code}: ${refund.failure.message}` : (refund.transactionHash ?? '');
    return [e.createdAt, e.id, e.type, e.orderId, refund.state, tokenUnits(refund.amount, refund.token), detail];
  }
  const { data } = e as Extract<AuthcapEvent, { type: `authorization.${string}` }>;
  return [
    e.createdAt,
    e.id,
    e.type,
    e.orderId,
    data.object.state,
    tokenUnits(data.object.amount, data.object.token),
    data.reason ? `${data.reason.code}: ${data.reason.message}` : (data.object.capture?.transactionHash ?? ''),
  ];
};

function eventsTable(events: AuthcapEvent[]): string {
  const t = new Table({ head: ['created', 'id', 'type', 'order', 'state', 'amount', 'reason / transaction'], style: { head: [], border: [] } });
  for (const e of events) t.push(eventRow(e));
  return t.toString();
}

/** Prints the feed from --after; with --follow keeps reading it (one line per event) until interrupted. */
export async function eventsCommand(client: AuthcapClient, values: Values, out: Out, stop: AbortSignal = new AbortController().signal): Promise<number> {
  const limit = values.limit === undefined ? (values.follow ? 100 : 20) : Number(values.limit);
  const request = { type: values.type as string | undefined, orderId: values.order as string | undefined, limit };
  let after = values.after as string | undefined;
  if (!values.follow) {
    const page = await client.events.list({ ...request, after });
    if (values.json) out(JSON.stringify(page, null, 2));
    else out(`${eventsTable(page.data)}${page.hasMore && page.data.length ? `\nmore: --after ${page.data.at(-1)!.id}` : ''}`);
    return 0;
  }
  while (!stop.aborted) {
    const page = await client.events.list({ ...request, after });
    for (const event of page.data) out(values.json ? JSON.stringify(event) : eventRow(event).join('  '));
    if (page.data.length) after = page.data.at(-1)!.id;
    if (!page.hasMore)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1_000);
        stop.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
  }
  return 0;
}

export async function webhooksCommand(client: AuthcapClient, values: Values, positionals: string[], out: Out): Promise<number> {
  const json = values.json === true;
  switch (positionals[1]) {
    case 'create': {
      if (typeof values.url !== 'string') throw new AuthcapError('validation_error', 'webhooks create needs --url URL');
      const events =
        typeof values.events === 'string'
          ? values.events
              .split(',')
              .map((e) => e.trim())
              .filter(Boolean)
          : ['*'];
      const created = await client.webhookEndpoints.create({ url: values.url, events, description: values.label as string | undefined });
      out(
        json
          ? JSON.stringify(created, null, 2)
          : `created ${created.id} → ${created.url} (${created.events.join(', ')})\nsigning secret (shown once, keep it secret): ${created.secret}`,
      );
      return 0;
    }
    case 'list': {
      const endpoints = await client.webhookEndpoints.list();
      const t = new Table({ head: ['id', 'url', 'events', 'description', 'created'], style: { head: [], border: [] }, wordWrap: true });
      for (const e of endpoints) t.push([e.id, e.url, e.events.join(', '), e.description ?? '—', e.createdAt]);
      out(json ? JSON.stringify(endpoints, null, 2) : t.toString());
      return 0;
    }
    case 'delete': {
      const id = positionals[2];
      if (!id) throw new AuthcapError('validation_error', 'webhooks delete needs an endpoint id (see webhooks list)');
      const deleted = await client.webhookEndpoints.delete(id);
      out(json ? JSON.stringify({ ...deleted, deleted: true }, null, 2) : `deleted ${deleted.id}`);
      return 0;
    }
    default:
      throw new AuthcapError('validation_error', 'webhooks needs create, list or delete');
  }
}
