// The operator CLI: find an authorization by id or order, inspect it, void it, capture it.
//   authcap get <id | --order ID>
//   authcap list [--order ID] [--state STATE] [--payer ADDRESS] [--limit N]
//   authcap void <id | --order ID> --reason TEXT [--by NAME]
//   authcap capture <id | --order ID>
// Connects with the same settings as the worker (TEMPORAL_ADDRESS, namespace, TLS, API key).
import { parseArgs } from 'node:util';
import { AuthcapError } from '../domain/errors.js';
import { AuthcapClient } from './authcapClient.js';

const usage = `usage:
  authcap get <id | --order ID>
  authcap list [--order ID] [--state STATE] [--payer ADDRESS] [--limit N]
  authcap void <id | --order ID> --reason TEXT [--by NAME]
  authcap capture <id | --order ID>`;

export async function main(argv: string[], out: (line: string) => void = console.log): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      order: { type: 'string' },
      state: { type: 'string' },
      payer: { type: 'string' },
      limit: { type: 'string' },
      reason: { type: 'string' },
      by: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, idArg] = positionals;
  if (values.help || !command) {
    out(usage);
    return command ? 0 : 2;
  }
  const client = await AuthcapClient.connect();
  try {
    const id = async () => {
      if (idArg) return idArg;
      if (values.order) return client.idForOrder(values.order);
      throw new AuthcapError('validation_error', `${command} needs an authorization id or --order ID`);
    };
    switch (command) {
      case 'get':
        out(JSON.stringify(await client.getAuthorization(await id()), null, 2));
        return 0;
      case 'list':
        out(JSON.stringify(await client.list({
          orderId: values.order, state: values.state, payer: values.payer,
          limit: values.limit === undefined ? undefined : Number(values.limit),
        }), null, 2));
        return 0;
      case 'void': {
        if (!values.reason) throw new AuthcapError('validation_error', 'void needs --reason TEXT');
        const voided = await client.voidAuthorization(await id(), { reason: values.reason, by: values.by ?? process.env.USER ?? 'operator' });
        out(`voided ${voided.id} (order ${voided.orderId}): ${voided.void?.reason}`);
        return 0;
      }
      case 'capture': {
        const outcome = await client.capture(await id());
        out(JSON.stringify(outcome.authorization, null, 2));
        return outcome.settled ? 0 : 3;
      }
      default:
        out(`unknown command ${command}\n${usage}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof AuthcapError) {
      out(`error ${err.code}: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await client.close();
  }
}
