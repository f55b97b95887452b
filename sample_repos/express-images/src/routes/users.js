'use strict';

const express = require('express');
const multer = require('multer');

const imageService = require('../services/imageService');
const { requireAuth, requireSelfOrAdmin, requireRole } = require('../middleware/auth');
const { asyncHandler } = require('../middleware/errors');

const router = express.Router();
const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: 5 * 1024 * 1024 } });

// Profiles live in memory in this service; the real store is the accounts API.
const profiles = new Map();

function publicProfile(profile) {
  return {
    id: profile.id,
    displayName: profile.displayName,
    bio: profile.bio || '',
    avatarImageId: profile.avatarImageId || null,
    createdAt: profile.createdAt,
  };
}

function getOrCreateProfile(userId) {
  if (!profiles.has(userId)) {
    profiles.set(userId, { id: userId, displayName: `user-${userId}`, createdAt: new Date().toISOString() });
  }
  return profiles.get(userId);
}

router.use(requireAuth);

router.get('/:userId', requireSelfOrAdmin(), (req, res) => {
  res.json(publicProfile(getOrCreateProfile(req.params.userId)));
});

router.patch('/:userId', requireSelfOrAdmin(), (req, res) => {
  const profile = getOrCreateProfile(req.params.userId);
  const { displayName, bio } = req.body || {};
  if (displayName !== undefined) {
    if (typeof displayName !== 'string' || displayName.length < 2 || displayName.length > 60) {
      return res.status(400).json({ error: 'BAD_DISPLAY_NAME' });
    }
    profile.displayName = displayName.trim();
  }
  if (bio !== undefined) profile.bio = String(bio).slice(0, 500);
  return res.json(publicProfile(profile));
});

router.put(
  '/:userId/avatar',
  requireSelfOrAdmin(),
  upload.single('avatar'),
  asyncHandler(async (req, res) => {
    const profile = getOrCreateProfile(req.params.userId);
    const result = await imageService.processUpload(req.params.userId, req.file, { format: 'webp' });
    const previous = profile.avatarImageId;
    profile.avatarImageId = result.imageId;
    if (previous) {
      // Old avatars are archived rather than deleted so support can restore them.
      await imageService.archiveImage(req.params.userId, previous).catch(() => undefined);
    }
    res.json(publicProfile(profile));
  })
);

router.get(
  '/:userId/usage',
  requireSelfOrAdmin(),
  asyncHandler(async (req, res) => {
    res.json(await imageService.computeUsage(req.params.userId));
  })
);

router.delete(
  '/:userId',
  requireRole('admin'),
  asyncHandler(async (req, res) => {
    const profile = profiles.get(req.params.userId);
    if (!profile) return res.status(404).json({ error: 'USER_NOT_FOUND' });
    if (profile.avatarImageId) await imageService.deleteAllVariants(profile.id, profile.avatarImageId);
    profiles.delete(profile.id);
    return res.status(204).end();
  })
);

module.exports = router;
