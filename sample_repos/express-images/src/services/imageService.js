'use strict';

const crypto = require('crypto');
const path = require('path');
const sharp = require('sharp');

const config = require('../config');
const logger = require('../lib/logger');
const s3 = require('../lib/s3');

const BUCKET = config.images.bucket;
const ARCHIVE_PREFIX = 'archive/';
const MULTIPART_THRESHOLD = config.images.multipartThreshold || 16 * 1024 * 1024;
const PART_SIZE = 8 * 1024 * 1024;
const MAX_UPLOAD_BYTES = config.images.maxUploadBytes || 25 * 1024 * 1024;

// Sizes are the bounding box; images are never upscaled.
const VARIANT_SIZES = {
  thumb: { width: 160, height: 160, fit: 'cover' },
  small: { width: 480, height: 480, fit: 'inside' },
  medium: { width: 1024, height: 1024, fit: 'inside' },
  large: { width: 2048, height: 2048, fit: 'inside' },
};

const ALLOWED_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif']);

// Error codes that are worth retrying: throttling and transient server faults.
const RETRYABLE_CODES = new Set(['SlowDown', 'RequestTimeout', 'InternalError', 'ServiceUnavailable']);

class ImageServiceError extends Error {
  constructor(message, { status = 500, code = 'IMAGE_ERROR', cause, retryable = false } = {}) {
    super(message);
    this.name = 'ImageServiceError';
    this.status = status;
    this.code = code;
    this.retryable = retryable;
    if (cause) this.cause = cause;
  }
}

/**
 * Translates a raw storage error into an ImageServiceError with an HTTP status,
 * a stable application error code and a retryable flag.
 *
 * @param {Error} err error thrown by the S3 client
 * @param {object} [context] key / operation for the log line
 * @returns {ImageServiceError}
 */
function mapS3Error(err, context = {}) {
  if (err instanceof ImageServiceError) return err;
  const code = err && (err.code || err.name);
  const where = context.key ? ` (${context.operation || 's3'} ${context.key})` : '';
  switch (code) {
    case 'NoSuchKey':
    case 'NotFound':
      return new ImageServiceError(`Image not found${where}`, { status: 404, code: 'IMAGE_NOT_FOUND', cause: err });
    case 'NoSuchBucket':
      logger.error('storage bucket missing', { bucket: BUCKET, ...context });
      return new ImageServiceError('Storage is misconfigured', { status: 500, code: 'STORAGE_MISCONFIGURED', cause: err });
    case 'AccessDenied':
    case 'Forbidden':
      return new ImageServiceError(`Access to image denied${where}`, { status: 403, code: 'IMAGE_FORBIDDEN', cause: err });
    case 'SlowDown':
    case 'RequestTimeout':
    case 'ServiceUnavailable':
      return new ImageServiceError('Storage is busy, try again', {
        status: 503,
        code: 'STORAGE_THROTTLED',
        cause: err,
        retryable: true,
      });
    case 'EntityTooLarge':
      return new ImageServiceError('Image exceeds the maximum object size', { status: 413, code: 'IMAGE_TOO_LARGE', cause: err });
    default:
      logger.error('unexpected storage error', { code, message: err && err.message, ...context });
      return new ImageServiceError('Storage request failed', { status: 502, code: 'STORAGE_ERROR', cause: err });
  }
}

function isRetryableError(err) {
  if (!err) return false;
  if (err.retryable === true) return true;
  const code = err.code || err.name;
  if (RETRYABLE_CODES.has(code)) return true;
  // Network-level failures from the HTTP agent
  return code === 'ECONNRESET' || code === 'ETIMEDOUT' || code === 'EPIPE';
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Exponential backoff with full jitter: a random delay between zero and
 * base * 2^attempt, capped so that late attempts do not wait forever.
 */
function computeBackoff(attempt, baseMs = 100, capMs = 5000) {
  const ceiling = Math.min(capMs, baseMs * Math.pow(2, attempt));
  return Math.floor(Math.random() * ceiling);
}

/**
 * Runs an async operation and repeats it when it fails with a transient
 * error, waiting longer between each attempt. Non-transient errors are
 * mapped and rethrown immediately.
 *
 * @param {() => Promise<any>} operation
 * @param {{retries?: number, baseMs?: number, label?: string}} [options]
 */
async function withRetry(operation, { retries = 4, baseMs = 100, label = 'operation' } = {}) {
  let lastError;
  for (let attempt = 0; attempt <= retries; attempt++) {
    try {
      return await operation();
    } catch (err) {
      lastError = err;
      if (!isRetryableError(err) || attempt === retries) break;
      const delay = computeBackoff(attempt, baseMs);
      logger.warn('retrying storage call', { label, attempt: attempt + 1, delay, code: err.code });
      await sleep(delay);
    }
  }
  throw mapS3Error(lastError, { operation: label });
}

/**
 * Builds the storage key of one variant of an image, e.g.
 * users/42/images/abc123/thumb.webp.
 */
function buildKey(userId, imageId, variant, ext) {
  if (!userId || !imageId) {
    throw new ImageServiceError('userId and imageId are required', { status: 400, code: 'BAD_KEY' });
  }
  const suffix = ext ? `.${ext.replace(/^\./, '')}` : '';
  return `users/${userId}/images/${imageId}/${variant}${suffix}`;
}

function archiveKeyFor(key) {
  return key.startsWith(ARCHIVE_PREFIX) ? key : ARCHIVE_PREFIX + key;
}

function prefixFor(userId, imageId) {
  return imageId ? `users/${userId}/images/${imageId}/` : `users/${userId}/images/`;
}

const newImageId = () => crypto.randomBytes(12).toString('hex');

/**
 * Cleans a user supplied file name so it can be stored as object metadata:
 * drops directories, control characters and anything outside a safe set.
 */
function sanitizeFilename(name) {
  const base = path.basename(String(name || 'upload'));
  const cleaned = base
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\w.\-]+/g, '_')
    .replace(/_+/g, '_')
    .slice(0, 120);
  return cleaned || 'upload';
}

/**
 * Looks at the first bytes of a buffer to tell which image format it really
 * is, instead of trusting the extension or the client's header.
 *
 * @param {Buffer} buffer
 * @returns {string|null} a MIME type, or null when the format is not recognised
 */
function detectContentType(buffer) {
  if (!buffer || buffer.length < 12) return null;
  if (buffer[0] === 0xff && buffer[1] === 0xd8 && buffer[2] === 0xff) return 'image/jpeg';
  if (buffer.readUInt32BE(0) === 0x89504e47 && buffer.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  const head = buffer.toString('ascii', 0, 6);
  if (head === 'GIF87a' || head === 'GIF89a') return 'image/gif';
  if (buffer.toString('ascii', 0, 4) === 'RIFF' && buffer.toString('ascii', 8, 12) === 'WEBP') return 'image/webp';
  if (buffer.toString('ascii', 4, 8) === 'ftyp') {
    const brand = buffer.toString('ascii', 8, 12);
    if (brand === 'avif' || brand === 'avis') return 'image/avif';
    if (brand === 'heic' || brand === 'heix' || brand === 'mif1') return 'image/heic';
  }
  return null;
}

const extensionFor = (contentType) => {
  switch (contentType) {
    case 'image/jpeg':
      return 'jpg';
    case 'image/png':
      return 'png';
    case 'image/webp':
      return 'webp';
    case 'image/gif':
      return 'gif';
    case 'image/avif':
      return 'avif';
    default:
      return 'bin';
  }
};

function cacheControlFor(variant) {
  // Originals can be replaced by a re-upload; variants are content-addressed by imageId.
  if (variant === 'original') return 'private, max-age=300';
  return 'public, max-age=31536000, immutable';
}

/**
 * MD5 digest of a buffer, base64 encoded, as expected by the Content-MD5
 * header so that storage rejects corrupted bodies.
 */
function contentMd5(buffer) {
  return crypto.createHash('md5').update(buffer).digest('base64');
}

/**
 * Checks an incoming upload against the size limit and the list of accepted
 * formats, using the sniffed type rather than the declared one.
 *
 * @returns {{contentType: string, ext: string}}
 */
function validateUpload(file, { maxBytes = MAX_UPLOAD_BYTES } = {}) {
  if (!file || !file.buffer) {
    throw new ImageServiceError('No file in request', { status: 400, code: 'NO_FILE' });
  }
  if (file.buffer.length === 0) {
    throw new ImageServiceError('Uploaded file is empty', { status: 400, code: 'EMPTY_FILE' });
  }
  if (file.buffer.length > maxBytes) {
    throw new ImageServiceError(`File is larger than ${Math.round(maxBytes / 1048576)} MB`, {
      status: 413,
      code: 'IMAGE_TOO_LARGE',
    });
  }
  const contentType = detectContentType(file.buffer);
  if (!contentType || !ALLOWED_TYPES.has(contentType)) {
    throw new ImageServiceError('Unsupported image format', { status: 415, code: 'UNSUPPORTED_TYPE' });
  }
  if (file.mimetype && file.mimetype !== contentType) {
    logger.info('declared type differs from sniffed type', { declared: file.mimetype, actual: contentType });
  }
  return { contentType, ext: extensionFor(contentType) };
}

/**
 * Removes APP1 (EXIF / XMP) segments from a JPEG so that camera serial numbers
 * and GPS coordinates are not published. Other formats are returned unchanged.
 *
 * @param {Buffer} buffer
 * @returns {Buffer}
 */
function stripExif(buffer) {
  if (detectContentType(buffer) !== 'image/jpeg') return buffer;
  const kept = [buffer.subarray(0, 2)];
  let offset = 2;
  while (offset + 4 <= buffer.length) {
    if (buffer[offset] !== 0xff) break;
    const marker = buffer[offset + 1];
    // Start of scan: the rest of the file is entropy-coded image data.
    if (marker === 0xda) {
      kept.push(buffer.subarray(offset));
      return Buffer.concat(kept);
    }
    const segmentLength = buffer.readUInt16BE(offset + 2);
    const end = offset + 2 + segmentLength;
    if (end > buffer.length) break;
    if (marker !== 0xe1) {
      kept.push(buffer.subarray(offset, end));
    }
    offset = end;
  }
  // Malformed marker stream: fall back to a full re-encode.
  return null;
}

async function stripMetadata(buffer) {
  const stripped = stripExif(buffer);
  if (stripped) return stripped;
  logger.warn('jpeg marker walk failed, re-encoding to drop metadata');
  // sharp drops metadata unless withMetadata() is called; rotate() bakes in the orientation first.
  return sharp(buffer).rotate().jpeg({ quality: 92, mozjpeg: true }).toBuffer();
}

async function readImageMetadata(buffer) {
  const meta = await sharp(buffer).metadata();
  return {
    width: meta.width,
    height: meta.height,
    format: meta.format,
    hasAlpha: Boolean(meta.hasAlpha),
    orientation: meta.orientation || 1,
    animated: (meta.pages || 1) > 1,
  };
}

/**
 * Fits a width/height pair into a bounding box while keeping the aspect ratio
 * and never enlarging the source.
 */
function computeTargetDimensions(srcWidth, srcHeight, maxWidth, maxHeight) {
  if (!srcWidth || !srcHeight) return { width: maxWidth, height: maxHeight };
  const scale = Math.min(maxWidth / srcWidth, maxHeight / srcHeight, 1);
  return {
    width: Math.max(1, Math.round(srcWidth * scale)),
    height: Math.max(1, Math.round(srcHeight * scale)),
  };
}

// Encoder settings per output format. Each entry takes a sharp pipeline and returns it.
const encoders = {
  jpeg(pipeline, quality = 82) {
    return pipeline.jpeg({ quality, mozjpeg: true, chromaSubsampling: '4:2:0' });
  },
  png: function (pipeline) {
    return pipeline.png({ compressionLevel: 9, palette: true });
  },
  webp: (pipeline, quality = 80) => pipeline.webp({ quality, effort: 4, smartSubsample: true }),
  avif(pipeline, quality = 55) {
    // AVIF at effort > 4 is too slow for request-time thumbnailing.
    return pipeline.avif({ quality, effort: 4 });
  },
};

function encodeAs(pipeline, format, quality) {
  const encoder = encoders[format] || encoders.jpeg;
  return encoder(pipeline, quality);
}

/**
 * Scales an image buffer down to fit the requested box and re-encodes it in
 * the requested output format.
 *
 * @param {Buffer} buffer source image
 * @param {{width: number, height: number, fit?: string, format?: string, quality?: number}} spec
 * @returns {Promise<{buffer: Buffer, width: number, height: number, contentType: string}>}
 */
const resizeImage = async (buffer, { width, height, fit = 'inside', format = 'webp', quality } = {}) => {
  const pipeline = sharp(buffer, { failOn: 'truncated', limitInputPixels: 100e6 })
    .rotate()
    .resize({ width, height, fit, withoutEnlargement: true });
  const { data, info } = await encodeAs(pipeline, format, quality).toBuffer({ resolveWithObject: true });
  return {
    buffer: data,
    width: info.width,
    height: info.height,
    contentType: `image/${info.format === 'heif' ? 'avif' : info.format}`,
  };
};

async function putObjectWithRetry(params) {
  return withRetry(() => s3.putObject(params).promise(), { label: `putObject ${params.Key}` });
}

/**
 * Splits a buffer into consecutive slices of at most partSize bytes.
 * Storage requires every part except the last to be at least 5 MB.
 */
function splitIntoParts(buffer, partSize = PART_SIZE) {
  const parts = [];
  for (let start = 0, partNumber = 1; start < buffer.length; start += partSize, partNumber++) {
    parts.push({ partNumber, body: buffer.subarray(start, Math.min(start + partSize, buffer.length)) });
  }
  return parts;
}

/**
 * Sends a large body in several parts, a few at a time, and assembles them at
 * the end. If any part fails after its retries, the unfinished upload is
 * aborted so that orphaned parts do not keep costing storage.
 */
async function multipartUpload(key, buffer, { contentType, metadata = {}, concurrency = 4 } = {}) {
  const created = await withRetry(
    () =>
      s3
        .createMultipartUpload({ Bucket: BUCKET, Key: key, ContentType: contentType, Metadata: metadata })
        .promise(),
    { label: `createMultipartUpload ${key}` }
  );
  const uploadId = created.UploadId;
  const parts = splitIntoParts(buffer);
  const completed = [];

  try {
    for (let i = 0; i < parts.length; i += concurrency) {
      const batch = parts.slice(i, i + concurrency);
      const results = await Promise.all(
        batch.map((part) =>
          withRetry(
            () =>
              s3
                .uploadPart({
                  Bucket: BUCKET,
                  Key: key,
                  UploadId: uploadId,
                  PartNumber: part.partNumber,
                  Body: part.body,
                  ContentMD5: contentMd5(part.body),
                })
                .promise(),
            { label: `uploadPart ${part.partNumber}` }
          ).then((res) => ({ ETag: res.ETag, PartNumber: part.partNumber }))
        )
      );
      completed.push(...results);
    }
    return await s3
      .completeMultipartUpload({
        Bucket: BUCKET,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: completed.sort((a, b) => a.PartNumber - b.PartNumber) },
      })
      .promise();
  } catch (err) {
    logger.error('multipart upload failed, aborting', { key, uploadId, parts: parts.length });
    await s3
      .abortMultipartUpload({ Bucket: BUCKET, Key: key, UploadId: uploadId })
      .promise()
      .catch((abortErr) => logger.warn('abort failed', { key, message: abortErr.message }));
    throw mapS3Error(err, { key, operation: 'multipartUpload' });
  }
}

/**
 * Stores the untouched (EXIF-stripped) original of an image in the bucket,
 * switching to a multipart upload for large files. Returns the key and the
 * ETag of the stored object.
 */
exports.uploadOriginal = async function uploadOriginal(userId, imageId, buffer, { contentType, filename } = {}) {
  const key = buildKey(userId, imageId, 'original', extensionFor(contentType));
  const metadata = {
    'original-filename': sanitizeFilename(filename),
    'uploaded-by': String(userId),
  };

  if (buffer.length >= MULTIPART_THRESHOLD) {
    const res = await multipartUpload(key, buffer, { contentType, metadata });
    return { key, etag: res.ETag, size: buffer.length };
  }

  const res = await putObjectWithRetry({
    Bucket: BUCKET,
    Key: key,
    Body: buffer,
    ContentType: contentType,
    ContentMD5: contentMd5(buffer),
    CacheControl: cacheControlFor('original'),
    Metadata: metadata,
    ServerSideEncryption: 'AES256',
  });
  return { key, etag: res.ETag, size: buffer.length };
};

async function storeVariant(userId, imageId, variant, resized) {
  const key = buildKey(userId, imageId, variant, extensionFor(resized.contentType));
  await putObjectWithRetry({
    Bucket: BUCKET,
    Key: key,
    Body: resized.buffer,
    ContentType: resized.contentType,
    CacheControl: cacheControlFor(variant),
  });
  return { variant, key, width: resized.width, height: resized.height, size: resized.buffer.length };
}

/**
 * Produces every configured size of an image (thumb, small, medium, large)
 * and writes each one next to the original.
 */
async function generateVariants(userId, imageId, buffer, { format = 'webp', only } = {}) {
  const source = await readImageMetadata(buffer);
  const names = only ? [].concat(only) : Object.keys(VARIANT_SIZES);
  const results = [];
  for (const name of names) {
    const size = VARIANT_SIZES[name];
    if (!size) continue;
    // Skip sizes bigger than the source, except the thumbnail which is always produced.
    if (name !== 'thumb' && source.width && source.width <= size.width && source.height <= size.height) {
      continue;
    }
    const resized = await resizeImage(buffer, { ...size, format });
    results.push(await storeVariant(userId, imageId, name, resized));
  }
  return results;
}

/**
 * Fetches an object's metadata (size, type, ETag, user metadata) without
 * downloading its body.
 */
async function headImage(key) {
  try {
    const res = await withRetry(() => s3.headObject({ Bucket: BUCKET, Key: key }).promise(), {
      label: `headObject ${key}`,
    });
    return {
      key,
      size: res.ContentLength,
      contentType: res.ContentType,
      etag: res.ETag,
      lastModified: res.LastModified,
      metadata: res.Metadata || {},
    };
  } catch (err) {
    throw mapS3Error(err, { key, operation: 'headObject' });
  }
}

const objectExists = async (key) => {
  try {
    await headImage(key);
    return true;
  } catch (err) {
    if (err.status === 404) return false;
    throw err;
  }
};

/**
 * Downloads an object into memory. Only meant for images, which are bounded
 * by the upload limit; use a presigned URL to hand large files to clients.
 */
async function getObjectBuffer(key, { range } = {}) {
  const params = { Bucket: BUCKET, Key: key };
  if (range) params.Range = range;
  try {
    const res = await withRetry(() => s3.getObject(params).promise(), { label: `getObject ${key}` });
    return { body: res.Body, contentType: res.ContentType, etag: res.ETag, size: res.ContentLength };
  } catch (err) {
    throw mapS3Error(err, { key, operation: 'getObject' });
  }
}

/**
 * Server-side copy of one object to another key in the same bucket,
 * preserving its metadata.
 */
async function copyImage(sourceKey, destKey, { storageClass } = {}) {
  const params = {
    Bucket: BUCKET,
    CopySource: encodeURI(`${BUCKET}/${sourceKey}`),
    Key: destKey,
    MetadataDirective: 'COPY',
  };
  if (storageClass) params.StorageClass = storageClass;
  return withRetry(() => s3.copyObject(params).promise(), { label: `copyObject ${sourceKey}` });
}

/**
 * Moves a stored object: copies it to the destination key, and once the copy
 * has succeeded removes the source. Storage has no rename, so this is the
 * only way to relocate an object.
 *
 * @param {string} sourceKey
 * @param {string} destKey
 */
async function moveObject(sourceKey, destKey, { storageClass } = {}) {
  if (sourceKey === destKey) return { key: destKey, moved: false };
  try {
    await withRetry(
      () =>
        s3
          .copyObject({
            Bucket: BUCKET,
            CopySource: encodeURI(`${BUCKET}/${sourceKey}`),
            Key: destKey,
            MetadataDirective: 'COPY',
            ...(storageClass ? { StorageClass: storageClass } : {}),
          })
          .promise(),
      { label: `copyObject ${sourceKey}` }
    );
    // Only delete once the copy is confirmed, otherwise we could lose the image.
    await withRetry(() => s3.deleteObject({ Bucket: BUCKET, Key: sourceKey }).promise(), {
      label: `deleteObject ${sourceKey}`,
    });
    return { key: destKey, moved: true };
  } catch (err) {
    throw mapS3Error(err, { key: sourceKey, operation: 'moveObject' });
  }
}

/**
 * Replaces the user metadata of an object in place (storage objects are
 * immutable, so this copies the object onto itself with new metadata).
 */
async function updateObjectMetadata(key, metadata) {
  const current = await headImage(key);
  const params = {
    Bucket: BUCKET,
    Key: key,
    CopySource: encodeURI(`${BUCKET}/${key}`),
    MetadataDirective: 'REPLACE',
    ContentType: current.contentType,
    Metadata: { ...current.metadata, ...metadata },
  };
  await withRetry(() => s3.copyObject(params).promise(), { label: `copyObject ${key}` });
  return params.Metadata;
}

async function deleteImageObject(key) {
  try {
    await withRetry(() => s3.deleteObject({ Bucket: BUCKET, Key: key }).promise(), {
      label: `deleteObject ${key}`,
    });
  } catch (err) {
    throw mapS3Error(err, { key, operation: 'deleteObject' });
  }
}

/**
 * Walks every object under a prefix, following continuation tokens, and
 * yields them one page at a time.
 */
async function* iterateObjects(prefix, pageSize = 1000) {
  let token;
  do {
    const page = await withRetry(
      () =>
        s3
          .listObjectsV2({ Bucket: BUCKET, Prefix: prefix, MaxKeys: pageSize, ContinuationToken: token })
          .promise(),
      { label: `listObjectsV2 ${prefix}` }
    );
    yield page.Contents || [];
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

/**
 * Deletes the original and every resized variant of one image, in batches
 * of up to 1000 keys per request.
 */
async function deleteAllVariants(userId, imageId) {
  const prefix = prefixFor(userId, imageId);
  let deleted = 0;
  for await (const objects of iterateObjects(prefix)) {
    if (objects.length === 0) continue;
    const res = await withRetry(
      () =>
        s3
          .deleteObjects({
            Bucket: BUCKET,
            Delete: { Objects: objects.map((o) => ({ Key: o.Key })), Quiet: true },
          })
          .promise(),
      { label: `deleteObjects ${prefix}` }
    );
    if (res.Errors && res.Errors.length) {
      logger.error('some objects could not be deleted', { prefix, errors: res.Errors.length });
      throw new ImageServiceError('Failed to delete all image variants', { status: 500, code: 'PARTIAL_DELETE' });
    }
    deleted += objects.length;
  }
  thumbnailCache.invalidatePrefix(prefix);
  return { deleted };
}

/**
 * Returns one page of a user's images, grouped by image id, newest first,
 * with an opaque cursor for the next page.
 */
exports.listUserImages = async function listUserImages(userId, { limit = 50, cursor } = {}) {
  const prefix = prefixFor(userId);
  const page = await withRetry(
    () =>
      s3
        .listObjectsV2({
          Bucket: BUCKET,
          Prefix: prefix,
          MaxKeys: Math.min(limit * 5, 1000),
          ContinuationToken: cursor || undefined,
        })
        .promise(),
    { label: `listObjectsV2 ${prefix}` }
  );

  const byImage = new Map();
  for (const obj of page.Contents || []) {
    const rest = obj.Key.slice(prefix.length);
    const [imageId, file] = rest.split('/');
    if (!imageId || !file) continue;
    const entry = byImage.get(imageId) || { imageId, variants: {}, updatedAt: obj.LastModified };
    entry.variants[file.split('.')[0]] = { key: obj.Key, size: obj.Size };
    if (obj.LastModified > entry.updatedAt) entry.updatedAt = obj.LastModified;
    byImage.set(imageId, entry);
  }

  const images = [...byImage.values()].sort((a, b) => b.updatedAt - a.updatedAt).slice(0, limit);
  return { images, nextCursor: page.IsTruncated ? page.NextContinuationToken : null };
};

/**
 * Creates a time-limited link that lets a browser download an object
 * directly from storage without going through the API.
 *
 * @param {string} key
 * @param {{expiresIn?: number, filename?: string}} [options]
 */
exports.getSignedDownloadUrl = function getSignedDownloadUrl(key, { expiresIn = 900, filename } = {}) {
  const params = { Bucket: BUCKET, Key: key, Expires: expiresIn };
  if (filename) {
    params.ResponseContentDisposition = `attachment; filename="${sanitizeFilename(filename)}"`;
  }
  return s3.getSignedUrlPromise('getObject', params);
};

module.exports.getSignedUploadUrl = async (userId, contentType, { expiresIn = 300 } = {}) => {
  if (!ALLOWED_TYPES.has(contentType)) {
    throw new ImageServiceError('Unsupported image format', { status: 415, code: 'UNSUPPORTED_TYPE' });
  }
  const imageId = newImageId();
  const key = buildKey(userId, imageId, 'original', extensionFor(contentType));
  const url = await s3.getSignedUrlPromise('putObject', {
    Bucket: BUCKET,
    Key: key,
    ContentType: contentType,
    Expires: expiresIn,
  });
  return { imageId, key, url, expiresIn };
};

/**
 * In-process LRU cache for small rendered thumbnails, with a per-entry time
 * to live. Saves a storage round trip for avatars shown on every page.
 */
class ThumbnailCache {
  constructor({ maxEntries = 500, ttlMs = 60_000 } = {}) {
    this.maxEntries = maxEntries;
    this.ttlMs = ttlMs;
    this.entries = new Map();
    this.hits = 0;
    this.misses = 0;
  }

  get size() {
    return this.entries.size;
  }

  /**
   * Returns a cached entry if present and not expired, moving it to the
   * most-recently-used position.
   */
  lookup(key) {
    const entry = this.entries.get(key);
    if (!entry || entry.expiresAt < Date.now()) {
      if (entry) this.entries.delete(key);
      this.misses++;
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.hits++;
    return entry.value;
  }

  store(key, value) {
    if (this.entries.has(key)) this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
    // Map iteration order is insertion order, so the first key is the least recently used.
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      this.entries.delete(oldest);
    }
  }

  /**
   * Drops every cached entry whose key starts with the given prefix, e.g.
   * all sizes of an image that was just deleted.
   */
  invalidatePrefix(prefix) {
    let removed = 0;
    for (const key of this.entries.keys()) {
      if (key.startsWith(prefix)) {
        this.entries.delete(key);
        removed++;
      }
    }
    return removed;
  }

  stats() {
    const total = this.hits + this.misses;
    return {
      size: this.entries.size,
      hits: this.hits,
      misses: this.misses,
      hitRate: total === 0 ? 0 : this.hits / total,
    };
  }
}

const thumbnailCache = new ThumbnailCache({ maxEntries: config.images.cacheEntries || 500 });

/**
 * Returns the bytes of a resized variant. If the variant has never been
 * rendered (or was lost), it is rebuilt from the original and stored.
 */
exports.getThumbnail = async function getThumbnail(userId, imageId, variant = 'thumb', format = 'webp') {
  const key = buildKey(userId, imageId, variant, format);
  const cached = thumbnailCache.lookup(key);
  if (cached) return cached;

  let result;
  try {
    result = await getObjectBuffer(key);
  } catch (err) {
    if (err.status !== 404) throw err;
    logger.info('variant missing, regenerating', { key });
    const original = await findOriginal(userId, imageId);
    const source = await getObjectBuffer(original.key);
    const [stored] = await generateVariants(userId, imageId, source.body, { format, only: variant });
    if (!stored) {
      throw new ImageServiceError('Variant cannot be generated', { status: 404, code: 'IMAGE_NOT_FOUND' });
    }
    result = await getObjectBuffer(stored.key);
  }

  const value = { body: result.body, contentType: result.contentType, etag: result.etag };
  if (result.body.length < 256 * 1024) thumbnailCache.store(key, value);
  return value;
};

async function findOriginal(userId, imageId) {
  const prefix = prefixFor(userId, imageId);
  for await (const objects of iterateObjects(prefix, 100)) {
    const original = objects.find((o) => o.Key.slice(prefix.length).startsWith('original.'));
    if (original) return { key: original.Key, size: original.Size };
  }
  throw new ImageServiceError('Original image not found', { status: 404, code: 'IMAGE_NOT_FOUND' });
}

/**
 * Full upload pipeline for one file: validates it, removes metadata, stores
 * the original and renders all sizes. Returns a description of what was
 * stored.
 */
async function processUpload(userId, file, { format = 'webp' } = {}) {
  const { contentType } = validateUpload(file);
  const imageId = newImageId();
  const started = Date.now();

  const clean = contentType === 'image/jpeg' ? await stripMetadata(file.buffer) : file.buffer;
  const meta = await readImageMetadata(clean);
  if (meta.width * meta.height > 80e6) {
    throw new ImageServiceError('Image dimensions are too large', { status: 413, code: 'IMAGE_TOO_LARGE' });
  }

  const original = await exports.uploadOriginal(userId, imageId, clean, {
    contentType,
    filename: file.originalname,
  });

  let variants = [];
  try {
    variants = await generateVariants(userId, imageId, clean, { format });
  } catch (err) {
    // Keep the original: variants are rebuilt lazily on the first request.
    logger.error('variant generation failed', { imageId, message: err.message });
  }

  logger.info('upload processed', { userId, imageId, ms: Date.now() - started, variants: variants.length });
  return {
    imageId,
    original: { ...original, contentType, width: meta.width, height: meta.height },
    variants,
  };
}

/**
 * Moves every object of an image to the archive prefix and downgrades it to
 * infrequent-access storage.
 */
const archiveImage = async (userId, imageId) => {
  const prefix = prefixFor(userId, imageId);
  const moved = [];
  for await (const objects of iterateObjects(prefix)) {
    for (const obj of objects) {
      const dest = archiveKeyFor(obj.Key);
      await moveObject(obj.Key, dest, { storageClass: 'STANDARD_IA' });
      moved.push(dest);
    }
  }
  if (moved.length === 0) {
    throw new ImageServiceError('Image not found', { status: 404, code: 'IMAGE_NOT_FOUND' });
  }
  thumbnailCache.invalidatePrefix(prefix);
  return { imageId, archived: moved.length };
};

const restoreImage = async (userId, imageId) => {
  const archivedPrefix = archiveKeyFor(prefixFor(userId, imageId));
  let restored = 0;
  for await (const objects of iterateObjects(archivedPrefix)) {
    for (const obj of objects) {
      await moveObject(obj.Key, obj.Key.slice(ARCHIVE_PREFIX.length), { storageClass: 'STANDARD' });
      restored++;
    }
  }
  return { imageId, restored };
};

/**
 * Re-renders one size of an image from its stored original, for example
 * after the encoder settings changed.
 */
async function regenerateVariant(userId, imageId, variant, format = 'webp') {
  if (!VARIANT_SIZES[variant]) {
    throw new ImageServiceError(`Unknown variant "${variant}"`, { status: 400, code: 'BAD_VARIANT' });
  }
  const original = await findOriginal(userId, imageId);
  const source = await getObjectBuffer(original.key);
  const resized = await resizeImage(source.body, { ...VARIANT_SIZES[variant], format });
  const stored = await storeVariant(userId, imageId, variant, resized);
  thumbnailCache.invalidatePrefix(prefixFor(userId, imageId));
  return stored;
}

/**
 * Adds up the bytes stored under a user's prefix, split between live and
 * archived images, for quota checks.
 */
async function computeUsage(userId) {
  const usage = { live: 0, archived: 0, objects: 0 };
  for await (const objects of iterateObjects(prefixFor(userId))) {
    for (const o of objects) {
      usage.live += o.Size;
      usage.objects++;
    }
  }
  for await (const objects of iterateObjects(archiveKeyFor(prefixFor(userId)))) {
    for (const o of objects) {
      usage.archived += o.Size;
      usage.objects++;
    }
  }
  return usage;
}

async function assertWithinQuota(userId, incomingBytes) {
  const quota = config.images.userQuotaBytes;
  if (!quota) return;
  const usage = await computeUsage(userId);
  if (usage.live + incomingBytes > quota) {
    throw new ImageServiceError('Storage quota exceeded', { status: 507, code: 'QUOTA_EXCEEDED' });
  }
}

/**
 * Parses an HTTP Range header ("bytes=0-499") against an object size.
 * Returns null for absent or unsatisfiable ranges.
 */
function parseRangeHeader(header, size) {
  if (!header || !header.startsWith('bytes=')) return null;
  const [startStr, endStr] = header.slice(6).split('-');
  let start = startStr === '' ? NaN : Number(startStr);
  let end = endStr === '' ? size - 1 : Number(endStr);
  if (Number.isNaN(start)) {
    // Suffix range: the last N bytes.
    start = Math.max(0, size - end);
    end = size - 1;
  }
  if (start > end || start >= size) return null;
  return { start, end: Math.min(end, size - 1) };
}

/**
 * Streams an object to an Express response, honouring Range requests and
 * conditional requests with If-None-Match.
 */
async function streamToResponse(key, req, res) {
  const head = await headImage(key);
  if (req.headers['if-none-match'] && req.headers['if-none-match'] === head.etag) {
    res.status(304).end();
    return;
  }
  const range = parseRangeHeader(req.headers.range, head.size);
  const params = { Bucket: BUCKET, Key: key };
  res.setHeader('Content-Type', head.contentType);
  res.setHeader('ETag', head.etag);
  res.setHeader('Accept-Ranges', 'bytes');
  if (range) {
    params.Range = `bytes=${range.start}-${range.end}`;
    res.status(206);
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${head.size}`);
    res.setHeader('Content-Length', range.end - range.start + 1);
  } else {
    res.setHeader('Content-Length', head.size);
  }
  const stream = s3.getObject(params).createReadStream();
  stream.on('error', (err) => {
    const mapped = mapS3Error(err, { key, operation: 'getObject' });
    logger.error('stream failed', { key, code: mapped.code });
    if (!res.headersSent) res.status(mapped.status).json({ error: mapped.code });
    else res.destroy(mapped);
  });
  stream.pipe(res);
}

// Exported for tests and for the routes.
module.exports.ImageServiceError = ImageServiceError;
module.exports.ThumbnailCache = ThumbnailCache;
module.exports.thumbnailCache = thumbnailCache;
module.exports.mapS3Error = mapS3Error;
module.exports.isRetryableError = isRetryableError;
module.exports.computeBackoff = computeBackoff;
module.exports.withRetry = withRetry;
module.exports.buildKey = buildKey;
module.exports.sanitizeFilename = sanitizeFilename;
module.exports.detectContentType = detectContentType;
module.exports.extensionFor = extensionFor;
module.exports.validateUpload = validateUpload;
module.exports.stripExif = stripExif;
module.exports.computeTargetDimensions = computeTargetDimensions;
module.exports.resizeImage = resizeImage;
module.exports.splitIntoParts = splitIntoParts;
module.exports.multipartUpload = multipartUpload;
module.exports.generateVariants = generateVariants;
module.exports.headImage = headImage;
module.exports.objectExists = objectExists;
module.exports.getObjectBuffer = getObjectBuffer;
module.exports.copyImage = copyImage;
module.exports.moveObject = moveObject;
module.exports.updateObjectMetadata = updateObjectMetadata;
module.exports.deleteImageObject = deleteImageObject;
module.exports.deleteAllVariants = deleteAllVariants;
module.exports.processUpload = processUpload;
module.exports.archiveImage = archiveImage;
module.exports.restoreImage = restoreImage;
module.exports.regenerateVariant = regenerateVariant;
module.exports.computeUsage = computeUsage;
module.exports.assertWithinQuota = assertWithinQuota;
module.exports.parseRangeHeader = parseRangeHeader;
module.exports.streamToResponse = streamToResponse;
