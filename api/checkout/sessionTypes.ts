// What the checkout pages read about one authorization: a narrow view of the resource for the payer,
// shared by the API (which builds it) and the browser code (which shows it). Type-only, no imports,
// so the page bundle pulls nothing from the server side. Never carries the signature or an API key.

/** An eth_signTypedData_v4 payload, exactly as the wallet signs it. */
export interface TypedDataJson {
  types: Record<string, readonly { name: string; type: string }[]>;
  primaryType: string;
  domain: { name: string; version: string; chainId: number; verifyingContract: string };
  message: Record<string, unknown>;
}

export interface CheckoutNetwork {
  /** CAIP-2, e.g. "eip155:8453". */
  id: string;
  chainId: number;
  name: string;
  rpcUrls: string[];
}

export interface CheckoutSession {
  id: string;
  orderId: string;
  /**
   * The lifecycle state (drafting, drafted, stored, capturing, canceling, captured, canceled, voided,
   * expired, rejected; and of a hold, holding and held).
   */
  state: string;
  payer: string | null;
  merchant: { address: string | null; name: string };
  /**
   * The network the authorization is on, as a wallet is told of it: `rpcUrls` are the deployment's
   * public ones (never a provider's keyed URL; [] when none are configured). Null only when nothing
   * names the network yet (a draft being built without a deployment configuration).
   */
  network: CheckoutNetwork | null;
  /** `chainId`: the signed domain's chain (null before the typed data exists). */
  token: { address: string | null; symbol: string; decimals: number; chainId: number | null };
  /** The amount in the token's smallest unit (decimal string); the page formats it with `token.decimals`. */
  amountMinor: string | null;
  /** Unix seconds (decimal strings), as signed. */
  validAfter: string | null;
  validBefore: string | null;
  /** The API's clock (unix seconds), so the page judges expiry without trusting the device's clock. */
  now: number;
  /** What the wallet signs to authorize: only while drafted. */
  typedData: TypedDataJson | null;
  /** What the wallet signs to cancel: only while stored. */
  cancellationTypedData: TypedDataJson | null;
  /** `keptMinor`: what the merchant kept; less than `amountMinor` after a partial capture, whose rest went back. */
  capture: { transactionHash: string; confirmedAt: string | null; keptMinor: string | null } | null;
  cancellation: { transactionHash: string | null; at: string } | null;
  /** The escrow hold, when signing moves the funds into escrow for the merchant to capture in parts; null otherwise. */
  hold: CheckoutHold | null;
  /** When the authorization last changed state (ISO-8601). */
  updatedAt: string | null;
  lastError: { code: string; message: string } | null;
}

/**
 * A held payment as the payer sees it: what the escrow holds for the merchant, until when, what the
 * merchant has captured and what came back. Amounts in the token's smallest unit, like `amountMinor`.
 */
export interface CheckoutHold {
  /** What the escrow holds (or held, once the hold is over); "0" until the hold is placed. */
  amountHeldMinor: string;
  /** What the merchant has captured of it so far (the parts that succeeded). */
  capturedMinor: string;
  /** Unix seconds (decimal string): the escrow takes no capture after it; what is left comes back before. */
  captureBefore: string;
  /** What went back to the payer once the hold ended; null until then. */
  release: { kind: 'void' | 'reclaim'; amountMinor: string; transactionHash: string | null; at: string } | null;
  /** The escrow's payment collector: the address the payer's wallet shows as the recipient of what it signs. */
  collector: string | null;
}
