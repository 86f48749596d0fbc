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
  ];
  if (options.stateFile) args.push('--state', options.stateFile);
  if (options.blockTimeSeconds && options.blockTimeSeconds > 0) args.push('--block-time', String(options.blockTimeSeconds));
  const proc = await startProcess({
    // Two anvils run side by side with AUTHCAP_DEV_NETWORKS=2: their messages say which one.
    name: chainId === 31337 ? 'anvil' : `anvil (chain ${chainId})`,
    command: anvilBinaryPath(),
    args,
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
