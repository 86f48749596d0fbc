// The operator CLI. Readable tables by default (cli-table3), --json for scripts.
//   authcap get <id | --order ID> [--wait SECONDS [--state STATE]]
//   authcap list [--order ID] [--state STATE] [--payer ADDRESS] [--network CAIP2] [--token ADDRESS] [--limit N] [--page-token T]
//   authcap history <id | --order ID>
//   authcap void <id | --order ID> --reason TEXT [--by NAME]
//   authcap capture <id | --order ID> [--amount A] [--final] [--idempotency-key K] | captures <id | --order ID>
//   authcap refund <id | --order ID> [--amount A] --reason TEXT | refunds <id | --order ID>
//   authcap keys create --role order-service|operator [--label L] | keys list | keys revoke <key id>
//   authcap events [--after ID] [--type T] [--order ID] [--limit N] [--follow]
//   authcap webhooks create --url URL [--events a,b|*] [--label L] | webhooks list | webhooks delete <id>
//   authcap temporal-setup [--retention-days N]
//   authcap deployment [set-current <build id>]
//   authcap dev sign <id> [--payer N]
//   authcap doctor [--json]
// Connects with the same settings as the worker (TEMPORAL_ADDRESS, namespace, TLS, API key, and
// AUTHCAP_CODEC_KEYS to read the encrypted payloads); beside `npm start`, what they leave unset is the
// dev stack's, from its state dir (cliDevStack.ts). `keys` works on the key file alone.
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import { AuthcapError } from '../domain/errors.js';
import type { AuthorizationResource } from '../domain/authorization.js';
import { requireCodec } from '../runtime/codec.js';
import { apiRoles, ApiKeyStore, type ApiRole } from './apiKeys.js';
import { AuthcapClient } from './authcapClient.js';
import type { AuthorizationSummary } from './authorizations/types.js';
import { capturesCommand, capturesTable } from './cliCaptures.js';
import { eventsCommand, webhooksCommand } from './cliEvents.js';
import { refundCommand, refundsCommand } from './cliRefunds.js';
import { listAmounts, tokenUnits } from './cliAmounts.js';
import { temporalSetupCommand } from './cliSetup.js';
import { deploymentCommand } from './cliDeployment.js';
import { devCommand } from './cliDevSign.js';
import { doctorCommand } from './cliDoctor.js';
import type { Settings } from '../runtime/settings/catalog.js';
import { readSettings, SettingsError } from '../runtime/settings/read.js';
import { loadTemporalSettings } from '../runtime/temporal.js';
import { tracingPluginFromEnv } from '../runtime/tracing.js';
import { devStackSettings, type DevStackSettings } from './cliDevStack.js';

const usage = `usage:
  authcap get <id | --order ID> [--wait SECONDS [--state STATE]] [--json]
  authcap list [--order ID] [--state STATE] [--payer ADDRESS] [--network CAIP2] [--token ADDRESS] [--limit N] [--page-token T] [--json]
  authcap history <id | --order ID> [--json]
  authcap void <id | --order ID> --reason TEXT [--by NAME] [--json]
  authcap capture <id | --order ID> [--amount A] [--final] [--idempotency-key K] [--json]   (--amount: capture less; the rest goes back to the payer.
      Of a held payment each call is one part (no --amount: all still capturable); --final gives the rest back once it succeeded;
      the same --idempotency-key again is the same part, never a second one: send one, or a retry captures twice)
  authcap captures <id | --order ID> [--json]   (a held payment's parts: amount, status, transaction)
  authcap refund <id | --order ID> [--amount A] --reason TEXT [--json]   (no --amount: all that is left)
  authcap refunds <id | --order ID> [--json]
  authcap keys create --role order-service|operator [--label TEXT] [--json]
  authcap keys list [--json]
  authcap keys revoke <key id>
  authcap events [--after EVENT_ID] [--type TYPE] [--order ID] [--limit N] [--follow] [--json]
  authcap webhooks create --url URL [--events TYPE,TYPE|*] [--label TEXT] [--json]
  authcap webhooks list [--json]
  authcap webhooks delete <endpoint id>
  authcap temporal-setup [--retention-days N] [--json]   (a new cluster: the namespace and search attributes)
  authcap deployment [--json]   (worker versioning: the current version, each version's drainage, who polls)
  authcap deployment set-current <build id> [--json]   (a rollout: workflow tasks go to that version's workers from now on)
  authcap dev sign <id> [--payer N] [--json]   (the dev stack only: signs the draft as dev.json's demo payer N; refused on any chain but anvil)
  authcap doctor [--json]   (checks the configuration, nodes, tokens, merchant gas, Temporal, keys and webhooks; exit 1 if any FAILs)`;

type Out = (line: string) => void;

function table(head: string[], rows: (string | null | undefined)[][]): string {
  const t = new Table({ head, style: { head: [], border: [] }, wordWrap: true });
  for (const row of rows) t.push(row.map((cell) => cell ?? '—'));
  return t.toString();
}

function resourceTable(a: AuthorizationResource): string {
  const rows: [string, string | null | undefined][] = [
    ['id', a.id],
    ['order', a.orderId],
    ['state', a.state],
    ['network', a.network],
    ['token', a.token ? `${a.token.symbol} (${a.token.address})` : null],
    ['amount', withSymbol(a.amount, a)],
    ['captured', withSymbol(a.amountCaptured, a)],
    ['refunded', withSymbol(a.amountRefunded, a)],
    ...holdRows(a),
    ['payer', a.authorization?.from],
    ['valid before', a.authorization ? new Date(Number(a.authorization.validBefore) * 1000).toISOString() : null],
    ['capture tx', a.capture?.transactionHash],
    ['captured by', a.capture?.by],
    ['cancellation tx', a.cancellation?.transactionHash],
    ['void', a.void ? `${a.void.reason} (by ${a.void.by})` : null],
    ['last error', a.lastError ? `${a.lastError.code}: ${a.lastError.message}` : null],
  ];
  return table(['field', 'value'], rows);
}

/** A held payment's escrow: what it holds, what may still be captured, until when, and what went back. */
function holdRows(a: AuthorizationResource): [string, string | null | undefined][] {
  const hold = a.hold;
  if (!hold) return [];
  const release = hold.release;
  return [
    ['held', withSymbol(hold.amountHeld, a)],
    ['capturable', withSymbol(a.amountCapturable, a)],
    ['parts', a.captures.length ? `${a.captures.length} (authcap captures ${a.id})` : '0'],
    ['capture before', hold.captureBefore],
    ['void at', `${hold.voidAt} (what is left goes back to the payer)`],
    ['released', release ? `${withSymbol(release.amount, a)} by ${release.kind} at ${release.at}` : null],
    ['release tx', release?.transactionHash],
    ['hold tx', hold.authorizeTransactionHash],
  ];
}

/** "12.50 USDC": amounts as people read them, in the authorization's token. */
function withSymbol(amount: string | undefined, a: AuthorizationResource): string | undefined {
  return tokenUnits(amount, a.token);
}

function historyTable(a: AuthorizationResource): string {
  return table(
    ['at', 'state', 'event', 'actor', 'reason', 'transaction'],
    a.history.map((h) => [h.at, h.state, h.event, h.actor, h.reason, h.transactionHash]),
  );
}

function listTable(rows: AuthorizationSummary[], amounts: Map<string, string>): string {
  return table(
    ['id', 'order', 'state', 'network', 'payer', 'amount', 'valid before', 'created'],
    rows.map((r) => [r.id, r.orderId, r.state, r.network, r.payer, amounts.get(r.id), r.validBefore, r.createdAt]),
  );
}

function keysCommand(
  values: Record<string, string | boolean | undefined>,
  positionals: string[],
  settings: Pick<Settings<'cli'>, 'AUTHCAP_KEYS_FILE' | 'AUTHCAP_STATE_DIR' | 'AUTHCAP_API_KEY'>,
  out: Out,
): number {
  const store = ApiKeyStore.open(ApiKeyStore.fileOf(settings), { apiKey: settings.AUTHCAP_API_KEY });
  const json = values.json === true;
  switch (positionals[1]) {
    case 'create': {
      const role = values.role as ApiRole | undefined;
      if (!role || !apiRoles.includes(role)) throw new AuthcapError('validation_error', `keys create needs --role ${apiRoles.join('|')}`);
      const { key, record } = store.create(role, typeof values.label === 'string' ? values.label : '');
      if (json) out(JSON.stringify({ key, ...record }, null, 2));
      else
        out(
          `${table(['id', 'role', 'label', 'created'], [[record.id, record.role, record.label, record.createdAt]])}\nkey (shown once, keep it secret): ${key}`,
        );
      return 0;
    }
    case 'list': {
      const keys = store.list();
      out(
        json
          ? JSON.stringify(keys, null, 2)
          : table(
              ['id', 'role', 'label', 'created', 'revoked'],
              keys.map((k) => [k.id, k.role, k.label, k.createdAt, k.revokedAt]),
            ),
      );
      return 0;
    }
    case 'revoke': {
      const id = positionals[2];
      if (!id) throw new AuthcapError('validation_error', 'keys revoke needs a key id (see keys list)');
      if (!store.revoke(id)) throw new AuthcapError('not_found', `no active key with id ${id}`);
      out(`revoked ${id}`);
      return 0;
    }
    default:
      throw new AuthcapError('validation_error', `keys needs create, list or revoke\n${usage}`);
  }
}

export async function main(argv: string[], out: Out = console.log, err: Out = console.error): Promise<number> {
  // biome-ignore lint/suspicious/noImplicitAnyLet: parseArgs' result type follows the options literal below
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        order: { type: 'string' },
        state: { type: 'string' },
        payer: { type: 'string' },
        network: { type: 'string' },
        token: { type: 'string' },
        limit: { type: 'string' },
        'page-token': { type: 'string' },
        reason: { type: 'string' },
        by: { type: 'string' },
        role: { type: 'string' },
        label: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        after: { type: 'string' },
        type: { type: 'string' },
        follow: { type: 'boolean' },
        url: { type: 'string' },
        events: { type: 'string' },
        wait: { type: 'string' },
        'retention-days': { type: 'string' },
        amount: { type: 'string' },
        final: { type: 'boolean' },
        'idempotency-key': { type: 'string' },
      },
    });
  } catch (e) {
    err(`error validation_error: ${(e as Error).message}\n${usage}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, idArg] = positionals;
  if (values.help || !command) {
    out(usage);
    return command ? 0 : 2;
  }
  // Every variable the CLI reads, validated before it does anything (runtime/settings/catalog.ts), in
  // the environment completed with the dev stack's settings beside `npm start`: read once, here.
  let settings: Settings<'cli'>;
  let env: NodeJS.ProcessEnv;
  let devStack: DevStackSettings;
  try {
    devStack = devStackSettings(process.env, readSettings('cli').AUTHCAP_STATE_DIR);
    env = { ...process.env, ...devStack.env };
    settings = readSettings('cli', env);
  } catch (e) {
    if (!(e instanceof SettingsError)) throw e;
    err(`error: ${e.message}`);
    return 2;
  }
  try {
    if (command === 'keys') return keysCommand(values, positionals, settings, out);
    if (command === 'temporal-setup') return await temporalSetupCommand(values, out, env);
    if (command === 'deployment') return await deploymentCommand(values, positionals, settings, out, env);
    if (command === 'dev') return await devCommand(values, positionals, settings.AUTHCAP_STATE_DIR, out, err);
    if (command === 'doctor') return await doctorCommand(values, env, devStack, out);
    if (!['get', 'list', 'history', 'void', 'capture', 'captures', 'refund', 'refunds', 'events', 'webhooks'].includes(command)) {
      err(`unknown command ${command}\n${usage}`);
      return 2;
    }
    requireCodec(env);
    const tracing = tracingPluginFromEnv('authcap-client', env);
    const client = await AuthcapClient.connect(loadTemporalSettings({}, env), {
      refundWindowDays: settings.AUTHCAP_REFUND_WINDOW_DAYS,
      webhookAddressPolicy: { allowLoopback: settings.AUTHCAP_WEBHOOK_ALLOW_LOOPBACK, allowPrivate: settings.AUTHCAP_WEBHOOK_ALLOW_PRIVATE },
      plugins: tracing ? [tracing] : [],
    });
    try {
      if (command === 'events') {
        const stop = new AbortController();
        process.once('SIGINT', () => stop.abort());
        return await eventsCommand(client, values, out, stop.signal);
      }
      if (command === 'webhooks') return await webhooksCommand(client, values, positionals, out);
      const id = async () => {
        if (idArg) return idArg;
        if (values.order) return client.authorizations.idForOrder(values.order);
        throw new AuthcapError('validation_error', `${command} needs an authorization id or --order ID`);
      };
      const show = (a: AuthorizationResource, text: string) => out(values.json ? JSON.stringify(a, null, 2) : text);
      switch (command) {
        case 'get': {
          // --wait N: answer as soon as the state changes (from --state, else from the state now), at most N s.
          const a =
            values.wait === undefined
              ? await client.authorizations.get(await id())
              : await client.authorizations.wait(await id(), { waitSeconds: Number(values.wait), state: values.state });
          show(a, resourceTable(a));
          return 0;
        }
        case 'history': {
          const a = await client.authorizations.get(await id());
          show(a, `${a.id} (order ${a.orderId}) is ${a.state}\n${historyTable(a)}`);
          return 0;
        }
        case 'list': {
          const page = await client.authorizations.list({
            orderId: values.order,
            state: values.state,
            payer: values.payer,
            network: values.network,
            token: values.token,
            pageToken: values['page-token'],
            limit: values.limit === undefined ? undefined : Number(values.limit),
          });
          if (values.json) out(JSON.stringify(page, null, 2));
          else
            out(
              `${listTable(page.data, await listAmounts(client.authorizations, page.data))}${page.nextPageToken ? `\nmore: --page-token ${page.nextPageToken}` : ''}`,
            );
          return 0;
        }
        case 'void': {
          if (!values.reason) throw new AuthcapError('validation_error', 'void needs --reason TEXT');
          const voided = await client.authorizations.void(await id(), { reason: values.reason, by: values.by ?? settings.USER ?? 'operator' });
          // A held payment's void returns what is left through the escrow: it stays held until that lands.
          const text =
            voided.hold && voided.state === 'held'
              ? `voiding the rest of ${voided.id} (order ${voided.orderId}): ${voided.void?.reason ?? values.reason}; what is left goes back to the payer once the escrow's void lands (held until then)`
              : `voided ${voided.id} (order ${voided.orderId}): ${voided.void?.reason}`;
          show(voided, text);
          return 0;
        }
        case 'refund':
          return await refundCommand(client, await id(), values, out);
        case 'refunds':
          return await refundsCommand(client, await id(), values, out);
        case 'captures':
          return await capturesCommand(client, await id(), values, out);
        default: {
          // Of a held payment: one part per call, the same part again for the same --idempotency-key.
          const outcome = await client.authorizations.capture(await id(), {
            amount: values.amount,
            ...(values.final ? { final: true } : {}),
            ...(values['idempotency-key'] === undefined ? {} : { idempotencyKey: values['idempotency-key'] }),
          });
          const a = outcome.authorization;
          show(a, a.hold && a.captures.length ? `${resourceTable(a)}\n${capturesTable(a)}` : resourceTable(a));
          return outcome.settled ? 0 : 3;
        }
      }
    } finally {
      await client.close();
    }
  } catch (e) {
    if (e instanceof AuthcapError) {
      // Also on stdout, where scripts that predate --json looked for it.
      out(`error ${e.code}: ${e.message}`);
      return 1;
    }
    err(`error: ${(e as Error).message}`);
    return 1;
  }
}
