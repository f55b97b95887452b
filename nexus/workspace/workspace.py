"""The ``Workspace`` class: a repository, its settings, embedder and open indexes.

Its jobs live in the classes it is made of: ``Answering`` (search, related, status,
re-scoring) over ``Building`` (open or build, adopt) over ``Refreshing`` (the files on
disk) and ``Saving`` (saves in the background). This module opens a repository and holds
the state they share.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from nexus.config import ChunkConfig
from nexus.ingest.sources import Repository, RepositoryScan, real_path, scan_repository
from nexus.retrieval.embedding import Embedder
from nexus.runtime.rescorer import Rescorer
from nexus.workspace.answering import Answering
from nexus.workspace.answers import Freshness
from nexus.workspace.freshness import Stamps, Watch
from nexus.workspace.overlay import LiveIndex
from nexus.workspace.settings import Settings, open_embedder


class Workspace(Answering):
    """A repository with its settings, embedder and open indexes (see the module doc).

    Args:
        repo: the repository as read, or as it is being read (``open`` starts reading it
            from a path: a first build chunks the files as the walk finds them).
        settings: chunking, tier and cache.
        embedder: embeds chunks and queries (``open_embedder(settings)`` by default).
        root: the folder it was read from (None: a zip or bytes; never refreshed).
        say: told what was done in the background (an index saved), a line at a time.
    """

    def __init__(
        self,
        repo: Repository | RepositoryScan,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        root: Path | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.say = say or (lambda line: None)
        self.embedder = embedder if embedder is not None else open_embedder(self.settings)
        self.root = root
        self._live: dict[str, LiveIndex] = {}
        self._folders: dict[str, Path] = {}
        self._scan = repo if isinstance(repo, RepositoryScan) else RepositoryScan.of(repo)
        self._repo: Repository | None = None
        self._stamps: Stamps | None = None
        self._watch: Watch | None = None
        self._stat_next = True  # the first refresh stats every file (watches came after)
        self._changed: set[str] = set()
        self._saving: list[threading.Thread] = []
        self._no_more_answers = threading.Event()  # saves need not wait for a pause
        self._last_answer = 0.0  # time.monotonic() when the last answer ended
        self._answering = 0  # answers being made now
        self._fresh = Freshness()
        self._queries: dict[str, np.ndarray] = {}  # query -> vector, oldest first
        self._rescorers: dict[str, Rescorer] = {}  # strategy -> its MiniLM vectors

    @classmethod
    def open(
        cls,
        target: str | Path | bytes,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        say: Callable[[str], None] | None = None,
    ) -> Workspace:
        """Read a folder, a .zip or zip bytes (``IngestError`` for a path outside
        ``settings.files.allowed_roots``, a missing one, a bad zip)."""
        settings = settings or Settings()
        if settings.files.scan_cache is None:  # a second open reads only changed files
            files = replace(settings.files, scan_cache=settings.cache_folder / "scans")
            settings = replace(settings, files=files)
        scan = scan_repository(target, settings=settings.files)
        root = None if isinstance(target, bytes) else real_path(Path(target).expanduser())
        return cls(scan, settings, embedder, root if root and root.is_dir() else None, say)

    @property
    def repo(self) -> Repository:
        """The repository as read (the rest of the walk is done first, if need be)."""
        if self._repo is None:
            self._now_read(self._scan.repository())
        assert self._repo is not None
        return self._repo

    @property
    def config(self) -> ChunkConfig:
        return self.settings.config
