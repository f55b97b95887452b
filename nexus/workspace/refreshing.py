"""Keeping a workspace's open indexes current with the files on disk.

``refresh`` asks the watch (``nexus.workspace.freshness``) whether anything moved, stats
the files when it may have, reads again what changed, and puts the changed files' new
chunks into every open index's overlay (``nexus.workspace.overlay``).
"""

from __future__ import annotations

import time
from pathlib import Path

from nexus.config import ChunkConfig
from nexus.ingest.sources import Repository, open_repository
from nexus.retrieval.embedding import Embedder
from nexus.types import Chunk
from nexus.workspace.answers import Freshness
from nexus.workspace.freshness import Stamps, Watch, changed_files, edited_in_place
from nexus.workspace.overlay import LiveIndex
from nexus.workspace.settings import Settings


class Refreshing:
    """The freshness of a ``Workspace`` (whose ``__init__`` sets this state)."""

    settings: Settings
    embedder: Embedder
    root: Path | None
    _repo: Repository | None
    _stamps: Stamps | None
    _watch: Watch | None
    _stat_next: bool  # the next refresh stats every file (watches came after)
    _changed: set[str]  # files indexed again since the indexes were opened
    _live: dict[str, LiveIndex]
    _fresh: Freshness
    repo: Repository  # ``Workspace.repo``
    config: ChunkConfig  # ``Workspace.config``

    def _now_read(self, repo: Repository) -> None:
        """Take ``repo`` as the files are now, and watch them from here on."""
        self._repo = repo
        if self.root is None:
            return
        self._stamps = Stamps.of(repo, self.root)
        if self._watch is None:
            self._watch = Watch()
        self._watch.add(self._stamps.folders)

    def refresh(self) -> Freshness:
        """Compare the files with the disk; chunk and embed (through the cache) those
        that changed into every open index. Cheap when nothing changed (a stat a file)."""
        began = time.perf_counter()
        stamps, root = self._stamps, self.root
        moved = self._watch.changed() if self._watch is not None else True
        if stamps is not None and not moved and not self._stat_next:
            stamps = None  # the kernel saw nothing move: no stat needed
        self._stat_next = False
        edited = stamps.edited() if stamps is not None else []
        if stamps is not None and root is not None and (edited or stamps.folders_moved()):
            gone = any(not Path(stamps.files[path][0]).is_file() for path in edited)
            if gone or stamps.folders_moved():
                after = open_repository(root, settings=self.settings.files)
            else:  # edited where they are: read only them again
                after = edited_in_place(self.repo, edited)
            changed = changed_files(self.repo, after)
            self._now_read(after)  # new folders are watched from now on:
            self._stat_next = True  # what moved in them before that is seen by a stat
            if changed:
                for strategy, live in self._live.items():
                    live.update(self._chunks_of(changed, strategy), self.embedder)
                self._changed |= changed
        self._fresh = Freshness(time.time(), len(self._changed), time.perf_counter() - began)
        return self._fresh

    def _chunks_of(self, paths: set[str], strategy: str) -> dict[str, list[Chunk]]:
        """The chunks of each of ``paths`` now ([] for a file gone or no longer chunked)."""
        from nexus.runtime.stream import chunk_ref

        config = self.config.with_(strategy=strategy)
        custom = dict(self.settings.custom_profiles or {}) or None
        chunkable = {info.path for info in self.repo.chunkable_files()}
        return {
            path: list(
                chunk_ref(
                    self.repo.ref(path), config, repo=self.repo.name, custom_profiles=custom
                ).chunks
            )
            if path in chunkable
            else []
            for path in sorted(paths)
        }
