// examples/ is code a merchant copies: it runs here against the suite's stack, importing 'authcap'
// exactly as an order service that installed the package would (package.json "exports", compiled
// dist/), so an example that stops working fails the suite. Also `authcap dev sign`, the payer's step
// in the terminal, and its refusal on any chain but the dev stack's own anvil.
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parseEventLogs, parseUnits, type Address, type Hex, type TransactionReceipt } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../../devstack/process.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { signWebhook } from '../../runtime/webhookSignature.js';
import { api, chain, dev, newOrderId, payer, readApiResult, tokenBalance, walletSign } from '../support/api.js';
import { mint, repoRoot } from '../support/lifecycle.js';

const execFileAsync = promisify(execFile);

/** Runs a command to its end: its exit code and output (a non-zero exit is an answer, not a throw). */
async function run(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}) {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, args, {
      cwd: options.cwd ?? repoRoot,
      env: options.env ?? process.env,
      timeout: options.timeout ?? 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

// The examples import the compiled package: built here when a single file runs before `npm test` did.
beforeAll(async () => {
  const built = await run(['--import', 'tsx', 'scripts/build.ts', '--if-stale'], { timeout: 300_000 });
  expect(built.code, built.stderr).toBe(0);
}, 300_000);

const token = () => ({ address: dev().tokenAddress, abi: tokenAbi }) as const;

/**
 * In the block of `receipt`, the merchant's balance moved by exactly its Transfer logs there (other
 * files capture to the same merchant at the same time), and the receipt itself holds exactly `transfer`.
 */
async function expectTransferOnchain(receipt: TransactionReceipt, merchant: Address, transfer: { from: Address; to: Address; value: bigint }) {
  const block = receipt.blockNumber;
  const [before, after, incoming, outgoing] = await Promise.all([
    chain().readContract({ ...token(), functionName: 'balanceOf', args: [merchant], blockNumber: block - 1n }),
    chain().readContract({ ...token(), functionName: 'balanceOf', args: [merchant], blockNumber: block }),
    chain().getContractEvents({ ...token(), eventName: 'Transfer', args: { to: merchant }, fromBlock: block, toBlock: block }),
    chain().getContractEvents({ ...token(), eventName: 'Transfer', args: { from: merchant }, fromBlock: block, toBlock: block }),
  ]);
  const sum = (logs: typeof incoming) => logs.reduce((total, log) => total + log.args.value!, 0n);
  expect(after - before, "the merchant's balance change in the block").toBe(sum(incoming) - sum(outgoing));
  const ours = parseEventLogs({ abi: tokenAbi, eventName: 'Transfer', logs: receipt.logs })
    .filter((log) => log.address.toLowerCase() === dev().tokenAddress.toLowerCase())
    .map((log) => log.args);
  expect(ours).toEqual([transfer]);
}

/**
 * The examples, loaded by URL: their 'authcap' import names the compiled package, which the root
 * `tsc --noEmit` must not need (it runs before any build); the examples' own types are checked below,
 * against the build, by tsc over examples/tsconfig.json.
 */
const example = (name: string) => import(/* @vite-ignore */ new URL(`../../examples/${name}`, import.meta.url).href);

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const devSign = (stateDir: string, args: string[]) =>
  run(['bin/authcap.mjs', 'dev', 'sign', ...args], { env: { ...process.env, AUTHCAP_STATE_DIR: stateDir }, timeout: 30_000 });

/** A state dir of its own whose dev.json is the stack's, changed by `change`. */
function stateDirWith(change: (devJson: any) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'authcap-devsign-'));
  dirs.push(dir);
  const devJson = JSON.parse(readFileSync(join(inject('stateDir'), 'dev.json'), 'utf8'));
  change(devJson);
  writeFileSync(join(dir, 'dev.json'), JSON.stringify(devJson), { mode: 0o600 });
  return dir;
}

describe('examples/order-service.ts and examples/webhook-receiver.ts', () => {
  let shop: any;
  let receiving: any;
  let client: any;
  let receiver: { url: string; events: any[]; refused: { code: string }[]; close(): Promise<void> };
  let endpoint: { id: string; secret: string };

  beforeAll(async () => {
    const d = dev();
    // What an order service beside this stack is given (examples/README.md): the same as the worker's.
    Object.assign(process.env, {
      TEMPORAL_ADDRESS: d.temporalAddress,
      TEMPORAL_NAMESPACE: d.temporalNamespace,
      AUTHCAP_CONFIG: d.configFile,
      AUTHCAP_PUBLIC_URL: d.apiUrl,
      AUTHCAP_STATE_DIR: inject('stateDir'),
      // As npm start allows: the receiver is on this machine.
      AUTHCAP_WEBHOOK_ALLOW_LOOPBACK: '1',
    });
    shop = await example('order-service.ts');
    receiving = await example('webhook-receiver.ts');
    client = await shop.connect();
    const port = await freePort();
    endpoint = await client.webhookEndpoints.create({
      url: `http://127.0.0.1:${port}/hooks`,
      events: ['authorization.stored', 'authorization.captured', 'refund.created', 'refund.succeeded'],
      description: 'examples.test',
    });
    receiver = await receiving.startWebhookReceiver({ secret: endpoint.secret, port });
  });

  afterAll(async () => {
    if (endpoint) await client.webhookEndpoints.delete(endpoint.id);
    await receiver?.close();
    await client?.close();
  });

  it('takes an order, the payer pays through the printed link, it ships, and a return is refunded: the chain moved exactly that', async () => {
    const d = dev();
    const payerKey = generatePrivateKey();
    const payerAddress = privateKeyToAccount(payerKey).address;
    await mint(payerAddress, parseUnits('100', 6));
    const orderId = newOrderId('example');

    const placed = await shop.placeOrder(client, { orderId, payer: payerAddress, amount: '12.5' });
    expect(placed.authorization.state).toBe('drafted');
    expect(placed.checkoutUrl.startsWith(`${d.apiUrl}/checkout/${encodeURIComponent(placed.authorization.id)}?token=`)).toBe(true);
    const id = placed.authorization.id;

    // The order service waits while the payer opens the link it printed and signs there.
    const paid = shop.awaitPayment(client, id, 60);
    const link = new URL(placed.checkoutUrl);
    const session = await readApiResult<any>(await fetch(`${link.origin}${link.pathname}/session${link.search}`));
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    const signed = await readApiResult<any>(
      await fetch(`${link.origin}${link.pathname}/signature${link.search}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ signature: walletSign(session.body.typedData, payerKey) }),
      }),
    );
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect((await paid).state).toBe('stored');
    expect(await tokenBalance(payerAddress)).toBe(parseUnits('100', 6));

    const captured = await shop.fulfil(client, id);
    expect(captured.state).toBe('captured');
    expect(captured.amountCaptured).toBe('12.5');
    const merchant = captured.authorization!.to;
    const captureReceipt = await chain().getTransactionReceipt({ hash: captured.capture!.transactionHash });
    await expectTransferOnchain(captureReceipt, merchant, { from: payerAddress, to: merchant, value: parseUnits('12.5', 6) });
    expect(await tokenBalance(payerAddress)).toBe(parseUnits('87.5', 6));

    const returnId = randomUUID();
    const refund = await shop.acceptReturn(client, id, { returnId, amount: '2.5' });
    expect(refund).toMatchObject({ state: 'succeeded', amount: '2.5', authorizationId: id });
    // The same return again (a retried request) is the same refund, not a second one.
    expect((await shop.acceptReturn(client, id, { returnId, amount: '2.5' })).id).toBe(refund.id);
    expect(await client.refunds.list(id)).toHaveLength(1);
    const refundReceipt = await chain().getTransactionReceipt({ hash: refund.transactionHash as Hex });
    await expectTransferOnchain(refundReceipt, merchant, { from: merchant, to: payerAddress, value: parseUnits('2.5', 6) });
    expect(await tokenBalance(payerAddress)).toBe(parseUnits('90', 6));
    expect((await client.authorizations.get(id)).amountRefunded).toBe('2.5');

    // The receiver verified and recorded the order's events; no delivery authcap made was refused.
    const events = await vi.waitFor(
      () => {
        const ours = receiver.events.filter((event) => event.orderId === orderId);
        expect(ours.map((event) => event.type)).toEqual(
          expect.arrayContaining(['authorization.stored', 'authorization.captured', 'refund.created', 'refund.succeeded']),
        );
        return ours;
      },
      { timeout: 30_000, interval: 200 },
    );
    expect(receiver.refused).toEqual([]);
    const capturedEvent = events.find((event) => event.type === 'authorization.captured')!;
    expect(capturedEvent.data.object).toMatchObject({ id, state: 'captured' });
    expect(events.find((event) => event.type === 'refund.succeeded')!.data.object).toMatchObject({ id: refund.id, amount: '2.5' });
  });

  it('run as a program, walks one order to the end while the payer signs in the terminal with authcap dev sign', async () => {
    const d = dev();
    // A payer of this test's own (its balance is exact), listed in a copy of dev.json for dev sign.
    const payerKey = generatePrivateKey();
    const payerAddress = privateKeyToAccount(payerKey).address;
    await mint(payerAddress, parseUnits('100', 6));
    const payerDir = stateDirWith((devJson) => devJson.payers.push({ address: payerAddress, privateKey: payerKey }));
    const program = spawn(process.execPath, ['--import', 'tsx', 'examples/order-service.ts', payerAddress, '3', '1'], { cwd: repoRoot, env: process.env });
    let stdout = '';
    let stderr = '';
    program.stdout.on('data', (chunk) => (stdout += chunk));
    program.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => program.on('exit', (code) => resolve(code)));
    try {
      const id = await vi.waitFor(
        () => {
          const printed = /npx authcap dev sign (\S+)\)/.exec(stdout);
          expect(printed, `${stdout}${stderr}`).not.toBeNull();
          return printed![1]!;
        },
        { timeout: 30_000, interval: 100 },
      );
      expect(stdout).toContain(`pay here: ${d.apiUrl}/checkout/${encodeURIComponent(id)}?token=`);
      const signed = await devSign(payerDir, [id]);
      expect(signed.code, signed.stderr).toBe(0);
      expect(await exited, `${stdout}${stderr}`).toBe(0);
      expect(stdout).toMatch(/captured 3 in 0x[0-9a-f]{64}/);
      expect(stdout).toMatch(/refunded 1 in 0x[0-9a-f]{64}/);
      expect(await tokenBalance(payerAddress)).toBe(parseUnits('98', 6));
    } finally {
      program.kill();
    }
  }, 120_000);

  it('refuses a forged, altered, stale or unsigned delivery with 400 and records none of them', async () => {
    const event = {
      id: `evt_example_${randomUUID()}`,
      type: 'authorization.captured',
      createdAt: new Date().toISOString(),
      orderId: 'forged',
      data: { object: { state: 'captured', amount: '12.5' } },
    };
    const body = JSON.stringify(event);
    const altered = body.replace('"12.5"', '"1250"');
    expect(altered).not.toBe(body);
    const post = (payload: string, signature?: string) =>
      fetch(receiver.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(signature ? { 'authcap-signature': signature } : {}) },
        body: payload,
      });
    const recorded = receiver.events.length;
    const refusedBefore = receiver.refused.length;

    expect((await post(body, signWebhook(body, 'whsec_not_the_endpoints_secret'))).status).toBe(400);
    expect((await post(altered, signWebhook(body, endpoint.secret))).status).toBe(400);
    expect((await post(body, signWebhook(body, endpoint.secret, Math.floor(Date.now() / 1000) - 3_600))).status).toBe(400);
    expect((await post(body)).status).toBe(400);
    expect(receiver.refused.slice(refusedBefore).map((r) => r.code)).toEqual([
      'webhook_signature_mismatch',
      'webhook_signature_mismatch',
      'webhook_timestamp_out_of_tolerance',
      'webhook_header_malformed',
    ]);
    expect(receiver.events.filter((e) => e.id === event.id)).toEqual([]);

    // Signed with the endpoint's secret, now: believed, and once only when it comes again.
    expect((await post(body, signWebhook(body, endpoint.secret))).status).toBe(200);
    expect((await post(body, signWebhook(body, endpoint.secret))).status).toBe(200);
    expect(receiver.events.filter((e) => e.id === event.id)).toHaveLength(1);
    expect(receiver.events.length).toBeGreaterThan(recorded);
  });
});

/** A JSON-RPC node that is not the dev chain's anvil: the fault `authcap dev sign` must refuse. */
async function startFakeNode(answers: { chainId: number; clientVersion: string }) {
  const methods: string[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk));
    req.on('end', () => {
      const request = JSON.parse(text) as { id: number; method: string };
      methods.push(request.method);
      const result =
        request.method === 'eth_chainId' ? `0x${answers.chainId.toString(16)}` : request.method === 'web3_clientVersion' ? answers.clientVersion : undefined;
      const answer = result === undefined ? { error: { code: -32601, message: 'method not found' } } : { result };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: request.id, ...answer }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    methods,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('authcap dev sign', () => {
  async function drafted(payerIndex: number) {
    const res = await api('POST', '/v1/authorizations', { orderId: newOrderId('devsign'), payer: payer(payerIndex).address, amount: '1.25' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; state: string; history: unknown[] };
  }

  /** Still drafted, with nothing added to its history: no signature reached it. */
  async function expectUntouched(before: { id: string; history: unknown[] }) {
    const now = await api('GET', `/v1/authorizations/${before.id}`);
    expect(now.body.state).toBe('drafted');
    expect(now.body.history).toEqual(before.history);
  }

  it("signs a draft as dev.json's demo payer and stores it, on the dev chain", async () => {
    const draft = await drafted(5);
    const result = await devSign(inject('stateDir'), [draft.id, '--payer', '5']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`signed as demo payer 5 (${payer(5).address}) on chain ${dev().chainId}: ${draft.id} is stored`);
    expect((await api('GET', `/v1/authorizations/${draft.id}`)).body.state).toBe('stored');
    await api('POST', `/v1/authorizations/${draft.id}/void`, { reason: 'examples.test: dev sign only' });
  });

  it('refuses, exit code 1 and nothing signed, for another payer, a chain dev.json does not list, a node on another chain, and a node that is not anvil', async () => {
    const d = dev();
    const draft = await drafted(6);
    const notAnvil = await startFakeNode({ chainId: d.chainId, clientVersion: 'Geth/v1.14.11-stable/linux-amd64/go1.23.2' });
    const otherChain = await startFakeNode({ chainId: 1, clientVersion: 'anvil/v1.2.3' });
    const pointedAt = (url: string) => (devJson: any) => {
      devJson.rpcUrl = url;
      for (const network of devJson.networks) if (network.chainId === d.chainId) network.rpcUrl = url;
    };
    try {
      const cases = [
        {
          dir: inject('stateDir'),
          args: ['--payer', '5'],
          says: `demo payer 5 is ${payer(5).address}, but the authorization is for payer ${payer(6).address}`,
        },
        {
          dir: stateDirWith((devJson) => (devJson.networks = devJson.networks.filter((n: any) => n.chainId !== d.chainId))),
          args: [],
          says: `the authorization is for chain ${d.chainId}, which is not one of this dev stack's chains`,
        },
        { dir: stateDirWith(pointedAt(otherChain.url)), args: [], says: `the node at ${otherChain.url} is on chain 1, not chain ${d.chainId}` },
        { dir: stateDirWith(pointedAt(notAnvil.url)), args: [], says: `the node at ${notAnvil.url} is "Geth/v1.14.11-stable/linux-amd64/go1.23.2", not anvil` },
      ];
      for (const c of cases) {
        const result = await devSign(c.dir, [draft.id, ...c.args]);
        expect(result.code, `${c.says}: ${result.stdout}${result.stderr}`).toBe(1);
        expect(result.stderr).toContain(`refused: ${c.says}`);
        await expectUntouched(draft);
      }
      // The refusals came from what the fake nodes said, not from failing to reach them.
      expect(otherChain.methods).toContain('eth_chainId');
      expect(notAnvil.methods).toContain('web3_clientVersion');
      expect([...otherChain.methods, ...notAnvil.methods].filter((m) => m.startsWith('eth_send'))).toEqual([]);
      // The same draft on the real dev chain: it was refused for the chain, and signs here.
      const signed = await devSign(inject('stateDir'), [draft.id]);
      expect(signed.code, signed.stderr).toBe(0);
      expect(signed.stdout).toContain('is stored');
    } finally {
      await Promise.all([notAnvil.close(), otherChain.close()]);
      await api('POST', `/v1/authorizations/${draft.id}/void`, { reason: 'examples.test: dev sign only' });
    }
  });
});

describe("'authcap' as a package", () => {
  it('type-checks the examples against its declarations, and an installed copy resolves with types and runs', async () => {
    const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
    const examples = await run([tsc, '--noEmit', '-p', 'examples/tsconfig.json'], { timeout: 180_000 });
    expect(examples.code, examples.stdout).toBe(0);

    // An order service elsewhere that ran `npm install <path to authcap>` (npm links the folder).
    const service = mkdtempSync(join(tmpdir(), 'authcap-consumer-'));
    try {
      mkdirSync(join(service, 'node_modules/@types'), { recursive: true });
      symlinkSync(repoRoot, join(service, 'node_modules/authcap'), 'dir');
      symlinkSync(join(repoRoot, 'node_modules/@types/node'), join(service, 'node_modules/@types/node'), 'dir');
      writeFileSync(join(service, 'package.json'), JSON.stringify({ name: 'order-service', type: 'module', private: true }));
      writeFileSync(
        join(service, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            target: 'ES2022',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ['node'],
          },
        }),
      );
      writeFileSync(
        join(service, 'service.ts'),
        [
          "import { AuthcapClient, AuthcapError, type AuthorizationResource, type ErrorCode } from 'authcap';",
          "import { verifyWebhook } from 'authcap/webhooks';",
          'export async function amountOf(client: AuthcapClient, id: string): Promise<string> {',
          '  const a: AuthorizationResource = await client.authorizations.get(id);',
          '  return a.amount;',
          '}',
          "export const code: ErrorCode = new AuthcapError('not_found', 'x').code;",
          "export const type: string = verifyWebhook('{}', 't=1,v1=00', 'whsec_x').type;",
          // Real declarations, not `any`: each of these must be a type error.
          '// @ts-expect-error a client is not a number',
          'export const n: number = AuthcapClient;',
          '// @ts-expect-error no such error code',
          "export const wrong: ErrorCode = 'no_such_code';",
          '',
        ].join('\n'),
      );
      const consumer = await run([tsc, '-p', join(service, 'tsconfig.json')], { timeout: 180_000 });
      expect(consumer.code, consumer.stdout).toBe(0);
      const loaded = await run(
        ['--input-type=module', '-e', "const m = await import('authcap'); console.log(typeof m.AuthcapClient.connect, typeof m.checkoutLink)"],
        {
          cwd: service,
        },
      );
      expect(loaded.code, loaded.stderr).toBe(0);
      expect(loaded.stdout.trim()).toBe('function function');
    } finally {
      rmSync(service, { recursive: true, force: true });
    }
  }, 240_000);
});
