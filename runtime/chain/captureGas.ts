// What sending one capture costs in gas, as every part that prices it counts it: the gas limit a
// receive/transferWithAuthorization is sent with, and the price a sender offers (twice the pending
// block's base fee plus a tip, as wallets do). The capture precheck asks a merchant key to hold that
// much, the refund precheck the same, and `authcap doctor` warns by it.

/** Generous gas for one receive/transferWithAuthorization (a fresh nonce slot and two balances). */
export const CAPTURE_GAS_LIMIT = 150_000n;
/** The tip offered on top of twice the base fee (2 gwei). */
export const PRIORITY_FEE_ALLOWANCE = 2_000_000_000n;

/** The most one such transaction may cost at a block's base fee (none: a chain without EIP-1559). */
export function captureGasCost(baseFeePerGas: bigint | null | undefined): bigint {
  return CAPTURE_GAS_LIMIT * ((baseFeePerGas ?? 0n) * 2n + PRIORITY_FEE_ALLOWANCE);
}
