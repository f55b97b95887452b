"""Which files of an open repository changed on disk since it was read: a stat per file.

An agent edits files between two questions; an open workspace must answer from what
is on disk now, within a second or two, on repositories of thousands of files. Reading
every file again is too slow, so each chunkable file's modification time and size are
kept (``Stamps``) and compared: an ``os.stat`` each, milliseconds for thousands. A file
edited where it is has only its own stamp moved: just it is read again
(``edited_in_place``). A file added, deleted or replaced (editors that save through a
renamed temporary file) moves its folder's stamp: the caller then reads the repository
again (the scan cache reads only the files whose stamps changed). Either way the files'
content digests are compared (``changed_files``), so a file touched but not changed
costs nothing more.
"""

from __future__ import annotations

import hashlib
import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from nexus.ingest.repository import DiskContents, Repository

#: A file's or folder's (modification time in ns, size in bytes); None when it is gone.
Stamp = tuple[int, int] | None


def _stamp(path: str | Path) -> Stamp:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


@dataclass(frozen=True)
class Stamps:
    """The stamps of a folder repository's chunkable files (by path in the repository,
    with the file on disk) and of every folder its walk entered: a file added to a
    folder that held only folders (hono's ``src/helper/``) moves that folder's stamp."""

    files: dict[str, tuple[str, Stamp]]  # path in the repository -> (file on disk, stamp)
    folders: dict[str, Stamp]

    @classmethod
    def of(cls, repo: Repository, root: Path) -> Stamps | None:
        """The stamps of ``repo`` read from the folder ``root`` (None for a zip: it does
        not change under us)."""
        if not isinstance(repo.contents, DiskContents):
            return None
        # Plain strings: os.stat takes them a fifth faster than Paths (thousands a call).
        paths = {info.path: repo.contents.path_of(info.path) for info in repo.chunkable_files()}
        entered = map(str, repo.contents.folders)
        folders = {str(root), *entered, *(str(path.parent) for path in paths.values())}
        files = {rel: (str(path), _stamp(path)) for rel, path in paths.items()}
        return cls(files, {folder: _stamp(folder) for folder in folders})

    def edited(self) -> list[str]:
        """The files whose stamp moved (a file gone has the stamp None)."""
        return [rel for rel, (path, stamp) in self.files.items() if _stamp(path) != stamp]

    def folders_moved(self) -> bool:
        """Whether a folder's stamp moved: a file was added, deleted or replaced."""
        return any(_stamp(folder) != stamp for folder, stamp in self.folders.items())


def edited_in_place(repo: Repository, paths: list[str]) -> Repository:
    """``repo`` with the digests of ``paths`` (files edited where they are) read again."""
    digests = dict(repo.digests)
    for path in paths:
        digests[path] = hashlib.sha256(repo.contents[path]).hexdigest()
    return replace(repo, digests=digests)


def changed_files(before: Repository, after: Repository) -> set[str]:
    """Chunkable paths whose content differs between two reads, or that one read lacks."""
    old = {info.path for info in before.chunkable_files()}
    new = {info.path for info in after.chunkable_files()}
    both = old & new
    return (old ^ new) | {p for p in both if before.digest(p) != after.digest(p)}


#: inotify events that mean a file's bytes or a folder's entries changed.
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_WATCHED = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
) | (_IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF)


class Watch:
    """The kernel's word on whether anything under the folders moved (Linux inotify).

    A stat of every file costs ~50-150 ms on 6,400 files on a busy machine: too much for
    every question. The kernel queues an event during the write itself, so "no event
    since the last look" means nothing changed, and the stats can be skipped; any event
    (or a full queue) sends the caller to ``Stamps``. Where inotify is missing (not
    Linux, or the watch limit is reached), ``changed`` always says True: stat everything.
    """

    def __init__(self) -> None:
        self._fd = -1
        try:
            import ctypes

            self._libc = ctypes.CDLL(None, use_errno=True)
            self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            self._fd = -1
        # The descriptor is closed with the watch (a process may open many workspaces).
        self._closer = weakref.finalize(self, os.close, self._fd) if self._fd >= 0 else None

    def add(self, folders: Iterable[str]) -> None:
        """Watch these folders too (again is harmless); past the limit, give up watching."""
        for folder in folders:
            if (
                self._fd >= 0
                and self._libc.inotify_add_watch(self._fd, os.fsencode(folder), _WATCHED) < 0
            ):
                self.close()

    def changed(self) -> bool:
        """Whether any event came since the last call (True when not watching)."""
        if self._fd < 0:
            return True
        seen = False
        while True:
            try:
                seen |= bool(os.read(self._fd, 1 << 16))
            except BlockingIOError:
                return seen
            except OSError:
                self.close()
                return True

    def close(self) -> None:
        if self._closer is not None:
            self._closer()  # once, whoever calls it first
        self._fd = -1
