"""The embedding models (MiniLM loaded on a thread, once per server) and the background
index builds every session shares.

The Search page builds with the fast tier (``search_tier``), as ``nexus mcp`` answers:
its static model embeds thousands of chunks a second, so the whole repository is
embedded in seconds, where MiniLM took hours on excalidraw (0.5-0.7 chunks a second);
``Workspace.search`` then has its best hits scored again by MiniLM. The Evaluate page
and sweeps build with the quality tier, as before."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator

import streamlit as st

from nexus.chunking.pipeline import chunk_analysis
from nexus.config import ChunkConfig
from nexus.ingest.sources import Repository
from nexus.retrieval.embedding import (
    CachedEmbedder,
    Embedder,
    ModelUnavailableError,
    default_embedder,
)
from nexus.retrieval.store import IndexStore, file_digests, files_digest, identity_for
from nexus.retrieval.tiers import FAST, QUALITY, STATIC_MODEL_NAME, models_dir, tier_embedder
from nexus.runtime import embed_order
from nexus.runtime.build_manager import BuildManager
from nexus.runtime.builds import STEP_S, ChunkStream, IndexBuild
from nexus.runtime.progress import OPENED
from nexus.types import Chunk
from nexus.ui import analyses, cache, repos

#: ``NEXUS_UI_EMBEDDER=fake`` swaps the model for ``HashingEmbedder`` (tests, demos);
#: ``fake:SECONDS`` makes it wait that long per text (a build to watch in a browser).
EMBEDDER_ENV = "NEXUS_UI_EMBEDDER"
#: Tests may set this to any zero-argument callable returning an ``Embedder``.
EMBEDDER_FACTORY: Callable[[], Embedder] | None = None


@st.cache_resource(show_spinner="Loading the embedding model…")
def _embedder(kind: str, words_view: bool, tier: str = QUALITY) -> Embedder:
    if kind.startswith("fake"):
        from nexus.ui.fake_embedder import HashingEmbedder

        delay = kind.partition(":")[2]
        return HashingEmbedder(delay_s=float(delay) if delay else 0.0)
    if tier == FAST:  # the model is there (``search_tier``): never distilled here
        return tier_embedder(FAST, words_view=words_view, cache_dir=cache.embedding_cache().folder)
    return default_embedder(words_view=words_view)


def search_tier() -> str:
    """The tier the Search page answers with: the fast one when its model has been
    distilled into the cache folder (``nexus setup``; a test's or demo's fake model is
    always there), else the quality one (distilling takes minutes: never on the way to
    an answer)."""
    if EMBEDDER_FACTORY is not None or os.environ.get(EMBEDDER_ENV, "model") != "model":
        return FAST
    ready = (models_dir(cache.embedding_cache().folder) / STATIC_MODEL_NAME).is_dir()
    return FAST if ready else QUALITY


_MODEL_LOADERS: dict[bool, threading.Thread] = {}
_LOCK = threading.Lock()


def _load_model(embedder: Embedder) -> None:
    with contextlib.suppress(Exception):  # the page reports it when it asks for the model
        _ = embedder.dim  # loads the model


def load_model_soon(words_view: bool = True) -> None:
    """Load the model on a thread, once per server (a missing model is reported by the
    page when it asks for it)."""
    if EMBEDDER_FACTORY is not None or os.environ.get(EMBEDDER_ENV, "model") != "model":
        return
    with _LOCK:
        if words_view in _MODEL_LOADERS:
            return
        try:
            embedder = get_embedder(words_view)
        except ModelUnavailableError:
            return
        thread = threading.Thread(
            target=_load_model, args=(embedder,), name="nexus-model-load", daemon=True
        )
        _MODEL_LOADERS[words_view] = thread
        thread.start()


def model_loading(words_view: bool = True, tier: str = QUALITY) -> bool:
    """Whether the model that ``page_setup(load_model=True)`` started loading is still
    loading (a saved index answers by keywords meanwhile). The fast tier's model loads
    in about a second, on the first query."""
    if tier == FAST:
        return False
    thread = _MODEL_LOADERS.get(words_view)
    return thread is not None and thread.is_alive()


def get_embedder(words_view: bool = True, tier: str = QUALITY) -> Embedder:
    """The embedder of this server for ``tier``: the hook, ``NEXUS_UI_EMBEDDER=fake``
    (either tier), or the tier's model.

    Raises ``ModelUnavailableError`` when the model is missing.
    """
    if EMBEDDER_FACTORY is not None:
        return EMBEDDER_FACTORY()
    return _embedder(os.environ.get(EMBEDDER_ENV, "model"), words_view, tier)


def progress_callback(text: str) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """A ``progress(done, total)`` that draws a bar, and a function that removes it."""
    bar = st.progress(0.0, text=text)

    def progress(done: int, total: int) -> None:
        bar.progress(min(done / total, 1.0) if total else 1.0, text=f"{text} {done}/{total}")

    return progress, bar.empty


#: The process's background index builds, shared by every session (see
#: ``nexus.runtime.build_manager``); their memory counts against the server's budget;
#: steps short enough for Cancel to take effect within a couple of seconds.
BUILDS = BuildManager(memory=cache.memory, step_s=STEP_S)


def _build_key(
    repo: Repository,
    config: ChunkConfig,
    strategy: str,
    docs_blanked: bool = False,
    tier: str = QUALITY,
) -> tuple[str, ...]:
    embedder = get_embedder(config.words_view, tier)
    # A copy with doc comments blanked (a generated query set's) is another set of files.
    return (
        "build",
        repos.repo_key() + (" docs-blanked" if docs_blanked else ""),
        analyses.index_settings(config.with_(strategy=strategy)),
        embedder.name,
        tier,  # a fake model is both tiers' (one name)
    )


def index_build(
    repo: Repository,
    config: ChunkConfig,
    strategy: str = "ast",
    resume: bool = False,
    rebuild: bool = False,
    docs_blanked: bool = False,
    tier: str = QUALITY,
) -> IndexBuild:
    """The background build of the repository's ``strategy`` index under ``config``:
    started on the first request, shared by every session, kept across reruns (the
    keyword weight is not part of its key). A saved index of the same files, settings
    and model is opened instead (unless ``rebuild``); a finished build is saved.
    ``resume`` restarts a cancelled one. ``docs_blanked``: ``repo`` is the current
    repository with its doc comments blanked (``generate.blanked_repository``).
    ``tier``: whose model embeds (``search_tier`` for Search).

    Raises ``ModelUnavailableError`` when the model is missing.
    """
    chosen = config.with_(strategy=strategy)
    embedder = get_embedder(config.words_view, tier)
    with_cache = CachedEmbedder(embedder, cache.embedding_cache())
    store = IndexStore(cache.embedding_cache().folder / "indexes")

    digest = cache.cached(
        ("files_digest", repos.repo_key(), docs_blanked),
        lambda: files_digest(repo),
        lambda _: 300,
    )
    identity = identity_for(repo.name, digest, chosen, embedder.name)
    key = _build_key(repo, config, strategy, docs_blanked, tier)
    before = BUILDS.get(key)

    def stream() -> ChunkStream:
        # The most useful files first: a slow chunking's early batch embeds from them.
        paths = sorted(repos.chunkable_paths(repo), key=embed_order.file_rank)
        digests = {path: repos.file_digest(repo, path) for path in paths}
        return ChunkStream(_file_chunks(repo, chosen, digests), _sizes(repo, digests))

    build = BUILDS.request(
        key,
        stream,
        with_cache,
        resume,
        saved=None if rebuild else lambda: store.open(identity),
        on_done=lambda index: store.save(index, identity, digests=file_digests(repo)),
    )
    if build is not before:
        st.session_state.setdefault("started_builds", set()).add(build.serial)
    return build


def _sizes(repo: Repository, paths: Iterable[str]) -> list[int]:
    """The bytes of each of ``paths``, in order."""
    size = {info.path: info.size for info in repo.files}
    return [size[path] for path in paths]


def _file_chunks(
    repo: Repository, config: ChunkConfig, digests: dict[str, str]
) -> Iterator[list[Chunk]]:
    """The chunks of each file in turn, on a build's thread (parses cached as usual)."""
    for path, digest in digests.items():
        analysis = analyses.file_analysis(repo, path, config.encoding, digest)
        yield chunk_analysis(analysis, config, repo=repo.name)


def build_origin(build: IndexBuild) -> str:
    """Whose build this is: this session's, or one this session found on the server
    (a session opened from a link has built nothing, and must not say it has)."""
    ours = build.serial in st.session_state.get("started_builds", ())
    progress = build.progress()
    if progress.phase == OPENED:
        return "opened by this session" if ours else "opened earlier on this server, shared"
    if ours:
        return "started by this session"
    if progress.running:
        return "started earlier on this server, shared with this session"
    return "built earlier on this server and reused as it is by this session"


def index_key(
    repo: Repository, config: ChunkConfig, docs_blanked: bool = False
) -> tuple[Hashable, ...]:
    """What the line-based and AST indexes of these settings are built from (for caching
    what is computed over them)."""
    return tuple(_build_key(repo, config, s, docs_blanked) for s in ("lines", "ast"))


def forget_builds(repo: Repository, config: ChunkConfig, tier: str = QUALITY) -> None:
    """Drop both builds of these settings and tier: the next request re-chunks and
    re-indexes (the embedding cache makes that quick)."""
    for strategy in ("ast", "lines"):
        BUILDS.forget(_build_key(repo, config, strategy, tier=tier))
        cache.memory().discard(
            ("chunks", repos.repo_key(), analyses.index_settings(config.with_(strategy=strategy)))
        )
