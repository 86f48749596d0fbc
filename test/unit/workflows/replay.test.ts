// Replays recorded histories (test/replay/histories, made by scripts/recordHistories.ts) against the
// current workflow code: a change that alters the command sequence of a workflow already running in
// production fails here (a non-determinism error) instead of breaking live authorizations. Such a
// change goes behind `patched()`, then `deprecatePatch()`, and is removed once no run needs it
// (docs/contributing.md): every set kept here is a run someone may still have.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundleAuthcapWorkflows } from '../../../worker/workflowBundle.js';
import { Worker } from '@temporalio/worker';
import { telemetrySinks } from '../../../worker/telemetry.js';
import proto from '@temporalio/proto';
import { EncryptionCodec, parseCodecKeys } from '../../../runtime/codec.js';

const root = fileURLToPath(new URL('../../replay/histories', import.meta.url));
// One folder per recording (scripts/recordHistories.ts), each with the throwaway key that sealed it
// and each history's workflow id. No folder at all fails the test below: there is nothing to prove.
const sets = (existsSync(root) ? readdirSync(root, { withFileTypes: true }) : [])
  .filter((d) => d.isDirectory())
  .map((d) => join(root, d.name))
  .sort();
const files = sets.flatMap((dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.binpb'))
    .sort()
    .map((f) => ({ dir, file: f })),
);

describe('replay of recorded workflow histories', () => {
  it('has recorded histories of every path to replay', () => {
    const kinds = new Set(files.map(({ file }) => file.replace(/-\d+\.binpb$/, '')));
    for (const kind of ['captured', 'canceled', 'voided', 'expired', 'rejected', 'continued', 'refunds', 'partial-captured', 'held-captured', 'held-voided'])
      expect(kinds).toContain(kind);
  });

  it('replays every recorded history without non-determinism', async () => {
    const workflowBundle = await bundleAuthcapWorkflows({
      workflowsPath: fileURLToPath(new URL('../../../workflows/index.ts', import.meta.url)),
      workflowInterceptorModules: [fileURLToPath(new URL('../../../workflows/interceptors.ts', import.meta.url))],
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
    });
    const failures: string[] = [];
    for (const dir of sets) {
      // Payloads are sealed for their workflow: each history replays under the id it was recorded with.
      const ids: Record<string, string> = JSON.parse(readFileSync(join(dir, 'workflow-ids.json'), 'utf8'));
      const histories = files
        .filter((f) => f.dir === dir)
        .map(({ file }) => ({
          workflowId: ids[file] ?? `${dir.split('/').pop()}/${file}`,
          history: proto.temporal.api.history.v1.History.decode(readFileSync(join(dir, file))),
        }));
      const keys = readFileSync(join(dir, 'codec-keys.txt'), 'utf8').trim();
      const dataConverter = keys ? { payloadCodecs: [new EncryptionCodec(parseCodecKeys(keys))] } : undefined;
      for await (const result of Worker.runReplayHistories({ workflowBundle, dataConverter, sinks: telemetrySinks() }, histories)) {
        if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
      }
    }
    expect(files.length).toBeGreaterThan(0);
    expect(failures).toEqual([]);
  }, 120_000);
});
