// Structured JSON logs (pino) for the worker and the API. Secrets never reach a log line: the redact
// list covers every field a signature, key or raw transaction travels in.
import { pino, type Logger as PinoLogger } from 'pino';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';

export const REDACTED_FIELDS = [
  'signature',
  'privateKey',
  'merchantPrivateKey',
  'key',
  'apiKey',
  'token',
  'raw',
  'authorization',
  'password',
  'secret',
  '*.signature',
  '*.privateKey',
  '*.key',
  '*.apiKey',
  '*.token',
  '*.raw',
  '*.secret',
  'headers.authorization',
  'req.headers.authorization',
  '*.*.signature',
  '*.*.raw',
];

/** Loggers made without a level of their own: they follow the process's level (setLogLevel). */
const following = new Set<PinoLogger>();
let processLevel = 'info';

/**
 * The process's log level, set by its entry from its settings (AUTHCAP_LOG_LEVEL) as it starts: the
 * loggers modules made at import follow it, and those made later start at it.
 */
export function setLogLevel(level: string): void {
  processLevel = level;
  for (const logger of following) logger.level = level;
}

/** @param level this logger's own level; absent: the process's (setLogLevel), now and when it changes. */
export function createLogger(name: string, level?: string, destination?: pino.DestinationStream): PinoLogger {
  const logger = pino({ name, level: level ?? processLevel, redact: { paths: REDACTED_FIELDS, censor: '[redacted]' }, base: { service: name } }, destination);
  if (level === undefined) following.add(logger);
  return logger;
}

const temporalToPino: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The Temporal SDK's logger (workflow `log`, activity logs, the worker's own) onto pino. Workflow log
 * lines carry workflowId; authcap's own carry orderId.
 */
export function temporalLogger(logger: PinoLogger): Logger {
  const at = (level: LogLevel) => (message: string, meta?: LogMetadata) => logger[temporalToPino[level]](meta ?? {}, message);
  return {
    log: (level, message, meta) => at(level)(message, meta),
    trace: at('TRACE'),
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARN'),
    error: at('ERROR'),
  };
}
