// The probe's finding against `npm start` itself (devstack/main.ts as its own process, on free
// ports): a codec request cut off mid-body used to kill the supervisor and orphan Temporal, anvil,
// the worker and the API. Now the supervisor stays up and keeps decoding; and when one of its
// children dies, it stops all the others and exits 1: nothing is left running.
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../devstack/process.js';
import type { DevJson } from '../../devstack/stack.js';
import { startNpmStart } from '../support/npmStart.js';
import { scratchDirs } from '../support/scratch.js';

const scratch = scratchDirs('npmstart');

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Running, not a zombie. */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] !== 'Z';
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.split(') ')[1]!.split(' ')[1]) === pid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe.runIf(process.platform === 'linux')('npm start under a hostile codec client', () => {
  let main: ChildProcess;
  let output: () => string = () => '';
  let exited: Promise<number | null>;
  let stateDir: string;
  let dev: DevJson;
  let children: number[] = [];

  beforeAll(async () => {
    stateDir = join(scratch(), 'state');
    const started = await startNpmStart(stateDir, {
      AUTHCAP_API_PORT: String(await freePort()),
      AUTHCAP_RPC_PORT: String(await freePort()),
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
    });
    ({ main, exited, dev } = started);
    output = started.output;
    children = childrenOf(main.pid!);
  }, 240_000);

  afterAll(async () => {
    for (const pid of [...children, main?.pid ?? 0]) if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
  });

  const decodeNothing = () => fetch(`${dev.codecUrl}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

  it('supervises Temporal, anvil, the worker and the API', () => {
    expect(children.length, output()).toBeGreaterThanOrEqual(4);
    for (const pid of children) expect(alive(pid)).toBe(true);
  });

  it('survives a codec request cut off mid-body (Content-Length 1000, 6 bytes, reset) and keeps decoding', async () => {
    const { hostname, port, pathname } = new URL(dev.codecUrl);
    for (let i = 0; i < 3; i++) {
      const socket = connect(Number(port), hostname);
      socket.on('error', () => undefined);
      await new Promise((r) => socket.once('connect', r));
      socket.write(`POST ${pathname}/decode HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"pay`);
      await sleep(50);
      socket.resetAndDestroy();
    }
    await sleep(500);
    expect(main.exitCode, output()).toBeNull();
    const res = await decodeNothing();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ payloads: [] });
    for (const pid of children) expect(alive(pid)).toBe(true);
  });

  it('when the API process dies, stops everything else and exits 1: no orphans', async () => {
    const apiPid = Number(/API pids? (\d+)/.exec(output())?.[1]);
    expect(children).toContain(apiPid);
    process.kill(apiPid, 'SIGKILL');
    const code = await Promise.race([exited, sleep(60_000).then(() => 'still running')]);
    expect(code, output()).toBe(1);
    expect(output()).toMatch(/api \(pid \d+\) exited on its own/);
    for (const pid of children) expect(alive(pid), `child ${pid} left running`).toBe(false);
    await expect(decodeNothing()).rejects.toThrow();
  }, 90_000);
});
