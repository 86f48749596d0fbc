// What a token can do beyond the EIP-3009 calls every FiatToken version has. FiatToken v2.2 added the
// `bytes signature` overloads together with ERC-1271 checks behind every overload; v2.1 has neither,
// so it refuses any contract wallet's authorization onchain, at capture. Read once per token at start
// (runtime/deployment/resolve.ts) and by the worker when a payer signs (activities/tokenFeatures.ts).
import { BaseError, encodeFunctionData, zeroAddress, zeroHash, type Address, type PublicClient } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { isRevert } from './revert.js';

/**
 * Calls `cancelAuthorization(address, bytes32, bytes)` with an empty signature (eth_call: nothing is
 * sent). A token that has the overload refuses it with a reason ("invalid signature", "invalid
 * signature length", "paused"); one without it, and without a fallback (FiatToken has none, and its
 * proxy passes the implementation's answer on), reverts with no data at all.
 */
export async function hasBytesOverloads(client: Pick<PublicClient, 'call'>, token: Address): Promise<boolean> {
  const data = encodeFunctionData({ abi: tokenAbi, functionName: 'cancelAuthorization', args: [zeroAddress, zeroHash, '0x'] });
  try {
    await client.call({ to: token, data });
    return true;
  } catch (err) {
    if (!isRevert(err)) throw err;
    return revertData(err) !== undefined;
  }
}

/** The revert's return data, when it carried any (a reason string or a custom error). */
function revertData(err: unknown): string | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const withData = err.walk((e) => typeof (e as { data?: unknown }).data === 'string') as { data?: string } | null;
  const data = withData?.data;
  return data && data !== '0x' ? data : undefined;
}
