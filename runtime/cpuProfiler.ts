// CPU profiles on demand, for finding where a payment's CPU goes under real load (npm run bench --
// --profile). With AUTHCAP_CPU_PROFILE_DIR set, SIGUSR2 starts V8's sampling profiler and the next
// SIGUSR2 writes `<name>-<pid>-<n>.cpuprofile` there (open it in Chrome DevTools or speedscope).
// Off unless that variable is set: no handler, no cost.
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `dir`: the process's AUTHCAP_CPU_PROFILE_DIR, read by its entry (unset: off). */
export function cpuProfileOnSignal(name: string, dir: string | undefined): void {
  if (!dir) return;
  let session: Session | undefined;
  let written = 0;
  let busy = Promise.resolve();
  const toggle = async () => {
    if (!session) {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      // 2 ms between samples (V8's default is 1 ms): enough to rank places, less overhead under load.
      await session.post('Profiler.setSamplingInterval', { interval: 2_000 });
      await session.post('Profiler.start');
      return;
    }
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    session = undefined;
    written += 1;
    writeFileSync(join(dir, `${name}-${process.pid}-${written}.cpuprofile`), JSON.stringify(profile));
  };
  // Signals may arrive back to back: each toggle runs after the previous one finished.
  process.on('SIGUSR2', () => {
    busy = busy.then(toggle).catch((err: unknown) => console.error(`cpu profile: ${(err as Error).message}`));
  });
}
