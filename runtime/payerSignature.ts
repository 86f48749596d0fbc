// Whether the chain accepts a signature as the payer's, telling "no" apart from "could not ask".
// viem's verifyTypedData answers false when the node cannot be reached (its ERC-6492 path turns a
// failed call into a failed verification), so a node outage would read as an invalid signature: a
// payer's genuine contract-wallet signature refused, and a failed attempt counted against them.
// Here a transport failure throws, and only the chain's own answer is a verdict:
// - an account with no code (an EOA) signs by ecrecover: its signature was already judged locally,
//   so nothing but an ERC-6492 wrapper (a wallet not deployed yet) is worth asking the chain about;
// - a deployed contract wallet is asked `isValidSignature` (ERC-1271): the magic value, or not.
import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  hashTypedData,
  isErc6492Signature,
  type Address,
  type Hex,
  type PublicClient,
  type TypedDataDefinition,
} from 'viem';

const erc1271Abi = [
  {
    type: 'function',
    name: 'isValidSignature',
    stateMutability: 'view',
    inputs: [
      { name: 'hash', type: 'bytes32' },
      { name: 'signature', type: 'bytes' },
    ],
    outputs: [{ name: 'magicValue', type: 'bytes4' }],
  },
] as const;
const ERC1271_MAGIC = '0x1626ba7e';

/** Thrown when the node could not be asked: not a verdict on the signature. */
export class ChainUnreachableError extends Error {
  override readonly name = 'ChainUnreachableError';
}

/**
 * True when the chain accepts `signature` as `address`'s over the typed data: a contract wallet's
 * ERC-1271 answer, or an ERC-6492 counterfactual wallet's. Call it for what is not the account's own
 * ECDSA signature (check that locally first). Throws ChainUnreachableError when the node cannot say.
 */
export async function chainAcceptsSignature(client: PublicClient, address: Address, typedData: TypedDataDefinition, signature: Hex): Promise<boolean> {
  const code = await client.getCode({ address }).catch((err: unknown) => {
    throw new ChainUnreachableError(`could not read ${address}'s code: ${(err as Error).message.split('\n')[0]}`);
  });
  const deployed = code !== undefined && code !== '0x';
  if (!deployed) {
    // An EOA: ecrecover is the only judge, and the local check said no. A wallet still to be
    // deployed says who it will be in an ERC-6492 wrapper, which only the chain can unwrap.
    if (!isErc6492Signature(signature)) return false;
    return client.verifyTypedData({ address, signature, ...typedData } as Parameters<PublicClient['verifyTypedData']>[0]);
  }
  try {
    const magic = await client.readContract({ address, abi: erc1271Abi, functionName: 'isValidSignature', args: [hashTypedData(typedData), signature] });
    return magic.toLowerCase() === ERC1271_MAGIC;
  } catch (err) {
    // The wallet reverted (or has no such function): its answer is no. Anything else is the node.
    if (isRevert(err)) return false;
    throw new ChainUnreachableError(`could not ask ${address} about the signature: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** The wallet's own refusal (a revert, or no such function), told from the node failing by class. */
function isRevert(err: unknown): boolean {
  return err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError) !== null;
}
