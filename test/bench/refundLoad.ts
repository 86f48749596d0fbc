// `npx tsx test/bench/refundLoad.ts`: the bench's refund rows alone, for checking them or
// comparing one change at a time (a few minutes). One stack as `npm start` runs it (the build when
// fresh, the SQLite file), then what `npm run bench` runs for refunds: the transfer floor and refunds
// one at a time, both again at concurrency, partial captures against a capture plus a transfer, reads
// of the same authorizations stored, captured and refunded, cost per refund, and the exactly-once
// audit of every capture and refund. Prints the report's refund section; writes no results file.
//   N (20: refunds one at a time), PARTIAL (10), C (10) and CN (40: refunds at concurrency C),
//   BENCH_REFUND_AMOUNT (0.01: all of each 0.01 capture; less leaves each ledger open for its window)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createTestClient, http, parseEther, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../../devstack/process.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { AuthcapApi } from './authcapFlows.js';
import { createBareBaseline } from './baselines/bareCapture.js';
import { stackPids, startBenchStack } from './benchStack.js';
import { auditExactlyOnce, merchantNonce } from './exactlyOnce.js';
import { UsageSampler } from './processUsage.js';
import { runRefundRows } from './refundFlows.js';
import { refundAuditLine, refundsMarkdown } from './refundReport.js';

const plan = {
  sequential: Number(process.env.N ?? 20),
  partial: Number(process.env.PARTIAL ?? 10),
  concurrent: [Number(process.env.C ?? 10), Number(process.env.CN ?? 40)] as [number, number],
};

process.env.AUTHCAP_WORKER_METRICS_PORT = String(await freePort());
const temporalMetricsPort = await freePort();
const stateDir = mkdtempSync(join(tmpdir(), 'authcap-refunds-'));
const stack = await startBenchStack(stateDir, { temporalMetricsPort });
let ok = false;
try {
  const dev = stack.devJson;
  const chain = createPublicClient({ transport: http(dev.rpcUrl) }) as PublicClient;
  const fundedKey = async () => {
    const key = generatePrivateKey();
    await createTestClient({ mode: 'anvil', transport: http(dev.rpcUrl) }).setBalance({ address: privateKeyToAccount(key).address, value: parseEther('1000') });
    return key;
  };
  const read = (functionName: 'name' | 'version') => chain.readContract({ address: dev.tokenAddress, abi: tokenAbi, functionName });
  const bare = createBareBaseline({
    rpcUrl: dev.rpcUrl,
    chainId: dev.chainId,
    tokenAddress: dev.tokenAddress,
    domain: { name: await read('name'), version: await read('version'), chainId: dev.chainId, verifyingContract: dev.tokenAddress },
    submitterKey: await fundedKey(),
    confirmations: 1,
  });
  const fromBlock = await chain.getBlockNumber();
  const merchantNonceBefore = await merchantNonce(dev.rpcUrl, dev.merchantAddress);
  const run = await runRefundRows(
    {
      dev,
      api: new AuthcapApi(dev.apiUrls, dev.apiKey),
      chain,
      sampler: new UsageSampler(stackPids(stack)),
      metricsUrl: `http://127.0.0.1:${process.env.AUTHCAP_WORKER_METRICS_PORT}/metrics`,
      temporalMetricsUrl: `http://127.0.0.1:${temporalMetricsPort}/metrics`,
      bare,
      floorKey: await fundedKey(),
      payerAt: (i) => dev.payers[i % dev.payers.length]!,
    },
    plan,
  );
  const audit = await auditExactlyOnce({
    rpcUrl: dev.rpcUrl,
    tokenAddress: dev.tokenAddress,
    fromBlock,
    authcapCaptureHashes: run.captureHashes,
    merchantNonceBefore,
    merchant: dev.merchantAddress,
    refunds: run.refunds,
  });
  ok = audit.ok;
  console.log(refundsMarkdown(run.results));
  console.log(
    `Exactly-once audit: ${audit.ok ? 'passed' : '**FAILED**'}: ${audit.authcapCaptures} captures and ${audit.refunds?.refunds ?? 0} refunds, ${audit.merchantTransactions} merchant transactions, ${audit.duplicateNonces} nonces used twice, ${audit.authcapCapturesWithoutLog} captures without a log.${refundAuditLine(audit.refunds)}`,
  );
} finally {
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
