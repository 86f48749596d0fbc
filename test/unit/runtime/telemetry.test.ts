// Logs never carry a secret; tracing is off unless an OTLP endpoint is configured.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, temporalLogger } from '../../../runtime/logger.js';
import { tracingPluginFromEnv } from '../../../runtime/tracing.js';

describe('structured logs', () => {
  it('are JSON lines with the context given, and redact signatures, keys and raw transactions', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger('test', 'info', sink);
    logger.info(
      { workflowId: 'authorization-o1', orderId: 'o1', signature: '0xabc', apiKey: 'ak_x', request: { raw: '0xf86c', signature: '0xdef', token: 't' } },
      'capture sent',
    );
    temporalLogger(logger).warn('from the SDK', { workflowId: 'w2', privateKey: '0x11' });
    const [first, second] = lines.map((l) => JSON.parse(l));
    expect(first).toMatchObject({ msg: 'capture sent', workflowId: 'authorization-o1', orderId: 'o1', signature: '[redacted]', apiKey: '[redacted]' });
    expect(first.request).toEqual({ raw: '[redacted]', signature: '[redacted]', token: '[redacted]' });
    expect(second).toMatchObject({ msg: 'from the SDK', workflowId: 'w2', privateKey: '[redacted]', level: 40 });
    expect(lines.join('')).not.toMatch(/0xabc|0xdef|0xf86c|ak_x|0x11/);
  });
});

describe('tracing', () => {
  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT and a Temporal plugin with it', () => {
    expect(tracingPluginFromEnv('authcap-test', {})).toBeUndefined();
    const plugin = tracingPluginFromEnv('authcap-test', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    expect(plugin?.constructor.name).toBe('OpenTelemetryPlugin');
  });
});
