'use strict';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 };

function createLogger({ level = process.env.LOG_LEVEL || 'info', base = {}, stream = process.stdout } = {}) {
  const threshold = LEVELS[level] || LEVELS.info;

  // One JSON object per line so the log shipper can parse it without a grok pattern.
  function write(lvl, message, fields) {
    if (LEVELS[lvl] < threshold) return;
    const line = {
      time: new Date().toISOString(),
      level: lvl,
      msg: message,
      ...base,
      ...fields,
    };
    if (fields && fields.err instanceof Error) {
      line.err = { message: fields.err.message, stack: fields.err.stack, code: fields.err.code };
    }
    stream.write(JSON.stringify(line) + '\n');
  }

  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child(extra) {
      return createLogger({ level, base: { ...base, ...extra }, stream });
    },
  };
}

module.exports = createLogger();
module.exports.createLogger = createLogger;
