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

/** The variables tracing is made of (a worker's settings have them; the exporter reads the rest of OTEL_* itself). */
export interface TracingSettings {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_SERVICE_NAME?: string;
}

/** The tracing plugin for a worker or a client from the settings its process read, or undefined when no OTLP endpoint is configured. */
export function tracingPluginOf(serviceName: string, settings: TracingSettings): OpenTelemetryPlugin | undefined {
  if (!settings.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  const resource = new Resource({ 'service.name': settings.OTEL_SERVICE_NAME ?? serviceName });
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter());
  if (!provider) {
    // Client-side spans use the global tracer provider.
    provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] } as never);
    provider.register();
  }
  return new OpenTelemetryPlugin({ resource, spanProcessor });
}

/** tracingPluginOf from `env` through the catalog's rules (the client library, which reads no settings of its own). */
export function tracingPluginFromEnv(serviceName: string, env: NodeJS.ProcessEnv = process.env): OpenTelemetryPlugin | undefined {
  return tracingPluginOf(serviceName, {
    OTEL_EXPORTER_OTLP_ENDPOINT: readVariable('OTEL_EXPORTER_OTLP_ENDPOINT', env),
    OTEL_SERVICE_NAME: readVariable('OTEL_SERVICE_NAME', env),
  });
}

export async function shutdownTracing(): Promise<void> {
  await provider?.shutdown();
}
