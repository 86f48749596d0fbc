// Captures per second through one merchant key against four (MERCHANT_PRIVATE_KEYS): a second stack,
// the same shipped configuration, the same burst (stored authorizations captured by 100 callers
// waiting with GET ?wait), and its own exactly-once audit summed over the keys.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { startBenchStack } from './benchStack.js';
import { AuthcapApi, type Payer } from './authcapFlows.js';
import { auditExactlyOnce, merchantNonce } from './exactlyOnce.js';
import { phase } from './progress.js';
import { distribution, pool, type Distribution } from './stats.js';

export interface KeysRun {
  keys: number;
  n: number;
  capturesPerSecond: number;
  captured: Distribution;
  perKey: Record<string, number>;
  exactlyOnceOk: boolean;
}

export async function captureBurstWithKeys(keys: number, n: number, callers: number): Promise<KeysRun> {
  const stateDir = mkdtempSync(join(tmpdir(), 'authcap-bench-keys-'));
  const stack = await startBenchStack(stateDir, { merchantKeys: keys });
  try {
    const dev = stack.devJson;
    const api = new AuthcapApi(dev.apiUrl, dev.apiKey);
    const payers: Payer[] = dev.payers;
    const chain = createPublicClient({ transport: http(dev.rpcUrl) });
    const fromBlock = await chain.getBlockNumber();
    const noncesBefore = await Promise.all(dev.merchantAddresses.map((m) => merchantNonce(dev.rpcUrl, m)));
    let p = phase(`${keys} key(s): create + sign`, n);
    const stored = await pool(
      Array.from({ length: n }, (_, i) => i),
      50,
      async (i) => {
        const payer = payers[i % payers.length]!;
        const created = await api.create(payer, `bench-keys${keys}`);
        await api.store(payer, created);
        p.tick();
        return created.id;
      },
    );
    p.done();
    p = phase(`${keys} key(s): capture burst, ${callers} callers`, n);
    const t0 = performance.now();
    const burst = await pool(stored, callers, async (id) => {
      const r = await api.capture(id);
      p.tick();
      return r;
    });
    const seconds = (performance.now() - t0) / 1000;
    const hashes = burst.map((r) => r.body.capture.transactionHash);
    const perKey: Record<string, number> = {};
    for (const r of burst) perKey[r.body.authorization.to] = (perKey[r.body.authorization.to] ?? 0) + 1;
    // One audit per key: each key sent exactly its own captures.
    let ok = true;
    for (const [i, merchant] of dev.merchantAddresses.entries()) {
      const mine = burst.filter((r) => r.body.authorization.to.toLowerCase() === merchant.toLowerCase()).map((r) => r.body.capture.transactionHash);
      const audit = await auditExactlyOnce({
        rpcUrl: dev.rpcUrl,
        tokenAddress: dev.tokenAddress,
        fromBlock,
        authcapCaptureHashes: mine,
        merchantNonceBefore: noncesBefore[i]!,
        merchant,
      });
      ok &&= audit.merchantTransactions === mine.length && audit.authcapCapturesWithoutLog === 0 && audit.duplicateNonces === 0;
    }
    ok &&= new Set(hashes).size === hashes.length;
    const run = { keys, n, capturesPerSecond: Math.round((n / seconds) * 10) / 10, captured: distribution(burst.map((r) => r.ms)), perKey, exactlyOnceOk: ok };
    p.done(`${run.capturesPerSecond} captures/s over ${Object.keys(perKey).length} key(s); exactly-once ${ok ? 'ok' : 'FAILED'}`);
    return run;
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
