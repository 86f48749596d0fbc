// What the payload codec hands on when a payload is not sealed by a key authcap holds. AES-GCM
// authenticates a sealed payload, so a plain one (a Temporal client without the codec key, the
// UI's JSON) or one whose seal does not open can only come from outside: it is never acted on. The
// codec cannot refuse it itself (a payload that fails to decode fails the whole workflow task, for
// ever, which would let anyone stall any workflow with one signal), so it decodes it to this marker
// and the workflow and activity interceptors refuse it where the input arrives.
//
// Operators seal through the codec server (the Temporal UI's "send signal", the `temporal` CLI),
// which marks what it seals as theirs: such a payload reaches only what an operator may do (void).

export const SEAL_MARKER = '$authcapSeal';

export type UnsealedReason = 'plain' | 'unknown_key' | 'tampered' | 'malformed' | 'misplaced' | 'unplaced';

export interface UnsealedInput {
  [SEAL_MARKER]: 'unsealed';
  reason: UnsealedReason;
}

export interface OperatorSealedInput {
  [SEAL_MARKER]: 'operator';
  value: unknown;
}

function marked(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const mark = (value as Record<string, unknown>)[SEAL_MARKER];
  return typeof mark === 'string' ? mark : undefined;
}

export function isUnsealed(value: unknown): value is UnsealedInput {
  return marked(value) === 'unsealed';
}

export function isOperatorSealed(value: unknown): value is OperatorSealedInput {
  return marked(value) === 'operator';
}

export const unsealedInput = (reason: UnsealedReason): UnsealedInput => ({ [SEAL_MARKER]: 'unsealed', reason });

const explanations: Record<UnsealedReason, string> = {
  plain: 'a plain payload, not sealed by the payload codec',
  unknown_key: 'a payload sealed with a key this process does not hold',
  tampered: 'a payload whose seal does not open (altered, or sealed with another key under the same id)',
  malformed: 'a malformed sealed payload',
  misplaced: 'a payload sealed for another place (copied from another workflow, message or activity)',
  unplaced: 'a payload sealed for no workflow or activity',
};

export function describeUnsealed(value: UnsealedInput): string {
  return explanations[value.reason] ?? 'an unauthenticated payload';
}

/** A memo read by a client: entries nobody sealed (a forged workflow's memo) are left out. */
export function sealedEntries<T extends Record<string, unknown> | undefined>(memo: T): T {
  if (!memo) return memo;
  let forged = false;
  const foreign = (value: unknown) => isUnsealed(value) || isOperatorSealed(value);
  for (const value of Object.values(memo)) if (foreign(value)) forged = true;
  if (!forged) return memo;
  return Object.fromEntries(Object.entries(memo).filter(([, value]) => !foreign(value))) as T;
}
