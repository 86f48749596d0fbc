// Child processes for the dev stack and the test suite: start, wait until ready, stop cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { childEnv } from './childEnv.js';
import { claimPort } from './portClaims.js';

export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves once the process has exited (after stop() or on its own). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs` (default 5 s) if it has not exited. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines it printed, for error messages. */
  tail(): string;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  /**
   * The child's own variables. It sees nothing else of this process's environment but BASE_ENV
   * (devstack/childEnv.ts) and the names in `inherit`: no key it does not use.
   */
  env?: Record<string, string | undefined>;
  /** Variables of this process's environment the child reads (variablesReadBy('worker'), say). */
  inherit?: readonly string[];
  cwd?: string;
  /** Ready when this resolves; the process is killed if it rejects or times out. */
  ready: (proc: ManagedProcess) => Promise<void>;
  readyTimeoutMs?: number;
  /** Mirror output to this stream (the dev stack shows nothing by default; logs go to files). */
  onOutput?: (chunk: string) => void;
}

export async function startProcess(options: StartOptions): Promise<ManagedProcess> {
  const child = spawn(options.command, options.args, {
    env: childEnv(options.env, options.inherit),
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    try {
      options.onOutput?.(text);
    } catch (err) {
      lines.push(`(${options.name}: mirroring output failed: ${(err as Error).message})`);
    }
    lines.push(...text.split('\n'));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  // A supervisor must outlive its children's troubles: a broken pipe (EPIPE, ECONNRESET) on their
  // stdio or an 'error' from the child (a failed kill) is noted, never thrown.
  const noted = (what: string) => (err: Error) => lines.push(`(${options.name}: ${what}: ${err.message})`);
  child.stdout?.on('data', collect).on('error', noted('stdout'));
  child.stderr?.on('data', collect).on('error', noted('stderr'));
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.on('error', (err) => {
      lines.push(String(err));
      // Spawning failed: there is no process, and no 'exit' will come.
      if (child.pid === undefined) resolve(null);
    });
  });
  let stopping: Promise<void> | undefined;
  const proc: ManagedProcess = {
    name: options.name,
    child,
    exited,
    tail: () => lines.slice(-30).join('\n'),
    stop(graceMs = 5_000) {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
  const timeoutMs = options.readyTimeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      options.ready(proc),
      exited.then((code) => {
        throw new Error(`${options.name} exited (code ${code}) before it was ready:\n${proc.tail()}`);
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${options.name} was not ready after ${timeoutMs} ms:\n${proc.tail()}`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    await proc.stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return proc;
}

/** Polls `check` until it returns true. */
export async function waitFor(check: () => Promise<boolean>, intervalMs = 100): Promise<void> {
  for (;;) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A port that was free a moment ago on 127.0.0.1, claimed against our other processes. Chosen below
 * the OS's ephemeral range: a port the OS picked for us could be handed to one of the many outgoing
 * connections of the moment before the child process binds it (a bench run lost Temporal's HTTP port
 * that way); ports below the range are only ever taken by a listener that asks for them.
 */
export function freePort(): Promise<number> {
  return freeLowPort();
}

/** A free port below the OS's ephemeral range (32768 and up on Linux; Temporal also stores membership ports as a SQL smallint). */
export async function freeLowPort(min = 20_000, max = 32_000): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = min + Math.floor(Math.random() * (max - min));
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.unref();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free && claimPort(port)) return port;
  }
  throw new Error(`no free port between ${min} and ${max}`);
}
