"""What reading a repository hands on, from a folder or a zip alike: ``Repository``,
its ``FileRef``s, the settings and limits (``IngestSettings``), ``IngestError``, and
the decoding and classification every file goes through."""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from nexus.ingest.classify import DEFAULT_MAX_FILE_BYTES, classify
from nexus.ingest.selection import DEFAULT_SELECTION, FileSelection
from nexus.types import CHUNKABLE_LANGUAGES, Category, FileInfo, ScanReport, SourceFile

DEFAULT_IGNORES: tuple[str, ...] = (
    ".git/",
    ".hg/",
    ".svn/",
    "node_modules/",
    "bower_components/",
    "dist/",
    "build/",
    "coverage/",
    ".nyc_output/",
    ".next/",
    ".nuxt/",
    ".svelte-kit/",
    ".turbo/",
    ".parcel-cache/",
    ".cache/",
    "out/",
    ".venv/",
    "venv/",
    "__pycache__/",
    ".idea/",
    ".DS_Store",
    "__MACOSX/",
)

_BOM = b"\xef\xbb\xbf"

_REPLACEMENT = "\ufffd".encode()

NOT_KEPT = frozenset({Category.BINARY, Category.TOO_LARGE})


class IngestError(ValueError):
    """A repository could not be read; the message says what was wrong and how to fix it."""


class OutsideRoots(IngestError):
    """A path outside the allowed roots (each face adds its own way around: the
    dashboard's is an upload)."""


@dataclass(frozen=True)
class IngestSettings:
    """Limits and ignore rules for reading a repository. Checks itself on construction."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_zip_entries: int = 20_000
    max_zip_total_bytes: int = 200_000_000
    max_zip_ratio: float = 100
    ignore_patterns: tuple[str, ...] = ()
    default_ignores: tuple[str, ...] = DEFAULT_IGNORES
    allowed_roots: tuple[Path, ...] | None = None
    selection: FileSelection = DEFAULT_SELECTION  # which chunkable files are chunked
    # Where a folder's scan is remembered by each file's stat (``nexus.ingest.scan_cache``), so
    # opening it again reads only changed files; None reads every file.
    scan_cache: Path | None = None

    def __post_init__(self) -> None:
        for name in ("max_file_bytes", "max_zip_entries", "max_zip_total_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if isinstance(self.max_zip_ratio, bool) or not self.max_zip_ratio >= 1:
            raise ValueError(f"max_zip_ratio must be a number >= 1, got {self.max_zip_ratio!r}")
        for name in ("ignore_patterns", "default_ignores"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ValueError(f"{name} must be a tuple of patterns, not a string: ({value!r},)")
            patterns = tuple(value)
            if not all(isinstance(p, str) for p in patterns):
                raise ValueError(f"{name} must contain only strings, got {patterns!r}")
            try:
                pathspec.GitIgnoreSpec.from_lines(patterns)
            except Exception as exc:  # pathspec raises several types for bad patterns
                raise ValueError(f"{name} holds an invalid gitignore pattern: {exc}") from exc
            object.__setattr__(self, name, patterns)
        if self.allowed_roots is not None:
            if isinstance(self.allowed_roots, str | Path):
                raise ValueError("allowed_roots must be a tuple of paths, e.g. (Path('repos'),)")
            roots = tuple(Path(root) for root in self.allowed_roots)
            if not roots:
                raise ValueError("allowed_roots=() would refuse every path; use None for no limit")
            object.__setattr__(self, "allowed_roots", roots)


@dataclass(frozen=True)
class FileRef:
    """Where one kept file's bytes are: small and picklable, so that a worker
    process can read and decode the file itself (``load``)."""

    info: FileInfo
    disk_path: str | None = None  # a directory's file, read when loaded (at most ``cap`` bytes)
    data: bytes | None = None  # a zip's file, held in memory
    cap: int = DEFAULT_MAX_FILE_BYTES

    def load(self) -> SourceFile:
        """The decoded file (IngestError if a file on disk can no longer be read)."""
        if self.disk_path is None:
            return decode_source(self.info, self.data or b"")
        return decode_source(self.info, _read_again(self.info.path, Path(self.disk_path), self.cap))


class DiskContents(Mapping[str, bytes]):
    """A directory's kept files, read from disk on each access: a repository of
    any size holds only its paths in memory. ``folders``: every folder the walk
    entered (what a watcher of new files must watch, ``nexus.freshness``)."""

    def __init__(self, paths: dict[str, Path], cap: int, folders: Sequence[Path] = ()) -> None:
        self._paths = paths
        self.cap = cap
        self.folders = tuple(folders)

    def path_of(self, rel: str) -> Path:
        return self._paths[rel]

    def __getitem__(self, rel: str) -> bytes:
        return _read_again(rel, self._paths[rel], self.cap)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, rel: object) -> bool:
        return rel in self._paths


def _read_again(rel: str, path: Path, cap: int) -> bytes:
    try:
        return read_path(path, cap)
    except OSError as exc:
        raise IngestError(f"{rel} could not be read again: {exc.strerror or exc}") from exc


@dataclass(frozen=True)
class Repository:
    """A repository: every file seen (sorted by path) and the kept contents.

    ``contents`` maps paths to raw bytes for every listed file that is neither
    binary nor too large; treat it as read-only. A zip's contents are held in
    memory; a directory's are read from disk when asked for (``DiskContents``).
    """

    name: str
    files: tuple[FileInfo, ...]
    notes: tuple[str, ...] = ()
    contents: Mapping[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    # sha256 (hex) of kept files' bytes, as a folder's scan read them or remembered them.
    digests: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    _index: dict[str, FileInfo] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        files = tuple(sorted(self.files, key=lambda info: info.path))
        object.__setattr__(self, "files", files)
        object.__setattr__(self, "_index", {info.path: info for info in files})

    def read(self, path: str) -> SourceFile:
        """Decode one file (see ``decode_source``); KeyError if the path is not listed."""
        info = self._index.get(path)
        if info is None:
            raise KeyError(f"no file {path!r} in repository {self.name!r}")
        return self.ref(path).load()

    def digest(self, path: str) -> str:
        """sha256 (hex) of a listed file's kept bytes (of no bytes for a file not kept):
        from the scan when it has it, else hashed now."""
        found = self.digests.get(path)
        if found is None:
            found = hashlib.sha256(self.contents.get(path, b"")).hexdigest()
        return found

    def ref(self, path: str) -> FileRef:
        """Where a listed file's bytes are (IngestError if they were not kept)."""
        info = self._index[path]
        if path not in self.contents:
            raise IngestError(f"{path} was not kept in memory ({info.category}: {info.reason})")
        if isinstance(self.contents, DiskContents):
            return FileRef(info, disk_path=str(self.contents.path_of(path)), cap=self.contents.cap)
        return FileRef(info, data=self.contents[path])

    def chunkable_files(self) -> list[FileInfo]:
        """The files the selection chunks, in path order."""
        return [info for info in self.files if info.chunkable]

    def refs(self) -> Iterator[FileRef]:
        """The chunkable files, in path order, to be read where they are chunked."""
        for info in self.chunkable_files():
            yield self.ref(info.path)

    def source_files(self) -> Iterator[SourceFile]:
        """The chunkable files (see ``FileInfo.chunkable``), decoded, in path order."""
        for ref in self.refs():
            yield ref.load()

    def report(self) -> ScanReport:
        return ScanReport(repo=self.name, files=self.files, notes=self.notes)


def decode_source(info: FileInfo, raw: bytes) -> SourceFile:
    """Decode bytes as UTF-8 for parsing.

    The BOM is dropped (and recorded) so offsets start at the first character;
    invalid bytes become U+FFFD and are counted rather than failing the file;
    CRLF is kept so line numbers match the file on disk.
    """
    had_bom = raw.startswith(_BOM)
    if had_bom:
        raw = raw[len(_BOM) :]
    text = raw.decode("utf-8", errors="replace")
    # Genuine U+FFFD characters in the input are not decode errors.
    decode_errors = text.count("\ufffd") - raw.count(_REPLACEMENT)
    return SourceFile(
        info=info,
        text=text,
        data=text.encode("utf-8"),
        decode_errors=decode_errors,
        had_bom=had_bom,
    )


def real_path(path: Path) -> Path:
    """``path`` with every symlink resolved, without raising on a loop.

    ``Path.resolve`` raises RuntimeError for a loop on Python 3.11; ``realpath``
    stops where the loop starts, and ``symlink_loops`` says whether it did.
    """
    return Path(os.path.realpath(path))


def symlink_loops(path: Path) -> bool:
    """Whether following ``path`` goes round a symlink loop (ELOOP)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def finish(
    name: str, files: list[FileInfo], contents: Mapping[str, bytes], notes: list[str]
) -> Repository:
    if not files:
        notes.append("empty repository: no files to scan")
    elif not any(info.chunkable for info in files):
        notes.append(
            "no chunkable files found (Nexus chunks "
            f"{', '.join(sorted(CHUNKABLE_LANGUAGES))} source files)"
        )
    return Repository(name=name, files=tuple(files), notes=tuple(notes), contents=contents)


def read_path(path: Path, cap: int) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(cap)


def classified(
    rel: str, data: bytes, size: int, settings: IngestSettings, siblings: frozenset[str] | None
) -> tuple[FileInfo, bytes | None]:
    """The file's classification (with the selection's verdict), and its bytes if kept."""
    info = classify(
        rel,
        data,
        size,
        max_file_bytes=settings.max_file_bytes,
        siblings=siblings,
        selection=settings.selection,
    )
    return info, (None if info.category in NOT_KEPT else data)


def skipped(rel: str, reason: str, size: int = 0) -> FileInfo:
    return FileInfo(
        path=rel, size=size, category=Category.UNSUPPORTED, language=None, reason=reason
    )
