// A small order service on authcap's typed client: take an order, hand the payer the checkout link,
// ship once the payer has signed (the capture moves the money), and give part of it back when goods
// come back. Each step is a function, so a web framework's handlers (or a test) can call them; run
// directly, it walks one order through all of them:
//
//   npx tsx examples/order-service.ts <payer address> [amount] [returned amount]
//
// Settings come from the environment, as they would in production (examples/README.md lists them):
// TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE (and TLS or an API key for a cluster, read by Temporal's own
// envconfig), AUTHCAP_CODEC_KEYS or AUTHCAP_CODEC_KEY_FILE (the payload keys the worker uses),
// AUTHCAP_CONFIG when the deployment serves several networks, and AUTHCAP_PUBLIC_URL with
// AUTHCAP_CHECKOUT_SECRET (or AUTHCAP_STATE_DIR) to sign the payer's link as the API does, and
// AUTHCAP_WEBHOOK_ALLOW_LOOPBACK for webhook endpoints on this machine. They are read once, here.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  AuthcapClient,
  AuthcapError,
  checkoutLink,
  loadDeployment,
  loadTemporalSettings,
  resolveDeployment,
  webhookAddressPolicyFromEnv,
  type AuthorizationResource,
  type Refund,
} from 'authcap';

/** The longest one wait may last (the client's own bound); longer waits loop. */
const WAIT_STEP_SECONDS = 30;

export async function connect(env: NodeJS.ProcessEnv = process.env): Promise<AuthcapClient> {
  // With AUTHCAP_CONFIG the client knows each network's tokens (amounts in their decimals, symbols);
  // without it, requests name no network and the worker's one applies.
  const deployment = env.AUTHCAP_CONFIG ? await resolveDeployment(loadDeployment(env, { keys: false })) : undefined;
  // The settings are read here, at the service's entry, and handed to the client.
  return AuthcapClient.connect(loadTemporalSettings({}, env), { deployment, webhookAddressPolicy: webhookAddressPolicyFromEnv(env) });
}

export interface PlacedOrder {
  authorization: AuthorizationResource;
  /** Send the payer here: the API's checkout page, where their wallet signs. */
  checkoutUrl: string;
}

/** Drafts the authorization for an order and makes the payer's link. */
export async function placeOrder(
  client: AuthcapClient,
  order: { orderId: string; payer: string; amount: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<PlacedOrder> {
  const authorization = await client.authorizations.create({ orderId: order.orderId, payer: order.payer, amount: order.amount });
  const publicUrl = env.AUTHCAP_PUBLIC_URL;
  if (!publicUrl) throw new Error('set AUTHCAP_PUBLIC_URL to the API the payers reach (npm start: dev.json apiUrl)');
  // The API's link secret: its AUTHCAP_CHECKOUT_SECRET, else the file in its state dir (`npm start`'s).
  const checkoutUrl = checkoutLink(authorization.id, {
    publicUrl,
    secret: env.AUTHCAP_CHECKOUT_SECRET || undefined,
    stateDir: env.AUTHCAP_STATE_DIR ?? '.authcap',
  });
  return { authorization, checkoutUrl };
}

/** Waits while the state is `from`; returns the authorization once it is something else. */
async function waitWhile(client: AuthcapClient, id: string, from: string, timeoutSeconds: number): Promise<AuthorizationResource> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const left = Math.ceil((deadline - Date.now()) / 1000);
    const now = await client.authorizations.wait(id, { waitSeconds: Math.max(0, Math.min(WAIT_STEP_SECONDS, left)), state: from });
    if (now.state !== from || left <= 0) return now;
  }
}

/** Resolves once the payer has signed (the authorization is `stored`); throws if it ended otherwise. */
export async function awaitPayment(client: AuthcapClient, id: string, timeoutSeconds = 600): Promise<AuthorizationResource> {
  const authorization = await waitWhile(client, id, 'drafted', timeoutSeconds);
  if (authorization.state !== 'stored') throw new Error(`order ${authorization.orderId} was not paid: the authorization is ${authorization.state}`);
  return authorization;
}

/** Ships the order: captures the payment and waits until it is final onchain. */
export async function fulfil(client: AuthcapClient, id: string, timeoutSeconds = 120): Promise<AuthorizationResource> {
  // Capturing twice is safe (a retry after a crash gets the same capture back): authcap captures once.
  const outcome = await client.authorizations.capture(id, { waitMs: 30_000 });
  const authorization = outcome.settled ? outcome.authorization : await waitWhile(client, id, 'capturing', timeoutSeconds);
  if (authorization.state !== 'captured') {
    const why = authorization.lastError ? `${authorization.lastError.code}: ${authorization.lastError.message}` : `it is ${authorization.state}`;
    throw new Error(`the capture of order ${authorization.orderId} did not complete (${why})`);
  }
  return authorization;
}

/**
 * Goods came back: refunds `amount` to the payer. `returnId` names this return in the service's own
 * records; as the idempotency key it makes a retried call the same refund, never a second one.
 */
export async function acceptReturn(
  client: AuthcapClient,
  id: string,
  request: { returnId: string; amount: string; reason?: string },
  timeoutSeconds = 120,
): Promise<Refund> {
  const { refund, settled } = await client.refunds.create(
    id,
    { amount: request.amount, reason: request.reason ?? 'goods returned' },
    { idempotencyKey: `return-${request.returnId}`, waitMs: 30_000 },
  );
  let current = refund;
  const deadline = Date.now() + timeoutSeconds * 1000;
  while (!settled && current.state === 'pending' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    current = await client.refunds.get(refund.id);
  }
  if (current.state !== 'succeeded') throw new Error(`refund ${current.id} is ${current.state}${current.failure ? `: ${current.failure.message}` : ''}`);
  return current;
}

async function main(args: string[]): Promise<void> {
  const [payer, amount = '12.50', returned = '2.50'] = args;
  if (!payer) throw new Error('usage: npx tsx examples/order-service.ts <payer address> [amount] [returned amount]');
  const client = await connect();
  try {
    const orderId = `example-${randomUUID().slice(0, 8)}`;
    const { authorization, checkoutUrl } = await placeOrder(client, { orderId, payer, amount });
    console.log(`order ${orderId}: ${authorization.amount} ${authorization.token?.symbol ?? ''} from ${payer}`);
    console.log(`  pay here: ${checkoutUrl}`);
    console.log(`  (on the dev stack, in another terminal: npx authcap dev sign ${authorization.id})`);
    await awaitPayment(client, authorization.id);
    console.log('  paid (signed and stored); shipping…');
    const captured = await fulfil(client, authorization.id);
    console.log(`  captured ${captured.amountCaptured} in ${captured.capture?.transactionHash}`);
    const refund = await acceptReturn(client, authorization.id, { returnId: `${orderId}-1`, amount: returned });
    console.log(`  refunded ${refund.amount} in ${refund.transactionHash}`);
  } finally {
    await client.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof AuthcapError ? `error ${err.code}: ${err.message}` : `error: ${(err as Error).message}`);
    process.exitCode = 1;
  });
}
