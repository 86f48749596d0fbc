// The committed build outputs of contracts/*.sol. Production code deploys and calls the token
// through these; only compile.ts (and the freshness test) ever loads the compiler.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Abi, Hex } from 'viem';

export interface ContractArtifact {
  contractName: string;
  abi: Abi;
  bytecode: Hex;
  solcVersion: string;
}

function load(url: URL): ContractArtifact {
  const parsed = JSON.parse(readFileSync(url, 'utf8')) as ContractArtifact;
  if (!parsed.bytecode?.startsWith('0x') || !Array.isArray(parsed.abi)) {
    throw new Error(`malformed contract artifact ${url.pathname}; run npm run build:contracts`);
  }
  return parsed;
}

export const authcapToken: ContractArtifact = load(new URL('./build/AuthcapToken.json', import.meta.url));
export const mockErc1271Wallet: ContractArtifact = load(new URL('./build/MockERC1271Wallet.json', import.meta.url));
/** A token with FiatToken v2.1's EIP-3009 surface (no ERC-1271, no bytes overloads): tests only. */
export const fiatTokenV21Like: ContractArtifact = load(new URL('./build/FiatTokenV21Like.json', import.meta.url));
/** authcap's escrow with Commerce Payments' `AuthCaptureEscrow` interface, and its two collectors. */
export const authCaptureEscrow: ContractArtifact = load(new URL('./build/AuthCaptureEscrow.json', import.meta.url));
export const erc3009PaymentCollector: ContractArtifact = load(new URL('./build/ERC3009PaymentCollector.json', import.meta.url));
export const operatorRefundCollector: ContractArtifact = load(new URL('./build/OperatorRefundCollector.json', import.meta.url));

/** The escrow's three contracts: authcap's own, or (a folder of `{abi, bytecode}` JSON files) others of the same interface. */
export interface EscrowArtifacts {
  escrow: ContractArtifact;
  payment: ContractArtifact;
  refund: ContractArtifact;
}

export function escrowArtifacts(dir?: string): EscrowArtifacts {
  if (!dir) return { escrow: authCaptureEscrow, payment: erc3009PaymentCollector, refund: operatorRefundCollector };
  const load = (name: string) => ({ contractName: name, ...JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) }) as ContractArtifact;
  return { escrow: load('AuthCaptureEscrow'), payment: load('ERC3009PaymentCollector'), refund: load('OperatorRefundCollector') };
}
