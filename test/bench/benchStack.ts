// The stack every bench runs: what `npm start` brings up (the build when fresh, the dev server's
// SQLite file, anvil at 0.2 s blocks, worker and API as their own processes), on free ports, quiet.
import { freePort } from '../../devstack/process.js';
import { startStack, type Stack, type StackOptions } from '../../devstack/stack.js';

/** The processes a bench measures, by role: every worker, every API, Temporal (with its PostgreSQL on that topology), anvil. */
export function stackPids(stack: Stack): Record<'worker' | 'api' | 'temporal' | 'anvil', number[]> {
  const pids = (procs: ({ child: { pid?: number } } | undefined)[]) => procs.map((p) => p?.child.pid).filter((pid): pid is number => pid !== undefined);
  const { workers, apis, worker, api, temporal, anvil } = stack.processes;
  return {
    worker: pids(workers ?? [worker]),
    api: pids(apis ?? [api]),
    temporal: pids([temporal, stack.temporalCluster?.postgres.process]),
    anvil: pids([anvil]),
  };
}

export async function startBenchStack(stateDir: string, extra: Partial<StackOptions> = {}): Promise<Stack> {
  return startStack({
    stateDir,
    apiPort: await freePort(),
    rpcPort: await freePort(),
    temporalPort: await freePort(),
    temporalUiPort: await freePort(),
    persistent: true,
    headless: true,
    blockTimeSeconds: 0.2,
    separateProcesses: true,
    log: () => undefined,
    // The production shape runs two APIs or more: each on a free port of its own, not apiPort + 1.
    moreApiPorts: [await freePort(), await freePort(), await freePort()],
    ...extra,
  });
}
