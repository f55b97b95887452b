"""Building or opening a workspace's indexes, one per strategy.

The saved index of the same files, settings and model serves when there is one
(``nexus.retrieval.store``); else the files are chunked (on worker processes for a large
repository, as the walk finds them on a first build), embedded through the cache and
saved in the background (``nexus.workspace.saving``). The fast tier's static model embeds
where the files are chunked (``nexus.runtime.embed_in_workers``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nexus.chunking.profiles import Profile
from nexus.config import ChunkConfig
from nexus.ingest.sources import RepositoryScan
from nexus.retrieval.embedding import (
    CachedEmbedder,
    DualView,
    EmbeddingCancelled,
    ModelUnavailableError,
)
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.lexical import LexicalIndex
from nexus.retrieval.store import (
    Builder,
    IndexIdentity,
    IndexStore,
    Opened,
    chunk_and_embed,
    file_digests,
    files_digest,
    identity_for,
    open_or_build,
)
from nexus.retrieval.tiers import StaticEmbedder
from nexus.types import Chunk
from nexus.workspace.answers import Freshness
from nexus.workspace.overlay import LiveIndex
from nexus.workspace.refreshing import Refreshing
from nexus.workspace.saving import Saving
from nexus.workspace.settings import is_static, static_model

if TYPE_CHECKING:
    from nexus.runtime.stream import FileChunks, Prepare

#: At most this share of the files may have changed since a saved index was built for
#: ``index(refresh_saved=True)`` to open it and chunk only those again (past it, a
#: build through the embedding cache costs little more than the overlay would).
STALE_SHARE = 0.25

#: ``report(stage, done, total)``: ``chunking`` (files) and ``embedding`` (texts); a
#: total of 0 is not known yet (a folder chunked while it is still being read).
Report = Callable[[str, int, int], None]
#: Asked between files and between embedding batches; True stops the build
#: (``EmbeddingCancelled``; what was embedded stays cached).
Cancel = Callable[[], bool]
#: Every chunkable file's ``FileChunks`` under a config, with ``prepare`` (when given) run
#: where the files are chunked: how a caller streams them (the CLI: its progress bar).
Chunker = Callable[[ChunkConfig, "Prepare | None"], Iterable["FileChunks"]]


class Building(Refreshing, Saving):
    """The indexes of a ``Workspace`` (whose ``__init__`` sets this state)."""

    _scan: RepositoryScan
    _folders: dict[str, Path]

    def index(
        self,
        strategies: Sequence[str] | None = None,
        *,
        rebuild: bool = False,
        folder: Path | None = None,
        chunker: Chunker | None = None,
        builder: Builder | None = None,
        report: Report | None = None,
        cancel: Cancel | None = None,
        refresh_saved: bool = False,
    ) -> list[Opened]:
        """One index per strategy (default: the config's): the saved one that matches
        the files, settings and model, else chunked (``chunker``, default every file on
        ``settings.workers`` processes), embedded through the cache and saved
        (``builder`` replaces both, e.g. Ray). ``rebuild`` ignores saved indexes;
        ``folder`` names where the index lives. ``refresh_saved``: with no saved index
        of these files, open the latest one of these settings built before some files
        changed (at most ``STALE_SHARE``) and chunk only those again, as ``refresh``
        does (a server restarted after edits)."""
        chosen = tuple(strategies or (self.config.strategy,))
        custom = dict(self.settings.custom_profiles or {}) or None
        store = IndexStore(self.settings.cache_folder / "indexes")
        first = (chunker, builder, folder) == (None, None, None) and len(chosen) == 1
        walking = self._repo is None and self._scan.chunkable_files() is None
        if first and walking and self._embeds_in_workers():
            (strategy,) = chosen
            if rebuild or not store.holds(self._scan.name, strategy):
                return [self._index_while_walking(store, strategy, custom, report, cancel)]
        digests = file_digests(self.repo)
        digest = files_digest(self.repo)
        identities = [
            identity_for(
                self.repo.name, digest, self.config.with_(strategy=s), self.embedder.name, custom
            )
            for s in chosen
        ]
        files = chunker or self._files

        def make_chunks(missing):  # noqa: ANN001, ANN202 - as store.chunk_and_embed wants
            configs = [self.config.with_(strategy=i.strategy) for i in missing]
            return [self._chunk(files, config, report, cancel) for config in configs]

        def in_workers(missing):  # noqa: ANN001, ANN202 - a store.Builder
            configs = [self.config.with_(strategy=i.strategy) for i in missing]
            return [self._build_in_workers(files, config, report, cancel) for config in configs]

        if builder is None and self._embeds_in_workers():
            builder = in_workers
        build = builder or chunk_and_embed(make_chunks, self.embedder, _embedding(report, cancel))
        opened = open_or_build(
            store,
            identities,
            build,
            rebuild=rebuild,
            folders=[folder] * len(chosen),
            digests=digests,
            stale_share=STALE_SHARE if refresh_saved else 0.0,
        )
        for strategy, identity, one in zip(chosen, identities, opened, strict=True):
            live = LiveIndex(one.index)
            if one.stale:  # the files changed since it was saved, as ``refresh`` would
                began = time.perf_counter()
                live.update(self._chunks_of(set(one.stale), strategy), self.embedder)
                merged = partial(_save_merged, store, identity, live.frozen(), digests)
                self._save_later(merged, daemon=True, after_pause=True)
                self._changed |= one.stale
                spent = time.perf_counter() - began
                self._fresh = Freshness(time.time(), len(self._changed), spent)
            self._live[strategy] = live
            self._folders[strategy] = one.folder
        return opened

    def _index_while_walking(
        self,
        store: IndexStore,
        strategy: str,
        custom: dict[str, Profile] | None,
        report: Report | None,
        cancel: Cancel | None,
    ) -> Opened:
        """A first build of a folder still being read: its files are chunked as the walk
        finds them (the walk reads and classifies every file: seconds of one core on a
        large repository, while the workers would wait), then saved under the identity of
        the files read. Only when no index of this repository and strategy is saved:
        otherwise the saved one may serve, and which is known only from every file."""
        config = self.config.with_(strategy=strategy)
        index = self._build_in_workers(self._files, config, report, cancel)
        digests = file_digests(self.repo)
        identity = identity_for(
            self.repo.name, files_digest(self.repo), config, self.embedder.name, custom
        )
        self._live[strategy] = LiveIndex(index)
        self._folders[strategy] = store.folder(identity)
        # Saved beside the first answer, at once (``saving``); a process that ends first
        # waits for it (not a daemon): the next open then builds nothing.
        self._save_later(lambda: store.save(index, identity, digests=digests), daemon=False)
        return Opened(index, self._folders[strategy], reused=False, saved=False)

    def _chunk(
        self, files: Chunker, config: ChunkConfig, report: Report | None, cancel: Cancel | None
    ) -> list[Chunk]:
        return [c for result in self._stream(files, config, report, cancel) for c in result.chunks]

    def _stream(
        self,
        files: Chunker,
        config: ChunkConfig,
        report: Report | None,
        cancel: Cancel | None,
        prepare: Prepare | None = None,
    ) -> Iterator[FileChunks]:
        """``files(config, prepare)``, reported and cancellable between files."""
        total = 0  # known once the walk is done
        for done, result in enumerate(files(config, prepare), start=1):
            total = total or self._scan.chunkable_files() or 0
            if cancel is not None and cancel():
                raise EmbeddingCancelled(
                    f"cancelled after chunking {done - 1} of {total or 'more'} files"
                )
            yield result
            if report is not None:
                report("chunking", done, total)

    def _files(self, config: ChunkConfig, prepare: Prepare | None) -> Iterator[FileChunks]:
        """Every file chunked (as the walk finds them if it is still going on), on
        ``settings.workers`` processes for a large repository."""
        from nexus.runtime.stream import default_workers, stream_scan

        scan = self._scan if self._repo is None else RepositoryScan.of(self._repo)
        custom = dict(self.settings.custom_profiles or {}) or None
        return stream_scan(
            scan,
            config,
            workers=self.settings.workers or default_workers(),
            custom_profiles=custom,
            prepare=prepare,
        )

    def _embeds_in_workers(self) -> bool:
        """Whether builds embed where they chunk: the fast tier's static model, which costs
        less to compute than the cache costs to write (``nexus.runtime.embed_in_workers``)."""
        return isinstance(self.embedder, CachedEmbedder) and is_static(self.embedder.inner)

    def _build_in_workers(
        self, files: Chunker, config: ChunkConfig, report: Report | None, cancel: Cancel | None
    ) -> VectorIndex:
        """One index whose chunks were embedded and counted by the chunking workers."""
        from nexus.runtime.embed_in_workers import EmbedInWorkers

        assert isinstance(self.embedder, CachedEmbedder)
        static = static_model(self.embedder)
        assert static is not None
        words_view = isinstance(self.embedder.inner, DualView)
        prepare = EmbedInWorkers(str(static.model_path), words_view)
        # This process waits on the workers: it loads the model its queries need meanwhile
        # (a second of imports and reading, once) instead of on the first search.
        threading.Thread(target=_load_quietly, args=(static,), daemon=True).start()
        chunks: list[Chunk] = []
        vectors: list[np.ndarray] = []
        counts: list[Mapping[str, int]] = []
        for result in self._stream(files, config, report, cancel, prepare):
            if result.chunks:
                chunks.extend(result.chunks)
                vectors.append(result.vectors)
                counts.extend(result.term_counts)
        self.embedder.count_embedded_elsewhere(len(chunks))
        if report is not None:
            report("embedding", len(chunks), len(chunks))
        if not chunks:
            return VectorIndex(self.embedder.dim, self.embedder.name)
        keywords = LexicalIndex.of_counts(counts)
        return VectorIndex.build(chunks, np.concatenate(vectors), self.embedder.name, keywords)

    def adopt(self, strategy: str, index: VectorIndex, folder: Path | None = None) -> None:
        """Answer ``strategy`` from ``index``, built or opened elsewhere (the dashboard's
        background builds, ``nexus.runtime.builds``), as if ``index`` had opened it."""
        self._live[strategy] = LiveIndex(index)
        self._folders[strategy] = folder or index.folder or Path()

    def _index_of(self, strategy: str | None) -> tuple[str, LiveIndex]:
        """The open index of ``strategy`` (default the config's), opened or built now."""
        strategy = strategy or self.config.strategy
        if strategy not in ("ast", "lines"):
            raise ValueError(f"unknown strategy {strategy!r}: choose ast or lines")
        if strategy not in self._live:
            self.index([strategy])
        return strategy, self._live[strategy]


def _save_merged(
    store: IndexStore, identity: IndexIdentity, live: LiveIndex, digests: Mapping[str, str]
) -> Path:
    return store.save(live.merged(), identity, digests=digests)


def _load_quietly(static: StaticEmbedder) -> None:
    """Load the model ahead of need; a model that fails to load fails the build itself."""
    with contextlib.suppress(ModelUnavailableError):
        static.load()


def _embedding(report: Report | None, cancel: Cancel | None):
    """The embedding progress callback: reports, and stops the build when cancelled."""
    if report is None and cancel is None:
        return None

    def progress(done: int, total: int) -> None:
        if report is not None:
            report("embedding", done, total)
        if cancel is not None and done < total and cancel():
            raise EmbeddingCancelled(f"cancelled after {done} of {total} texts")

    return progress
