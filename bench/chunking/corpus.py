"""The benchmark corpus: real JS/TS sources from npm packages, fetched at bench time.

Nothing here is committed. ``npm pack NAME@VERSION`` downloads each tarball once into
the cache folder (``$NEXUS_BENCH_DIR``, default ``/tmp/nexus-bench``); its sha512 is
checked against the registry integrity where we know it; the selected files are read
straight out of the tarball in memory (regular files only, no absolute or ``..``
paths), so nothing from a tarball is ever written to disk.

The packages are the retrieval dev set's (``shared/eval/manifest.json``, with its
include globs) plus one TSX-heavy package of our own choosing. Published npm packages
ship few ``.tsx`` sources: ``@tanstack/react-query`` has 5 among its 23 ``src`` files.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import os
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from nexus.chunking.languages import LANGUAGES
from nexus.ingest.classify import classify
from nexus.ingest.sources import decode_source
from nexus.types import SourceFile

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CACHE = Path("/tmp/nexus-bench")
#: The retrieval dev set's manifest; ``shared/`` lies beside the repository checkout.
DEFAULT_MANIFEST = REPO_ROOT.parent / "shared" / "eval" / "manifest.json"
MAX_FILE_BYTES = 2_000_000  # a corpus file larger than this is a bug in a glob, not source


@dataclass(frozen=True)
class Package:
    """One npm package version and which of its files are corpus files."""

    name: str
    version: str
    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    integrity: str | None = None  # registry ``dist.integrity`` (sha512 SRI), checked if set
    why: str = ""

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def tarball(self) -> str:
        """npm's file name for the tarball: ``@scope/pkg`` -> ``scope-pkg-VERSION.tgz``."""
        return self.name.lstrip("@").replace("/", "-") + f"-{self.version}.tgz"


@dataclass(frozen=True)
class CorpusFile:
    """One selected file: its package, its path inside the package, its decoded source."""

    package: str
    path: str
    source: SourceFile

    @property
    def language(self) -> str:
        return self.source.info.language or ""

    @property
    def label(self) -> str:
        return f"{self.package}:{self.path}"


#: The TSX-heavy addition (not in the retrieval manifest).
TSX_PACKAGE = Package(
    name="@tanstack/react-query",
    version="5.90.2",
    include=("src/**/*.ts", "src/**/*.tsx"),
    integrity=(
        "sha512-CLABiR+h5PYfOWr/z+vWFt5VsOA2ekQeRQBFSKlcoW6Ndx/f8rfyVmq4LbgOM4GG2qtxAxjLYLOpCNTYm4uKzw=="
    ),
    why="React hooks and providers; the only .tsx sources among these packages (5 of 23 files)",
)


def cache_dir() -> Path:
    """Where tarballs are kept: ``$NEXUS_BENCH_DIR`` or ``/tmp/nexus-bench``."""
    return Path(os.environ.get("NEXUS_BENCH_DIR") or DEFAULT_CACHE)


def manifest_packages(manifest: Path = DEFAULT_MANIFEST, set_name: str = "dev") -> list[Package]:
    """Packages of one set of the retrieval manifest."""
    if not manifest.is_file():
        raise FileNotFoundError(
            f"retrieval manifest not found at {manifest}; pass --manifest PATH "
            "(it lives in shared/eval/manifest.json beside the checkout)"
        )
    data = json.loads(manifest.read_text(encoding="utf-8"))
    return [
        Package(
            name=entry["name"],
            version=entry["version"],
            include=tuple(entry["include"]),
            exclude=tuple(entry.get("exclude", ())),
            integrity=entry.get("integrity"),
            why=entry.get("why", ""),
        )
        for entry in data["sets"][set_name]["packages"]
    ]


def default_packages(manifest: Path = DEFAULT_MANIFEST) -> list[Package]:
    """The benchmark's packages: the manifest's dev set, then the TSX package."""
    return [*manifest_packages(manifest), TSX_PACKAGE]


def matches(path: str, pattern: str) -> bool:
    """Glob match as the manifest means it: ``**/`` may also match zero directories."""
    if fnmatch.fnmatchcase(path, pattern):
        return True
    return "**/" in pattern and fnmatch.fnmatchcase(path, pattern.replace("**/", ""))


def _sri_sha512(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def fetch_tarball(package: Package, folder: Path) -> Path:
    """The package's tarball in ``folder``, packed by npm on first use and checked."""
    folder.mkdir(parents=True, exist_ok=True)
    tarball = folder / package.tarball
    if not tarball.exists():
        print(f"[corpus] npm pack {package.spec}", flush=True)
        subprocess.run(
            ["npm", "pack", package.spec, "--pack-destination", str(folder), "--silent"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    if package.integrity is not None:
        got = _sri_sha512(tarball)
        if got != package.integrity:
            tarball.unlink()  # a bad download must not stay cached
            raise ValueError(f"{tarball.name}: integrity {got} != registry {package.integrity}")
    return tarball


def _member_path(member: tarfile.TarInfo) -> str | None:
    """Path inside the package (``package/`` dropped), or None for anything unsafe."""
    if not member.isreg():
        return None  # no links, devices or directories
    parts = PurePosixPath(member.name).parts
    if len(parts) < 2 or member.name.startswith("/") or ".." in parts:
        return None
    return PurePosixPath(*parts[1:]).as_posix()


def read_package(package: Package, tarball: Path) -> tuple[list[CorpusFile], list[str]]:
    """Selected source files of one tarball, sorted by path, and notes on skipped ones."""
    files: list[CorpusFile] = []
    notes: list[str] = []
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive.getmembers():
            path = _member_path(member)
            if path is None or not any(matches(path, p) for p in package.include):
                continue
            if any(matches(path, p) for p in package.exclude):
                continue
            if member.size > MAX_FILE_BYTES:
                notes.append(f"{package.name}:{path}: skipped, {member.size} bytes")
                continue
            handle = archive.extractfile(member)
            if handle is None:
                continue
            raw = handle.read()
            info = classify(path, raw, len(raw), max_file_bytes=MAX_FILE_BYTES)
            if not info.chunkable or info.language not in LANGUAGES:
                notes.append(f"{package.name}:{path}: skipped, {info.category} ({info.reason})")
                continue
            files.append(CorpusFile(package.name, path, decode_source(info, raw)))
    files.sort(key=lambda f: f.path)
    return files, notes


def load_corpus(
    packages: list[Package], folder: Path | None = None
) -> tuple[list[CorpusFile], list[str]]:
    """Every selected file of every package, in package order, and notes on skips."""
    folder = folder or cache_dir()
    corpus: list[CorpusFile] = []
    notes: list[str] = []
    for package in packages:
        files, skipped = read_package(package, fetch_tarball(package, folder / "tarballs"))
        corpus.extend(files)
        notes.extend(skipped)
    return corpus, notes


if __name__ == "__main__":
    corpus_files, corpus_notes = load_corpus(default_packages())
    for note in corpus_notes:
        print(note)
    for corpus_file in corpus_files:
        print(f"{corpus_file.label}\t{corpus_file.language}\t{len(corpus_file.source.data)}")
