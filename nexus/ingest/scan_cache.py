"""What a folder's scan learned about each file, remembered by the file's stat, so that
opening the same folder again reads only the files that changed.

Opening a folder reads and classifies every file (10,571 files: seconds), and the
saved index it may match is named by the hash of every chunked file's bytes. An entry
keeps, per file, its classification and the sha256 of its bytes, under the file's
size, mtime, ctime, inode and device, and the scan's context (the size limit, the file
selection, the names in its folder, and the classifier's code). A write to a file
changes its ctime, which no tool can set back (``touch -d`` and unpacking an archive
set mtime only), so a matching stat means the same bytes. As in git's index, a file
whose timestamps lie within ``RACY_NS`` of when it was read is read again: a write in
the same clock tick as that read would not show in them.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from nexus.types import Category, FileInfo

_INFO_FIELDS = dataclasses.fields(FileInfo)
#: Timestamps this close to the time a file was read do not prove it unchanged since.
RACY_NS = 2_000_000_000
#: The code that decides a file's classification: every ingest module, and the types.
_CLASSIFIER_MODULES = (
    *sorted(Path(__file__).parent.glob("*.py")),
    Path(__file__).parents[1] / "types.py",
)


@functools.cache
def classifier_digest() -> str:
    """sha256 of the code that classifies files: a change to it forgets every entry."""
    digest = hashlib.sha256()
    for path in _CLASSIFIER_MODULES:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _stat_key(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


class ScanCache:
    """The entries of one folder's last scan, in ``folder/<hash of the root>.json``.

    ``lookup`` answers from the last scan; ``remember`` records this scan's files, and
    ``save`` writes them (only those: a deleted file's entry goes with it).
    """

    def __init__(self, folder: Path, root: Path) -> None:
        key = hashlib.sha256(str(root).encode("utf-8", "surrogatepass")).hexdigest()[:24]
        self.path = Path(folder) / f"{key}.json"
        self.started_ns = time.time_ns()  # files are read from now on
        self._old: dict[str, Any] = {}
        self._new: dict[str, Any] = {}
        try:
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # none yet, or unreadable: read every file
            found = {}
        if isinstance(found, dict) and found.get("classifier") == classifier_digest():
            self._old = found.get("files") or {}

    def lookup(self, rel: str, st: os.stat_result, context: str) -> tuple[FileInfo, str] | None:
        """The classification and sha256 of ``rel`` if its stat and context are unchanged
        since it was read (and it was not written around that time)."""
        entry = self._old.get(rel)
        if (
            not isinstance(entry, dict)
            or entry.get("stat") != _stat_key(st)
            or entry.get("context") != context
            or max(st.st_mtime_ns, st.st_ctime_ns) >= int(entry.get("read_ns", 0)) - RACY_NS
        ):
            return None
        try:
            info = FileInfo(**{**entry["info"], "category": Category(entry["info"]["category"])})
        except (KeyError, TypeError, ValueError):
            return None
        self._new[rel] = entry
        return info, str(entry.get("digest") or "")

    def remember(
        self, rel: str, st: os.stat_result, context: str, info: FileInfo, digest: str
    ) -> None:
        # Flat fields: read directly (``dataclasses.asdict`` copies recursively: 0.9 s of
        # a 10,571-file walk).
        info_record = {f.name: getattr(info, f.name) for f in _INFO_FIELDS}
        info_record["category"] = info.category.value
        self._new[rel] = {
            "stat": _stat_key(st),
            "context": context,
            "read_ns": self.started_ns,
            "info": info_record,
            "digest": digest,
        }

    def save(self) -> None:
        """Write this scan's entries (through a temporary file: readers see old or new)."""
        if self._new == self._old:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        record = {"classifier": classifier_digest(), "files": self._new}
        try:
            tmp.write_text(json.dumps(record), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:  # a cache that cannot be written only costs the next scan time
            pass
        finally:
            tmp.unlink(missing_ok=True)
