// The README's first payment is what a newcomer types first: its shell block runs here as written
// (create with curl, sign with `npm run authcap -- dev sign`, capture, refund part), against the
// suite's stack. Only where it reads dev.json and its order id are changed: the suite's stack keeps
// its dev.json in its own state dir, and the test names the order to find it afterwards.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { api, newOrderId } from '../support/api.js';
import { repoRoot } from '../support/lifecycle.js';

const execFileAsync = promisify(execFile);

function firstPaymentBlock(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## First payment'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README.md has no shell block under "## First payment"');
  return block[1]!;
}

describe("the README's first payment", () => {
  it('runs as written: created, signed as demo payer 0, captured, 3.00 refunded', async () => {
    const stateDir = inject('stateDir');
    const orderId = newOrderId('readme');
    const script = firstPaymentBlock();
    expect(script).toContain('./.authcap/dev.json');
    expect(script).toContain('ORDER="order-1-$(date +%s)"');
    const adapted = script.replaceAll('./.authcap/dev.json', join(stateDir, 'dev.json')).replaceAll('ORDER="order-1-$(date +%s)"', `ORDER="${orderId}"`);

    const { stdout } = await execFileAsync('bash', ['-euo', 'pipefail', '-c', adapted], {
      cwd: repoRoot,
      env: { ...process.env, AUTHCAP_STATE_DIR: stateDir },
      timeout: 120_000,
    });
    expect(stdout).toMatch(/"state":"drafted"/);
    expect(stdout).toMatch(/signed as demo payer 0 \(0x[0-9a-fA-F]{40}\) on chain \d+: auth_\S+ is stored/);
    expect(stdout).toMatch(/"state":"succeeded"/);

    const found = await api('GET', `/v1/authorizations?orderId=${encodeURIComponent(orderId)}`);
    expect(found.status).toBe(200);
    expect(found.body.data).toHaveLength(1);
    const final = await api('GET', `/v1/authorizations/${found.body.data[0].id}`);
    expect(final.body).toMatchObject({ orderId, state: 'captured', amount: '12.5', amountCaptured: '12.5', amountRefunded: '3' });
  }, 180_000);
});
