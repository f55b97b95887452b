'use strict';

// Centralised configuration; everything comes from the environment so the
// same build runs in every stage.

function intFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number.parseInt(raw, 10);
  if (Number.isNaN(value)) {
    throw new Error(`Environment variable ${name} must be an integer, got "${raw}"`);
  }
  return value;
}

function required(name) {
  const value = process.env[name];
  if (!value && process.env.NODE_ENV === 'production') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

module.exports = {
  env: process.env.NODE_ENV || 'development',
  port: intFromEnv('PORT', 3000),
  logLevel: process.env.LOG_LEVEL || 'info',
  auth: {
    jwtSecret: required('JWT_SECRET') || 'dev-secret',
    issuer: process.env.JWT_ISSUER || 'express-images',
    tokenTtlSeconds: intFromEnv('TOKEN_TTL_SECONDS', 3600),
  },
  aws: {
    region: process.env.AWS_REGION || 'us-east-1',
    endpoint: process.env.S3_ENDPOINT || undefined,
    forcePathStyle: process.env.S3_FORCE_PATH_STYLE === 'true',
  },
  images: {
    bucket: required('IMAGES_BUCKET') || 'express-images-dev',
    maxUploadBytes: intFromEnv('MAX_UPLOAD_BYTES', 25 * 1024 * 1024),
    multipartThreshold: intFromEnv('MULTIPART_THRESHOLD', 16 * 1024 * 1024),
    cacheEntries: intFromEnv('THUMB_CACHE_ENTRIES', 500),
    userQuotaBytes: intFromEnv('USER_QUOTA_BYTES', 0),
  },
};
