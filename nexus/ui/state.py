"""Session state, cached loaders and the settings sidebar shared by every dashboard page.

Pages use plain ``pages/`` directory mode; what one page chooses (the repository,
the chunking settings, the file) lives in ``st.session_state`` so the next page
sees it. Widget values are kept across page switches by re-assigning their keys at
the top of each page (Streamlit drops a widget's state when its page is left).
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from nexus.chunking.analysis import FileAnalysis, analyze
from nexus.chunking.profiles import PROFILE_NAMES
from nexus.config import DEFAULT_ENCODING, PRESETS, ChunkConfig, dump_config_toml
from nexus.embedding import CachedEmbedder, Embedder, EmbeddingCache, default_embedder
from nexus.evaluation import Target
from nexus.extract import regex_functions
from nexus.fragmentation import UnitFate, unit_fates
from nexus.pipeline import chunk_analyses
from nexus.report import function_rows
from nexus.search import SideBySide
from nexus.sources import IngestSettings, Repository, default_allowed_roots, open_repository
from nexus.types import Chunk
from nexus.ui import render

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sample_repos"
DEFAULT_SAMPLE = "express-images"

#: ``NEXUS_UI_EMBEDDER=fake`` swaps the model for ``HashingEmbedder`` (tests, demos).
EMBEDDER_ENV = "NEXUS_UI_EMBEDDER"
#: Folder of the on-disk embedding cache (default ``.nexus-cache/embeddings``).
CACHE_ENV = "NEXUS_CACHE_DIR"
#: Tests may set this to any zero-argument callable returning an ``Embedder``.
EMBEDDER_FACTORY: Callable[[], Embedder] | None = None

DEFAULTS: dict[str, Any] = {
    "max_tokens": ChunkConfig().max_tokens,
    "min_tokens": ChunkConfig().min_tokens,
    "profile": ChunkConfig().profile,
    "line_window": ChunkConfig().line_window,
    "lexical_pct": round(ChunkConfig().lexical_weight * 100),
}
#: Widget keys whose values survive a page switch.
KEPT_KEYS = (*DEFAULTS, "preset", "source", "sample", "local_path", "file", "query", "k", "target")
SOURCES = ("Sample repository", "Upload a zip", "Local path")


@dataclass(frozen=True)
class RepoChoice:
    """Where the current repository came from (``kind`` sample | upload | path)."""

    kind: str
    value: str  # sample name, sha256 of the upload, or the path typed

    @property
    def url_value(self) -> str | None:
        """How a link names this repository (uploads cannot be named)."""
        return None if self.kind == "upload" else f"{self.kind}:{self.value}"


# --- page setup ----------------------------------------------------------------------


def page_setup(title: str) -> None:
    """First call of every page: page config, kept widget values, defaults."""
    st.set_page_config(page_title=f"Nexus · {title}", page_icon="🧩", layout="wide")
    for key in KEPT_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    if "preset" not in st.session_state:
        _matching_preset()


def sample_names() -> list[str]:
    """The bundled sample repositories, default first."""
    names = sorted(p.name for p in SAMPLES_DIR.iterdir() if p.is_dir())
    return sorted(names, key=lambda n: n != DEFAULT_SAMPLE)


# --- repositories --------------------------------------------------------------------


@st.cache_resource(show_spinner=False, max_entries=16)
def _open_sample(name: str) -> Repository:
    return open_repository(SAMPLES_DIR / name, name=name)


@st.cache_resource(show_spinner=False, max_entries=8)
def _open_upload(digest: str, name: str, _data: bytes) -> Repository:
    return open_repository(_data, name=name)


def load_repo(choice: RepoChoice, data: bytes | None = None, name: str | None = None) -> Repository:
    """Open a repository and make it the current one. Raises ``IngestError``."""
    if choice.kind == "sample":
        if choice.value not in sample_names():
            raise FileNotFoundError(f"no sample repository named {choice.value!r}")
        repo = _open_sample(choice.value)
    elif choice.kind == "upload":
        assert data is not None, "an upload needs its bytes"
        repo = _open_upload(choice.value, name or "upload", data)
    else:
        settings = IngestSettings(allowed_roots=default_allowed_roots())
        repo = open_repository(choice.value, settings=settings)
    set_repo(repo, choice)
    return repo


def set_repo(repo: Repository, choice: RepoChoice) -> None:
    """Store the repository, where it came from, and a fingerprint of its contents."""
    if st.session_state.get("repo_choice") == choice and st.session_state.get("repo") is repo:
        return
    st.session_state["repo"] = repo
    st.session_state["repo_choice"] = choice
    st.session_state["repo_key"] = fingerprint(repo)


def fingerprint(repo: Repository) -> str:
    """sha256 over the repository's name, paths and contents (the cache key of a repo)."""
    h = hashlib.sha256(repo.name.encode())
    for info in repo.files:
        h.update(info.path.encode() + b"\0")
        h.update(hashlib.sha256(repo.contents.get(info.path, b"")).digest())
    return h.hexdigest()


def current_repo() -> Repository:
    """The repository chosen on the home page, or the default sample when there is none."""
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


@st.cache_resource(show_spinner=False, max_entries=4000)
def _analysis(path: str, digest: str, encoding: str, _repo: Repository) -> FileAnalysis:
    return analyze(_repo.read(path), encoding)


def file_analysis(repo: Repository, path: str, encoding: str = DEFAULT_ENCODING) -> FileAnalysis:
    """The parsed file, cached by path and content hash (parsing is the expensive step)."""
    digest = hashlib.sha256(repo.contents.get(path, b"")).hexdigest()
    return _analysis(path, digest, encoding, repo)


def repo_analyses(
    repo: Repository,
    encoding: str = DEFAULT_ENCODING,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[FileAnalysis]:
    """Every chunkable file analysed (cached per file); ``progress(done, total, path)``."""
    paths = chunkable_paths(repo)
    out = []
    for done, path in enumerate(paths):
        if progress is not None:
            progress(done, len(paths), path)
        out.append(file_analysis(repo, path, encoding))
    return out


@st.cache_resource(show_spinner=False)
def _stores() -> dict[str, OrderedDict[Any, Any]]:
    """Named LRU stores that outlive a rerun (indexes, chunk lists, sweep results)."""
    return {}


def store(name: str, max_entries: int = 8) -> OrderedDict[Any, Any]:
    """A process-wide LRU dict; callers evict with ``trim``."""
    stores = _stores()
    if name not in stores:
        stores[name] = OrderedDict()
    found = stores[name]
    while len(found) > max_entries:
        found.popitem(last=False)
    return found


def _index_settings(config: ChunkConfig) -> str:
    """The settings chunks and indexes depend on: the keyword weight is applied at
    query time, so moving it rebuilds nothing."""
    return dump_config_toml(config.with_(lexical_weight=0.0))


def repo_chunks(repo: Repository, config: ChunkConfig) -> list[Chunk]:
    """Chunks of the whole repository under ``config`` (cached by contents + settings)."""
    key = (repo_key(), _index_settings(config))
    chunks = store("chunks", 32)
    if key not in chunks:
        chunks[key] = chunk_analyses(repo_analyses(repo, config.encoding), config, repo=repo.name)
    return chunks[key]


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
        st.markdown(f"**Repository:** `{repo.name}`")
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
            64,
            2048,
            step=16,
            key="max_tokens",
            on_change=_matching_preset,
            help="Largest AST chunk in tokens; bigger units are split along their children.",
        )
        st.slider(
            "min_tokens",
            0,
            256,
            step=8,
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
        st.slider("Line window (baseline)", 10, 200, step=5, key="line_window")
        st.subheader("Search settings")
        st.slider(
            "Keyword weight (%)",
            0,
            100,
            step=5,
            key="lexical_pct",
            help="Search ranks by cosine + this share of the query's best keyword (BM25) "
            "score; 0 = embeddings alone.",
        )
        if st.session_state["min_tokens"] > st.session_state["max_tokens"]:
            st.warning("min_tokens is above max_tokens; using max_tokens for both.")
    return current_config()


def file_picker(repo: Repository, label: str = "File") -> str | None:
    """A searchable file select (sorted by path); the largest source file by default."""
    paths = chunkable_paths(repo)
    if not paths:
        return None
    if st.session_state.get("file") not in paths:
        sizes = {info.path: info.size for info in repo.files}
        st.session_state["file"] = max(paths, key=lambda p: (sizes[p], p))
    return st.selectbox(label, paths, key="file", help="Type to filter the list.")


# --- embedding -----------------------------------------------------------------------


@st.cache_resource(show_spinner="Loading the embedding model…")
def _embedder(kind: str, words_view: bool) -> Embedder:
    if kind == "fake":
        from nexus.ui.fake_embedder import HashingEmbedder

        return HashingEmbedder()
    return default_embedder(words_view=words_view)


_USED: list[Embedder] = []  # embedders this process has handed out (for ``loaded_embedder``)


def get_embedder(words_view: bool = True) -> Embedder:
    """The embedder of this server: the hook, ``NEXUS_UI_EMBEDDER=fake``, or the model.

    Raises ``ModelUnavailableError`` when the model is missing.
    """
    if EMBEDDER_FACTORY is not None:
        embedder = EMBEDDER_FACTORY()
    else:
        embedder = _embedder(os.environ.get(EMBEDDER_ENV, "model"), words_view)
    if embedder not in _USED:
        _USED.append(embedder)
    return embedder


def loaded_embedder() -> Embedder | None:
    """An embedder that is already loaded, if any (counting word pieces is then cheap)."""
    for embedder in reversed(_USED):
        inner: Any = embedder
        while hasattr(inner, "inner"):
            inner = inner.inner
        if not hasattr(inner, "_model") or inner._model is not None:
            return embedder
    return None


@st.cache_resource(show_spinner=False)
def embedding_cache() -> EmbeddingCache:
    """The on-disk cache: only chunks whose text changed are embedded again."""
    return EmbeddingCache(os.environ.get(CACHE_ENV) or None)


def progress_callback(text: str) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """A ``progress(done, total)`` that draws a bar, and a function that removes it."""
    bar = st.progress(0.0, text=text)

    def progress(done: int, total: int) -> None:
        bar.progress(min(done / total, 1.0) if total else 1.0, text=f"{text} {done}/{total}")

    return progress, bar.empty


def side_by_side(repo: Repository, config: ChunkConfig, refresh: bool = False) -> SideBySide:
    """Line-based and AST indexes of the repository, built once per repo + settings.

    Raises ``ModelUnavailableError`` when the model is missing.
    """
    embedder = get_embedder(config.words_view)
    lines_config = config.with_(strategy="lines")
    key = (repo_key(), _index_settings(config.with_(strategy="ast")), lines_config.line_window)
    key = (*key, embedder.name)
    indexes = store("indexes", 6)
    if refresh or key not in indexes:
        line_chunks = repo_chunks(repo, lines_config)
        ast_chunks = repo_chunks(repo, config.with_(strategy="ast"))
        cached = CachedEmbedder(embedder, embedding_cache())
        progress, done = progress_callback("Embedding chunks…")
        try:
            indexes[key] = SideBySide(line_chunks, ast_chunks, cached, progress=progress)
        finally:
            done()
        st.session_state["index_stats"] = {"hits": cached.last_hits, "misses": cached.last_misses}
    indexes.move_to_end(key)
    return indexes[key]


def window_counts(chunks: list[Chunk]) -> tuple[list[int], int, bool]:
    """Word pieces per chunk's embedding text, the model window, and whether exact.

    Exact only when a model is already loaded; otherwise words x 4/3 + 2 estimates it
    (loading torch just to colour a flag would make the page slow).
    """
    embedder = loaded_embedder()
    texts = [c.embedding_text or c.text for c in chunks]
    if embedder is not None:
        return embedder.count_wordpieces(texts), embedder.max_seq_length, True
    return [len(t.split()) * 4 // 3 + 2 for t in texts], 256, False


@st.cache_data(show_spinner=False, max_entries=256)
def _unit_rows(path: str, digest: str, _repo: Repository) -> tuple[list[dict[str, object]], int]:
    source = _repo.read(path)
    return function_rows(source), len(regex_functions(source.text, str(source.info.language)))


def unit_rows(repo: Repository, path: str) -> tuple[list[dict[str, object]], int]:
    """The file's units (with ``regex_found``) and how many functions the regex finds."""
    digest = hashlib.sha256(repo.contents.get(path, b"")).hexdigest()
    return _unit_rows(path, digest, repo)


def repo_fates(repo: Repository, config: ChunkConfig) -> dict[str, list[UnitFate]]:
    """Per file, what ``config``'s chunks do to each unit (intact, pieces, dilution)."""
    key = (repo_key(), dump_config_toml(config))
    fates = store("fates", 16)
    if key not in fates:
        by_file: dict[str, list[Chunk]] = {}
        for chunk in repo_chunks(repo, config):
            by_file.setdefault(chunk.file, []).append(chunk)
        fates[key] = {
            a.source.info.path: unit_fates(a.units, by_file.get(a.source.info.path, []))
            for a in repo_analyses(repo, config.encoding)
        }
    return fates[key]


# --- links ---------------------------------------------------------------------------

#: URL parameter -> (session key, kind); ints are checked against the sidebar's ranges.
URL_KEYS: dict[str, tuple[str, Any]] = {
    "max_tokens": ("max_tokens", range(64, 1025, 16)),
    "min_tokens": ("min_tokens", range(0, 257, 8)),
    "line_window": ("line_window", range(10, 201, 5)),
    "lw": ("lexical_pct", range(0, 101, 5)),
    "k": ("k", range(1, 21)),
    "profile": ("profile", PROFILE_NAMES),
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
        if kind not in ("sample", "path") or not value:
            problems.append(f"repo={repo!r} is not sample:NAME or path:PATH")
        elif RepoChoice(kind, value) != st.session_state.get("repo_choice"):
            try:
                load_repo(RepoChoice(kind, value))
            except (ValueError, OSError) as exc:  # IngestError is a ValueError
                problems.append(f"could not open {repo!r}: {exc}")
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


def write_url_params(values: dict[str, object]) -> None:
    """Put the current repository, settings and ``values`` in the URL (empty ones dropped)."""
    ss = st.session_state
    params: dict[str, object] = {"repo": current_choice().url_value}
    params.update({name: ss.get(key) for name, (key, _) in URL_KEYS.items()})
    params.update(values)
    st.query_params.from_dict({k: str(v) for k, v in params.items() if v not in (None, "")})


def unit_targets(repo: Repository) -> dict[str, Target]:
    """Every unit of the repository as a search target, keyed ``path:qualname:start``."""
    targets = {}
    for analysis in repo_analyses(repo):
        path = analysis.source.info.path
        for unit in analysis.units:
            targets[f"{path}:{unit.qualname}:{unit.start_line}"] = Target(
                file=path,
                start_line=unit.start_line,
                end_line=unit.end_line,
                name=unit.name,
                qualname=unit.qualname,
                kind=unit.kind,
            )
    return targets


@st.cache_data(show_spinner=False, max_entries=64)
def highlighted(text: str, language: str) -> list[str]:
    """Pygments HTML per line, computed once per file content (not on every rerun)."""
    return render.highlighted_lines(text, language)
