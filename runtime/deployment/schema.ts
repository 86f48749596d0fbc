// The deployment's networks and tokens: one typed configuration, validated with the API's schema
// library (zod) so a wrong entry stops the start with its path and what is wrong with it. Secrets
// (merchant keys, RPC URLs that carry an API key) stay in the environment and are named here.
import { z } from 'zod';

/** CAIP-2 ids of EVM networks, as x402 names them: `eip155:<chain id>`. */
export const networkIdSchema = z
  .string()
  .regex(/^eip155:[1-9]\d{0,15}$/, 'must be a CAIP-2 EVM network id such as "eip155:8453"')
  .describe('CAIP-2 network id, e.g. "eip155:8453" (Base) or "eip155:1" (Ethereum).');

const tokenAddressSchema = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a token contract address (0x followed by 40 hex digits)');

/** A URL, or `${NAME}` read from the environment (providers' URLs carry API keys). */
const urlSchema = (schemes: readonly string[]) =>
  z
    .string()
    .min(1)
    .refine((value) => /^\$\{[A-Z_][A-Z0-9_]*\}$/.test(value) || schemes.some((s) => value.startsWith(`${s}://`)), {
      message: `must be a ${schemes.join(' or ')} URL, or \${VARIABLE} naming one in the environment`,
    });

const confirmationsSchema = z
  .union([z.number().int().min(1).max(1_000), z.enum(['safe', 'finalized'])])
  .describe('When a capture counts as final: blocks built on it (1 or more), or the node\'s "safe" / "finalized" tag.');

const contractAddressSchema = (what: string) => z.string().regex(/^0x[0-9a-fA-F]{40}$/, `must be ${what} (0x followed by 40 hex digits)`);

/**
 * Commerce Payments' AuthCaptureEscrow on this network and the two collectors authcap uses with it:
 * what holds go through (docs/holds.md). On Base and Base Sepolia the audited deployment; on a dev
 * chain authcap's own contracts of the same interface.
 */
export const escrowSchema = z
  .object({
    address: contractAddressSchema('the AuthCaptureEscrow contract address').describe('The AuthCaptureEscrow contract.'),
    paymentCollector: contractAddressSchema('the ERC3009PaymentCollector address').describe(
      "Its ERC3009PaymentCollector: what payers sign their hold's ReceiveWithAuthorization to.",
    ),
    refundCollector: contractAddressSchema('the OperatorRefundCollector address').describe(
      "Its OperatorRefundCollector: refunds of held payments come from the merchant key's own balance through it.",
    ),
    holdsByDefault: z
      .union([z.boolean(), z.array(tokenAddressSchema).max(16)])
      .default(false)
      .describe('Hold the funds of authorizations that do not say (`hold` absent): true for every token here, or the tokens listed.'),
  })
  .strict();

export const networkSchema = z
  .object({
    id: networkIdSchema,
    /** A label for people (tables, the payer's page); the CAIP-2 id when absent. */
    name: z.string().min(1).max(60).optional().describe('A label for people, e.g. "Base".'),
    rpcUrls: z
      .array(urlSchema(['http', 'https']))
      .min(1)
      .max(8)
      .describe('JSON-RPC endpoints, tried in order: the next one takes over when one fails (viem fallback).'),
    publicRpcUrls: z
      .array(z.string().regex(/^https?:\/\//, 'must be an http(s) URL'))
      .max(4)
      .optional()
      .describe("URLs a payer's wallet may be given to add this network (never the provider URLs above, which carry keys)."),
    wsUrl: urlSchema(['ws', 'wss']).optional().describe('WebSocket endpoint for new blocks; polled over HTTP when absent.'),
    confirmations: confirmationsSchema.default(1),
    logSpan: z.number().int().min(1).max(100_000).default(1_999).describe("Most blocks per eth_getLogs call (the provider's limit)."),
    tokens: z
      .array(tokenAddressSchema)
      .min(1)
      .max(16)
      .describe('Token contracts taken on this network; name, version, decimals and form are read from the chain.'),
    merchantKeys: z
      .array(z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must name an environment variable, e.g. "MERCHANT_PRIVATE_KEY"'))
      .min(1)
      .max(16)
      .default(['MERCHANT_PRIVATE_KEY'])
      .describe('Environment variables holding merchant keys (0x-prefixed hex, or several separated by commas).'),
    escrow: escrowSchema.optional().describe('Where holds go (absent: authorizations on this network cannot hold funds).'),
  })
  .strict();

export const deploymentSchema = z
  .object({
    networks: z.array(networkSchema).min(1).max(32).describe('The networks served, each with its nodes, tokens and merchant keys.'),
  })
  .strict()
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.networks.forEach((network, i) => {
      if (seen.has(network.id)) ctx.addIssue({ code: 'custom', path: ['networks', i, 'id'], message: `${network.id} is listed twice` });
      seen.add(network.id);
      const tokens = new Set<string>();
      network.tokens.forEach((token, j) => {
        if (tokens.has(token.toLowerCase())) ctx.addIssue({ code: 'custom', path: ['networks', i, 'tokens', j], message: `${token} is listed twice` });
        tokens.add(token.toLowerCase());
      });
      const byDefault = network.escrow?.holdsByDefault;
      if (Array.isArray(byDefault))
        byDefault.forEach((token, j) => {
          if (!tokens.has(token.toLowerCase()))
            ctx.addIssue({ code: 'custom', path: ['networks', i, 'escrow', 'holdsByDefault', j], message: `${token} is not one of this network's tokens` });
        });
    });
  });

export type DeploymentFile = z.input<typeof deploymentSchema>;
export type DeploymentConfig = z.output<typeof deploymentSchema>;
export type NetworkConfig = DeploymentConfig['networks'][number];

/**
 * x402 v1 names networks by word ("base", "base-sepolia"); v2 and authcap use CAIP-2. A request may
 * use either for these; every other network is named by its CAIP-2 id.
 */
export const X402_NETWORK_NAMES: Readonly<Record<string, string>> = {
  ethereum: 'eip155:1',
  sepolia: 'eip155:11155111',
  base: 'eip155:8453',
  'base-sepolia': 'eip155:84532',
  optimism: 'eip155:10',
  arbitrum: 'eip155:42161',
  polygon: 'eip155:137',
  'polygon-amoy': 'eip155:80002',
  avalanche: 'eip155:43114',
  'avalanche-fuji': 'eip155:43113',
};

/** The CAIP-2 id of a network named either way (undefined: neither form). */
export function normalizeNetwork(value: string): string | undefined {
  if (/^eip155:[1-9]\d{0,15}$/.test(value)) return value;
  return X402_NETWORK_NAMES[value.toLowerCase()];
}

export function chainIdOfNetwork(network: string): number {
  return Number(network.slice('eip155:'.length));
}

export function networkOfChainId(chainId: number | bigint | string): string {
  return `eip155:${Number(chainId)}`;
}
