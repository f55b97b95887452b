"""The front door: open a repository, build or reuse its index, search it.

Every face of Nexus (the CLI verbs, the MCP server, scripts) calls this one class
instead of threading settings through the stages by hand::

    ws = Workspace.open("path/to/repo", Settings(tier="fast"))
    answer = ws.search("where are cookies parsed", k=5, budget_tokens=2000)
    for read in answer.reads:
        print(read.file, read.start_line, read.end_line, read.cut)

A workspace holds the repository as read, the embedder behind the embedding cache,
and one open index per strategy: the saved index of the same files, settings and
model when there is one (``nexus.retrieval.store``), else built and saved. Indexes stay
open between calls. ``refresh`` brings an open index up to date with the files on disk
(``nexus.freshness``): changed files are chunked again and embedded through the cache
into a small index beside the saved one (``nexus.overlay``), which hides their old
chunks; answers say how fresh they are. What comes back (``SearchAnswer``, ``Status``,
``Freshness``) is plain data in ``nexus.answers``.
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nexus.answers import Freshness, SearchAnswer, Status, check_budget
from nexus.chunking.profiles import Profile
from nexus.config import ChunkConfig
from nexus.freshness import Stamps, Watch, changed_files, edited_in_place
from nexus.ingest.sources import (
    IngestSettings,
    Repository,
    RepositoryScan,
    open_repository,
    real_path,
    scan_repository,
)
from nexus.overlay import LiveIndex
from nexus.retrieval.budget import READ_DEPTH, read_within
from nexus.retrieval.embedding import (
    CachedEmbedder,
    DualView,
    Embedder,
    EmbeddingCancelled,
    ModelUnavailableError,
    resolve_precision,
)
from nexus.retrieval.embedding_cache import EmbeddingCache, default_cache_dir
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.lexical import LexicalIndex
from nexus.retrieval.ranking import RankingRules, rules_for
from nexus.retrieval.rescore import RESCORE_DEPTH, rescore, rescore_texts
from nexus.retrieval.search import Hit
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
from nexus.retrieval.tiers import DEFAULT_TIER, QUALITY, TIERS, StaticEmbedder, tier_embedder
from nexus.types import Chunk

if TYPE_CHECKING:
    from nexus.runtime.stream import FileChunks, Prepare

#: At most this share of the files may have changed since a saved index was built for
#: ``index(refresh_saved=True)`` to open it and chunk only those again (past it, a
#: build through the embedding cache costs little more than the overlay would).
STALE_SHARE = 0.25

#: An index saved in the background waits until no answer was asked for this long: its
#: save holds the GIL for a second or more on a large repository (JSON of every chunk),
#: which slowed the answers beside it (scale corpus: warm p95 over 50 queries asked right
#: after the first answer, 36 ms -> 190 ms).
SAVE_WHEN_IDLE_S = 1.0

#: Query vectors a workspace keeps (a few hundred KB).
QUERY_VECTORS_KEPT = 512

#: ``report(stage, done, total)``: ``chunking`` (files) and ``embedding`` (texts); a
#: total of 0 is not known yet (a folder chunked while it is still being read).
Report = Callable[[str, int, int], None]
#: Asked between files and between embedding batches; True stops the build
#: (``EmbeddingCancelled``; what was embedded stays cached).
Cancel = Callable[[], bool]
#: Every chunkable file's ``FileChunks`` under a config, with ``prepare`` (when given) run
#: where the files are chunked: how a caller streams them (the CLI: its progress bar).
Chunker = Callable[[ChunkConfig, "Prepare | None"], Iterable["FileChunks"]]


@dataclass(frozen=True)
class Settings:
    """How a workspace chunks, embeds and caches.

    ``config``: the chunk and search settings; ``tier``: ``quality`` or ``fast``
    (``nexus.retrieval.tiers``); ``cache_dir``: embedding cache, saved indexes and scans
    (default ``$NEXUS_CACHE_DIR``); ``files``: which files are read (selection, allowed
    roots); ``workers``: chunking processes (default: all cores for a large repository);
    ``rescore``: the fast tier's best hits scored again by the quality tier's model.
    """

    config: ChunkConfig = field(default_factory=ChunkConfig)
    tier: str = DEFAULT_TIER
    cache_dir: Path | None = None
    cache_max_bytes: int | None = None
    model_path: str | None = None
    files: IngestSettings = field(default_factory=IngestSettings)
    custom_profiles: Mapping[str, Profile] | None = None
    workers: int | None = None
    #: With the fast tier and the ranking stage: its best hits scored again by MiniLM
    #: (``nexus.retrieval.rescore``), the model loaded and those chunks embedded on demand.
    rescore: bool = True

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise ValueError(f"unknown tier {self.tier!r}: choose one of {', '.join(TIERS)}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")

    @property
    def cache_folder(self) -> Path:
        return Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()


def open_embedder(settings: Settings, say: Callable[[str], None] | None = None) -> CachedEmbedder:
    """The tier's embedder behind the on-disk cache (the model loads on first use)."""
    cache = EmbeddingCache(settings.cache_dir, max_bytes=settings.cache_max_bytes)
    inner = tier_embedder(
        settings.tier,
        words_view=settings.config.words_view,
        model_path=settings.model_path,
        cache_dir=cache.folder,
        say=say,
    )
    return CachedEmbedder(inner, cache)


#: The quality tier's embedders that re-score fast-tier hits, one per cache, view and
#: precision in a process: the Search page opens a workspace per answer and MCP one per
#: repository, and MiniLM should load once for all of them.
_RESCORERS: dict[tuple[str, int | None, bool, str], CachedEmbedder] = {}
_RESCORERS_LOCK = threading.Lock()


def shared_rescorer(settings: Settings) -> CachedEmbedder:
    """The quality tier's embedder, behind ``settings``' cache, shared in this process."""
    key = (
        str(settings.cache_folder),
        settings.cache_max_bytes,
        settings.config.words_view,
        resolve_precision(),
    )
    with _RESCORERS_LOCK:
        if key not in _RESCORERS:
            _RESCORERS[key] = open_embedder(replace(settings, tier=QUALITY, model_path=None))
        return _RESCORERS[key]


def is_static(embedder: Embedder) -> bool:
    """Whether ``embedder`` is the fast tier's static model, however wrapped (the words
    view wraps it)."""
    return static_model(embedder) is not None


def static_model(embedder: Embedder) -> StaticEmbedder | None:
    """The fast tier's static model inside ``embedder``'s wrappers (None: another model)."""
    while not isinstance(embedder, StaticEmbedder):
        inner = getattr(embedder, "inner", None)
        if inner is None:
            return None
        embedder = inner
    return embedder


class Workspace:
    """A repository with its settings, embedder and open indexes (see the module doc).

    Args:
        repo: the repository as read, or as it is being read (``open`` starts reading it
            from a path: a first build chunks the files as the walk finds them).
        settings: chunking, tier and cache.
        embedder: embeds chunks and queries (``open_embedder(settings)`` by default).
        root: the folder it was read from (None: a zip or bytes; never refreshed).
    """

    def __init__(
        self,
        repo: Repository | RepositoryScan,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        root: Path | None = None,
    ) -> None:
        self.settings = settings or Settings()
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
        self._rescorer_embedder: CachedEmbedder | None = None
        self._no_rescorer = ""  # why the fast tier's hits are not scored again, if so

    @classmethod
    def open(
        cls,
        target: str | Path | bytes,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
    ) -> Workspace:
        """Read a folder, a .zip or zip bytes (``IngestError`` for a path outside
        ``settings.files.allowed_roots``, a missing one, a bad zip)."""
        settings = settings or Settings()
        if settings.files.scan_cache is None:  # a second open reads only changed files
            files = replace(settings.files, scan_cache=settings.cache_folder / "scans")
            settings = replace(settings, files=files)
        scan = scan_repository(target, settings=settings.files)
        root = None if isinstance(target, bytes) else real_path(Path(target).expanduser())
        return cls(scan, settings, embedder, root if root and root.is_dir() else None)

    @property
    def repo(self) -> Repository:
        """The repository as read (the rest of the walk is done first, if need be)."""
        if self._repo is None:
            self._now_read(self._scan.repository())
        assert self._repo is not None
        return self._repo

    def _now_read(self, repo: Repository) -> None:
        """Take ``repo`` as the files are now, and watch them from here on."""
        self._repo = repo
        if self.root is None:
            return
        self._stamps = Stamps.of(repo, self.root)
        if self._watch is None:
            self._watch = Watch()
        self._watch.add(self._stamps.folders)

    @property
    def config(self) -> ChunkConfig:
        return self.settings.config

    # -- indexes ------------------------------------------------------------------------

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
                self._save_later(merged, daemon=True)
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
        # Saved after the first answer rather than before it; a process that ends first
        # waits for it (not a daemon): the next open then builds nothing.
        self._save_later(lambda: store.save(index, identity, digests=digests), daemon=False)
        return Opened(index, self._folders[strategy], reused=False)

    def _save_later(self, save: Callable[[], object], *, daemon: bool) -> None:
        """Save an index on a thread once answers pause (``SAVE_WHEN_IDLE_S``), so that
        the first answer does not wait for it (the keyword table of a merged index takes
        seconds on a large repository). An unfinished save leaves no index (the manifest
        is written last); a ``daemon`` one is dropped when the process ends."""
        self._last_answer = time.monotonic()  # the answer this index was opened for
        thread = threading.Thread(target=self._save_when_idle, args=(save,), daemon=daemon)
        self._saving.append(thread)
        thread.start()

    def _save_when_idle(self, save: Callable[[], object]) -> None:
        while not self._no_more_answers.is_set():
            quiet = time.monotonic() - self._last_answer
            if not self._answering and quiet >= SAVE_WHEN_IDLE_S:
                break
            self._no_more_answers.wait(0.1 if self._answering else SAVE_WHEN_IDLE_S - quiet)
        try:
            save()
        except (OSError, ValueError) as exc:  # the open index still answers; said on stderr
            warnings.warn(f"could not save the index: {exc}", stacklevel=1)

    def wait_for_saves(self) -> None:
        """Return once the indexes being saved in the background are written."""
        for thread in self._saving:
            thread.join()

    def finish_saves(self) -> None:
        """No more answers will be asked (a server closing): the saves waiting for a pause
        start now, and this returns once every one is written, daemon ones included. An
        MCP client gives a server 2 s after closing its input before it kills it; a save
        that first waited out ``SAVE_WHEN_IDLE_S`` missed that on the scale corpus, and
        the next start built everything again."""
        self._no_more_answers.set()
        self.wait_for_saves()

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

    @contextlib.contextmanager
    def _answer(self) -> Iterator[None]:
        """Around a call that answers: a background save waits until none has run for
        ``SAVE_WHEN_IDLE_S`` (a first search can take a second)."""
        self._answering += 1
        try:
            yield
        finally:
            self._answering -= 1
            self._last_answer = time.monotonic()

    def _index_of(self, strategy: str | None) -> tuple[str, LiveIndex]:
        """The open index of ``strategy`` (default the config's), opened or built now."""
        strategy = strategy or self.config.strategy
        if strategy not in ("ast", "lines"):
            raise ValueError(f"unknown strategy {strategy!r}: choose ast or lines")
        if strategy not in self._live:
            self.index([strategy])
        return strategy, self._live[strategy]

    # -- answers ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        strategy: str | None = None,
        budget_tokens: int | None = None,
        explain: bool = True,
    ) -> SearchAnswer:
        """The ``k`` best hits for ``query``, read within ``budget_tokens`` if given
        (hits in rank order, the crossing one cut at a line boundary); ``explain=False``
        drops the parts of each score."""
        return self.search_many(
            [query], k, strategy=strategy, budgets=[budget_tokens], explain=explain
        )[0]

    def search_many(
        self,
        queries: Sequence[str],
        k: int = 10,
        *,
        strategy: str | None = None,
        budgets: Sequence[int | None] | None = None,
        explain: bool = True,
    ) -> list[SearchAnswer]:
        """``search`` for several queries, embedded in one call (the model loads once)."""
        budgets = list(budgets) if budgets is not None else [None] * len(queries)
        if len(budgets) != len(queries):
            raise ValueError(f"{len(queries)} queries but {len(budgets)} budgets")
        if any(not isinstance(q, str) or not q.strip() for q in queries):
            raise ValueError("a query must be a non-empty string")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        for budget in budgets:
            check_budget(budget)
        with self._answer():
            strategy, live = self._index_of(strategy)
            vectors = self.query_vectors(queries)
            rules = rules_for(self.config)
            answers = []
            rescorer = self._rescorer() if rules is not None else None
            for query, vector, budget in zip(queries, vectors, budgets, strict=True):
                # A budget is read as deep as it lasts: its hits are the ones it reads.
                depth = k if budget is None else max(k, READ_DEPTH)
                asked = max(depth, RESCORE_DEPTH) if rescorer is not None else depth
                hits = live.search(vector, query, asked, self.config.lexical_weight, rules)
                rescored_by = ""
                if rescorer is not None and rules is not None:
                    hits, rescored_by = self._rescored(rescorer, hits, query, rules)
                hits = hits[:depth]
                if not explain:
                    hits = [replace(hit, parts=()) for hit in hits]
                reads = read_within([hit.chunk for hit in hits], budget, self.config.encoding)
                hits = hits[: len(reads)] if budget is not None else hits
                answers.append(
                    SearchAnswer(
                        query,
                        strategy,
                        tuple(hits),
                        tuple(reads),
                        budget,
                        self.settings.tier,
                        self.embedder.name,
                        self._fresh,
                        rescored_by,
                    )
                )
            return answers

    def _rescorer(self) -> CachedEmbedder | None:
        """The quality tier's embedder (behind the cache) that scores the fast tier's best
        hits again; None when this workspace answers with another model, is told not to,
        or the model could not be loaded before."""
        if not (self.settings.rescore and is_static(self.embedder)) or self._no_rescorer:
            return None
        if self._rescorer_embedder is None:
            self._rescorer_embedder = shared_rescorer(self.settings)
        return self._rescorer_embedder

    def _rescored(
        self, rescorer: CachedEmbedder, hits: list[Hit], query: str, rules: RankingRules
    ) -> tuple[list[Hit], str]:
        """``hits`` with the best ``RESCORE_DEPTH`` scored again (``rescore``), and the
        model that did it; as they were, and "", when the model cannot be loaded."""
        try:
            vectors = rescorer.encode([query, *rescore_texts(hits)])
        except ModelUnavailableError as exc:
            self._no_rescorer = str(exc)
            return hits, ""
        cosines = vectors[1:] @ vectors[0]
        return rescore(hits, cosines.tolist(), query, rules), rescorer.name

    def query_vectors(self, queries: Sequence[str]) -> list[np.ndarray]:
        """The queries' vectors, embedded once per workspace (a query asked of both
        strategies, or asked again by an agent, is not embedded twice)."""
        missing = list(dict.fromkeys(q for q in queries if q not in self._queries))
        if missing:
            # The fast tier embeds a query in well under a millisecond: cheaper than the
            # cache's write (tens of ms), so its queries skip the cache (whichever face
            # asks: the cache's float16 would move the scores in the fourth decimal).
            fast = isinstance(self.embedder, CachedEmbedder) and is_static(self.embedder.inner)
            embedder = self.embedder.inner if fast else self.embedder
            self._queries.update(zip(missing, embedder.encode(missing), strict=True))
            while len(self._queries) > QUERY_VECTORS_KEPT:
                del self._queries[next(iter(self._queries))]
        return [self._queries[q] for q in queries]

    def chunks(self, file: str, *, strategy: str | None = None) -> list[Chunk]:
        """The chunks of one file, in line order (KeyError-free: [] for a file without)."""
        with self._answer():
            return self._index_of(strategy)[1].chunks_of(file)

    def related(
        self, file: str, line: int, k: int = 5, *, strategy: str | None = None
    ) -> tuple[Chunk, list[Hit]]:
        """The chunk at ``file``:``line`` and the ``k`` chunks most like it (by cosine)."""
        with self._answer():
            live = self._index_of(strategy)[1]
            chunk = live.chunk_at(file, line)
            if chunk is None:
                raise ValueError(f"no chunk of {file!r} holds line {line}")
            return chunk, live.nearest(chunk, k)

    def status(self) -> Status:
        """Files, chunks, the share embedded (1.0 once an index is open), which tier."""
        strategies = tuple(self._live)
        chunks = sum(len(live) for live in self._live.values())
        return Status(
            repo=self.repo.name,
            root=str(self.root or ""),
            files=len(self.repo.chunkable_files()),
            chunks=chunks,
            embedded=1.0 if strategies else 0.0,
            tier=self.settings.tier,
            model=self.embedder.name,
            strategies=strategies,
            folders=tuple(str(self._folders[s]) for s in strategies),
            fresh=self._fresh,
        )

    # -- freshness ----------------------------------------------------------------------

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


def _save_merged(
    store: IndexStore, identity: IndexIdentity, live: LiveIndex, digests: Mapping[str, str]
) -> None:
    store.save(live.merged(), identity, digests=digests)


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
