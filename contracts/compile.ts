// Compiles the Solidity sources with the pinned npm `solc` so the committed artifacts in build/
// are reproducible: `npm run build:contracts` rewrites them, the contract test checks they are fresh.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, mkdirSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

export interface Artifact {
  contractName: string;
  abi: unknown[];
  bytecode: `0x${string}`;
  solcVersion: string;
}

export interface CompiledContracts {
  AuthcapToken: Artifact;
  MockERC1271Wallet: Artifact;
  FiatTokenV21Like: Artifact;
  AuthCaptureEscrow: Artifact;
  ERC3009PaymentCollector: Artifact;
  OperatorRefundCollector: Artifact;
}

interface SolcModule {
  version(): string;
  compile(input: string): string;
}

interface SolcError {
  severity: 'error' | 'warning' | 'info';
  formattedMessage?: string;
  message: string;
}

interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

// Source unit names are part of the metadata hash baked into the bytecode, so they stay
// relative to contracts/ and never depend on where the repository is checked out.
const SOURCES: Record<keyof CompiledContracts, string> = {
  AuthcapToken: 'AuthcapToken.sol',
  MockERC1271Wallet: 'test/MockERC1271Wallet.sol',
  FiatTokenV21Like: 'test/FiatTokenV21Like.sol',
  AuthCaptureEscrow: 'escrow/AuthCaptureEscrow.sol',
  ERC3009PaymentCollector: 'escrow/ERC3009PaymentCollector.sol',
  OperatorRefundCollector: 'escrow/OperatorRefundCollector.sol',
};
// Sources the contracts above import: compiled with them, no artifact of their own.
const IMPORTED = ['escrow/TokenStore.sol', 'escrow/TokenCollector.sol', 'escrow/SafeTransfer.sol', 'escrow/IERC3009.sol'];

// Cancun rather than solc's newer default: anvil and every chain we target accept it.
const EVM_VERSION = 'cancun';

const contractsDir = new URL('./', import.meta.url);

function loadSolc(): SolcModule {
  // solc is CommonJS and only ships `export =` typings; require keeps both tsx and vitest happy.
  const require = createRequire(import.meta.url);
  return require('solc') as SolcModule;
}

export async function compileContracts(): Promise<CompiledContracts> {
  const solc = loadSolc();
  const sources: Record<string, { content: string }> = {};
  for (const path of [...Object.values(SOURCES), ...IMPORTED]) {
    sources[path] = { content: readFileSync(new URL(path, contractsDir), 'utf8') };
  }
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: EVM_VERSION,
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage ?? e.message).join('\n')}`);
  }
  const solcVersion = solc.version();
  const artifact = (name: keyof CompiledContracts): Artifact => {
    const compiled = output.contracts?.[SOURCES[name]]?.[name];
    if (!compiled) throw new Error(`solc produced no output for ${name}`);
    return { contractName: name, abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}`, solcVersion };
  };
  const names = Object.keys(SOURCES) as (keyof CompiledContracts)[];
  return Object.fromEntries(names.map((name) => [name, artifact(name)])) as unknown as CompiledContracts;
}

export function writeArtifacts(contracts: CompiledContracts): string[] {
  const buildDir = new URL('./build/', contractsDir);
  mkdirSync(buildDir, { recursive: true });
  const written: string[] = [];
  for (const artifact of Object.values(contracts)) {
    const file = new URL(`${artifact.contractName}.json`, buildDir);
    // Fixed key order so regenerating an unchanged contract leaves a clean diff.
    const ordered: Artifact = {
      contractName: artifact.contractName,
      abi: artifact.abi,
      bytecode: artifact.bytecode,
      solcVersion: artifact.solcVersion,
    };
    writeFileSync(file, `${JSON.stringify(ordered, null, 2)}\n`);
    written.push(fileURLToPath(file));
  }
  return written;
}

function isMainModule(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(resolve(entry)) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  const contracts = await compileContracts();
  if (process.argv.includes('--write')) {
    for (const file of writeArtifacts(contracts)) console.log(`wrote ${file}`);
  } else {
    for (const artifact of Object.values(contracts)) {
      console.log(`${artifact.contractName}: ${(artifact.bytecode.length - 2) / 2} bytes (solc ${artifact.solcVersion})`);
    }
  }
}
