'use strict';

jest.mock('../lib/s3', () => ({
  putObject: jest.fn(),
  getObject: jest.fn(),
  headObject: jest.fn(),
  copyObject: jest.fn(),
  deleteObject: jest.fn(),
  listObjectsV2: jest.fn(),
  getSignedUrlPromise: jest.fn(),
}));
jest.mock('../lib/logger', () => ({ info: jest.fn(), warn: jest.fn(), error: jest.fn(), debug: jest.fn() }));

const s3 = require('../lib/s3');
const imageService = require('../services/imageService');

// The SDK v2 returns request objects with a .promise() method.
const ok = (value) => ({ promise: () => Promise.resolve(value) });
const fail = (code) => ({
  promise: () => Promise.reject(Object.assign(new Error(code), { code })),
});

const JPEG_HEADER = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);
const PNG_HEADER = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);

beforeEach(() => {
  jest.clearAllMocks();
});

describe('detectContentType', () => {
  it('recognises jpeg and png by their magic bytes', () => {
    expect(imageService.detectContentType(JPEG_HEADER)).toBe('image/jpeg');
    expect(imageService.detectContentType(PNG_HEADER)).toBe('image/png');
  });

  it('returns null for short or unknown buffers', () => {
    expect(imageService.detectContentType(Buffer.from('hi'))).toBeNull();
    expect(imageService.detectContentType(Buffer.from('plain text file'))).toBeNull();
  });
});

describe('buildKey', () => {
  it('lays out keys per user and image', () => {
    expect(imageService.buildKey('42', 'abc', 'thumb', 'webp')).toBe('users/42/images/abc/thumb.webp');
  });

  it('rejects missing ids', () => {
    expect(() => imageService.buildKey('', 'abc', 'thumb')).toThrow(imageService.ImageServiceError);
  });
});

describe('computeTargetDimensions', () => {
  it('keeps the aspect ratio and never upscales', () => {
    expect(imageService.computeTargetDimensions(4000, 2000, 1000, 1000)).toEqual({ width: 1000, height: 500 });
    expect(imageService.computeTargetDimensions(300, 200, 1000, 1000)).toEqual({ width: 300, height: 200 });
  });
});

describe('mapS3Error', () => {
  it.each([
    ['NoSuchKey', 404],
    ['AccessDenied', 403],
    ['SlowDown', 503],
    ['SomethingElse', 502],
  ])('maps %s to HTTP %i', (code, status) => {
    const mapped = imageService.mapS3Error(Object.assign(new Error(code), { code }));
    expect(mapped.status).toBe(status);
  });
});

describe('moveObject', () => {
  it('copies then deletes the source', async () => {
    s3.copyObject.mockReturnValue(ok({}));
    s3.deleteObject.mockReturnValue(ok({}));
    const res = await imageService.moveObject('users/1/images/a/original.jpg', 'archive/users/1/images/a/original.jpg');
    expect(res).toEqual({ key: 'archive/users/1/images/a/original.jpg', moved: true });
    expect(s3.copyObject).toHaveBeenCalledTimes(1);
    expect(s3.deleteObject).toHaveBeenCalledWith({ Bucket: expect.any(String), Key: 'users/1/images/a/original.jpg' });
  });

  it('does not delete the source when the copy fails', async () => {
    s3.copyObject.mockReturnValue(fail('AccessDenied'));
    await expect(imageService.moveObject('a', 'b')).rejects.toMatchObject({ status: 403 });
    expect(s3.deleteObject).not.toHaveBeenCalled();
  });
});

describe('withRetry', () => {
  it('retries throttling errors and eventually succeeds', async () => {
    jest.spyOn(global.Math, 'random').mockReturnValue(0);
    const op = jest
      .fn()
      .mockRejectedValueOnce(Object.assign(new Error('slow'), { code: 'SlowDown' }))
      .mockResolvedValueOnce('done');
    await expect(imageService.withRetry(op, { baseMs: 1 })).resolves.toBe('done');
    expect(op).toHaveBeenCalledTimes(2);
    Math.random.mockRestore();
  });
});

describe('ThumbnailCache', () => {
  it('evicts the least recently used entry', () => {
    const cache = new imageService.ThumbnailCache({ maxEntries: 2, ttlMs: 1000 });
    cache.store('a', 1);
    cache.store('b', 2);
    cache.lookup('a');
    cache.store('c', 3);
    expect(cache.lookup('b')).toBeUndefined();
    expect(cache.lookup('a')).toBe(1);
    expect(cache.size).toBe(2);
  });
});
