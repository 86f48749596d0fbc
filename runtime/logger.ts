// Structured JSON logs (pino) for the worker and the API. Secrets never reach a log line: the redact
// list covers every field a signature, key or raw transaction travels in.
import { pino, type Logger as PinoLogger } from 'pino';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { readVariable } from './settings/read.js';

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

export function createLogger(name: string, level: string = readVariable('AUTHCAP_LOG_LEVEL') ?? 'info', destination?: pino.DestinationStream): PinoLogger {
  return pino({ name, level, redact: { paths: REDACTED_FIELDS, censor: '[redacted]' }, base: { service: name } }, destination);
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
