"""Saved indexes named by what they were built from: built once, opened by everyone.

An index is identified by the repository's content (a digest over the paths and
content hashes of the files that are chunked, from the scan), the settings that decide its chunks
and the embedder's name. ``nexus index`` saves one; ``nexus search``, ``nexus eval``
and the dashboard open a matching one (memory-mapped, see ``VectorIndex.load``)
instead of chunking and embedding again, and save what they had to build. Any
change to a file, a chunking setting or the model gives another identity, so a
stale index is never opened by mistake: it is simply not found.

A restart after a few edits should not rebuild everything, though: each saved index
keeps the digest of every file it was built from (``FILE_DIGESTS``), and
``open_or_build`` may open the latest index of the same settings and model built from
other files, naming the files that differ (``Opened.stale``) for the caller to chunk
again into an overlay (``nexus.workspace.overlay``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexus import __version__
from nexus.chunking import CHUNKS_VERSION
from nexus.chunking.profiles import Profile
from nexus.config import ChunkConfig
from nexus.ingest.sources import Repository
from nexus.retrieval.embedding import Embedder, Progress
from nexus.retrieval.index import (
    FORMAT_VERSION,
    VectorIndex,
    build_indexes,
    remove_dead_temporaries,
)
from nexus.types import Chunk

#: Part of every saved index's key, bumped when indexes saved before cannot be trusted.
#: 2: a dashboard build could save an older snapshot as its final index, without the
#: chunks of its last polls (``IndexBuild.index(complete=True)`` fixed it).
SAVED_INDEX_REVISION = 2

#: The file beside a saved index with the digest of each file it was built from.
FILE_DIGESTS = "files.json"

#: Settings each strategy's chunks depend on (the rest, e.g. the keyword weight, are not).
_SETTINGS = {
    "ast": ("strategy", "max_tokens", "min_tokens", "profile", "encoding", "context_header"),
    "lines": ("strategy", "line_window", "line_overlap", "encoding", "context_header"),
}


def file_digests(repo: Repository) -> dict[str, str]:
    """Each chunked file's path and the sha256 of its bytes (from the scan)."""
    return {info.path: repo.digest(info.path) for info in repo.chunkable_files()}


def files_digest(repo: Repository) -> str:
    """sha256 over each chunked file's path and the sha256 of its bytes, in path order
    (a folder's scan hashed them as it read them, or remembered them: nothing is read
    here)."""
    digest = hashlib.sha256()
    for info in repo.chunkable_files():
        digest.update(info.path.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(bytes.fromhex(repo.digest(info.path)))
    return digest.hexdigest()


@dataclass(frozen=True)
class IndexIdentity:
    """What an index was built from; equal identities give the same index."""

    repo: str  # repository name (it is part of every chunk record)
    files: str  # files_digest of the chunked files
    settings: str  # the chunk-deciding settings, canonical JSON
    model: str  # the embedder's name (model and text views)

    @property
    def strategy(self) -> str:
        return str(json.loads(self.settings)["strategy"])

    @property
    def key(self) -> str:
        """sha256 of the identity, the Nexus and chunker versions, the index format and
        the saved-index revision."""
        return _sha256(self._parts(self.files))

    @property
    def lineage(self) -> str:
        """The key without the files: indexes of other contents, otherwise alike."""
        return _sha256(self._parts(None))

    def _parts(self, files: str | None) -> list[object]:
        return [
            self.repo,
            *([files] if files is not None else []),
            self.settings,
            self.model,
            __version__,
            CHUNKS_VERSION,
            FORMAT_VERSION,
            SAVED_INDEX_REVISION,
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "repo": self.repo,
            "files": self.files,
            "model": self.model,
            "settings": json.loads(self.settings),
        }


def identity_for(
    repo: str,
    files: str,
    config: ChunkConfig,
    model: str,
    custom_profiles: dict[str, Profile] | None = None,
) -> IndexIdentity:
    """The identity of ``config``'s index of a repository whose files digest to ``files``."""
    settings: dict[str, Any] = {k: getattr(config, k) for k in _SETTINGS[config.strategy]}
    if config.strategy == "ast" and custom_profiles and config.profile in custom_profiles:
        settings["custom_profile"] = custom_profiles[config.profile].to_dict()
    return IndexIdentity(repo, files, json.dumps(settings, sort_keys=True), model)


def _sha256(parts: Sequence[object]) -> str:
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


@dataclass
class Opened:
    """An index from ``open_or_build``: ``reused`` when a saved one was opened; ``stale``:
    the files whose content differs from what it was built from (added, edited or gone),
    for the caller to chunk again; ``saved``: False while a new one is being saved in the
    background (whoever saves it says when it is written)."""

    index: VectorIndex
    folder: Path
    reused: bool
    stale: frozenset[str] = field(default_factory=frozenset)
    saved: bool = True

    def describe(self, strategy: str) -> str:
        if self.reused:
            verb = "opened saved"
        else:
            verb = "built and saved" if self.saved else "built (saving in the background)"
        edited = f", {len(self.stale)} file(s) changed since" if self.stale else ""
        return f"{verb} {strategy} index ({len(self.index)} chunks{edited}) {self.folder}"


@dataclass(frozen=True)
class Earlier:
    """A saved index of the same settings and model built from other files."""

    folder: Path
    digests: dict[str, str]  # path -> sha256 of the files it was built from

    def stale(self, digests: Mapping[str, str]) -> frozenset[str]:
        """The paths whose content differs between it and ``digests`` (or one lacks)."""
        paths = self.digests.keys() | digests.keys()
        return frozenset(p for p in paths if self.digests.get(p) != digests.get(p))


class IndexStore:
    """A folder of saved indexes, one subfolder per identity (``REPO-STRATEGY-KEY``)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def folder(self, identity: IndexIdentity) -> Path:
        stem = _folder_stem(identity.repo, identity.strategy)
        return self.root / f"{stem}-{identity.key[:16]}"

    def open(self, identity: IndexIdentity, folder: Path | None = None) -> VectorIndex | None:
        """The saved index of ``identity`` (memory-mapped), or None when there is none."""
        folder = folder or self.folder(identity)
        remove_dead_temporaries(folder)
        manifest = VectorIndex.read_manifest(folder)
        if manifest is None or (manifest.get("identity") or {}).get("key") != identity.key:
            return None
        try:
            return VectorIndex.load(folder)
        except (OSError, ValueError, KeyError) as exc:  # damaged: rebuild rather than fail
            print(f"nexus: saved index {folder} unreadable ({exc}); rebuilding", file=sys.stderr)
            return None

    def save(
        self,
        index: VectorIndex,
        identity: IndexIdentity,
        folder: Path | None = None,
        digests: Mapping[str, str] | None = None,
    ) -> Path:
        """Save ``index``; with ``digests`` (``file_digests``) kept beside it, a later
        open with some files changed can reuse it (``earlier``)."""
        folder = index.save(folder or self.folder(identity), identity.to_dict())
        if digests is not None:
            record = {"key": identity.key, "lineage": identity.lineage, "files": dict(digests)}
            (folder / FILE_DIGESTS).write_text(json.dumps(record), encoding="utf-8")
        return folder

    def holds(self, repo: str, strategy: str) -> bool:
        """Whether any index of ``repo`` and ``strategy`` is saved here (of any files,
        settings or model)."""
        return any(self.root.glob(f"{_folder_stem(repo, strategy)}-*"))

    def earlier(self, identity: IndexIdentity) -> list[Earlier]:
        """Saved indexes of ``identity``'s settings and model built from other files,
        newest first (only those saved with their files' digests)."""
        stem = self.folder(identity).name.rsplit("-", 1)[0]
        found = []
        for digests_file in self.root.glob(f"{stem}-*/{FILE_DIGESTS}"):
            try:
                record = json.loads(digests_file.read_text(encoding="utf-8"))
                when = digests_file.stat().st_mtime
            except (OSError, ValueError):
                continue
            manifest = VectorIndex.read_manifest(digests_file.parent) or {}
            key = (manifest.get("identity") or {}).get("key")
            if record.get("lineage") == identity.lineage and key == record.get("key"):
                found.append((when, Earlier(digests_file.parent, dict(record["files"]))))
        return [earlier for _, earlier in sorted(found, key=lambda f: -f[0])]


def _folder_stem(repo: str, strategy: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", repo).strip("._") or "repo"
    return f"{name[:60]}-{strategy}"


#: Builds the indexes of the identities it is given (those with no saved index).
Builder = Callable[[Sequence[IndexIdentity]], list[VectorIndex]]


def chunk_and_embed(
    make_chunks: Callable[[Sequence[IndexIdentity]], list[list[Chunk]]],
    embedder: Embedder,
    progress: Progress | None = None,
) -> Builder:
    """A builder that chunks (``make_chunks(missing)``: one chunk list per identity) and
    embeds all of them in one ``encode`` call, in this process."""
    return lambda missing: build_indexes(make_chunks(missing), embedder, progress)


def open_or_build(
    store: IndexStore,
    identities: Sequence[IndexIdentity],
    build: Builder,
    *,
    rebuild: bool = False,
    folders: Sequence[Path | None] | None = None,
    digests: Mapping[str, str] | None = None,
    stale_share: float = 0.0,
) -> list[Opened]:
    """One index per identity: the saved one when it exists, else built and saved.

    ``build`` is called once, with the identities that have no saved index (so a caller
    parses nothing when every index is reused). ``folders`` overrides where each index
    lives; ``rebuild`` ignores saved indexes. ``digests`` (the files' now, from
    ``file_digests``) are saved beside each index built; with ``stale_share`` > 0, an
    identity with no saved index opens the newest one of other files instead, when at
    most that share of the files differ (``Opened.stale`` names them).
    """
    places = list(folders) if folders is not None else [None] * len(identities)
    found: list[Opened | None] = []
    for identity, place in zip(identities, places, strict=True):
        index = None if rebuild else store.open(identity, place)
        if index is not None:
            found.append(Opened(index, index.folder or store.folder(identity), reused=True))
        elif not rebuild and place is None and digests is not None and stale_share > 0:
            found.append(_open_earlier(store, identity, digests, stale_share))
        else:
            found.append(None)
    missing = [i for i, one in zip(identities, found, strict=True) if one is None]
    built = iter(build(missing) if missing else [])
    out = []
    for identity, one, folder in zip(identities, found, places, strict=True):
        if one is None:
            new = next(built)
            one = Opened(new, store.save(new, identity, folder, digests), reused=False)
        out.append(one)
    return out


def _open_earlier(
    store: IndexStore, identity: IndexIdentity, digests: Mapping[str, str], share: float
) -> Opened | None:
    """The newest saved index of ``identity``'s settings built from other files, when at
    most ``share`` of the files differ (None: build afresh)."""
    newest = next(iter(store.earlier(identity)), None)
    stale = newest.stale(digests) if newest is not None else frozenset()
    if newest is None or len(stale) > share * max(1, len(digests)):
        return None
    try:
        index = VectorIndex.load(newest.folder)
    except (OSError, ValueError, KeyError):  # damaged: build afresh
        return None
    return Opened(index, newest.folder, reused=True, stale=stale)
