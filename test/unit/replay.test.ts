// Replays recorded histories (test/replay/histories, made by scripts/recordHistories.ts) against the
// current workflow code: a change that alters the command sequence of a workflow already running in
// production fails here (a non-determinism error) instead of breaking live authorizations. Such a
// change needs `patched()` or a new workflow type.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { telemetrySinks } from '../../worker/telemetry.js';
import proto from '@temporalio/proto';
import { EncryptionCodec, parseCodecKeys } from '../../runtime/codec.js';

const dir = fileURLToPath(new URL('../replay/histories', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.binpb')).sort();

describe('replay of recorded workflow histories', () => {
  it('has recorded histories of every path to replay', () => {
    const kinds = new Set(files.map((f) => f.replace(/-\d+\.binpb$/, '')));
    for (const kind of ['captured', 'canceled', 'voided', 'expired', 'rejected', 'continued']) expect(kinds).toContain(kind);
  });

  it('replays every recorded history without non-determinism', async () => {
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../../workflows/index.ts', import.meta.url)),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
    });
    const histories = files.map((file) => ({ workflowId: file, history: proto.temporal.api.history.v1.History.decode(readFileSync(join(dir, file))) }));
    const keys = readFileSync(join(dir, 'codec-keys.txt'), 'utf8').trim();
    const dataConverter = keys ? { payloadCodecs: [new EncryptionCodec(parseCodecKeys(keys))] } : undefined;
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle, dataConverter, sinks: telemetrySinks() }, histories)) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
