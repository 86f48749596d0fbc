// Child processes for the dev stack and the test suite: start, wait until ready, stop cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves once the process has exited (after stop() or on its own). */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
  /** The last lines it printed, for error messages. */
  tail(): string;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Ready when this resolves; the process is killed if it rejects or times out. */
  ready: (proc: ManagedProcess) => Promise<void>;
  readyTimeoutMs?: number;
  /** Mirror output to this stream (the dev stack shows nothing by default; logs go to files). */
  onOutput?: (chunk: string) => void;
}

export async function startProcess(options: StartOptions): Promise<ManagedProcess> {
  const child = spawn(options.command, options.args, {
    env: { ...process.env, ...options.env },
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    options.onOutput?.(text);
    lines.push(...text.split('\n'));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (err) => {
      lines.push(String(err));
      resolve(null);
    });
  });
  let stopping: Promise<void> | undefined;
  const proc: ManagedProcess = {
    name: options.name,
    child,
    exited,
    tail: () => lines.slice(-30).join('\n'),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
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
        timer = setTimeout(
          () => reject(new Error(`${options.name} was not ready after ${timeoutMs} ms:\n${proc.tail()}`)),
          timeoutMs,
        );
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

/** A port that was free a moment ago on 127.0.0.1 (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
