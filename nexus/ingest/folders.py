"""Reading a folder: an iterative walk that never follows symlinked directories,
remembers each file's stat in the scan cache, and holds no contents (files are read
again when asked for)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
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
class Found:
    """What a folder's walk found: files, where each kept one lies, their digests, the
    folders it entered."""

    files: list[FileInfo] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    kept: dict[str, Path] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cache: ScanCache | None = None


def _scan_context(settings: IngestSettings, siblings: frozenset[str]) -> str:
    """What a file's classification depends on besides its bytes and path."""
    text = f"{settings.max_file_bytes}\0{settings.selection!r}\0" + "\0".join(sorted(siblings))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def walk_directory(root: Path, settings: IngestSettings, found: Found) -> Iterator[FileInfo]:
    """Each file of ``root`` as it is classified, in path order, never following
    symlinked directories. ``found`` fills as the walk goes: the files, where each
    kept file lies (contents are read again when needed, not held), their digests
    and, at the end, the notes. With ``settings.scan_cache``, a file whose stat
    matches the last scan's is not read.

    The walk is depth-first with each folder's entries sorted as their paths sort (a
    folder ``a`` by ``a/``, so ``a.js`` comes before ``a/x.js`` and ``a0.js`` after):
    the files arrive in ``Repository`` order, so a caller can chunk them while the
    rest of the folder is still being read.
    """
    rules = IgnoreRules(settings)
    found.cache = None if settings.scan_cache is None else ScanCache(settings.scan_cache, root)
    open_folders = [_list_folder(root, "", settings, rules, found)]
    while open_folders:
        folder = open_folders[-1]
        entry = next(folder.entries, None)
        if entry is None:
            open_folders.pop()
            continue
        rel = f"{folder.rel_dir}/{entry.name}" if folder.rel_dir else entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if rules.ignored(rel, is_dir):
            continue
        if is_dir:
            open_folders.append(_list_folder(root, rel, settings, rules, found))
            continue
        if entry.is_symlink():
            _add_symlink(root, rel, Path(entry.path), settings, found, folder, rules)
        elif entry.is_file(follow_symlinks=False):
            _add_disk_file(rel, Path(entry.path), settings, found, folder)
        else:
            found.files.append(skipped(rel, "not a regular file (fifo, socket or device)"))
        yield found.files[-1]
    found.notes.extend(rules.summary())
    if found.cache is not None:
        found.cache.save()


@dataclass
class _Folder:
    """A folder being walked: its entries still to visit, and what its files'
    classification depends on (the names beside them, the scan cache's context)."""

    rel_dir: str
    entries: Iterator[os.DirEntry[str]]
    siblings: frozenset[str]
    context: str


def _list_folder(
    root: Path, rel_dir: str, settings: IngestSettings, rules: IgnoreRules, found: Found
) -> _Folder:
    """List a folder in path order and load its .gitignore (before its entries are
    checked against the rules)."""
    found.folders.append(root / rel_dir)
    try:
        with os.scandir(root / rel_dir) as scan:
            entries = sorted(scan, key=_path_order)
    except OSError as exc:
        found.notes.append(f"could not list {rel_dir or '.'}: {exc.strerror or exc}")
        entries = []
    for entry in entries:
        if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False):
            try:
                raw = repository.read_path(Path(entry.path), settings.max_file_bytes)
            except OSError as exc:
                found.notes.append(f"could not read {rel_dir or '.'}/.gitignore: {exc.strerror}")
                continue
            rules.add_gitignore(rel_dir, raw)
    siblings = frozenset(entry.name.lower() for entry in entries)
    context = _scan_context(settings, siblings) if found.cache is not None else ""
    return _Folder(rel_dir, iter(entries), siblings, context)


def _path_order(entry: os.DirEntry[str]) -> str:
    """The entry's place among its folder's paths: a folder sorts as ``name/``."""
    return entry.name + "/" if entry.is_dir(follow_symlinks=False) else entry.name


def _add_symlink(
    root: Path,
    rel: str,
    link: Path,
    settings: IngestSettings,
    found: Found,
    folder: _Folder,
    rules: IgnoreRules,
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
    elif target.is_file() and _walked(rules, target.relative_to(root).as_posix()):
        # Its target is read at its own path: read twice, it came back twice in search.
        files.append(skipped(rel, f"symlink to {target.relative_to(root).as_posix()}, read there"))
    elif target.is_file():  # a file the walk does not reach (an ignored folder's)
        _add_disk_file(rel, target, settings, found, folder)
    else:
        files.append(skipped(rel, "symlink to something that is not a regular file"))


def _walked(rules: IgnoreRules, rel: str) -> bool:
    """Whether the walk reaches the file ``rel``: neither it nor a folder above it is
    ignored (by the rules known so far; nothing is counted)."""
    parts = rel.split("/")
    folders = ("/".join(parts[:depth]) for depth in range(1, len(parts)))
    return not any(rules.rule(f, is_dir=True) for f in folders) and not rules.rule(rel, False)


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
    found: Found,
    folder: _Folder,
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
        hit = cache.lookup(rel, st, folder.context) if st is not None else None
        if hit is not None:
            info, digest = hit
            found.files.append(info)
            if info.category not in NOT_KEPT:
                found.kept[rel], found.digests[rel] = path, digest
            return
    info, data = _read_disk_file(rel, path, settings, folder.siblings)
    found.files.append(info)
    digest = hashlib.sha256(data).hexdigest() if data is not None else ""
    if data is not None:
        found.kept[rel], found.digests[rel] = path, digest
    if cache is not None and st is not None:
        cache.remember(rel, st, folder.context, info, digest)


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
