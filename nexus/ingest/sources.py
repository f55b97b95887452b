"""Read a repository -- a directory, a .zip path or uploaded zip bytes -- safely into memory.

Everything a user hands us is hostile until checked: zips may climb out of the
project (``../evil.js``), expand a thousandfold, or lie about their sizes;
directories may hold symlinks into the rest of the disk or cycles. Nothing is
ever written to disk: file contents live in memory, each capped at
``max_file_bytes``, and larger files are only sniffed (their first 8000 bytes).

Ignore rules, lowest priority first: ``default_ignores``, then each ``.gitignore``
from the root down (each relative to its own directory), then ``ignore_patterns``.
Like git, a file inside an ignored directory cannot be re-included, and ignored
directories are not walked. Ignored files are not listed; the notes count them.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import stat
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pathspec

from nexus.ingest.classify import BINARY_SNIFF_BYTES, DEFAULT_MAX_FILE_BYTES, classify
from nexus.ingest.scan_cache import ScanCache
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

#: Compression-ratio limits only apply to entries (and archives) larger than this:
#: a small file of blanks legitimately compresses 100x, and is harmless anyway.
ZIP_RATIO_MIN_BYTES = 1 << 20

_PROJECT_ROOT = Path(__file__).resolve().parents[2]
_BOM = b"\xef\xbb\xbf"
_REPLACEMENT = "\ufffd".encode()
_NOT_KEPT = frozenset({Category.BINARY, Category.TOO_LARGE})
_DRIVE = re.compile(r"^[A-Za-z]:")


class IngestError(ValueError):
    """A repository could not be read; the message says what was wrong and how to fix it."""


#: Colon-separated folders a served dashboard may open (default: cwd and sample_repos).
ALLOWED_ROOTS_ENV = "NEXUS_ALLOWED_ROOTS"


def default_allowed_roots() -> tuple[Path, ...]:
    """Roots a server allows: ``$NEXUS_ALLOWED_ROOTS`` if set, else the working
    directory and the sample repos."""
    configured = os.environ.get(ALLOWED_ROOTS_ENV, "")
    roots = tuple(Path(p).expanduser() for p in configured.split(os.pathsep) if p)
    return roots or (Path.cwd(), _PROJECT_ROOT / "sample_repos")


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
    any size holds only its paths in memory."""

    def __init__(self, paths: dict[str, Path], cap: int) -> None:
        self._paths = paths
        self.cap = cap

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
        return _read_path(path, cap)
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


def open_repository(
    target: str | Path | bytes,
    *,
    name: str | None = None,
    settings: IngestSettings = IngestSettings(),  # noqa: B008 - frozen, so sharing is safe
) -> Repository:
    """Read a directory, a .zip file or zip bytes into a ``Repository``.

    Raises IngestError for a missing path, a path outside ``allowed_roots``, a
    corrupt or empty zip, and any zip that breaks the safety limits. An empty
    directory is not an error: it gives a repository with no files and a note.
    """
    if isinstance(target, bytes | bytearray | memoryview):
        return _read_zip(io.BytesIO(bytes(target)), name, "upload", settings)
    path = Path(target).expanduser()
    _check_allowed(path, settings.allowed_roots)
    if not path.exists() and not path.is_symlink():
        raise IngestError(f"{path} does not exist; pass a repository directory or a .zip file")
    resolved = real_path(path)
    if symlink_loops(resolved):
        raise IngestError(
            f"{path} is a symlink loop (it links back to itself); pass the real folder or zip"
        )
    if resolved.is_dir():
        found = _read_directory(resolved, settings)
        contents = DiskContents(found.kept, settings.max_file_bytes)
        repo = _finish(name or resolved.name or "repository", found.files, contents, found.notes)
        return replace(repo, digests=found.digests)
    if resolved.is_file() and (resolved.suffix.lower() == ".zip" or zipfile.is_zipfile(resolved)):
        return _read_zip(resolved, name, resolved.stem, settings)
    raise IngestError(f"{path} is neither a directory nor a .zip file")


def _check_allowed(path: Path, roots: tuple[Path, ...] | None) -> None:
    """Refuse a path outside ``roots`` with the same answer whether it exists or not.

    The path is first checked as written (``..`` folded, nothing read from disk), so
    nothing outside the roots is looked at; a path that passes is checked again with
    its symlinks resolved, since a link inside a root may point anywhere.
    """
    if roots is None:
        return
    written = Path(os.path.abspath(path))
    bases = [Path(os.path.abspath(root)) for root in roots] + [real_path(root) for root in roots]
    inside = any(written.is_relative_to(base) for base in bases) and any(
        real_path(path).is_relative_to(real_path(root)) for root in roots
    )
    if not inside:
        shown = ", ".join(str(real_path(root)) for root in roots)
        raise IngestError(
            f"{path} lies outside the allowed roots ({shown}); "
            "move or copy the repository under one of them, or upload it as a zip"
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


def _finish(
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


# --- ignore rules ------------------------------------------------------------


class _IgnoreRules:
    """Layered gitignore specs; later layers (deeper .gitignore, extra patterns) win."""

    def __init__(self, settings: IngestSettings) -> None:
        self._defaults = pathspec.GitIgnoreSpec.from_lines(settings.default_ignores)
        self._extra = pathspec.GitIgnoreSpec.from_lines(settings.ignore_patterns)
        self._gitignores: dict[str, pathspec.GitIgnoreSpec] = {}  # "" or "a/b/" -> spec
        self._dir_memo: dict[str, bool] = {}
        self.counts: Counter[tuple[str, str]] = Counter()  # (files|directories, source)
        self.notes: list[str] = []

    def add_gitignore(self, directory: str, raw: bytes) -> None:
        """Load the .gitignore of ``directory`` ("" for the root)."""
        lines = raw.decode("utf-8", errors="replace").splitlines()
        where = f"{directory}/.gitignore" if directory else ".gitignore"
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except Exception:  # keep the good lines of a file with a bad pattern
            good = [line for line in lines if _valid_pattern(line)]
            self.notes.append(f"skipped {len(lines) - len(good)} invalid pattern(s) in {where}")
            spec = pathspec.GitIgnoreSpec.from_lines(good)
        self._gitignores[f"{directory}/" if directory else ""] = spec

    def rule(self, rel: str, is_dir: bool) -> str | None:
        """Which rule source ignores ``rel`` itself (ancestors not checked), or None."""
        parts = rel.split("/")
        layers: list[tuple[str, str, pathspec.GitIgnoreSpec]] = [
            ("", "default ignores", self._defaults)
        ]
        for depth in range(len(parts)):
            base = "/".join(parts[:depth]) + "/" if depth else ""
            if base in self._gitignores:
                layers.append((base, ".gitignore", self._gitignores[base]))
        layers.append(("", "ignore_patterns", self._extra))
        verdict: str | None = None
        for base, source, spec in layers:
            include = spec.check_file(rel[len(base) :] + ("/" if is_dir else "")).include
            if include is not None:
                verdict = source if include else None
        return verdict

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Check ``rel`` and count it if ignored (its ancestors must already be checked)."""
        source = self.rule(rel, is_dir)
        if source is not None:
            self.counts[("directories" if is_dir else "files", source)] += 1
        return source is not None

    def ignored_with_ancestors(self, rel: str) -> bool:
        """For flat listings (zips): a file is ignored if any ancestor directory is."""
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            directory = "/".join(parts[:depth])
            if directory not in self._dir_memo:
                self._dir_memo[directory] = self.ignored(directory, is_dir=True)
            if self._dir_memo[directory]:
                return True
        return self.ignored(rel, is_dir=False)

    def summary(self) -> list[str]:
        if not self.counts:
            return list(self.notes)
        files = sum(n for (kind, _), n in self.counts.items() if kind == "files")
        dirs = sum(n for (kind, _), n in self.counts.items() if kind == "directories")
        by_source = Counter[str]()
        for (_, source), n in self.counts.items():
            by_source[source] += n
        sources = ", ".join(f"{source}: {n}" for source, n in sorted(by_source.items()))
        file_word = "file" if files == 1 else "files"
        dir_word = "directory" if dirs == 1 else "directories"
        line = (
            f"{files} {file_word} and {dirs} {dir_word} ignored ({sources}); "
            "ignored directories are not read"
        )
        return [*self.notes, line]


def _valid_pattern(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except Exception:
        return False
    return True


# --- directories -------------------------------------------------------------


def _read_directory(root: Path, settings: IngestSettings) -> _Found:
    """Walk ``root`` iteratively in sorted order, never following symlinked directories.

    Returns the files, where each kept file lies (contents are read again when
    needed, not held), their digests and notes. With ``settings.scan_cache``, a file
    whose stat matches the last scan's is not read.
    """
    rules = _IgnoreRules(settings)
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
                    raw = _read_path(Path(entry.path), settings.max_file_bytes)
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
                files.append(_skipped(rel, "not a regular file (fifo, socket or device)"))
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
        files.append(_skipped(rel, "symlink leaves the repository"))
    elif symlink_loops(target):
        files.append(_skipped(rel, "symlink loop (it links back to itself)"))
    elif not target.exists():
        files.append(_skipped(rel, "broken symlink"))
    elif target.is_dir():
        files.append(_skipped(rel, "symlinked directory not followed (avoids cycles)"))
    elif target.is_file():
        _add_disk_file(rel, target, settings, found, siblings, context)
    else:
        files.append(_skipped(rel, "symlink to something that is not a regular file"))


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
            if info.category not in _NOT_KEPT:
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
        data = _read_path(path, BINARY_SNIFF_BYTES if size > limit else limit + 1)
    except OSError as exc:
        return _skipped(rel, f"could not read: {exc.strerror or exc}"), None
    if len(data) > limit:
        size = max(size, len(data))
    elif size <= limit:
        size = len(data)
    return _classified(rel, data, size, settings, siblings)


def _read_path(path: Path, cap: int) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(cap)


def _classified(
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
    return info, (None if info.category in _NOT_KEPT else data)


def _skipped(rel: str, reason: str, size: int = 0) -> FileInfo:
    return FileInfo(
        path=rel, size=size, category=Category.UNSUPPORTED, language=None, reason=reason
    )


# --- zips --------------------------------------------------------------------


def _read_zip(
    source: Path | io.BytesIO, name: str | None, fallback_name: str, settings: IngestSettings
) -> Repository:
    """Check a zip's entries against the safety limits, then read it into memory.

    The name defaults to the single top-level folder, else ``fallback_name``.
    """
    shown = source.name if isinstance(source, Path) else "the uploaded bytes"
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise IngestError(
            f"not a valid zip file: {shown} ({exc}); re-create it with 'zip -r' or your OS"
        ) from exc
    with archive:
        infos = archive.infolist()
        if not infos:
            raise IngestError(f"not a valid zip file: {shown} has no entries")
        entries, notes = _check_zip(infos, settings)
        entries, top = _strip_top_folder(entries)
        if top:
            notes.append(f"stripped the single top-level folder '{top}/' from all paths")
        files, contents = _read_zip_entries(archive, entries, settings, notes)
    return _finish(name or top or fallback_name, files, contents, notes)


def _check_zip(
    infos: list[zipfile.ZipInfo], settings: IngestSettings
) -> tuple[dict[str, zipfile.ZipInfo], list[str]]:
    """Validate every entry before anything is decompressed; return path -> entry."""
    if len(infos) > settings.max_zip_entries:
        raise IngestError(
            f"zip has {len(infos):,} entries, over the limit of {settings.max_zip_entries:,} "
            "(max_zip_entries); zip only the project, without node_modules or build output"
        )
    entries: dict[str, zipfile.ZipInfo] = {}
    notes: list[str] = []
    duplicates = macos = 0
    total = compressed = 0
    nul_names: list[str] = []
    for info in infos:
        # zipfile cuts a name at its first NUL ("a.js\x00.png" reads as "a.js"), so
        # only the raw name shows it; such an entry could pose as another file.
        if "\x00" in info.orig_filename:
            nul_names.append(info.orig_filename)
            continue
        path = _safe_entry_path(info.filename)
        if info.is_dir() or not path:
            continue
        if path.split("/")[0] == "__MACOSX":
            macos += 1
            continue
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > ZIP_RATIO_MIN_BYTES and ratio > settings.max_zip_ratio:
            raise IngestError(
                f"zip entry {info.filename!r} expands {ratio:,.0f}x ({info.file_size:,} bytes "
                f"from {info.compress_size:,}), over the {settings.max_zip_ratio:g}x limit "
                "(max_zip_ratio); this looks like a zip bomb"
            )
        total += info.file_size
        compressed += info.compress_size
        if path in entries:
            duplicates += 1
            continue
        entries[path] = info
    if total > settings.max_zip_total_bytes:
        raise IngestError(
            f"zip declares {total:,} uncompressed bytes, over the limit of "
            f"{settings.max_zip_total_bytes:,} (max_zip_total_bytes); remove large assets "
            "or build output and zip again"
        )
    if total > ZIP_RATIO_MIN_BYTES and total > settings.max_zip_ratio * max(compressed, 1):
        raise IngestError(
            f"zip expands {total / max(compressed, 1):,.0f}x overall, over the "
            f"{settings.max_zip_ratio:g}x limit (max_zip_ratio); this looks like a zip bomb"
        )
    if nul_names:
        shown = ", ".join(repr(name) for name in nul_names[:5])
        more = f" and {len(nul_names) - 5} more" if len(nul_names) > 5 else ""
        notes.append(
            f"refused {len(nul_names)} zip entry name(s) holding a NUL byte, which zip tools "
            f"cut short so the entry could pose as another file: {shown}{more}"
        )
    if duplicates:
        notes.append(f"kept the first of {duplicates} duplicate zip entry name(s)")
    if macos:
        notes.append(f"skipped {macos} '__MACOSX/' metadata entries")
    return entries, notes


def _safe_entry_path(filename: str) -> str:
    """The entry's POSIX path inside the project, or IngestError if it could escape (zip slip).

    Backslashes count as separators, as Windows tools write them.
    """
    unified = filename.replace("\\", "/")
    path = "/".join(part for part in unified.split("/") if part not in ("", "."))
    problem = None
    if unified.startswith("/"):
        problem = "is an absolute path"
    elif _DRIVE.match(unified) or _DRIVE.match(path):
        problem = "starts with a drive letter"
    elif ".." in path.split("/"):
        problem = "has a '..' component"
    if problem:
        raise IngestError(
            f"unsafe zip entry {filename!r}: it {problem} and could be written outside the "
            "project (zip slip); re-create the zip from inside the project folder"
        )
    return path


def _strip_top_folder(
    entries: dict[str, zipfile.ZipInfo],
) -> tuple[dict[str, zipfile.ZipInfo], str | None]:
    """Drop a folder that wraps the whole project, as 'Download ZIP' buttons make."""
    tops = {path.split("/", 1)[0] for path in entries}
    if len(tops) != 1 or any("/" not in path for path in entries):
        return entries, None
    top = tops.pop()
    return {path[len(top) + 1 :]: info for path, info in entries.items()}, top


def _read_zip_entries(
    archive: zipfile.ZipFile,
    entries: dict[str, zipfile.ZipInfo],
    settings: IngestSettings,
    notes: list[str],
) -> tuple[list[FileInfo], dict[str, bytes]]:
    rules = _IgnoreRules(settings)
    limit = settings.max_file_bytes
    budget = _ReadBudget(settings.max_zip_total_bytes)
    for path, info in sorted(entries.items()):
        if path.rpartition("/")[2] == ".gitignore" and _plain_entry(info):
            directory = path.rpartition("/")[0]
            rules.add_gitignore(directory, _read_entry(archive, info, limit, budget))
    files: list[FileInfo] = []
    contents: dict[str, bytes] = {}
    folders: dict[str, set[str]] = {}  # folder -> names of its files, for classify's siblings
    for path in entries:
        folder, _, file_name = path.rpartition("/")
        folders.setdefault(folder, set()).add(file_name.lower())
    siblings_of = {folder: frozenset(names) for folder, names in folders.items()}
    for path in sorted(entries):
        info = entries[path]
        if rules.ignored_with_ancestors(path):
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            files.append(_skipped(path, "symlink entry in zip (not followed)"))
            continue
        if info.flag_bits & 0x1:
            files.append(_skipped(path, "encrypted zip entry (passwords are not supported)"))
            continue
        cap = BINARY_SNIFF_BYTES if info.file_size > limit else limit + 1
        try:
            data = _read_entry(archive, info, cap, budget)
        except NotImplementedError as exc:
            files.append(_skipped(path, f"unsupported zip compression: {exc}", info.file_size))
            continue
        size = info.file_size if info.file_size > limit else len(data)
        siblings = siblings_of[path.rpartition("/")[0]]
        entry, kept = _classified(path, data, size, settings, siblings)
        files.append(entry)
        if kept is not None:
            contents[path] = kept
    notes.extend(rules.summary())
    return files, contents


def _plain_entry(info: zipfile.ZipInfo) -> bool:
    return not stat.S_ISLNK(info.external_attr >> 16) and not info.flag_bits & 0x1


@dataclass
class _ReadBudget:
    """Counts bytes actually decompressed, since declared sizes may lie."""

    limit: int
    used: int = 0

    def spend(self, n: int, entry: str) -> None:
        self.used += n
        if self.used > self.limit:
            raise IngestError(
                f"zip decompressed to more than {self.limit:,} bytes by entry {entry!r}, "
                "beyond what it declared (max_zip_total_bytes); the zip is corrupt or hostile"
            )


def _read_entry(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int, budget: _ReadBudget
) -> bytes:
    """Read at most ``cap`` bytes of an entry; a lying size or bad CRC is an IngestError."""
    try:
        with archive.open(info) as handle:
            data = handle.read(cap)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise IngestError(
            f"zip entry {info.filename!r} is corrupt ({exc}); its declared size or checksum "
            "does not match its data -- re-create the zip"
        ) from exc
    except RuntimeError as exc:  # encrypted entry read without a password
        raise IngestError(f"zip entry {info.filename!r} cannot be read: {exc}") from exc
    budget.spend(len(data), info.filename)
    return data
