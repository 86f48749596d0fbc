// The log level is the process's, set by its entry from its settings (setLogLevel): a logger a module
// made at import follows it, and the library never reads AUTHCAP_LOG_LEVEL from the environment itself.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, setLogLevel } from '../../../runtime/logger.js';

function sink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(chunk.toString()).msg);
      done();
    },
  });
  return { lines, stream };
}

afterEach(() => {
  delete process.env.AUTHCAP_LOG_LEVEL;
  setLogLevel('info');
});

describe('the log level', () => {
  it('is followed by loggers made before the entry set it, and by those made after', () => {
    const early = sink();
    const beforeEntry = createLogger('early', undefined, early.stream);
    setLogLevel('warn');
    const late = sink();
    const afterEntry = createLogger('late', undefined, late.stream);
    for (const logger of [beforeEntry, afterEntry]) {
      logger.info('quiet');
      logger.warn('heard');
    }
    expect(early.lines).toEqual(['heard']);
    expect(late.lines).toEqual(['heard']);
    setLogLevel('debug');
    beforeEntry.debug('now heard');
    expect(early.lines).toEqual(['heard', 'now heard']);
  });

  it('is not read from the environment by the library, and a logger given its own level keeps it', () => {
    process.env.AUTHCAP_LOG_LEVEL = 'error';
    const out = sink();
    createLogger('library', undefined, out.stream).info('the process level, info');
    const own = sink();
    const fixed = createLogger('own', 'error', own.stream);
    setLogLevel('debug');
    fixed.warn('below its own level');
    expect(out.lines).toEqual(['the process level, info']);
    expect(own.lines).toEqual([]);
  });
});
