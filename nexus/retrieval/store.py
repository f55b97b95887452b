"""Saved indexes named by what they were built from: built once, opened by everyone.

An index is identified by the repository's content (a digest over the paths and
content hashes of the files that are chunked, from the scan), the settings that decide its chunks
and the embedder's name. ``nexus index`` saves one; ``nexus search``, ``nexus eval``
and the dashboard open a matching one (memory-mapped, see ``VectorIndex.load``)
instead of chunking and embedding again, and save what they had to build. Any
change to a file, a chunking setting or the model gives another identity, so a
stale index is never opened: it is simply not found.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexus import __version__
from nexus.chunking import CHUNKS_VERSION
from nexus.chunking.profiles import Profile
from nexus.config import ChunkConfig
from nexus.ingest.sources import Repository
from nexus.retrieval.embedding import Embedder, Progress
from nexus.retrieval.index import FORMAT_VERSION, VectorIndex, build_indexes
from nexus.types import Chunk

#: Part of every saved index's key, bumped when indexes saved before cannot be trusted.
#: 2: a dashboard build could save an older snapshot as its final index, without the
#: chunks of its last polls (``IndexBuild.index(complete=True)`` fixed it).
SAVED_INDEX_REVISION = 2

#: Settings each strategy's chunks depend on (the rest, e.g. the keyword weight, are not).
_SETTINGS = {
    "ast": ("strategy", "max_tokens", "min_tokens", "profile", "encoding", "context_header"),
    "lines": ("strategy", "line_window", "line_overlap", "encoding", "context_header"),
}


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
        parts = [
            self.repo,
            self.files,
            self.settings,
            self.model,
            __version__,
            CHUNKS_VERSION,
            FORMAT_VERSION,
            SAVED_INDEX_REVISION,
        ]
        return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()

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


@dataclass
class Opened:
    """An index from ``open_or_build``: ``reused`` when a saved one was opened."""

    index: VectorIndex
    folder: Path
    reused: bool

    def describe(self, strategy: str) -> str:
        verb = "opened saved" if self.reused else "built and saved"
        return f"{verb} {strategy} index ({len(self.index)} chunks) {self.folder}"


class IndexStore:
    """A folder of saved indexes, one subfolder per identity (``REPO-STRATEGY-KEY``)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def folder(self, identity: IndexIdentity) -> Path:
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", identity.repo).strip("._") or "repo"
        return self.root / f"{name[:60]}-{identity.strategy}-{identity.key[:16]}"

    def open(self, identity: IndexIdentity, folder: Path | None = None) -> VectorIndex | None:
        """The saved index of ``identity`` (memory-mapped), or None when there is none."""
        folder = folder or self.folder(identity)
        manifest = VectorIndex.read_manifest(folder)
        if manifest is None or (manifest.get("identity") or {}).get("key") != identity.key:
            return None
        try:
            return VectorIndex.load(folder)
        except (OSError, ValueError, KeyError) as exc:  # damaged: rebuild rather than fail
            print(f"nexus: saved index {folder} unreadable ({exc}); rebuilding", file=sys.stderr)
            return None

    def save(self, index: VectorIndex, identity: IndexIdentity, folder: Path | None = None) -> Path:
        return index.save(folder or self.folder(identity), identity.to_dict())


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
) -> list[Opened]:
    """One index per identity: the saved one when it exists, else built and saved.

    ``build`` is called once, with the identities that have no saved index (so a caller
    parses nothing when every index is reused). ``folders`` overrides where each index
    lives; ``rebuild`` ignores saved indexes.
    """
    places = list(folders) if folders is not None else [None] * len(identities)
    found = [None if rebuild else store.open(i, f) for i, f in zip(identities, places, strict=True)]
    missing = [i for i, index in zip(identities, found, strict=True) if index is None]
    built = iter(build(missing) if missing else [])
    out = []
    for identity, index, folder in zip(identities, found, places, strict=True):
        if index is not None:
            out.append(Opened(index, index.folder or store.folder(identity), reused=True))
        else:
            new = next(built)
            out.append(Opened(new, store.save(new, identity, folder), reused=False))
    return out
