// Read by libraries (@temporalio/envconfig, the OTLP exporter): listed with a light rule of ours.
import { text, url } from '../rules.js';
import { variable, CLIENTS, TEMPORAL_CLIENTS, ENVCONFIG } from '../variable.js';

export const librariesVariables = {
  // ── Read by libraries ───────────────────────────────────────────────────────────────────────────────
  TEMPORAL_ADDRESS: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    defaultText: "127.0.0.1:7233 (the CLI beside `npm start`: the stack's, from its dev.json)",
    description: "Temporal's frontend (host:port); on `npm start`, an external cluster instead of the embedded one.",
  }),
  TEMPORAL_NAMESPACE: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    defaultText: 'default',
    description: 'The Temporal namespace.',
  }),
  TEMPORAL_API_KEY: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    secret: true,
    description: 'An API key for Temporal Cloud.',
  }),
  TEMPORAL_CONFIG_FILE: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: 'A temporal.toml with connection profiles (the dev stack writes one for mutual TLS).',
  }),
  TEMPORAL_PROFILE: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    defaultText: 'default',
    description: 'The profile of TEMPORAL_CONFIG_FILE to use.',
  }),
  TEMPORAL_TLS: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: '"true" connects with TLS.',
  }),
  TEMPORAL_TLS_CLIENT_CERT_PATH: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: 'Client certificate for mutual TLS (or TEMPORAL_TLS_CLIENT_CERT_DATA).',
  }),
  TEMPORAL_TLS_CLIENT_CERT_DATA: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: 'Client certificate (PEM) for mutual TLS.',
  }),
  TEMPORAL_TLS_CLIENT_KEY_PATH: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: "The client certificate's key (or TEMPORAL_TLS_CLIENT_KEY_DATA).",
  }),
  TEMPORAL_TLS_CLIENT_KEY_DATA: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    secret: true,
    description: "The client certificate's key (PEM).",
  }),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: "The CA that signed the server's certificate (or TEMPORAL_TLS_SERVER_CA_CERT_DATA).",
  }),
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: "The CA that signed the server's certificate (PEM).",
  }),
  TEMPORAL_TLS_SERVER_NAME: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: "The name the server's certificate must carry.",
  }),
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: '"true" skips checking the server certificate\'s host name.',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: variable({
    processes: CLIENTS,
    schema: url(['http', 'https']),
    readBy: '@opentelemetry/exporter-trace-otlp-http (and authcap: tracing is on when set)',
    defaultText: 'off',
    description: 'An OTLP/HTTP collector: with it set, workflows, activities and client calls are traced.',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: variable({
    processes: CLIENTS,
    schema: text(),
    readBy: '@opentelemetry/exporter-trace-otlp-http',
    secret: true,
    description: 'Headers sent to the collector (`key=value,...`), e.g. its API key.',
  }),
  OTEL_SERVICE_NAME: variable({
    processes: CLIENTS,
    schema: text(),
    defaultText: 'authcap-worker / authcap-client',
    description: "The traces' service name.",
  }),
} as const;
