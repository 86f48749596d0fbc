// One memo write and one search-attribute upsert per activation at most. A workflow step often moves
// the machine more than once in one activation (a capture's request, its precheck's verdict, the
// event it records): each move rewrites the memo and the search attributes, and Temporal stores
// every one of those commands as a history event and a persistence write. Memo keys and search
// attributes are last-writer-wins, so the activation's writes are merged into its last one of each
// kind, with the same final values. Every workflow of the bundle gets it (the ones that write once
// per activation are left as they are).
import type { ConcludeActivationInput, ConcludeActivationOutput, Next, WorkflowInternalsInterceptor } from '@temporalio/workflow';

type Command = ConcludeActivationInput['commands'][number];
type Fields = Record<string, unknown>;

function merge(commands: Command[], pick: (c: Command) => Fields | null | undefined, rebuild: (fields: Fields) => Command): Command[] {
  const positions = commands.flatMap((c, i) => (pick(c) ? [i] : []));
  if (positions.length < 2) return commands;
  const fields: Fields = {};
  for (const i of positions) Object.assign(fields, pick(commands[i]!));
  const last = positions[positions.length - 1]!;
  return commands.flatMap((c, i) => (i === last ? [rebuild(fields)] : positions.includes(i) ? [] : [c]));
}

class CoalescedWrites implements WorkflowInternalsInterceptor {
  concludeActivation(input: ConcludeActivationInput, next: Next<WorkflowInternalsInterceptor, 'concludeActivation'>): ConcludeActivationOutput {
    const output = next(input);
    let commands = merge(
      output.commands,
      (c) => c.modifyWorkflowProperties?.upsertedMemo?.fields as Fields | undefined,
      (fields) => ({ modifyWorkflowProperties: { upsertedMemo: { fields } } }) as Command,
    );
    commands = merge(
      commands,
      (c) => c.upsertWorkflowSearchAttributes?.searchAttributes?.indexedFields as Fields | undefined,
      (fields) => ({ upsertWorkflowSearchAttributes: { searchAttributes: { indexedFields: fields } } }) as Command,
    );
    return { ...output, commands };
  }
}

export const coalescedWritesInterceptor = (): WorkflowInternalsInterceptor => new CoalescedWrites();
