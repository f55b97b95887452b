'use strict';

const AWS = require('aws-sdk');
const config = require('../config');

// A single client for the whole process; the SDK keeps a connection pool per client.
const s3 = new AWS.S3({
  region: config.aws.region,
  endpoint: config.aws.endpoint,
  s3ForcePathStyle: config.aws.forcePathStyle,
  signatureVersion: 'v4',
  maxRetries: 0, // retries are handled by imageService.withRetry
  httpOptions: { timeout: 30000, connectTimeout: 5000 },
});

module.exports = s3;
