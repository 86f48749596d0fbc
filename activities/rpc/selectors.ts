// Input checks for the read methods, before any call: a bad address or block selector is the
// caller's mistake and gets a validation_error, never a round trip to the node.
import { isHex, type Address, type Hex } from 'viem';
import { AuthcapError } from '../../domain/errors.js';
import { parseAddress } from '../../domain/address.js';

export const blockTags = ['latest', 'pending', 'safe', 'finalized', 'earliest'] as const;
export type BlockTag = (typeof blockTags)[number];
/** A block tag, or a block number as hex (the JSON-RPC wire form). */
export type BlockSelector = BlockTag | Hex;

export function parseBlockSelector(input: unknown, field = 'block'): BlockSelector {
  if ((typeof input === 'bigint' && input >= 0n) || (typeof input === 'number' && Number.isSafeInteger(input) && input >= 0)) {
    return `0x${input.toString(16)}`;
  }
  if (typeof input === 'string') {
    if ((blockTags as readonly string[]).includes(input)) return input as BlockTag;
    if (/^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/.test(input)) return input.toLowerCase() as Hex;
  }
  throw new AuthcapError('validation_error', `${field} must be a hex block number (0x1b4) or one of ${blockTags.join(', ')}`);
}

/** Checked like every address authcap takes (a wrong EIP-55 checksum is refused), passed on as given. */
export function parseRpcAddress(input: unknown, field = 'address'): Address {
  parseAddress(input, field);
  return input as Address;
}

export function parseTopic(input: unknown, field: string): Hex {
  if (typeof input !== 'string' || !isHex(input, { strict: true }) || input.length !== 66) {
    throw new AuthcapError('validation_error', `${field} must be a 32-byte topic (0x + 64 hex digits)`);
  }
  return input.toLowerCase() as Hex;
}

export function isNumberSelector(selector: BlockSelector): selector is Hex {
  return selector.startsWith('0x');
}
