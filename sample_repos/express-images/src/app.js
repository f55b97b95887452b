'use strict';

const express = require('express');

const config = require('./config');
const logger = require('./lib/logger');
const imageRoutes = require('./routes/images');
const userRoutes = require('./routes/users');
const { notFound, errorHandler } = require('./middleware/errors');
const { thumbnailCache } = require('./services/imageService');

function requestLogger(req, res, next) {
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    logger.info('request', { method: req.method, path: req.originalUrl, status: res.statusCode, ms: Math.round(ms) });
  });
  next();
}

/**
 * Builds the Express application with all middleware and routes mounted,
 * without starting a server (tests use it through supertest).
 */
function createApp() {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 1);
  app.use(express.json({ limit: '100kb' }));
  app.use(requestLogger);

  app.get('/healthz', (req, res) => res.json({ ok: true, cache: thumbnailCache.stats() }));
  app.use('/v1/images', imageRoutes);
  app.use('/v1/users', userRoutes);

  app.use(notFound);
  app.use(errorHandler);
  return app;
}

if (require.main === module) {
  const server = createApp().listen(config.port, () => {
    logger.info('listening', { port: config.port, env: config.env });
  });
  // Let in-flight uploads finish before the container is killed.
  process.on('SIGTERM', () => {
    logger.info('shutting down');
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(1), 10000).unref();
  });
}

module.exports = { createApp };
