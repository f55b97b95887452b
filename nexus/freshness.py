"""Which files of an open repository changed on disk since it was read: a stat per file.

An agent edits files between two questions; an open workspace must answer from what
is on disk now, within a second or two, on repositories of thousands of files. Reading
every file again is too slow, so each chunkable file's modification time and size are
kept (``Stamps``) and compared: an ``os.stat`` each, milliseconds for thousands. A file
added or deleted changes its folder's modification time, so the folders are stamped
too; when anything moved, the caller reads the repository again (the scan cache reads
only the files whose stamps changed) and compares the files' content digests, so a
file touched but not changed costs nothing more.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from nexus.ingest.repository import DiskContents, Repository

#: A file's or folder's (modification time in ns, size in bytes); None when it is gone.
Stamp = tuple[int, int] | None


def _stamp(path: Path) -> Stamp:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


@dataclass(frozen=True)
class Stamps:
    """The stamps of a folder repository's chunkable files and of the folders holding them."""

    files: dict[Path, Stamp]
    folders: dict[Path, Stamp]

    @classmethod
    def of(cls, repo: Repository, root: Path) -> Stamps | None:
        """The stamps of ``repo`` read from the folder ``root`` (None for a zip: it does
        not change under us)."""
        if not isinstance(repo.contents, DiskContents):
            return None
        paths = [repo.contents.path_of(info.path) for info in repo.chunkable_files()]
        folders = {root, *(path.parent for path in paths)}
        return cls({p: _stamp(p) for p in paths}, {f: _stamp(f) for f in folders})

    def moved(self) -> bool:
        """Whether any file or folder has another stamp now (stops at the first)."""
        return any(_stamp(p) != s for p, s in self.files.items()) or any(
            _stamp(f) != s for f, s in self.folders.items()
        )


def changed_files(before: Repository, after: Repository) -> set[str]:
    """Chunkable paths whose content differs between two reads, or that one read lacks."""
    old = {info.path for info in before.chunkable_files()}
    new = {info.path for info in after.chunkable_files()}
    both = old & new
    return (old ^ new) | {p for p in both if before.digest(p) != after.digest(p)}
