"""Shared links: the repository, settings and file selection in the URL, and back."""

from __future__ import annotations

from typing import Any

import streamlit as st

from nexus.chunking.profiles import PROFILE_NAMES
from nexus.ingest.selection import parse_languages
from nexus.types import CHUNKABLE_LANGUAGES, Chunk
from nexus.ui import repos, sweeps, widgets

HIT_KEY = widgets.HIT_KEY


class _HitValues:
    """The values ``hit=`` may take (``FILE:LINE``), for the check in ``apply_url_params``."""

    def __contains__(self, value: object) -> bool:
        return hit_line(value) is not None


#: URL parameter -> (session key, kind); ints are checked against the sidebar's ranges.
URL_KEYS: dict[str, tuple[str, Any]] = {
    "max_tokens": ("max_tokens", widgets.slider_range("max_tokens")),
    "min_tokens": ("min_tokens", widgets.slider_range("min_tokens")),
    "line_window": ("line_window", widgets.slider_range("line_window")),
    "lw": ("lexical_pct", widgets.slider_range("lexical_pct")),
    "rank": ("ranking_mode", tuple(widgets.RANKING_MODES)),
    "k": ("k", widgets.slider_range("k")),
    "budget": ("budget", range(0, 10**9)),  # the Search page's token budget
    "profile": ("profile", PROFILE_NAMES),
    "file": ("file", None),
    "q": ("query", None),
    "target": ("target", None),
    # The Chunks page's selected chunk: its unit and line (nexus.ui.tuning).
    "unit": ("_link_unit", None),
    "line": ("_link_line", range(1, 10**9)),
    # The Search page's selected hit, ``FILE:LINE`` (``hit_value``).
    "hit": (HIT_KEY, _HitValues()),
}

#: The Evaluate page's sweep: its grid (comma lists) and query variant, in links once the
#: session has run a sweep (``SWEEP_RUN``); a link with a grid runs the sweep when
#: Evaluate opens (``LINK_SWEEP``).
SWEEP_PARAMS = {
    "sweep_max": widgets.SWEEP_MAX_OPTIONS,
    "sweep_min": widgets.SWEEP_MIN_OPTIONS,
}
LINK_SWEEP, SWEEP_RUN = "_link_sweep", "_sweep_run"
#: The sweep's embedder, "Files in the sweep" and what its best is chosen by: (link name,
#: session key, allowed values). Without the tier a shared fast-tier sweep reran on MiniLM.
_SWEEP_CHOICES = (
    ("sweep_tier", "sweep_tier", tuple(sweeps.TIER_LABELS)),
    ("sweep_files", "sweep_distractors", sweeps.DISTRACTOR_CHOICES),
    ("sweep_by", "sweep_choose_by", sweeps.CHOICES),
)


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
                if repos.RepoChoice(kind, value) != st.session_state.get("repo_choice"):
                    repos.load_repo(repos.RepoChoice(kind, value))
                # The home page's widgets name the same repository as the link.
                st.session_state["source"] = (
                    widgets.SOURCES[0] if kind == "sample" else widgets.SOURCES[2]
                )
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
    return problems + _sweep_from_link(params)


def _sweep_from_link(params: Any) -> list[str]:
    """``sweep_max=128,256&sweep_min=0,48&sweep_variant=doc&sweep_tier=fast&sweep_files=1000
    &sweep_by=R@1k``: the sweep to run on Evaluate."""
    problems = []
    for name, allowed in SWEEP_PARAMS.items():
        raw = params.get(name)
        if raw is None:
            continue
        values = [v.strip() for v in raw.split(",") if v.strip()]
        kept = [int(v) for v in values if v.isdigit() and int(v) in allowed]
        if len(kept) < len(values):
            problems.append(f"ignored {name}={raw!r} values not in {', '.join(map(str, allowed))}")
        if kept:
            st.session_state[name] = sorted(set(kept))
            st.session_state[LINK_SWEEP] = True
    if params.get("sweep_variant"):
        st.session_state["sweep_variant"] = params.get("sweep_variant")
    for name, key, allowed in _SWEEP_CHOICES:
        raw = params.get(name)
        if raw is None:
            continue
        if raw in allowed:
            st.session_state[key] = raw
        else:
            problems.append(f"ignored {name}={raw!r}: not one of {', '.join(allowed)}")
    return problems


def _selection_from_link(params: Any) -> list[str]:
    """``with=tests,vendored``, ``include=src/**``, ``exclude=a,b``,
    ``languages=python,go``: the file selection."""
    ss = st.session_state
    problems = []
    languages = parse_languages(params.get("languages") or "")
    for name in languages:
        if name not in CHUNKABLE_LANGUAGES:
            problems.append(
                f"ignored languages={name!r} (one of {', '.join(widgets.LANGUAGE_NAMES)})"
            )
    ss[widgets.LANGUAGES_KEY] = [name for name in languages if name in CHUNKABLE_LANGUAGES]
    switched = repos.globs(params.get("with") or "")
    for name in switched:
        if name not in widgets.SWITCH_KEYS:
            problems.append(f"ignored with={name!r} (one of {', '.join(widgets.SWITCH_KEYS)})")
    for name, key in widgets.SWITCH_KEYS.items():
        ss[key] = name in switched
    for name, key in widgets.GLOB_KEYS.items():
        ss[key] = "\n".join(repos.globs(params.get(name) or ""))
    repos.apply_selection()
    if ss.get("selection_error"):
        problems.append(f"ignored the file globs: {ss['selection_error']}")
    return problems


def hit_value(chunk: Chunk) -> str:
    """A selected search hit as it travels: the file and first line of its chunk, which
    a re-ranked answer (or the other index's chunks) still finds (``hit_line``)."""
    return f"{chunk.file}:{chunk.start_line}"


def hit_line(value: object) -> tuple[str, int] | None:
    """``FILE:LINE`` back to its file and line; None for anything else."""
    file, _, line = str(value or "").rpartition(":")
    return (file, int(line)) if file and line.isdigit() and int(line) > 0 else None


def holds_hit(chunk: Chunk, value: object) -> bool:
    """Whether ``chunk`` holds the selected hit's file and line (``FILE:LINE``)."""
    place = hit_line(value)
    return (
        place is not None
        and chunk.file == place[0]
        and chunk.start_line <= place[1] <= chunk.end_line
    )


def select_hit(value: str) -> None:
    """Select a search hit (``""``: none), in the session and in the URL at once: the
    hits are drawn in a fragment, whose reruns do not rewrite the URL."""
    st.session_state[HIT_KEY] = value
    if value:
        st.query_params["hit"] = value
    else:
        st.query_params.pop("hit", None)


def write_url_params(values: dict[str, object]) -> None:
    """Put the current repository, settings, file selection and ``values`` in the URL
    (empty ones dropped)."""
    ss = st.session_state
    selection = repos.current_selection()
    params: dict[str, object] = {"repo": repos.current_choice().url_value}
    params.update({name: ss.get(key) for name, (key, _) in URL_KEYS.items()})
    params["with"] = ",".join(name for name in widgets.SWITCH_KEYS if getattr(selection, name))
    params["include"] = ",".join(selection.include)
    params["exclude"] = ",".join(selection.exclude)
    params["languages"] = ",".join(selection.languages)
    if ss.get(SWEEP_RUN) or ss.get(LINK_SWEEP):
        for name in SWEEP_PARAMS:
            params[name] = ",".join(str(v) for v in ss.get(name) or ())
        params["sweep_variant"] = ss.get("sweep_variant")
        params.update({name: ss.get(key) for name, key, _ in _SWEEP_CHOICES})
    params.update(values)
    st.query_params.from_dict({k: str(v) for k, v in params.items() if v not in (None, "")})
