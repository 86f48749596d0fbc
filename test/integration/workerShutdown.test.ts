// A worker process stopped by SIGTERM (Ctrl-C, a deploy, npm start's supervisor) drains and exits 0:
// the signal and the end of run() both shut it down, and the second must not close a closed client.
import { describe, expect, it } from 'vitest';
import { dev } from '../support/api.js';
import { startWorkerProcess } from '../support/workerProcess.js';

describe('a worker process told to stop', () => {
  it('exits 0 on SIGTERM, with no error after its shutdown', async () => {
    const worker = await startWorkerProcess(dev());
    await worker.stop();
    const code = await worker.exited;
    expect(worker.tail()).not.toMatch(/already closed|IllegalStateError|Unhandled/i);
    expect(code).toBe(0);
  }, 120_000);
});
