// The embedded chain must not grow the disk: anvil, left to itself, moves old states to
// ~/.foundry/anvil/tmp after ~1,400 blocks and never removes them (a CI run failed on a full disk).
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, parseEther, type PublicClient } from 'viem';
import { RECENT_STATES, startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';

let home: string;
let anvil: Anvil;
let client: PublicClient;

async function filesUnder(dir: string): Promise<number> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  let count = 0;
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) count += await filesUnder(path);
    else if ((await stat(path)).size > 0) count += 1;
  }
  return count;
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'authcap-anvil-home-'));
  // Blocks every 20 ms: past the point where anvil starts writing states out within ~40 s.
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0.02, env: { HOME: home } });
  client = createPublicClient({ transport: http(anvil.rpcUrl) });
});

afterAll(async () => {
  await anvil?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('the embedded chain', () => {
  it('writes no states to disk after 2,000 blocks, and still serves recent ones', { timeout: 120_000 }, async () => {
    const payer = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
    const receiver = '0x000000000000000000000000000000000000dEaD';
    const headAbove = async (height: bigint) => {
      let head = await client.getBlockNumber({ cacheTime: 0 });
      while (head < height) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        head = await client.getBlockNumber({ cacheTime: 0 });
      }
      return head;
    };
    // A transfer well inside the kept window: the state before its block must still be served as it
    // was (not refused, not answered from the latest state).
    await headAbove(2_000n - BigInt(RECENT_STATES / 2));
    const hash = await createWalletClient({ transport: http(anvil.rpcUrl) }).sendTransaction({
      account: payer,
      to: receiver,
      value: parseEther('1'),
      chain: null,
    });
    const { blockNumber } = await client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    await headAbove(2_000n);
    expect(await filesUnder(join(home, '.foundry'))).toBe(0);
    expect(await client.getBalance({ address: receiver })).toBe(parseEther('1'));
    expect(await client.getBalance({ address: receiver, blockNumber: blockNumber - 1n })).toBe(0n);
  });
});
