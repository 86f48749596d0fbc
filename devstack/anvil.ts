// anvil from the npm package @foundry-rs/anvil: its binary ships in the package, nothing to download.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { startProcess, waitFor, type ManagedProcess } from './process.js';

export interface AnvilOptions {
  port: number;
  /** Seconds per block; 0.2 gives the spec's ~200 ms preconfirmation cadence. 0 = mine on every transaction. */
  blockTimeSeconds?: number;
  chainId?: number;
  /** Load the chain from this file at start and dump it there on exit, so a restart keeps its state. */
  stateFile?: string;
  /** Extra environment for the anvil process (a test points HOME at a scratch directory). */
  env?: NodeJS.ProcessEnv;
  onOutput?: (chunk: string) => void;
}

export interface Anvil {
  rpcUrl: string;
  chainId: number;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/** The well-known anvil/hardhat development mnemonic: accounts derived from it are public test keys. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

export function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url);
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  const packageJson = require.resolve(`${platformPackage}/package.json`);
  const binary = join(dirname(packageJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(binary)) throw new Error(`anvil binary missing at ${binary}; run npm ci`);
  return binary;
}

/** States kept for reads at a past block: 200 s at 0.2 s blocks, beyond any depth authcap reads at. */
export const RECENT_STATES = 1_000;

export async function startAnvil(options: AnvilOptions): Promise<Anvil> {
  const chainId = options.chainId ?? 31337;
  const rpcUrl = `http://127.0.0.1:${options.port}`;
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--chain-id',
    String(chainId),
    '--accounts',
    '12',
    '--mnemonic',
    ANVIL_MNEMONIC,
    '--quiet',
    // Recent states stay in memory, as a full node keeps its last ~128; older ones are dropped.
    // Without it anvil moves old states to ~/.foundry/anvil/tmp after ~1,400 blocks (~5 min at
    // 0.2 s blocks, ~80 KB a block) and never removes them, even on a clean exit: a dev stack left
    // running filled the disk at ~1.4 GB an hour, and the test suite leaked gigabytes a run.
    '--prune-history',
    String(RECENT_STATES),
  ];
  if (options.stateFile) args.push('--state', options.stateFile);
  if (options.blockTimeSeconds && options.blockTimeSeconds > 0) args.push('--block-time', String(options.blockTimeSeconds));
  const proc = await startProcess({
    // Two anvils run side by side with AUTHCAP_DEV_NETWORKS=2: their messages say which one.
    name: chainId === 31337 ? 'anvil' : `anvil (chain ${chainId})`,
    command: anvilBinaryPath(),
    args,
    env: options.env,
    onOutput: options.onOutput,
    ready: () =>
      waitFor(async () => {
        const res = await fetch(rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        });
        return res.ok;
      }),
  });
  return { rpcUrl, chainId, process: proc, stop: () => proc.stop() };
}
