// What an x402 resource server sends a facilitator (x402 v2 specification §7, and the v1 shapes its
// SDK still speaks), read with zod. The envelope is strict enough to answer 400 for what is not a
// facilitator request at all; the payment inside is read leniently here and judged by payment.ts,
// whose refusals are the specification's reason codes (an x402 server expects `isValid: false`, not
// an HTTP error, for a payment it must turn away).
import { z } from 'zod';

const requirementsFields = {
  scheme: z.string().max(100),
  network: z.string().max(100),
  asset: z.string().max(100),
  payTo: z.string().max(100),
  maxTimeoutSeconds: z.number().optional(),
  extra: z.record(z.string(), z.unknown()).nullish(),
};

/** v2: `amount`; v1: `maxAmountRequired`, and the resource's URL is in the requirements. */
export const requirementsSchema = z
  .object({
    ...requirementsFields,
    amount: z.string().max(100).optional(),
    maxAmountRequired: z.string().max(100).optional(),
    resource: z.string().max(2_000).optional(),
  })
  .passthrough();

export const paymentPayloadSchema = z
  .object({
    x402Version: z.number().int(),
    /** v2: what the client chose, and which resource it paid for. */
    accepted: requirementsSchema.optional(),
    resource: z
      .object({ url: z.string().max(2_000) })
      .passthrough()
      .optional(),
    /** v1: the scheme and network sit on the payload itself. */
    scheme: z.string().max(100).optional(),
    network: z.string().max(100).optional(),
    payload: z.record(z.string(), z.unknown()),
  })
  .passthrough();

export const facilitatorRequestSchema = z
  .object({
    x402Version: z.number().int().optional(),
    paymentPayload: paymentPayloadSchema,
    paymentRequirements: requirementsSchema,
  })
  .passthrough();

export type FacilitatorRequest = z.infer<typeof facilitatorRequestSchema>;
export type WireRequirements = z.infer<typeof requirementsSchema>;

/** The EIP-3009 payload of the `exact` scheme: the authorization, its signature. */
export const exactPayloadSchema = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/),
  authorization: z.object({
    from: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    to: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    value: z.string().regex(/^\d{1,78}$/),
    validAfter: z.string().regex(/^\d{1,78}$/),
    validBefore: z.string().regex(/^\d{1,78}$/),
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  }),
});

/** POST /verify's answer. */
export interface VerifyResponse {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: string;
}

/** POST /settle's answer: `transaction` and `network` are always there ("" when nothing was paid). */
export interface SettleResponse {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  payer?: string;
  transaction: string;
  network: string;
  amount?: string;
}

/** GET /supported's answer. */
export interface SupportedResponse {
  kinds: { x402Version: number; scheme: string; network: string; extra?: Record<string, unknown> }[];
  extensions: string[];
  signers: Record<string, string[]>;
}
