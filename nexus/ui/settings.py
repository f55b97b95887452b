"""The chunking and search settings in the sidebar of every page, and the file picker."""

from __future__ import annotations

from typing import Any

import streamlit as st

from nexus.chunking.profiles import PROFILE_NAMES
from nexus.config import PRESETS, ChunkConfig
from nexus.ingest.sources import Repository
from nexus.types import Category
from nexus.ui import links, repos, safe, widgets


def current_config(strategy: str = "ast") -> ChunkConfig:
    """The settings of the sidebar as a ``ChunkConfig`` (min is capped at max)."""
    ss = st.session_state
    max_tokens = int(ss.get("max_tokens", widgets.DEFAULTS["max_tokens"]))
    min_tokens = min(int(ss.get("min_tokens", widgets.DEFAULTS["min_tokens"])), max_tokens)
    return ChunkConfig(
        strategy=strategy,
        max_tokens=max_tokens,
        min_tokens=min_tokens,
        profile=str(ss.get("profile", "auto")),
        line_window=int(ss.get("line_window", widgets.DEFAULTS["line_window"])),
        lexical_weight=int(ss.get("lexical_pct", widgets.DEFAULTS["lexical_pct"])) / 100,
        ranking=ss.get("ranking_mode", widgets.DEFAULTS["ranking_mode"]) == "stage",
    )


def matching_preset() -> None:
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
    matching_preset()


def _apply_preset() -> None:
    """Move the budget sliders to the chosen preset (the sliders stay free to move)."""
    preset = PRESETS.get(st.session_state.get("preset", ""))
    if preset is not None:
        st.session_state["max_tokens"] = preset.max_tokens
        st.session_state["min_tokens"] = preset.min_tokens


def settings_sidebar() -> ChunkConfig:
    """The repository name and the chunking settings, in the sidebar of every page."""
    repo = repos.current_repo()
    with st.sidebar:
        st.markdown(f"**Repository:** {safe.code(repo.name)}")
        st.caption(
            f"{len(repos.chunkable_paths(repo))} chunkable files · change it on the home page"
        )
        st.subheader("Chunking settings")
        st.selectbox(
            "Budget preset",
            ["", *PRESETS],
            key="preset",
            format_func=lambda name: name or "(custom)",
            on_change=_apply_preset,
            help="; ".join(f"{p.name}: {p.description}" for p in PRESETS.values()),
        )
        _slider(
            "max_tokens",
            "max_tokens",
            on_change=matching_preset,
            help="Largest AST chunk in tokens; bigger units are split along their children.",
        )
        _slider(
            "min_tokens",
            "min_tokens",
            on_change=matching_preset,
            help="Small neighbouring pieces are merged until they reach this size.",
        )
        st.selectbox(
            "Profile",
            PROFILE_NAMES,
            key="profile",
            help="Which units become chunk boundaries; auto decides per file.",
        )
        _slider(
            "Line window (baseline)",
            "line_window",
        )
        st.subheader("Search settings")
        st.radio(
            "Ranking",
            widgets.RANKING_MODES,
            key="ranking_mode",
            format_func=widgets.RANKING_MODES.get,
            help="Ranking stage: dense and keyword candidates fused per query kind, then "
            "definitions, paths and file kinds weigh in (each hit says how). Cosine + "
            "keywords: the score before it, with the weight below.",
        )
        _slider(
            "Keyword weight (%)",
            "lexical_pct",
            disabled=st.session_state.get("ranking_mode") == "stage",
            help="With “cosine + keywords”: search ranks by cosine + this share of the "
            "query's best keyword (BM25) score; 0 = embeddings alone.",
        )
        if st.session_state["min_tokens"] > st.session_state["max_tokens"]:
            st.warning("min_tokens is above max_tokens; using max_tokens for both.")
    link_upload = st.session_state.get("_link_upload")
    if link_upload and repos.current_choice().url_value != link_upload:
        st.sidebar.warning(
            "This link was made on an uploaded repository "
            f"({safe.md(link_upload.split(':', 1)[1])}). Upload the same zip on the Repository "
            f"page to see it; {safe.code(repo.name)} is shown meanwhile."
        )
    links.write_url_params({})
    return current_config()


def file_picker(repo: Repository, label: str = "File") -> str | None:
    """A searchable file select (sorted by path); the largest source file by default
    (never a test, even when tests are chunked)."""
    paths = repos.chunkable_paths(repo)
    if not paths:
        return None
    if st.session_state.get("file") not in paths:
        infos = {info.path: info for info in repo.files}
        st.session_state["file"] = max(
            paths,
            key=lambda p: (infos[p].category is Category.SOURCE, infos[p].size, p),
        )
    return st.selectbox(label, paths, key="file", help="Type to filter the list.")


def _slider(label: str, key: str, **options: Any) -> None:
    """A sidebar slider over its range in ``widgets.SLIDERS`` (the links read the same)."""
    low, high, step = widgets.SLIDERS[key]
    st.slider(label, low, high, step=step, key=key, **options)
