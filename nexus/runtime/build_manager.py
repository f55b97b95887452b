"""The process's background builds, kept by key and shared by everyone who asks.

A dashboard script run must not own a build: a widget change reruns the script and
would throw the work away. A ``BuildManager`` (one per process) keeps each build by
its key; whoever asks for the same key gets the same ``IndexBuild`` and its progress
(``nexus.runtime.builds``).

Memory: given the server's shared ``ByteLRU``, the manager keeps each build's
estimated bytes (``IndexBuild.nbytes``: chunks, vectors so far, the searchable
snapshot, the keyword table) in it as one entry. A running build is never dropped (its
entry is put back if the budget pushed it out); a finished, cancelled or failed one
whose entry was pushed out is forgotten at the next request, freeing its memory: its
saved index (or the embedding cache) brings it back without embedding anything.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path

from nexus.retrieval.embedding import CachedEmbedder
from nexus.retrieval.index import VectorIndex
from nexus.runtime.builds import BUILD_BATCH, IDLE_AFTER, IndexBuild
from nexus.runtime.lru import ByteLRU
from nexus.runtime.progress import CANCELLED, FAILED, IDLE
from nexus.types import Chunk

#: Folder beside the embedding cache with one empty file per build that began and has
#: not finished: a later build of the same key (after a Cancel, an idle stop, a failure
#: or a server that went down) is a resume, and says so; a first build is not.
UNFINISHED = "unfinished-builds"


class BuildManager:
    """The process's builds by key (repository content + chunk settings + model).

    ``request`` returns the running or finished build for a key, or starts one: a
    build that stopped because nobody was waiting or that failed is started again
    (the cache makes that a resume); a cancelled one only when ``resume=True``.
    ``wait_s`` makes ``request`` wait that long for a build to finish (AppTests,
    which look at one script run, use it). ``memory`` returns the server's shared
    budget, in which each build's bytes are kept (see the module docstring).
    ``step_s`` is each build's (``IndexBuild``). A build whose key has a marker in the
    cache folder's ``UNFINISHED`` (one began and never finished, in this process or
    before a restart) is an interrupted one resumed.
    """

    def __init__(
        self,
        idle_after: float = IDLE_AFTER,
        batch: int = BUILD_BATCH,
        clock: Callable[[], float] = time.monotonic,
        wait_s: float | None = None,
        memory: Callable[[], ByteLRU] | None = None,
        step_s: float | None = None,
    ) -> None:
        self.idle_after = idle_after
        self.batch = batch
        self.step_s = step_s
        self.wait_s = wait_s
        self._clock = clock
        self._memory = memory
        self._lock = threading.Lock()
        self._builds: dict[Hashable, IndexBuild] = {}

    def get(self, key: Hashable) -> IndexBuild | None:
        """The build for ``key`` if one was requested (touched: someone is looking)."""
        self._account()
        with self._lock:
            build = self._builds.get(key)
        if build is not None:
            build.touch()
        return build

    def request(
        self,
        key: Hashable,
        chunks: Callable[[], Sequence[Chunk]],
        embedder: CachedEmbedder,
        resume: bool = False,
        saved: Callable[[], VectorIndex | None] | None = None,
        on_done: Callable[[VectorIndex], object] | None = None,
    ) -> IndexBuild:
        """The build for ``key``, started if needed (``chunks()`` is called only then).

        ``saved()`` may return a saved index of the same content: it is then opened,
        not built; ``on_done(index)`` is called when a build finishes.
        """
        with self._lock:
            build = self._builds.get(key)
            phase = build.progress().phase if build is not None else None
            again = phase in (IDLE, FAILED) or (phase == CANCELLED and resume)
            if build is None or again:
                found = saved() if saved is not None else None
                if found is not None:
                    build = IndexBuild.opened(found, embedder)
                else:
                    marker = unfinished_marker(embedder, key)
                    build = IndexBuild(
                        chunks(),
                        embedder,
                        self.batch,
                        self.idle_after,
                        self._clock,
                        on_done,
                        step_s=self.step_s,
                        interrupted=marker.exists(),
                        unfinished=marker,
                    )
                self._builds[key] = build.start()
                if self._memory is not None:
                    self._memory().put(("build", key), build, build.nbytes())
        build.touch()
        self._account()
        if self.wait_s is not None:
            build.join(self.wait_s)
        return build

    def forget(self, key: Hashable) -> None:
        """Drop a finished build (its index is then rebuilt from the cache on request)."""
        with self._lock:
            build = self._builds.pop(key, None)
        if build is not None:
            build.cancel()
        if self._memory is not None:
            self._memory().discard(("build", key))

    def builds(self) -> list[IndexBuild]:
        with self._lock:
            return list(self._builds.values())

    def _account(self) -> None:
        """Bring each build's bytes up to date in the memory budget; forget a stopped
        build whose entry the budget pushed out, put a running one back."""
        if self._memory is None:
            return
        memory = self._memory()
        with self._lock:
            kept = list(self._builds.items())
        for key, build in kept:
            entry = ("build", key)
            if entry in memory:
                memory.resize(entry, build.nbytes())
            elif build.progress().running:
                memory.put(entry, build, build.nbytes())
            else:
                with self._lock:
                    if self._builds.get(key) is build:
                        del self._builds[key]


def unfinished_marker(embedder: CachedEmbedder, key: Hashable) -> Path:
    """The file that says a build of ``key`` began and has not finished (beside the
    cache its batches go to: the cache is what a later build resumes from)."""
    name = hashlib.sha256(repr(key).encode()).hexdigest()[:32]
    return embedder.cache.folder / UNFINISHED / name
