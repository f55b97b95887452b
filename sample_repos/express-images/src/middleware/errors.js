'use strict';

const logger = require('../lib/logger');

function notFound(req, res) {
  res.status(404).json({ error: 'NOT_FOUND', message: `No route for ${req.method} ${req.path}` });
}

/**
 * Final error handler: turns any thrown error into a JSON response with the
 * error's status (500 when it has none) and hides internals in production.
 */
function errorHandler(err, req, res, next) {
  if (res.headersSent) return next(err);

  // multer reports oversized files with its own error code
  if (err.code === 'LIMIT_FILE_SIZE') {
    return res.status(413).json({ error: 'IMAGE_TOO_LARGE', message: 'File too large' });
  }

  const status = Number.isInteger(err.status) ? err.status : 500;
  if (status >= 500) {
    logger.error('request failed', { method: req.method, path: req.path, err });
  } else {
    logger.info('request rejected', { method: req.method, path: req.path, status, code: err.code });
  }
  if (status === 503) res.setHeader('Retry-After', '2');

  const body = { error: err.code || 'INTERNAL_ERROR', message: err.message };
  if (status >= 500 && process.env.NODE_ENV === 'production') body.message = 'Internal server error';
  return res.status(status).json(body);
}

const asyncHandler = (fn) => (req, res, next) => Promise.resolve(fn(req, res, next)).catch(next);

module.exports = { notFound, errorHandler, asyncHandler };
