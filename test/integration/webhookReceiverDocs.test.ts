// docs/webhooks.md's 20-line receiver is code a merchant will copy: run it as written against the stack.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../devstack/process.js';
import { signWebhook } from '../../runtime/webhookSignature.js';
import { api, payer } from '../support/api.js';
import { draft, repoRoot } from '../support/lifecycle.js';

function documentedReceiver(): string {
  const page = readFileSync(join(repoRoot, 'docs', 'webhooks.md'), 'utf8');
  const block = /<!-- webhook-receiver:start[^>]*-->\s*```js\n([\s\S]*?)```\s*<!-- webhook-receiver:end -->/.exec(page);
  if (!block) throw new Error('docs/webhooks.md has no webhook-receiver block');
  return block[1]!;
}

describe("docs/webhooks.md's webhook receiver", () => {
  const dir = mkdtempSync(join(tmpdir(), 'authcap-receiver-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is at most 20 lines, verifies deliveries, and refuses a forged or stale one', async () => {
    const code = documentedReceiver();
    expect(
      code
        .trim()
        .split('\n')
        .filter((line) => line.trim() && !line.trim().startsWith('//')).length,
    ).toBeLessThanOrEqual(20);
    writeFileSync(join(dir, 'receiver.mjs'), code);
    const port = await freePort();
    const created = await api('POST', '/v1/webhook_endpoints', { url: `http://127.0.0.1:${port}/hooks`, events: ['authorization.drafted'] });
    expect(created.status).toBe(201);
    const stateDir = join(dir, '.authcap');
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, 'dev.json'), JSON.stringify({ webhook: { id: created.body.id, url: created.body.url, secret: created.body.secret } }));
    const child = spawn(process.execPath, ['receiver.mjs'], { cwd: dir, env: { ...process.env, PORT: String(port), AUTHCAP_STATE_DIR: stateDir } });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    try {
      await vi.waitFor(async () =>
        expect((await fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST', body: '{}' }).catch(() => undefined))?.status).toBe(400),
      );
      const d = await draft(payer(3), '1');
      await vi.waitFor(() => expect(stdout).toContain(`authorization.drafted ${d.orderId} drafted`), { timeout: 15_000 });
      const body = JSON.stringify({ id: 'evt_forged', type: 'authorization.captured', orderId: d.orderId, data: { object: { state: 'captured' } } });
      const post = (header: string) => fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST', headers: { 'authcap-signature': header }, body });
      expect((await post(signWebhook(body, 'whsec_not_the_secret'))).status).toBe(400);
      expect((await post(signWebhook(body, created.body.secret, Math.floor(Date.now() / 1000) - 3_600))).status).toBe(400);
      expect((await post('t=1,v1=zz')).status).toBe(400);
      expect((await post(signWebhook(body, created.body.secret))).status).toBe(200);
      expect(stdout.match(/authorization\.captured/g)).toHaveLength(1);
    } finally {
      child.kill();
      await api('DELETE', `/v1/webhook_endpoints/${created.body.id}`);
    }
  });
});
