// The payer's signature is a payment credential: in Temporal's history (what the server stores in its
// database, what anyone with read access to the namespace sees) it must not appear in clear text.
// Through the codec server, with its token, an operator sees everything.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { resolveTemporalCli } from '../../devstack/temporalCli.js';
import { relayerWorkflowId } from '../../domain/relay.js';
import { networkOfChainId } from '../../runtime/deployment/schema.js';

/** History as JSON with payload bytes in base64 (the proto message's own toJSON). */
function historyToJSON(history: unknown): string {
  return JSON.stringify(history, (_key, value) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value));
}
import { api, dev, payer, walletSign } from '../support/api.js';
import { draft } from '../support/lifecycle.js';
import { connectTemporalWithoutKeys } from '../support/temporal.js';

const p = payer(3);

async function rawHistory(client: Client, id: string): Promise<string> {
  const [encodedOrder, runId] = id.slice('auth_'.length).split('.');
  const orderId = Buffer.from(encodedOrder!, 'base64url').toString('utf8');
  const history = await client.workflow.getHandle(`authorization-${orderId}`, runId).fetchHistory();
  return historyToJSON(history);
}

/** Every payload's bytes in a history JSON, base64-decoded: what a reader of the database can see. */
function payloadBytes(historyJson: string): string {
  const datas = [...historyJson.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('latin1'));
  return `${historyJson}\n${datas.join('\n')}`;
}

/** Hex secrets in any case; field names (quoted JSON keys) exactly, so `ValidBefore` the search attribute does not count as `validBefore` the field. */
function expectNoSecrets(text: string, secrets: string[]): void {
  const lower = text.toLowerCase();
  for (const secret of secrets) {
    const found = secret.startsWith('"') ? text.includes(secret) : lower.includes(secret.toLowerCase());
    expect(found, `history contains ${secret.slice(0, 18)}…`).toBe(false);
  }
}

describe('payload encryption', () => {
  it('a stored and a captured authorization show no signature and no authorization fields in raw history', async () => {
    const drafted = await draft(p, '0.9');
    const signature = walletSign(drafted.typedData, p.privateKey);
    const stored = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature });
    expect(stored.body.state).toBe('stored');
    const { nonce } = stored.body.authorization;
    const raw = await connectTemporalWithoutKeys();
    const secrets = [signature.slice(2), signature.slice(2, 66), nonce.slice(2), '"validBefore"', '"ReceiveWithAuthorization"'];
    expectNoSecrets(payloadBytes(await rawHistory(raw, drafted.id)), secrets);

    const captured = await api('POST', `/v1/authorizations/${drafted.id}/capture`);
    expect(captured.body.state).toBe('captured');
    // The relayer's history carries the transaction too: check it as well.
    const relayer = await raw.workflow.getHandle(relayerWorkflowId(dev().merchantAddress, networkOfChainId(dev().chainId))).fetchHistory();
    expectNoSecrets(payloadBytes(await rawHistory(raw, drafted.id)), secrets);
    expectNoSecrets(payloadBytes(historyToJSON(relayer)), [signature.slice(2, 66)]);

    // Through the codec server with its token, the same payloads decode and show the signature.
    const history = JSON.parse(await rawHistory(raw, drafted.id));
    const payloads: unknown[] = [];
    const collect = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node && typeof node === 'object') {
        const o = node as Record<string, unknown>;
        if (o.metadata && typeof o.data === 'string') payloads.push({ metadata: o.metadata, data: o.data });
        else Object.values(o).forEach(collect);
      }
    };
    collect(history);
    expect(payloads.length).toBeGreaterThan(3);
    const decode = (url: string, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-namespace': dev().temporalNamespace, ...headers },
        body: JSON.stringify({ payloads }),
      });
    const decoded = await decode(`${dev().codecUrl}/decode`);
    expect(decoded.status).toBe(200);
    const text = JSON.stringify(await decoded.json());
    const clear = Buffer.from(text).toString();
    const allData = [...clear.matchAll(/"data":"([A-Za-z0-9+/=]*)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8')).join('\n');
    expect(allData.toLowerCase()).toContain(signature.slice(2).toLowerCase());

    // A wrong credential is 401 whoever sends it: a wrong bearer, a wrong path token.
    const base = dev().codecEndpoint;
    expect(dev().codecUrl.startsWith(`${base}/`)).toBe(true);
    expect((await decode(`${base}/decode`, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await decode(`${base}/AAAAAAAAAAAAAAAAAAAAAAAA/decode`)).status).toBe(401);
    const token = dev().codecUrl.split('/').at(-1)!;
    expect((await decode(`${base}/decode`, { authorization: `Bearer ${token}` })).status).toBe(200);
    // Without one: only this OS user (Linux), and no page from elsewhere in this user's browser.
    expect((await decode(`${base}/decode`, { origin: 'http://127.0.0.1:1' })).status).toBe(401);
    expect((await decode(`${base}/decode`)).status).toBe(process.platform === 'linux' ? 200 : 401);
  });

  it('`temporal workflow query --codec-endpoint` works: its empty query arguments ({}) encode, the answer decodes', async () => {
    const drafted = await draft(p, '0.7');
    const [encodedOrder, runId] = drafted.id.slice('auth_'.length).split('.');
    const orderId = Buffer.from(encodedOrder!, 'base64url').toString('utf8');
    const workflowId = `authorization-${orderId}`;
    const cli = await resolveTemporalCli(() => undefined);
    const token = dev().codecUrl.split('/').at(-1)!;
    const query = (env: Record<string, string>, extra: string[] = []) =>
      promisify(execFile)(
        cli,
        [
          'workflow',
          'query',
          '--address',
          dev().temporalAddress,
          '--namespace',
          dev().temporalNamespace,
          '--workflow-id',
          workflowId,
          '--run-id',
          runId!,
          '--type',
          'status',
          '-o',
          'json',
          ...extra,
        ],
        { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env } },
      );
    // The portable form: the endpoint and the token from the environment, not the command line.
    const { stdout } = await query({ TEMPORAL_CODEC_ENDPOINT: dev().codecEndpoint, TEMPORAL_CODEC_AUTH: `Bearer ${token}` });
    expect(stdout).toContain('"drafted"');
    expect(stdout).toContain(`"${orderId}"`);
    if (process.platform === 'linux') {
      // The same user needs no secret at all.
      const same = await query({}, ['--codec-endpoint', dev().codecEndpoint]);
      expect(same.stdout).toContain('"drafted"');
    }
    await expect(query({}, ['--codec-endpoint', dev().codecEndpoint, '--codec-auth', 'Bearer wrong'])).rejects.toThrow(/Unauthorized/i);
  });
});
