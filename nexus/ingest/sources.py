"""Read a repository -- a directory, a .zip path or uploaded zip bytes -- safely into memory.

Everything a user hands us is hostile until checked: zips may climb out of the
project (``../evil.js``), expand a thousandfold, or lie about their sizes;
directories may hold symlinks into the rest of the disk or cycles. Nothing is
ever written to disk: file contents live in memory, each capped at
``max_file_bytes``, and larger files are only sniffed (their first 8000 bytes).

``open_repository`` is the way in; it checks the path and hands it to ``folders``
or ``zips``. What both hand on is in ``repository`` (and importable from here);
``ignore`` holds the gitignore layers both apply.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from nexus.ingest.folders import Found, read_file, walk_directory
from nexus.ingest.repository import (
    DEFAULT_IGNORES,
    DiskContents,
    FileRef,
    IngestError,
    IngestSettings,
    OutsideRoots,
    Repository,
    decode_source,
    finish,
    real_path,
    symlink_loops,
)
from nexus.ingest.zips import read_zip

__all__ = [
    "ALLOWED_ROOTS_ENV",
    "DEFAULT_IGNORES",
    "FileRef",
    "IngestError",
    "OutsideRoots",
    "IngestSettings",
    "Repository",
    "RepositoryScan",
    "decode_source",
    "default_allowed_roots",
    "open_repository",
    "read_file",
    "real_path",
    "scan_repository",
]

_PROJECT_ROOT = Path(__file__).resolve().parents[2]

#: Colon-separated folders a served dashboard may open (default: cwd and sample_repos).
ALLOWED_ROOTS_ENV = "NEXUS_ALLOWED_ROOTS"


def default_allowed_roots() -> tuple[Path, ...]:
    """Roots a server allows: ``$NEXUS_ALLOWED_ROOTS`` if set, else the working
    directory and the sample repos."""
    configured = os.environ.get(ALLOWED_ROOTS_ENV, "")
    roots = tuple(Path(p).expanduser() for p in configured.split(os.pathsep) if p)
    return roots or (Path.cwd(), _PROJECT_ROOT / "sample_repos")


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
    return scan_repository(target, name=name, settings=settings).repository()


class RepositoryScan:
    """A repository as it is read: its chunkable files as the walk finds them
    (``refs``, in path order), and the whole ``Repository`` once the walk is done.

    A folder's walk is serial (it reads and classifies every file): ``nexus chunk``
    chunks the first files on its workers while the walk goes on, instead of after it.
    A zip is read whole before its scan is handed out.
    """

    def __init__(self, name: str, refs: Iterator[FileRef], whole: Callable[[], Repository]) -> None:
        self.name = name
        self._refs = refs
        self._whole = whole
        self._repository: Repository | None = None

    @classmethod
    def of(cls, repo: Repository) -> RepositoryScan:
        """The scan of a repository already read."""
        scan = cls(repo.name, repo.refs(), lambda: repo)
        scan._repository = repo
        return scan

    def chunkable_files(self) -> int | None:
        """How many files are chunked, once the walk is done (None before)."""
        if self._repository is None:
            return None
        return len(self._repository.chunkable_files())

    def refs(self) -> Iterator[FileRef]:
        """The chunkable files not yet handed out, in path order, as they are found."""
        yield from self._refs
        if self._repository is None:
            self._repository = self._whole()

    def repository(self) -> Repository:
        """The whole repository (the rest of the walk is done first)."""
        for _ in self.refs():
            pass
        assert self._repository is not None
        return self._repository


def scan_repository(
    target: str | Path | bytes,
    *,
    name: str | None = None,
    settings: IngestSettings = IngestSettings(),  # noqa: B008 - frozen, so sharing is safe
) -> RepositoryScan:
    """Start reading a directory, a .zip file or zip bytes (see ``open_repository``;
    the same errors, raised here before any file is read)."""
    if isinstance(target, bytes | bytearray | memoryview):
        return RepositoryScan.of(read_zip(io.BytesIO(bytes(target)), name, "upload", settings))
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
        return _folder_scan(resolved, name or resolved.name or "repository", settings)
    if resolved.is_file() and (resolved.suffix.lower() == ".zip" or zipfile.is_zipfile(resolved)):
        return RepositoryScan.of(read_zip(resolved, name, resolved.stem, settings))
    raise IngestError(f"{path} is neither a directory nor a .zip file")


def _folder_scan(root: Path, name: str, settings: IngestSettings) -> RepositoryScan:
    found = Found()
    cap = settings.max_file_bytes
    refs = (
        FileRef(info, disk_path=str(found.kept[info.path]), cap=cap)
        for info in walk_directory(root, settings, found)
        if info.chunkable
    )

    def whole() -> Repository:
        contents = DiskContents(found.kept, cap, found.folders)
        repo = finish(name, found.files, contents, found.notes)
        return replace(repo, digests=found.digests)

    return RepositoryScan(name, refs, whole)


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
        raise OutsideRoots(
            f"{path} lies outside the allowed roots ({shown}); "
            "move or copy the repository under one of them"
        )
