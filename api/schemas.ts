// One schema per route for what callers send, with zod: its types flow into the handlers, and
// z.toJSONSchema turns the same schemas into the OpenAPI document, so docs and checks cannot drift.
import { z } from 'zod';
import { getAddress, isAddress, zeroAddress } from 'viem';
import { authorizationStates } from '../domain/authorization.js';
import { AuthcapError } from '../domain/errors.js';
import { QUOTES_MESSAGE } from '../client/visibilityQuery.js';
import { normalizeNetwork } from '../runtime/deployment/schema.js';

const UINT256_LIMIT = 2n ** 256n;

/**
 * Printable ASCII without leading/trailing spaces, and without the three characters no Temporal
 * visibility store searches for faithfully (client/visibilityQuery.ts): every order created can be
 * listed and followed by its id. Orders created before quotes were refused stay reachable by their
 * authorization id.
 */
export const orderIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7E](?:[\x20-\x7E]*[\x21-\x7E])?$/, 'must be printable ASCII without control characters or leading/trailing spaces')
  .regex(/^[^'"\\]*$/, QUOTES_MESSAGE)
  .describe("The merchant's order id: printable ASCII, no quotes or backslashes; one open authorization per order.");

/** Checksummed (EIP-55) or all one case: a wrong checksum is a mistyped address. */
export const addressSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 20-byte hex address (0x followed by 40 hex digits)')
  .refine((value) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(value)) return true;
    const digits = value.slice(2);
    return digits === digits.toLowerCase() || digits === digits.toUpperCase() || isAddress(value, { strict: true });
  }, 'has an invalid EIP-55 checksum; check the address or send it in lower case');

/**
 * A decimal token amount with at most `decimals` fraction digits: the most any served token has (the
 * client checks the authorization's own token's). With every token at 6 this is the whole check.
 */
export function amountSchemaFor(decimals: number) {
  return z
    .string()
    .superRefine((value, ctx) => {
      const match = /^(\d{1,78})(?:\.(\d+))?$/.exec(value);
      if (!match) {
        ctx.addIssue({
          code: 'custom',
          message: /^-/.test(value.trim())
            ? 'must be positive (greater than zero)'
            : `"${value.slice(0, 40)}" is not a decimal amount such as "12.50" (no spaces, no exponent)`,
        });
        return;
      }
      const fraction = match[2] ?? '';
      if (fraction.length > decimals) {
        ctx.addIssue({ code: 'custom', message: `has ${fraction.length} decimal places; the token has ${decimals}` });
        return;
      }
      const minor = BigInt(match[1]!) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
      if (minor === 0n) ctx.addIssue({ code: 'custom', message: 'must be positive (greater than zero)' });
      else if (minor >= UINT256_LIMIT) ctx.addIssue({ code: 'custom', message: 'must be below 2^256 minor units' });
    })
    .describe(
      `Token amount as a decimal string in the token's decimals (${decimals === 6 ? 'at most 6' : `at most the token's, up to ${decimals}`}), e.g. "12.50".`,
    );
}

export const amountSchema = amountSchemaFor(6);

/** CAIP-2 network id, or an x402 v1 network name ("base"), read as its CAIP-2 id. */
const networkSchema = z
  .string()
  .max(40)
  .refine((value) => normalizeNetwork(value) !== undefined, 'must be a CAIP-2 network id such as "eip155:8453" (or an x402 network name such as "base")')
  .transform((value) => normalizeNetwork(value)!)
  .describe('CAIP-2 network id, e.g. "eip155:8453" (x402 names such as "base" are read as theirs); optional when the deployment serves one network.');

/** A token by address or by symbol. */
const tokenSchema = z
  .string()
  .min(1)
  .max(42)
  .regex(/^(?:0x[0-9a-fA-F]{40}|[A-Za-z0-9.$_-]{1,20})$/, 'must be a token contract address or a symbol such as "USDC"')
  .describe('The token, by contract address or symbol (e.g. "USDC"); optional when the network has one token.');

const uintSchema = z
  .string()
  .regex(/^\d{1,78}$/, 'must be a decimal string of an unsigned integer')
  .refine((value) => !/^\d{1,78}$/.test(value) || BigInt(value) < UINT256_LIMIT, 'must be below 2^256');

const bytes32Schema = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be 32 bytes as 0x-prefixed hex');

export const signatureSchema = z
  .string()
  .superRefine((value, ctx) => {
    if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(value)) ctx.addIssue({ code: 'custom', message: 'must be 0x-prefixed hex bytes' });
    else if (value.length < 2 + 128) ctx.addIssue({ code: 'custom', message: `is ${(value.length - 2) / 2} bytes; a wallet signature has at least 64` });
    else if (value.length > 2 + 4096) ctx.addIssue({ code: 'custom', message: 'is longer than 2048 bytes' });
  })
  .describe('The signature bytes from eth_signTypedData_v4 (65 bytes, or 64 in EIP-2098 form, or an ERC-1271 wallet signature).');

export interface SchemaOptions {
  /** Addresses that may never pay: the zero address is always refused; the token and the merchant when known. */
  forbiddenPayers?: { address: string; why: string }[];
  /** The most decimals any served token has (default 6): amounts may have that many fraction digits. */
  maxDecimals?: number;
}

export function createSchemas(options: SchemaOptions = {}) {
  const forbidden = [{ address: zeroAddress, why: 'the zero address' }, ...(options.forbiddenPayers ?? [])].map((entry) => ({
    ...entry,
    address: entry.address.toLowerCase(),
  }));
  const amountSchema = amountSchemaFor(options.maxDecimals ?? 6);
  const payerSchema = addressSchema.superRefine((value, ctx) => {
    const hit = forbidden.find((entry) => entry.address === value.toLowerCase());
    if (hit) ctx.addIssue({ code: 'custom', message: `cannot be ${hit.why}` });
  });

  const draftBody = z
    .object({
      orderId: orderIdSchema,
      payer: payerSchema.describe('The payer who will sign.'),
      amount: amountSchema,
      validForSeconds: z.number().int().min(1).max(2_592_000).optional().describe('A shorter window than the default, in seconds.'),
      network: networkSchema.optional(),
      token: tokenSchema.optional(),
      hold: z
        .boolean()
        .optional()
        .describe("Hold the funds in the network's escrow once signed, to capture in parts (docs/holds.md). Absent: the deployment's default for the token."),
    })
    .strict();

  const domainSchema = z
    .object({
      name: z.string().min(1).max(100),
      version: z.string().min(1).max(20),
      chainId: z.union([z.number().int().positive(), z.string().regex(/^\d{1,20}$/)]),
      verifyingContract: addressSchema,
    })
    .strict();

  const presignedBody = z
    .object({
      orderId: orderIdSchema,
      primaryType: z.enum(['ReceiveWithAuthorization', 'TransferWithAuthorization']),
      authorization: z
        .object({
          from: payerSchema,
          to: addressSchema,
          value: uintSchema,
          validAfter: uintSchema,
          validBefore: uintSchema,
          nonce: bytes32Schema,
        })
        .strict(),
      signature: signatureSchema,
      domain: domainSchema.optional(),
      network: networkSchema.optional().describe('The network the payload was signed for (x402 names it); must agree with its domain when both are given.'),
      token: tokenSchema.optional(),
      hold: z
        .object({
          paymentInfo: z
            .object({
              operator: addressSchema,
              payer: addressSchema,
              receiver: addressSchema,
              token: addressSchema,
              maxAmount: uintSchema,
              preApprovalExpiry: uintSchema,
              authorizationExpiry: uintSchema,
              refundExpiry: uintSchema,
              minFeeBps: uintSchema,
              maxFeeBps: uintSchema,
              feeReceiver: addressSchema,
              salt: uintSchema,
            })
            .strict()
            .describe("The escrow's PaymentInfo the payer signed (numbers as decimal strings); the authorization's nonce is its hash."),
        })
        .strict()
        .optional()
        .describe("A pre-signed hold: the authorization is the escrow payment collector's ReceiveWithAuthorization of these terms (docs/holds.md)."),
    })
    .strict();

  return {
    draftBody,
    presignedBody,
    signatureBody: z.object({ signature: signatureSchema }).strict(),
    cancelBody: z.object({ signature: signatureSchema.describe("The payer's CancelAuthorization signature over cancellationTypedData.") }).strict(),
    voidBody: z
      .object({
        reason: z
          .string()
          .max(500)
          .refine((value) => value.trim().length > 0, 'is required')
          .describe('Why the authorization is voided.'),
        by: z
          .string()
          .max(100)
          .refine((value) => value.trim().length > 0, 'must not be blank')
          .optional()
          .describe('Who voids it.'),
      })
      .strict(),
    emptyBody: z.object({}).strict(),
    captureBody: z
      .object({
        amount: amountSchema
          .optional()
          .describe(
            'What to capture and keep, at most the authorized amount; the rest goes back to the payer as a refund (reason partial_capture). Absent: all of it. Of a hold: this part, at most `amountCapturable`.',
          ),
        final: z.boolean().optional().describe("A held payment's last capture: what is left goes back to the payer once it succeeded."),
      })
      .strict(),
    refundBody: z
      .object({
        amount: amountSchema.optional().describe('What to give back; absent: all that is left of the capture.'),
        reason: z
          .string()
          .max(500)
          .refine((value) => value.trim() !== 'partial_capture', 'partial_capture is kept for what a partial capture gives back')
          .optional()
          .describe("Why, for the merchant's records."),
      })
      .strict(),
    listQuery: z
      .object({
        orderId: orderIdSchema.optional(),
        state: z.enum(authorizationStates).optional(),
        payer: addressSchema.optional(),
        network: networkSchema.optional(),
        token: tokenSchema.optional(),
        limit: z
          .string()
          .regex(/^\d{1,3}$/, 'must be a whole number')
          .refine((v) => Number(v) >= 1 && Number(v) <= 100, 'must be from 1 to 100')
          .optional(),
        pageToken: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,4096}$/, 'is not one this API returned')
          .optional(),
      })
      .strict(),
    getQuery: z
      .object({
        wait: z
          .string()
          .regex(/^\d{1,2}$/, 'must be a whole number of seconds')
          .refine((v) => Number(v) <= 30, 'must be from 0 to 30')
          .optional()
          .describe('Seconds to wait for the state to change before answering (long poll); 0 or absent answers at once.'),
        state: z
          .enum(authorizationStates)
          .optional()
          .describe('The state the caller already has: the wait ends as soon as the state differs (default: the state when the request arrives).'),
      })
      .strict(),
    noQuery: z.object({}).strict(),
  };
}

export type Schemas = ReturnType<typeof createSchemas>;

/** Parses with a schema; the first problem becomes a validation_error naming the field. */
export function parseWith<T extends z.ZodType>(schema: T, input: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = [...issue.path, ...issue.keys.slice(0, 1)].join('.');
    throw new AuthcapError('validation_error', `${where} has an unknown field: ${field}`, { field });
  }
  const field = issue.path.join('.') || where;
  const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
  const message = missing ? 'is required' : issue.code === 'invalid_type' ? `must be a ${issue.expected}` : issue.message;
  throw new AuthcapError('validation_error', `${field} ${message.replace(/^Invalid input: /, '')}`, { field });
}

export { getAddress };
