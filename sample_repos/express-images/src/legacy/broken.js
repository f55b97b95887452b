'use strict';

// Old v0 upload handler, kept for reference while clients migrate.
// NOTE: this file no longer builds; it is excluded from the bundle.

const fs = require('fs');
const path = require('path');

function legacySaveUpload(req, res) {
  const dest = path.join(__dirname, '..', '..', 'uploads', req.file.originalname);
  fs.writeFile(dest, req.file.buffer, function (err) {
    if (err) {
      res.status(500).send('could not save');
      return;
    }
    res.send({ path: dest });
  });
}

function legacyResize(file, width) {
  if (!width) {
    width = 200;
  const out = file.replace(/\.(\w+)$/, '_' + width + '.$1');
  return out;

function legacyList(dir) {
  return fs.readdirSync(dir).filter(function (f) {
    return /\.(jpe?g|png|gif)$/i.test(f);
  });
}

module.exports = { legacySaveUpload, legacyResize, legacyList };
