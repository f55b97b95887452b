'use strict';

const express = require('express');
const multer = require('multer');

const config = require('../config');
const imageService = require('../services/imageService');
const { requireAuth } = require('../middleware/auth');
const { asyncHandler } = require('../middleware/errors');

const router = express.Router();
const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: config.images.maxUploadBytes } });

router.use(requireAuth);

router.post(
  '/',
  upload.single('image'),
  asyncHandler(async (req, res) => {
    await imageService.assertWithinQuota(req.user.id, req.file ? req.file.size : 0);
    const result = await imageService.processUpload(req.user.id, req.file, { format: req.query.format || 'webp' });
    res.status(201).json(result);
  })
);

router.post(
  '/upload-url',
  asyncHandler(async (req, res) => {
    const { contentType } = req.body || {};
    res.json(await imageService.getSignedUploadUrl(req.user.id, contentType));
  })
);

router.get(
  '/',
  asyncHandler(async (req, res) => {
    const limit = Math.min(Number(req.query.limit) || 50, 200);
    res.json(await imageService.listUserImages(req.user.id, { limit, cursor: req.query.cursor }));
  })
);

router.get(
  '/:imageId/:variant',
  asyncHandler(async (req, res) => {
    const { imageId, variant } = req.params;
    if (variant === 'original') {
      const key = imageService.buildKey(req.user.id, imageId, 'original', req.query.ext || 'jpg');
      return imageService.streamToResponse(key, req, res);
    }
    const thumb = await imageService.getThumbnail(req.user.id, imageId, variant, req.query.format || 'webp');
    res.set({ 'Content-Type': thumb.contentType, ETag: thumb.etag, 'Cache-Control': 'public, max-age=86400' });
    return res.send(thumb.body);
  })
);

router.get(
  '/:imageId/download-url',
  asyncHandler(async (req, res) => {
    const key = imageService.buildKey(req.user.id, req.params.imageId, 'original', req.query.ext || 'jpg');
    const url = await imageService.getSignedDownloadUrl(key, { filename: req.query.filename });
    res.json({ url });
  })
);

router.post(
  '/:imageId/archive',
  asyncHandler(async (req, res) => {
    res.json(await imageService.archiveImage(req.user.id, req.params.imageId));
  })
);

router.post(
  '/:imageId/restore',
  asyncHandler(async (req, res) => {
    res.json(await imageService.restoreImage(req.user.id, req.params.imageId));
  })
);

router.post(
  '/:imageId/variants/:variant/regenerate',
  asyncHandler(async (req, res) => {
    const { imageId, variant } = req.params;
    res.json(await imageService.regenerateVariant(req.user.id, imageId, variant, req.query.format));
  })
);

router.delete(
  '/:imageId',
  asyncHandler(async (req, res) => {
    await imageService.deleteAllVariants(req.user.id, req.params.imageId);
    res.status(204).end();
  })
);

module.exports = router;
