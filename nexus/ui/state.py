"""Session state, cached loaders and the settings sidebar shared by every dashboard page.

Pages use plain ``pages/`` directory mode; what one page chooses (the repository,
the chunking settings, the file) lives in ``st.session_state`` so the next page
sees it. Widget values are kept across page switches by re-assigning their keys at
the top of each page (Streamlit drops a widget's state when its page is left).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import streamlit as st
from streamlit import dataframe_util

from nexus.chunking.analysis import FileAnalysis, analyze
from nexus.chunking.extract import regex_functions
from nexus.chunking.fragmentation import UnitFate, unit_fates
from nexus.chunking.pipeline import chunk_analysis
from nexus.chunking.profiles import PROFILE_NAMES
from nexus.config import DEFAULT_ENCODING, PRESETS, ChunkConfig, dump_config_toml
from nexus.evaluation.metrics import Target
from nexus.evaluation.report import function_rows
from nexus.ingest.selection import DEFAULT_SELECTION, SWITCHES, FileSelection, parse_languages
from nexus.ingest.sources import (
    IngestError,
    IngestSettings,
    Repository,
    default_allowed_roots,
    open_repository,
)
from nexus.retrieval.embedding import (
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    ModelUnavailableError,
    default_embedder,
)
from nexus.retrieval.store import (
    IndexStore,
    files_digest,
    identity_for,
)
from nexus.retrieval.wordpieces import WordPieceCounter
from nexus.runtime import footprint
from nexus.runtime.builds import OPENED, BuildManager, ChunkStream, IndexBuild
from nexus.runtime.lru import ByteLRU
from nexus.types import CHUNKABLE_LANGUAGES, Category, Chunk, Unit
from nexus.ui import render, safe, views

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sample_repos"
DEFAULT_SAMPLE = "express-images"
T = TypeVar("T")

#: ``NEXUS_UI_EMBEDDER=fake`` swaps the model for ``HashingEmbedder`` (tests, demos);
#: ``fake:SECONDS`` makes it wait that long per text (a build to watch in a browser).
EMBEDDER_ENV = "NEXUS_UI_EMBEDDER"
#: Folder of the on-disk embedding cache (default ``.nexus-cache/embeddings``).
CACHE_ENV = "NEXUS_CACHE_DIR"
#: Tests may set this to any zero-argument callable returning an ``Embedder``.
EMBEDDER_FACTORY: Callable[[], Embedder] | None = None
#: Megabytes that everything the server keeps for its sessions may take together.
MEMORY_ENV = "NEXUS_MEMORY_BUDGET_MB"
#: 4 GB: a sixth of a 24 GB machine shared by a team; the model and Streamlit come on top.
DEFAULT_MEMORY_MB = 4096
#: One repository's parsed files may take at most this share of the budget, so one
#: large upload cannot push every other session's work out (and its chunks fit too).
REPO_SHARE = 0.5
#: Estimated bytes of one unit's fate and of one search target (measured: ~130 and ~400).
FATE_BYTES = 200
TARGET_BYTES = 500

DEFAULTS: dict[str, Any] = {
    "max_tokens": ChunkConfig().max_tokens,
    "min_tokens": ChunkConfig().min_tokens,
    "profile": ChunkConfig().profile,
    "line_window": ChunkConfig().line_window,
    "lexical_pct": round(ChunkConfig().lexical_weight * 100),
}
#: Widget keys of the file selection on the home page; they travel in links and Export.
SWITCH_KEYS = {name: f"files_{name}" for name in SWITCHES}
GLOB_KEYS = {"include": "files_include", "exclude": "files_exclude"}
LANGUAGES_KEY = "files_languages"  # a multiselect; empty = every language
LANGUAGE_NAMES = sorted(CHUNKABLE_LANGUAGES)
#: Widget keys whose values survive a page switch.
KEPT_KEYS = (
    *DEFAULTS,
    *SWITCH_KEYS.values(),
    *GLOB_KEYS.values(),
    LANGUAGES_KEY,
    *("preset", "source", "sample", "local_path", "file", "query", "k", "target"),
)
SOURCES = ("Sample repository", "Upload a zip", "Local path")
#: Each slider's (min, max, step): the sidebar and the links read the same ranges.
SLIDERS: dict[str, tuple[int, int, int]] = {
    "max_tokens": (64, 2048, 16),
    "min_tokens": (0, 256, 8),
    "line_window": (10, 200, 5),
    "lexical_pct": (0, 100, 5),
    "k": (1, 20, 1),
}


def slider_range(key: str) -> range:
    """Every value the slider ``key`` can take."""
    low, high, step = SLIDERS[key]
    return range(low, high + 1, step)


@dataclass(frozen=True)
class RepoChoice:
    """Where the current repository came from (``kind`` sample | upload | path)."""

    kind: str
    value: str  # sample name, sha256 of the upload, or the path typed
    label: str = field(default="", compare=False)  # an upload's file name

    @property
    def url_value(self) -> str:
        """How a link names this repository; an upload by its name and digest, so a
        link made on it can say so instead of opening another repository."""
        if self.kind == "upload":
            return f"upload:{self.label or 'upload'}@{self.value[:12]}"
        return f"{self.kind}:{self.value}"


# --- page setup ----------------------------------------------------------------------


def page_setup(title: str, load_model: bool = False) -> None:
    """First call of every page: page config, kept widget values, defaults.

    ``load_model`` (pages that embed): the model starts loading on a thread before a
    link's repository is opened, so a cold server reads the files meanwhile.
    """
    st.set_page_config(
        page_title=f"Nexus · {title}", page_icon=":material/view_agenda:", layout="wide"
    )
    st.html(render.RESPONSIVE_CSS)
    if load_model:
        _load_model_soon()
    for key in KEPT_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    for problem in apply_url_params():
        st.warning(f"Link: {safe.md(problem)}")
    if "preset" not in st.session_state:
        _matching_preset()


def sample_names() -> list[str]:
    """The bundled sample repositories, default first."""
    names = sorted(p.name for p in SAMPLES_DIR.iterdir() if p.is_dir())
    return sorted(names, key=lambda n: n != DEFAULT_SAMPLE)


# --- memory --------------------------------------------------------------------------


def memory_budget_mb() -> float:
    """``NEXUS_MEMORY_BUDGET_MB`` (default 4096); a bad value stops the page with a message."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if not raw:
        return DEFAULT_MEMORY_MB
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        st.error(f"{MEMORY_ENV}={raw!r} is not a positive number of megabytes (e.g. 4096).")
        st.stop()
    return value


def _release_freed_memory(_freed: int) -> None:
    """Ask glibc to hand freed heap pages back, so evictions show in the server's RSS."""
    # Not glibc: the freed memory is reused by the process, just not returned.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


#: The process's caches by budget (one in a server; tests change the budget). A plain
#: dict, not ``st.cache_resource``: pages ask for it once per file on every rerun.
_MEMORIES: dict[int, ByteLRU] = {}
_MEMORIES_LOCK = threading.Lock()


def memory() -> ByteLRU:
    """The one cache every session shares: parsed files, chunk lists, indexes, uploads...

    Least recently used entries are dropped when the estimated total passes the
    budget, and built again on demand.
    """
    budget = int(memory_budget_mb() * 1_000_000)
    found = _MEMORIES.get(budget)
    if found is None:
        with _MEMORIES_LOCK:
            found = _MEMORIES.setdefault(budget, ByteLRU(budget, on_evict=_release_freed_memory))
    return found


def cached(key: Hashable, build: Callable[[], Any], sizeof: Callable[[Any], int]) -> Any:
    """``memory().get_or_build``: built once for every session, dropped when memory is short."""
    return memory().get_or_build(key, build, sizeof)


def shared(kind: str, key: tuple[Hashable, ...], build: Callable[[], T]) -> T:
    """A chart, table or text computed from ``key`` alone (the repository or file digest
    and the settings), built once and drawn by every session that asks with the same key
    (``nexus/ui/views.py``; callers must not change it)."""
    return cached(("view", kind, *key), build, views.view_bytes)


def shared_table(kind: str, key: tuple[Hashable, ...], build: Callable[[], Any]) -> Any:
    """``shared`` for a table drawn with ``st.dataframe``: kept as the Arrow table that
    ``st.dataframe`` would convert the data frame to on every rerun (the same bytes
    reach the browser; the conversion is done once)."""
    return shared(kind, key, lambda: dataframe_util.convert_pandas_df_to_arrow_table(build()))


def file_key(repo: Repository, path: str, config: ChunkConfig | None = None) -> tuple[str, ...]:
    """What a view of one file depends on: the repository's name (chunk ids carry it),
    the file's path and contents, and the settings."""
    settings = () if config is None else (_index_settings(config),)
    return (repo.name, path, file_digest(repo, path), *settings)


def settings_key(config: ChunkConfig) -> tuple[str, str]:
    """What a view of the whole repository depends on: its contents, file selection and
    the settings that change chunks (the keyword weight does not)."""
    return (repo_key(), _index_settings(config))


def check_fits(repo: Repository) -> None:
    """Refuse a repository whose parsed files would take more than its share of the budget."""
    need = footprint.repo_parse_bytes(repo)
    budget = memory().budget
    if need > REPO_SHARE * budget:
        raise IngestError(
            f"{repo.name!r} is too large for this dashboard: parsing its "
            f"{len(chunkable_paths(repo)):,} source files would take about {need / 1e6:,.0f} MB "
            f"of memory, and one repository may use at most {REPO_SHARE * budget / 1e6:,.0f} MB "
            f"({REPO_SHARE:.0%} of the server's memory budget, {MEMORY_ENV}={budget / 1e6:g}). "
            "Open a smaller part of it, or chunk it with the command line (`nexus chunk`)."
        )


# --- repositories --------------------------------------------------------------------


def _opened(key: Hashable, open_: Callable[[], Repository]) -> Repository:
    """A sample or an upload (fixed contents): opened and checked once, shared by all
    sessions. A refusal is remembered too, so a rerun with the same upload still in
    its widget does not unpack it again."""
    refused = memory().get(("refused", key))
    if refused is not None:
        raise IngestError(refused)

    def open_checked() -> Repository:
        repo = open_()
        try:
            check_fits(repo)
        except IngestError as exc:
            memory().put(("refused", key), str(exc), len(str(exc)) + 200)
            raise
        return repo

    return cached(key, open_checked, footprint.repo_bytes)


def load_repo(choice: RepoChoice, data: bytes | None = None, name: str | None = None) -> Repository:
    """Open a repository and make it the current one.

    Raises ``IngestError``, also for a repository too large for the memory budget.
    """
    if choice.kind == "sample":
        if choice.value not in sample_names():
            raise FileNotFoundError(f"no sample repository named {choice.value!r}")
        path = SAMPLES_DIR / choice.value
        repo = _opened(("sample", choice.value), lambda: open_repository(path, name=choice.value))
    elif choice.kind == "upload":
        assert data is not None, "an upload needs its bytes"
        name = name or "upload"
        repo = _opened(("upload", choice.value, name), lambda: open_repository(data, name=name))
    else:
        settings = IngestSettings(
            allowed_roots=default_allowed_roots(), scan_cache=embedding_cache().folder / "scans"
        )
        repo = open_repository(choice.value, settings=settings)
        check_fits(repo)
    set_repo(repo, choice)
    return repo


def set_repo(repo: Repository, choice: RepoChoice) -> None:
    """Store the repository as opened, where it came from, a fingerprint of its
    contents and each file's content hash (hashed once here, not on every rerun), and
    the view of it that the file selection chunks."""
    ss = st.session_state
    if ss.get("repo_choice") == choice and ss.get("repo_base") is repo:
        return
    digests = file_digests(repo)
    ss["repo_base"] = repo
    ss["repo_choice"] = choice
    ss["repo_fingerprint"] = fingerprint(repo, digests)
    ss["file_digests"] = digests
    apply_selection()


# --- which files are chunked (nexus.ingest.selection) ---------------------------------------


def _globs(text: str) -> tuple[str, ...]:
    """Globs typed one a line or separated by commas."""
    return tuple(g.strip() for g in text.replace(",", "\n").splitlines() if g.strip())


def current_selection() -> FileSelection:
    """The selection the home page's widgets describe (the last valid one if the globs
    typed now are invalid: ``selection_error`` says why)."""
    return st.session_state.get("selection", DEFAULT_SELECTION)


def apply_selection() -> None:
    """Read the selection widgets and make the current repository the view of the
    opened one that this selection chunks (files are re-classified, not re-read)."""
    ss = st.session_state
    try:
        selection = FileSelection(
            include=_globs(ss.get(GLOB_KEYS["include"], "")),
            exclude=_globs(ss.get(GLOB_KEYS["exclude"], "")),
            languages=tuple(ss.get(LANGUAGES_KEY, ())),
            **{name: bool(ss.get(key, False)) for name, key in SWITCH_KEYS.items()},
        )
        ss["selection_error"] = ""
    except ValueError as exc:
        ss["selection_error"] = str(exc)
        selection = current_selection()
    ss["selection"] = selection
    base = ss.get("repo_base")
    if base is None:
        return
    ss["repo"] = replace(base, files=tuple(selection.apply(info) for info in base.files))
    ss["repo_key"] = hashlib.sha256(f"{ss['repo_fingerprint']}\0{selection!r}".encode()).hexdigest()


def file_digests(repo: Repository) -> dict[str, str]:
    """sha256 of each file's contents, by path (a folder's scan has them already)."""
    return {info.path: repo.digest(info.path) for info in repo.files}


def fingerprint(repo: Repository, digests: dict[str, str] | None = None) -> str:
    """sha256 over the repository's name, paths and contents (the cache key of a repo)."""
    digests = file_digests(repo) if digests is None else digests
    h = hashlib.sha256(repo.name.encode())
    for info in repo.files:
        h.update(info.path.encode() + b"\0")
        h.update(bytes.fromhex(digests[info.path]))
    return h.hexdigest()


def file_digest(repo: Repository, path: str) -> str:
    """The content hash of one file (remembered for the current repository)."""
    if st.session_state.get("repo") is repo:
        return st.session_state["file_digests"][path]
    return repo.digest(path)


def current_repo() -> Repository:
    """The repository chosen on the home page (as the file selection sees it), or the
    default sample when there is none."""
    repo = st.session_state.get("repo")
    if repo is None:
        repo = load_repo(RepoChoice("sample", DEFAULT_SAMPLE))
    return repo


def current_choice() -> RepoChoice:
    current_repo()
    return st.session_state["repo_choice"]


def repo_key() -> str:
    current_repo()
    return st.session_state["repo_key"]


def chunkable_paths(repo: Repository) -> list[str]:
    return sorted(info.path for info in repo.files if info.chunkable)


# --- analyses and chunks -------------------------------------------------------------


def file_analysis(
    repo: Repository, path: str, encoding: str = DEFAULT_ENCODING, digest: str | None = None
) -> FileAnalysis:
    """The parsed file, cached by path and content hash (parsing is the expensive step).

    Its size is taken again when it grew: it remembers the chunks of each setting it
    was chunked with (summing them on every use took 10-50 ms a rerun on a file of
    thousands of chunks). A build's thread has no session: it passes the ``digest``.
    """
    key = ("analysis", path, digest or file_digest(repo, path), encoding)
    analysis = cached(key, lambda: analyze(repo.read(path), encoding), footprint.analysis_bytes)
    grown = (id(analysis), len(analysis.built))
    if _SIZED.get(key) != grown:
        memory().resize(key, footprint.analysis_bytes(analysis))
        _SIZED[key] = grown
    return analysis


#: Per analysis cache key: the analysis and how many chunks it remembered when last sized.
_SIZED: dict[Hashable, tuple[int, int]] = {}


def file_chunks(
    repo: Repository, path: str, analysis: FileAnalysis, config: ChunkConfig
) -> list[Chunk]:
    """One file's chunks under ``config`` (``analysis`` is ``file_analysis``'s), kept per
    file content and settings for every session: moving a slider back to a value
    re-chunks nothing (lib.dom.d.ts takes ~0.15 s a time). Callers must not change it."""
    key = ("file_chunks", *file_key(repo, path, config))
    return cached(
        key, lambda: chunk_analysis(analysis, config, repo=repo.name), footprint.chunks_bytes
    )


def repo_analyses(
    repo: Repository,
    encoding: str = DEFAULT_ENCODING,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[FileAnalysis]:
    """Every chunkable file analysed (cached per file); ``progress(done, total, path)``.

    A repository that passed ``check_fits`` holds at most half the budget, so the
    list can be held while the rest of the cache makes room.
    """
    paths = chunkable_paths(repo)
    out = []
    for done, path in enumerate(paths):
        if progress is not None:
            progress(done, len(paths), path)
        out.append(file_analysis(repo, path, encoding))
    return out


def _index_settings(config: ChunkConfig) -> str:
    """The settings chunks and indexes depend on: the keyword weight is applied at
    query time, so moving it rebuilds nothing."""
    return dump_config_toml(config.with_(lexical_weight=0.0))


def repo_chunks(repo: Repository, config: ChunkConfig) -> list[Chunk]:
    """Chunks of the whole repository under ``config`` (cached by contents + settings;
    files are parsed one at a time, so a file dropped from memory is not held)."""

    def build() -> list[Chunk]:
        chunks: list[Chunk] = []
        for path in chunkable_paths(repo):
            analysis = file_analysis(repo, path, config.encoding)
            chunks.extend(chunk_analysis(analysis, config, repo=repo.name))
        return chunks

    return cached(("chunks", repo_key(), _index_settings(config)), build, footprint.chunks_bytes)


# --- settings ------------------------------------------------------------------------


def current_config(strategy: str = "ast") -> ChunkConfig:
    """The settings of the sidebar as a ``ChunkConfig`` (min is capped at max)."""
    ss = st.session_state
    max_tokens = int(ss.get("max_tokens", DEFAULTS["max_tokens"]))
    min_tokens = min(int(ss.get("min_tokens", DEFAULTS["min_tokens"])), max_tokens)
    return ChunkConfig(
        strategy=strategy,
        max_tokens=max_tokens,
        min_tokens=min_tokens,
        profile=str(ss.get("profile", "auto")),
        line_window=int(ss.get("line_window", DEFAULTS["line_window"])),
        lexical_weight=int(ss.get("lexical_pct", DEFAULTS["lexical_pct"])) / 100,
    )


def _matching_preset() -> None:
    """After a slider move, name the preset the sliders now match, if any."""
    budget = (st.session_state.get("max_tokens"), st.session_state.get("min_tokens"))
    st.session_state["preset"] = next(
        (p.name for p in PRESETS.values() if (p.max_tokens, p.min_tokens) == budget), ""
    )


def set_budget(max_tokens: int, min_tokens: int) -> None:
    """Move the budget sliders (a callback: before the widgets are drawn) and name the
    preset they now match, so the selector never shows a budget that is not in use."""
    st.session_state["max_tokens"] = max_tokens
    st.session_state["min_tokens"] = min_tokens
    _matching_preset()


def _apply_preset() -> None:
    """Move the budget sliders to the chosen preset (the sliders stay free to move)."""
    preset = PRESETS.get(st.session_state.get("preset", ""))
    if preset is not None:
        st.session_state["max_tokens"] = preset.max_tokens
        st.session_state["min_tokens"] = preset.min_tokens


def settings_sidebar() -> ChunkConfig:
    """The repository name and the chunking settings, in the sidebar of every page."""
    repo = current_repo()
    with st.sidebar:
        st.markdown(f"**Repository:** {safe.code(repo.name)}")
        st.caption(f"{len(chunkable_paths(repo))} chunkable files · change it on the home page")
        st.subheader("Chunking settings")
        st.selectbox(
            "Budget preset",
            ["", *PRESETS],
            key="preset",
            format_func=lambda name: name or "(custom)",
            on_change=_apply_preset,
            help="; ".join(f"{p.name}: {p.description}" for p in PRESETS.values()),
        )
        st.slider(
            "max_tokens",
            *SLIDERS["max_tokens"][:2],
            step=SLIDERS["max_tokens"][2],
            key="max_tokens",
            on_change=_matching_preset,
            help="Largest AST chunk in tokens; bigger units are split along their children.",
        )
        st.slider(
            "min_tokens",
            *SLIDERS["min_tokens"][:2],
            step=SLIDERS["min_tokens"][2],
            key="min_tokens",
            on_change=_matching_preset,
            help="Small neighbouring pieces are merged until they reach this size.",
        )
        st.selectbox(
            "Profile",
            PROFILE_NAMES,
            key="profile",
            help="Which units become chunk boundaries; auto decides per file.",
        )
        st.slider(
            "Line window (baseline)",
            *SLIDERS["line_window"][:2],
            step=SLIDERS["line_window"][2],
            key="line_window",
        )
        st.subheader("Search settings")
        st.slider(
            "Keyword weight (%)",
            *SLIDERS["lexical_pct"][:2],
            step=SLIDERS["lexical_pct"][2],
            key="lexical_pct",
            help="Search ranks by cosine + this share of the query's best keyword (BM25) "
            "score; 0 = embeddings alone.",
        )
        if st.session_state["min_tokens"] > st.session_state["max_tokens"]:
            st.warning("min_tokens is above max_tokens; using max_tokens for both.")
    link_upload = st.session_state.get("_link_upload")
    if link_upload and current_choice().url_value != link_upload:
        st.sidebar.warning(
            "This link was made on an uploaded repository "
            f"({safe.md(link_upload.split(':', 1)[1])}). Upload the same zip on the Repository "
            f"page to see it; {safe.code(repo.name)} is shown meanwhile."
        )
    write_url_params({})
    return current_config()


def file_picker(repo: Repository, label: str = "File") -> str | None:
    """A searchable file select (sorted by path); the largest source file by default
    (never a test, even when tests are chunked)."""
    paths = chunkable_paths(repo)
    if not paths:
        return None
    if st.session_state.get("file") not in paths:
        infos = {info.path: info for info in repo.files}
        st.session_state["file"] = max(
            paths,
            key=lambda p: (infos[p].category is Category.SOURCE, infos[p].size, p),
        )
    return st.selectbox(label, paths, key="file", help="Type to filter the list.")


# --- embedding -----------------------------------------------------------------------


@st.cache_resource(show_spinner="Loading the embedding model…")
def _embedder(kind: str, words_view: bool) -> Embedder:
    if kind.startswith("fake"):
        from nexus.ui.fake_embedder import HashingEmbedder

        delay = kind.partition(":")[2]
        return HashingEmbedder(delay_s=float(delay) if delay else 0.0)
    return default_embedder(words_view=words_view)


_MODEL_LOADERS: dict[bool, threading.Thread] = {}


def _load_model(embedder: Embedder) -> None:
    with contextlib.suppress(Exception):  # the page reports it when it asks for the model
        _ = embedder.dim  # loads the model


def _load_model_soon(words_view: bool = True) -> None:
    """Load the model on a thread, once per server (a missing model is reported by the
    page when it asks for it)."""
    if EMBEDDER_FACTORY is not None or os.environ.get(EMBEDDER_ENV, "model") != "model":
        return
    with _MEMORIES_LOCK:
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


def model_loading(words_view: bool = True) -> bool:
    """Whether the model that ``page_setup(load_model=True)`` started loading is still
    loading (a saved index answers by keywords meanwhile)."""
    thread = _MODEL_LOADERS.get(words_view)
    return thread is not None and thread.is_alive()


def get_embedder(words_view: bool = True) -> Embedder:
    """The embedder of this server: the hook, ``NEXUS_UI_EMBEDDER=fake``, or the model.

    Raises ``ModelUnavailableError`` when the model is missing.
    """
    if EMBEDDER_FACTORY is not None:
        return EMBEDDER_FACTORY()
    return _embedder(os.environ.get(EMBEDDER_ENV, "model"), words_view)


@st.cache_resource(show_spinner=False)
def _embedding_cache(folder: str | None) -> EmbeddingCache:
    return EmbeddingCache(folder)


def embedding_cache() -> EmbeddingCache:
    """The on-disk cache (``NEXUS_CACHE_DIR``): only chunks whose text changed are embedded
    again."""
    return _embedding_cache(os.environ.get(CACHE_ENV) or None)


def progress_callback(text: str) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """A ``progress(done, total)`` that draws a bar, and a function that removes it."""
    bar = st.progress(0.0, text=text)

    def progress(done: int, total: int) -> None:
        bar.progress(min(done / total, 1.0) if total else 1.0, text=f"{text} {done}/{total}")

    return progress, bar.empty


#: The process's background index builds, shared by every session (see ``nexus.runtime.builds``);
#: their memory counts against the server's budget.
BUILDS = BuildManager(memory=memory)


def _build_key(repo: Repository, config: ChunkConfig, strategy: str) -> tuple[str, ...]:
    embedder = get_embedder(config.words_view)
    return ("build", repo_key(), _index_settings(config.with_(strategy=strategy)), embedder.name)


def index_build(
    repo: Repository,
    config: ChunkConfig,
    strategy: str = "ast",
    resume: bool = False,
    rebuild: bool = False,
) -> IndexBuild:
    """The background build of the repository's ``strategy`` index under ``config``:
    started on the first request, shared by every session, kept across reruns (the
    keyword weight is not part of its key). A saved index of the same files, settings
    and model is opened instead (unless ``rebuild``); a finished build is saved.
    ``resume`` restarts a cancelled one.

    Raises ``ModelUnavailableError`` when the model is missing.
    """
    chosen = config.with_(strategy=strategy)
    embedder = get_embedder(config.words_view)
    with_cache = CachedEmbedder(embedder, embedding_cache())
    store = IndexStore(embedding_cache().folder / "indexes")

    digest = cached(("files_digest", repo_key()), lambda: files_digest(repo), lambda _: 300)
    identity = identity_for(repo.name, digest, chosen, embedder.name)
    key = _build_key(repo, config, strategy)
    before = BUILDS.get(key)

    def stream() -> ChunkStream:
        digests = {path: file_digest(repo, path) for path in chunkable_paths(repo)}
        return ChunkStream(_file_chunks(repo, chosen, digests), _sizes(repo, digests))

    build = BUILDS.request(
        key,
        stream,
        with_cache,
        resume,
        saved=None if rebuild else lambda: store.open(identity),
        on_done=lambda index: store.save(index, identity),
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
        analysis = file_analysis(repo, path, config.encoding, digest)
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


def index_key(repo: Repository, config: ChunkConfig) -> tuple[Hashable, ...]:
    """What the line-based and AST indexes of these settings are built from (for caching
    what is computed over them)."""
    return tuple(_build_key(repo, config, strategy) for strategy in ("lines", "ast"))


def forget_builds(repo: Repository, config: ChunkConfig) -> None:
    """Drop both builds of these settings: the next request re-chunks and re-indexes
    (the embedding cache makes that quick)."""
    for strategy in ("ast", "lines"):
        BUILDS.forget(_build_key(repo, config, strategy))
        memory().discard(("chunks", repo_key(), _index_settings(config.with_(strategy=strategy))))


@st.cache_resource(show_spinner=False)
def _wordpiece_counter() -> WordPieceCounter | None:
    try:
        return WordPieceCounter.for_model()
    except ModelUnavailableError:
        return None


def window_counts(chunks: list[Chunk]) -> tuple[list[int], int, bool]:
    """Word pieces per chunk's embedding text, the model window, and whether exact.

    Counted with the model's tokenizer alone (no torch), so the count is the same
    whichever page loaded first; the test embedder counts its own way. Without a
    model folder, words x 4/3 + 2 estimates it.
    """
    texts = [c.embedding_text or c.text for c in chunks]
    if EMBEDDER_FACTORY is not None or os.environ.get(EMBEDDER_ENV, "").startswith("fake"):
        embedder = get_embedder()
        count, window, exact, name = (
            embedder.count_wordpieces,
            embedder.max_seq_length,
            True,
            embedder.name,
        )
    elif (counter := _wordpiece_counter()) is not None:
        count, window, exact, name = counter.count, counter.window, True, "model"
    else:
        count, window, exact, name = _estimate_wordpieces, 256, False, "estimate"
    # The same chunks are counted for every session: keyed by the texts and the counter.
    digest = hashlib.sha256("\0".join(texts).encode()).hexdigest()
    pieces = shared("wordpieces", (digest, name), lambda: _count_new(texts, count, name))
    return pieces, window, exact


#: Estimated bytes of one remembered word-piece count (a 20-byte digest, an int, a slot).
WORDPIECE_MEMO_BYTES = 120


def _count_new(texts: list[str], count: Callable[[list[str]], list[int]], name: str) -> list[int]:
    """Word pieces of ``texts``, counting only texts not counted before: a slider move
    keeps most chunks of a file (counting all of lib.dom.d.ts's took ~1 s)."""
    key = ("wordpiece_memo", name)
    memo: dict[bytes, int] = cached(key, dict, lambda _: 1000)
    digests = [hashlib.sha1(text.encode()).digest() for text in texts]
    todo = {d: text for d, text in zip(digests, texts, strict=True) if d not in memo}
    if todo:
        memo.update(zip(todo, count(list(todo.values())), strict=True))
    memory().resize(key, WORDPIECE_MEMO_BYTES * len(memo) + 1000)
    return [memo[d] for d in digests]


def _estimate_wordpieces(texts: list[str]) -> list[int]:
    """Words x 4/3 + 2: close to the model's count on code, when it cannot be counted."""
    return [len(t.split()) * 4 // 3 + 2 for t in texts]


def unit_rows(repo: Repository, path: str) -> tuple[list[dict[str, object]], int]:
    """The file's units (with ``regex_found``) and how many functions the regex finds
    (shared: callers must not change them)."""

    def build() -> tuple[list[dict[str, object]], int]:
        source = repo.read(path)
        return function_rows(source), len(regex_functions(source.text, str(source.info.language)))

    size = footprint.UNIT_ROWS_BYTES_PER_BYTE * len(repo.contents.get(path, b"")) + 1000
    return cached(("unit_rows", path, file_digest(repo, path)), build, lambda _: size)


def repo_fates(repo: Repository, config: ChunkConfig) -> dict[str, list[UnitFate]]:
    """Per file, what ``config``'s chunks do to each unit (intact, pieces, dilution)."""

    def units_of(path: str) -> list[Unit]:
        return file_analysis(repo, path, config.encoding).units

    def build() -> dict[str, list[UnitFate]]:
        by_file: dict[str, list[Chunk]] = {}
        for chunk in repo_chunks(repo, config):
            by_file.setdefault(chunk.file, []).append(chunk)
        return {
            path: unit_fates(units_of(path), by_file.get(path, []))
            for path in chunkable_paths(repo)
        }

    def size(fates: dict[str, list[UnitFate]]) -> int:
        return sum(FATE_BYTES * len(found) + 200 for found in fates.values())

    return cached(("fates", repo_key(), dump_config_toml(config)), build, size)


# --- links ---------------------------------------------------------------------------

#: URL parameter -> (session key, kind); ints are checked against the sidebar's ranges.
URL_KEYS: dict[str, tuple[str, Any]] = {
    "max_tokens": ("max_tokens", slider_range("max_tokens")),
    "min_tokens": ("min_tokens", slider_range("min_tokens")),
    "line_window": ("line_window", slider_range("line_window")),
    "lw": ("lexical_pct", slider_range("lexical_pct")),
    "k": ("k", slider_range("k")),
    "profile": ("profile", PROFILE_NAMES),
    "file": ("file", None),
    "q": ("query", None),
    "target": ("target", None),
}


def apply_url_params() -> list[str]:
    """Once per session, copy a shared link's parameters into the session; returns problems."""
    if st.session_state.get("_url_applied"):
        return []
    st.session_state["_url_applied"] = True
    params = st.query_params
    problems = []
    repo = params.get("repo")
    if repo:
        kind, _, value = repo.partition(":")
        if kind == "upload" and value:
            # An upload cannot travel in a link: say so (and keep saying it in the
            # sidebar) rather than silently showing another repository.
            st.session_state["_link_upload"] = repo
            problems.append(
                f"it was made on an uploaded repository ({value}); upload the same zip "
                "on the Repository page to see what its author saw"
            )
        elif kind not in ("sample", "path") or not value:
            problems.append(f"repo={repo!r} is not sample:NAME, path:PATH or upload:NAME")
        else:
            try:
                if RepoChoice(kind, value) != st.session_state.get("repo_choice"):
                    load_repo(RepoChoice(kind, value))
                # The home page's widgets name the same repository as the link.
                st.session_state["source"] = SOURCES[0] if kind == "sample" else SOURCES[2]
                st.session_state["sample" if kind == "sample" else "local_path"] = value
            except (ValueError, OSError) as exc:  # IngestError is a ValueError
                problems.append(f"could not open {repo!r}: {exc}")
    if any(params.get(name) is not None for name in ("with", "include", "exclude", "languages")):
        problems += _selection_from_link(params)
    for name, (key, allowed) in URL_KEYS.items():
        raw = params.get(name)
        if raw is None:
            continue
        value: Any = raw
        if isinstance(allowed, range):
            try:
                value = int(raw)
            except ValueError:
                value = None
        if allowed is not None and value not in allowed:
            problems.append(f"ignored {name}={raw!r}")
            continue
        st.session_state[key] = value
    return problems


def _selection_from_link(params: Any) -> list[str]:
    """``with=tests,vendored``, ``include=src/**``, ``exclude=a,b``,
    ``languages=python,go``: the file selection."""
    ss = st.session_state
    problems = []
    languages = parse_languages(params.get("languages") or "")
    for name in languages:
        if name not in CHUNKABLE_LANGUAGES:
            problems.append(f"ignored languages={name!r} (one of {', '.join(LANGUAGE_NAMES)})")
    ss[LANGUAGES_KEY] = [name for name in languages if name in CHUNKABLE_LANGUAGES]
    switched = _globs(params.get("with") or "")
    for name in switched:
        if name not in SWITCH_KEYS:
            problems.append(f"ignored with={name!r} (one of {', '.join(SWITCH_KEYS)})")
    for name, key in SWITCH_KEYS.items():
        ss[key] = name in switched
    for name, key in GLOB_KEYS.items():
        ss[key] = "\n".join(_globs(params.get(name) or ""))
    apply_selection()
    if ss.get("selection_error"):
        problems.append(f"ignored the file globs: {ss['selection_error']}")
    return problems


def write_url_params(values: dict[str, object]) -> None:
    """Put the current repository, settings, file selection and ``values`` in the URL
    (empty ones dropped)."""
    ss = st.session_state
    selection = current_selection()
    params: dict[str, object] = {"repo": current_choice().url_value}
    params.update({name: ss.get(key) for name, (key, _) in URL_KEYS.items()})
    params["with"] = ",".join(name for name in SWITCH_KEYS if getattr(selection, name))
    params["include"] = ",".join(selection.include)
    params["exclude"] = ",".join(selection.exclude)
    params["languages"] = ",".join(selection.languages)
    params.update(values)
    st.query_params.from_dict({k: str(v) for k, v in params.items() if v not in (None, "")})


#: Seconds a page waits for the unit targets before drawing without them (tests wait
#: longer, so a small repository's list is always there on the first run).
TARGETS_WAIT_S = 2.0
_TARGET_THREADS: dict[Hashable, threading.Thread] = {}


def unit_targets(
    repo: Repository, wait_s: float | None = None, start: bool = True
) -> dict[str, Target] | None:
    """Every unit of the repository as a search target, keyed ``path:qualname:start``
    (built once per repository, shared: callers must not change it), or None while a
    thread still parses the files for them (a large repository's first answer must not
    wait for that; ask again). Waits ``wait_s`` (default ``TARGETS_WAIT_S``) for them;
    with ``start=False`` only says whether they are listed (no thread is started)."""
    key = ("targets", repo_key())
    found = memory().get(key)
    if found is not None or not start:
        return found
    digests = {path: file_digest(repo, path) for path in chunkable_paths(repo)}

    def build() -> dict[str, Target]:
        targets = {}
        for path, digest in digests.items():
            for unit in file_analysis(repo, path, digest=digest).units:
                targets[f"{path}:{unit.qualname}:{unit.start_line}"] = Target(
                    file=path,
                    start_line=unit.start_line,
                    end_line=unit.end_line,
                    name=unit.name,
                    qualname=unit.qualname,
                    kind=unit.kind,
                )
        return targets

    with _MEMORIES_LOCK:
        thread = _TARGET_THREADS.get(key)
        if thread is None or not thread.is_alive() and key not in memory():
            thread = threading.Thread(
                target=cached,
                args=(key, build, lambda found: TARGET_BYTES * len(found) + 1000),
                name="nexus-unit-targets",
                daemon=True,
            )
            _TARGET_THREADS[key] = thread
            thread.start()
    thread.join(TARGETS_WAIT_S if wait_s is None else wait_s)
    return memory().get(key)


def highlighted(text: str, language: str) -> list[str]:
    """Pygments HTML per line, computed once per file content (not on every rerun;
    shared: callers must not change it)."""
    key = ("highlighted", hashlib.sha256(text.encode()).hexdigest(), language)
    size = footprint.HIGHLIGHT_BYTES_PER_BYTE * len(text) + 1000
    return cached(key, lambda: render.highlighted_lines(text, language), lambda _: size)
