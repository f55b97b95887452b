"""Reading a zip (a path or uploaded bytes): every entry is checked against the
safety limits (paths that climb out, bombs, sizes that lie) before anything is
decompressed, then read into memory."""

from __future__ import annotations

import io
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from nexus.ingest.classify import BINARY_SNIFF_BYTES
from nexus.ingest.ignore import IgnoreRules
from nexus.ingest.repository import (
    IngestError,
    IngestSettings,
    Repository,
    classified,
    finish,
    skipped,
)
from nexus.types import FileInfo

#: Compression-ratio limits only apply to entries (and archives) larger than this:
#: a small file of blanks legitimately compresses 100x, and is harmless anyway.
ZIP_RATIO_MIN_BYTES = 1 << 20

_DRIVE = re.compile(r"^[A-Za-z]:")


def read_zip(
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
    return finish(name or top or fallback_name, files, contents, notes)


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
    rules = IgnoreRules(settings)
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
            files.append(skipped(path, "symlink entry in zip (not followed)"))
            continue
        if info.flag_bits & 0x1:
            files.append(skipped(path, "encrypted zip entry (passwords are not supported)"))
            continue
        cap = BINARY_SNIFF_BYTES if info.file_size > limit else limit + 1
        try:
            data = _read_entry(archive, info, cap, budget)
        except NotImplementedError as exc:
            files.append(skipped(path, f"unsupported zip compression: {exc}", info.file_size))
            continue
        size = info.file_size if info.file_size > limit else len(data)
        siblings = siblings_of[path.rpartition("/")[0]]
        entry, kept = classified(path, data, size, settings, siblings)
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
