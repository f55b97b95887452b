"""Reading a folder: an iterative walk that never follows symlinked directories,
remembers each file's stat in the scan cache, and holds no contents (files are read
again when asked for)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from nexus.ingest import repository
from nexus.ingest.classify import BINARY_SNIFF_BYTES
from nexus.ingest.ignore import IgnoreRules
from nexus.ingest.repository import (
    NOT_KEPT,
    IngestError,
    IngestSettings,
    classified,
    real_path,
    skipped,
    symlink_loops,
)
from nexus.ingest.scan_cache import ScanCache
from nexus.types import FileInfo


@dataclass
class _Found:
    """What a folder's walk found: files, where each kept one lies, their digests."""

    files: list[FileInfo] = field(default_factory=list)
    kept: dict[str, Path] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cache: ScanCache | None = None


def _scan_context(settings: IngestSettings, siblings: frozenset[str]) -> str:
    """What a file's classification depends on besides its bytes and path."""
    text = f"{settings.max_file_bytes}\0{settings.selection!r}\0" + "\0".join(sorted(siblings))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def read_directory(root: Path, settings: IngestSettings) -> _Found:
    """Walk ``root`` iteratively in sorted order, never following symlinked directories.

    Returns the files, where each kept file lies (contents are read again when
    needed, not held), their digests and notes. With ``settings.scan_cache``, a file
    whose stat matches the last scan's is not read.
    """
    rules = IgnoreRules(settings)
    cache = None if settings.scan_cache is None else ScanCache(settings.scan_cache, root)
    found = _Found(cache=cache)
    files, notes = found.files, found.notes
    pending = [""]
    while pending:
        rel_dir = pending.pop()
        try:
            with os.scandir(root / rel_dir) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            notes.append(f"could not list {rel_dir or '.'}: {exc.strerror or exc}")
            continue
        for entry in entries:
            if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False):
                try:
                    raw = repository.read_path(Path(entry.path), settings.max_file_bytes)
                except OSError as exc:
                    notes.append(f"could not read {rel_dir or '.'}/.gitignore: {exc.strerror}")
                    continue
                rules.add_gitignore(rel_dir, raw)
        subdirs: list[str] = []
        siblings = frozenset(entry.name.lower() for entry in entries)
        context = _scan_context(settings, siblings) if cache is not None else ""
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if rules.ignored(rel, is_dir):
                continue
            if is_dir:
                subdirs.append(rel)
            elif entry.is_symlink():
                _add_symlink(root, rel, Path(entry.path), settings, found, siblings, context)
            elif entry.is_file(follow_symlinks=False):
                _add_disk_file(rel, Path(entry.path), settings, found, siblings, context)
            else:
                files.append(skipped(rel, "not a regular file (fifo, socket or device)"))
        pending.extend(reversed(subdirs))
    notes.extend(rules.summary())
    if cache is not None:
        cache.save()
    return found


def _add_symlink(
    root: Path,
    rel: str,
    link: Path,
    settings: IngestSettings,
    found: _Found,
    siblings: frozenset[str],
    context: str,
) -> None:
    files = found.files
    target = real_path(link)
    if not target.is_relative_to(root):
        files.append(skipped(rel, "symlink leaves the repository"))
    elif symlink_loops(target):
        files.append(skipped(rel, "symlink loop (it links back to itself)"))
    elif not target.exists():
        files.append(skipped(rel, "broken symlink"))
    elif target.is_dir():
        files.append(skipped(rel, "symlinked directory not followed (avoids cycles)"))
    elif target.is_file():
        _add_disk_file(rel, target, settings, found, siblings, context)
    else:
        files.append(skipped(rel, "symlink to something that is not a regular file"))


def read_file(
    path: str | Path,
    settings: IngestSettings = IngestSettings(),  # noqa: B008 - frozen, so sharing is safe
) -> tuple[FileInfo, bytes | None]:
    """Read and classify one file on disk as a repository walk would, by its file name.

    The same limits apply: a file over ``max_file_bytes`` is only sniffed, and the
    contents come back only for a file that is kept (neither binary nor too large).
    A file that cannot be read is an unsupported ``FileInfo`` saying why. Raises
    IngestError for a path that is missing, not a regular file, or a symlink loop.
    """
    path = Path(path).expanduser()
    target = real_path(path)
    if symlink_loops(target):
        raise IngestError(f"{path} is a symlink loop (it links back to itself)")
    if not target.exists():
        raise IngestError(f"{path} does not exist")
    if not target.is_file():
        raise IngestError(f"{path} is not a regular file")
    try:  # the folder's other files tell a hand-written .d.ts from compiler output
        siblings: frozenset[str] | None = frozenset(n.lower() for n in os.listdir(path.parent))
    except OSError:
        siblings = None
    return _read_disk_file(path.name, target, settings, siblings)


def _add_disk_file(
    rel: str,
    path: Path,
    settings: IngestSettings,
    found: _Found,
    siblings: frozenset[str],
    context: str,
) -> None:
    """Classify one file (from the scan cache when its stat is unchanged) and note
    where it lies and its digest if it is kept (read again when needed: nothing is held)."""
    cache = found.cache
    st = None
    if cache is not None:
        try:
            st = path.stat()
        except OSError:
            st = None
        hit = cache.lookup(rel, st, context) if st is not None else None
        if hit is not None:
            info, digest = hit
            found.files.append(info)
            if info.category not in NOT_KEPT:
                found.kept[rel], found.digests[rel] = path, digest
            return
    info, data = _read_disk_file(rel, path, settings, siblings)
    found.files.append(info)
    digest = hashlib.sha256(data).hexdigest() if data is not None else ""
    if data is not None:
        found.kept[rel], found.digests[rel] = path, digest
    if cache is not None and st is not None:
        cache.remember(rel, st, context, info, digest)


def _read_disk_file(
    rel: str, path: Path, settings: IngestSettings, siblings: frozenset[str] | None = None
) -> tuple[FileInfo, bytes | None]:
    limit = settings.max_file_bytes
    try:
        size = path.stat().st_size
        # Too-large files are only sniffed; the rest are read with a cap, since
        # a file may grow between stat and read.
        data = repository.read_path(path, BINARY_SNIFF_BYTES if size > limit else limit + 1)
    except OSError as exc:
        return skipped(rel, f"could not read: {exc.strerror or exc}"), None
    if len(data) > limit:
        size = max(size, len(data))
    elif size <= limit:
        size = len(data)
    return classified(rel, data, size, settings, siblings)
