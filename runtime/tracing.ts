// OpenTelemetry tracing through @temporalio/interceptors-opentelemetry: off by default, on when the
// standard OTEL_EXPORTER_OTLP_ENDPOINT names a collector. One plugin wires the client, activity and
// workflow interceptors (workflow spans leave through a sink, as workflow code cannot do I/O).
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { readVariable } from './settings/read.js';

let provider: NodeTracerProvider | undefined;

/** The tracing plugin for a worker or a client, or undefined when no OTLP endpoint is configured. */
export function tracingPluginFromEnv(serviceName: string, env: NodeJS.ProcessEnv = process.env): OpenTelemetryPlugin | undefined {
  if (!readVariable('OTEL_EXPORTER_OTLP_ENDPOINT', env)) return undefined;
  const resource = new Resource({ 'service.name': readVariable('OTEL_SERVICE_NAME', env) ?? serviceName });
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter());
  if (!provider) {
    // Client-side spans use the global tracer provider.
    provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] } as never);
    provider.register();
  }
  return new OpenTelemetryPlugin({ resource, spanProcessor });
}

export async function shutdownTracing(): Promise<void> {
  await provider?.shutdown();
}
