// What keeps `npm start` a supervisor: it owns Temporal, anvil, the worker and the API (children)
// and the codec server (in-process). If it died on a stray error, those would run on unsupervised,
// holding ports, and Ctrl-C would stop nothing. So: an error anywhere is logged and supervising goes
// on; a child that dies takes the stack down cleanly (the rest stopped, then exit 1); a signal stops
// everything (exit 0).
import type { ManagedProcess } from './process.js';

export interface SupervisorOptions {
  stop: () => Promise<void>;
  log?: (line: string) => void;
  exit?: (code: number) => void;
  /** Give up on a clean stop after this long and exit anyway (default 30 s). */
  stopTimeoutMs?: number;
}

export interface Supervisor {
  /** Watches a child: if it exits on its own, the whole stack stops. */
  watch(proc: ManagedProcess): void;
  /** Stops the stack once (later calls get the same promise), then exits with `code`. */
  shutdown(code: number, why: string): Promise<void>;
  readonly stopping: boolean;
}

/** Logs to stderr and never throws: the terminal may be gone (EPIPE) and supervising must go on. */
export function safeLog(line: string): void {
  try {
    process.stderr.write(`${line}\n`);
  } catch {
    // nowhere left to say it
  }
}

let netInstalled = false;

/**
 * Keeps this process alive through anything thrown where nobody catches it (a server's stray error,
 * a rejected promise, a write to a closed terminal): log it, go on supervising. Install it before
 * starting anything.
 */
export function installSafetyNet(log: (line: string) => void = safeLog): void {
  if (netInstalled) return;
  netInstalled = true;
  const quiet = () => undefined;
  process.stdout.on('error', quiet);
  process.stderr.on('error', quiet);
  process.on('uncaughtException', (err) => log(`authcap: unexpected error, still supervising: ${err?.stack ?? String(err)}`));
  process.on('unhandledRejection', (reason) => log(`authcap: unhandled rejection, still supervising: ${(reason as Error)?.stack ?? String(reason)}`));
}

export function supervise(options: SupervisorOptions): Supervisor {
  const log = options.log ?? safeLog;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let shuttingDown: Promise<void> | undefined;
  const shutdown = (code: number, why: string) => {
    shuttingDown ??= (async () => {
      log(`authcap: ${why}; stopping…`);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), options.stopTimeoutMs ?? 30_000);
      });
      const outcome = await Promise.race([
        options.stop().then(
          () => 'stopped' as const,
          (err: Error) => {
            log(`authcap: while stopping: ${err.message}`);
            return 'stopped' as const;
          },
        ),
        timedOut,
      ]);
      clearTimeout(timer);
      log(outcome === 'timeout' ? 'authcap: could not stop everything in time; exiting anyway.' : 'authcap: stopped.');
      exit(code);
    })();
    return shuttingDown;
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (shuttingDown) log('authcap: still stopping…');
      void shutdown(0, `${signal} received`);
    });
  }
  return {
    watch(proc) {
      void proc.exited.then(async (code) => {
        // Ctrl-C reaches the whole process group: the children may exit before our own SIGINT
        // handler has run. Give it a moment, so that this reads as a stop, not as a crash.
        await new Promise((r) => setTimeout(r, 250));
        if (shuttingDown) return;
        const tail = proc.tail().split('\n').slice(-10).join('\n');
        void shutdown(1, `${proc.name} (pid ${proc.child.pid ?? '?'}) exited on its own (code ${code})${tail ? `; its last lines:\n${tail}\n` : ''}`);
      });
    },
    shutdown,
    get stopping() {
      return shuttingDown !== undefined;
    },
  };
}
