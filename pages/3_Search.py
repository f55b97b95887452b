"""Search: one query against the line-based and the AST index, side by side.

The indexes are built in the background (``nexus.runtime.builds`` via ``indexing.index_build``):
the page answers at once with keyword hits and the vectors embedded so far, and
redraws every second until the builds are done.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from nexus.chunking.languages import lexer_name
from nexus.evaluation.metrics import QueryOutcome, Target, target_mask
from nexus.retrieval.budget import read_within
from nexus.retrieval.embedding import ModelUnavailableError
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.preview import hit_preview
from nexus.retrieval.ranking import SYMBOL, explain, query_kind, rules_for
from nexus.retrieval.search import Hit
from nexus.runtime.builds import IndexBuild
from nexus.runtime.progress import CANCELLED, FAILED, BuildProgress
from nexus.types import Chunk
from nexus.ui import (
    analyses,
    cache,
    indexing,
    links,
    render,
    repos,
    safe,
    settings,
    state,
    widgets,
)
from nexus.ui import scores as score_views

state.page_setup("Search", load_model=True)
st.session_state.setdefault("k", 5)
config = settings.settings_sidebar()
repo = repos.current_repo()
st.title("Search")
if not repos.chunkable_paths(repo):
    st.warning(f"{safe.code(repo.name)} has no chunkable files (the Repository page says why).")
    st.stop()

refresh = st.button(
    "Rebuild indexes", key="refresh", help="Re-chunk and re-index (the embedding cache is kept)."
)
if refresh:
    indexing.forget_builds(repo, config)
try:
    first_build = indexing.index_build(repo, config, "ast", rebuild=refresh)
except ModelUnavailableError as exc:
    st.error(f"The embedding model is not available: {safe.md(exc)}")
    st.stop()

left, middle, right = st.columns([4, 1, 1])
query = left.text_input(
    "Query", key="query", placeholder="e.g. resize an image and upload the thumbnail"
)
k = middle.slider("Top k", *widgets.SLIDERS["k"][:2], key="k")
budget = right.number_input(
    "Token budget",
    min_value=0,
    value=None,
    step=250,
    key="budget",
    placeholder="none",
    help="What a reader gets for this many tokens: the hits in rank order, the last one "
    "cut at a line. Empty or 0: no budget.",
)
# The units come from every file's parse, listed by a thread: not before the build has
# chunked every file (sooner it slows the model's load), nor before the answer to a query
# the page opened with is drawn (one interpreter: parsing 5,000 files meanwhile would
# more than double the seconds a saved index takes to answer).
CHUNKING_AT_START = first_build.progress().chunking
QUERY_AT_START = bool(str(st.session_state.get("query") or "").strip())
targets = None if CHUNKING_AT_START else analyses.unit_targets(repo, start=not QUERY_AT_START)
TARGETS_PENDING = targets is None
target, target_id = None, ""
if targets is None:
    st.caption("Expected target: the repository's units are listed once every file is parsed.")
else:
    if st.session_state.get("target") not in ("", None, *targets):
        st.session_state["target"] = ""
    target_id = st.selectbox(
        "Expected target (optional): where the answer lives",
        ["", *sorted(targets, key=lambda t: (targets[t].file, targets[t].start_line))],
        key="target",
        format_func=lambda t: (
            "(none)"
            if not t
            else f"{targets[t].qualname} ({targets[t].kind}) · {targets[t].file}:"
            f"{targets[t].start_line}–{targets[t].end_line}"
        ),
    )
    target = targets.get(target_id) if target_id else None
lines_now = st.checkbox(
    "Build the line-based index now",
    key="lines_now",
    help="The AST index is built first; the line-based one starts when it is done, "
    "or now when ticked (both then share the machine).",
)
links.write_url_params({})


def answer(
    build: IndexBuild, index: VectorIndex, target: Target | None
) -> tuple[QueryOutcome, np.ndarray, go.Figure]:
    """The query's outcome on ``index``, every chunk's final score, and the chart of them."""
    return score_views.search_answer(build, index, query, target, k, config)


def score_chart(
    index: VectorIndex, scores: np.ndarray, fig: go.Figure, key: str
) -> list[tuple[Chunk, float]]:
    """Draws the chart of every chunk's score; returns the chunks the user clicked (a
    marker, or a bar: the chunks in that score range)."""
    event = st.plotly_chart(fig, key=key, on_select="rerun", selection_mode="points")
    keys: list[int] = []
    for point in event.selection.points if event else []:
        if point.get("curve_number") == 0:  # a histogram bar: every chunk in its range
            keys.extend(point.get("point_indices", []))
        elif "customdata" in point:
            keys.append(int(point["customdata"]))
    # A selection made on an earlier chart (other settings) may point past this one.
    picked = sorted({key for key in keys if 0 <= key < len(index)}, key=lambda key: -scores[key])
    chunks = index.chunks if picked else ()
    return [(chunks[key], float(scores[key])) for key in picked]


def show_picked(picked: list[tuple[Chunk, float]]) -> None:
    """The clicked chunks in full, best score first (at most five)."""
    if not picked:
        return
    st.caption(
        f"{len(picked)} chunk(s) picked on the chart" + (", first 5:" if len(picked) > 5 else ":")
    )
    for chunk, score in picked[:5]:
        with st.expander(
            f"{safe.code(chunk.file)} L{chunk.start_line}–{chunk.end_line} · "
            f"{safe.md(chunk.symbol or '(module code)')} · score {score:.3f}",
            expanded=len(picked) == 1,
        ):
            st.code(chunk.text, language=lexer_name(chunk.language))


def current_builds() -> tuple[IndexBuild, IndexBuild | None]:
    """The AST build, and the line-based one once the AST one is done (or when asked)."""
    ast_build = indexing.index_build(repo, config, "ast", rebuild=refresh)
    if lines_now or ast_build.progress().complete:
        return ast_build, indexing.index_build(repo, config, "lines", rebuild=refresh)
    return ast_build, None


def show_progress(label: str, build: IndexBuild, key: str, progress: BuildProgress) -> None:
    """The build's progress bar, with a cancel button while it runs, resume once cancelled."""
    text = f"{label}: {safe.md(progress.summary())} · {indexing.build_origin(build)}"
    if progress.running:
        bar, button = st.columns([5, 1])
        bar.progress(progress.fraction, text=text)
        if button.button("Cancel", key=f"cancel_{key}", help="Stop after the batch in flight."):
            build.cancel()
    elif progress.phase == CANCELLED:
        st.warning(text)
        if st.button("Resume", key=f"resume_{key}", help="Go on; cached batches are kept."):
            indexing.index_build(repo, config, key, resume=True)
            st.rerun()
    elif progress.phase == FAILED:
        st.error(text)
    else:
        st.caption(text)


def show_hits(hits: tuple[Hit, ...] | list[Hit], target: Target | None, key: str) -> None:
    """The hits, each with the lines that match the query; the selected one (it travels
    in the link) in full: the first hit holding the selected file and line. With a token
    budget, only what fits: the hit that crosses it is cut at a line and says so."""
    chosen = st.session_state.get(links.HIT_KEY)
    selected = next((hit for hit in hits if links.holds_hit(hit.chunk, chosen)), None)
    reads = read_within([hit.chunk for hit in hits], budget, config.encoding) if budget else []
    if budget:
        used = sum(read.tokens for read in reads)
        st.caption(
            f"{used:,} of {budget:,} tokens read: {len(reads)} of {len(hits)} hits"
            + (", the last one cut." if reads and reads[-1].cut else ".")
        )
    for position, hit in enumerate(hits[: len(reads)] if budget else hits):
        chunk, mark = hit.chunk, ""
        if budget and reads[position].cut:
            end = reads[position].end_line
            chunk = replace(chunk, text=reads[position].text, end_line=end)
            mark = f" · :orange-badge[cut at L{end}: budget]"
        if target is not None and target_mask([hit.chunk], target)[0]:
            mark = " · :green-badge[target]" + mark
        # A hit may be a window of neighbouring units (nexus.retrieval.windows): name them.
        others = [s for s in dict.fromkeys(chunk.symbols) if s != chunk.symbol]
        held = f" (with {safe.md(', '.join(others[:4]))}{' …' * (len(others) > 4)})"
        st.markdown(
            f"**{hit.rank}.** {safe.code(chunk.file)} L{chunk.start_line}–{chunk.end_line} · "
            f"{safe.md(chunk.symbol or '(module code)')}{held if others else ''} · "
            f"score **{hit.score:.3f}**{mark}"
        )
        if hit.parts:
            st.caption(safe.md(explain(hit.parts)))
        toggle = f"hit_{key}_{hit.rank}"
        st.session_state[toggle] = hit is selected
        st.toggle(
            "Whole chunk",
            key=toggle,
            on_change=toggle_hit,
            args=(toggle, chunk),
            help="Shows the whole chunk and selects it: the link then carries it.",
        )
        if hit is selected:
            st.code(chunk.text, language=lexer_name(chunk.language), line_numbers=True)
        else:
            st.html(render.preview_html(hit_preview(chunk, query), chunk))


def toggle_hit(toggle: str, chunk: Chunk) -> None:
    """A hit's toggle moved: its chunk is selected, or none."""
    links.select_hit(links.hit_value(chunk) if st.session_state[toggle] else "")


def show_side(title: str, build: IndexBuild, key: str, progress: BuildProgress) -> None:
    """One index's answer: dense (+ keyword) over what is embedded; while the build runs,
    also keyword (BM25) hits over every chunk made so far, and the answer is marked
    partial (``progress``: the snapshot its progress line shows)."""
    st.markdown(f"#### {title}")
    index = build.index()
    if not progress.complete:
        covered = (
            f"the {progress.total:,} chunks of the {progress.files_done:,} files chunked so far"
            if progress.chunking
            else f"all {progress.total:,} chunks of all {progress.files_done:,} files"
        )
        files = (
            f" ({progress.files_embedded:,} of {progress.files_with_chunks:,} files in full, "
            "sources first)"
            if progress.files_with_chunks
            else ""
        )
        st.warning(
            f"Partial: {progress.done:,} of {progress.expected_total:,} chunks embedded so far"
            f"{files} ({progress.phase}); keyword (BM25) results cover {covered}."
        )
        st.markdown(f"**Keyword (BM25), {covered}**")
        show_hits(build.keyword_hits(query, k, rules_for(config)), target, f"{key}_keyword")
        if index is None:  # nothing embedded yet (the model may still be loading)
            return
        st.markdown(f"**Embeddings, the {len(index):,} chunks embedded so far**")
    if index is None:  # a repository without chunks
        return
    if progress.complete and indexing.model_loading(config.words_view):
        st.info(
            "Loading the embedding model (the query must be embedded): keyword (BM25) hits "
            "over every chunk meanwhile; the embedding hits follow."
        )
        st.markdown("**Keyword (BM25), all chunks**")
        show_hits(build.keyword_hits(query, k, rules_for(config)), target, f"{key}_keyword")
        return
    if progress.complete:  # the same answer for every session asking the same
        shared_key = (build.serial, query, k, target_id, config.lexical_weight, config.ranking)
        outcome, scores, fig = cache.shared(
            "answer", shared_key, lambda: answer(build, index, target)
        )
    else:
        outcome, scores, fig = answer(build, index, target)
    if target is not None:
        m1, m2, m3 = st.container(key=f"nx_metrics_{key}").columns(3)
        rank, score, margin = score_views.target_metrics(outcome, k)
        m1.metric("Target rank", rank)
        m2.metric("Target score", score, help="The final score, the one the hits are ranked by.")
        m3.metric(
            "Margin",
            margin,
            help="Best target score minus best other score; negative: a wrong chunk wins.",
        )
    show_picked(score_chart(index, scores, fig, key=f"scores_{key}"))
    if outcome.hits and outcome.hits[0].parts:
        kind = "a name (symbol query)" if query_kind(query) == SYMBOL else "a sentence"
        st.caption(
            f"Read as {kind}. Ranking stage: dense and keyword scores scaled over the "
            "candidates and weighted for the query's kind, then definition, path and file "
            "evidence; each hit's line shows its parts."
        )
        st.plotly_chart(score_views.parts_figure(outcome.hits), key=f"parts_{key}")
    show_hits(outcome.hits, target, key)


def show_answers(
    ast_build: IndexBuild, lines_build: IndexBuild | None, now: dict[int, BuildProgress]
) -> None:
    """Both indexes' answers, side by side (``now``: each build's progress by serial)."""
    columns = st.container(key="nx_stack_results").columns(2)
    with columns[0]:
        title = f"Line-based (windows of {config.line_window} lines)"
        if lines_build is None:
            st.markdown(f"#### {title}")
            st.info("Built when the AST index is done (or tick “Build the line-based index now”).")
        else:
            show_side(title, lines_build, "lines", now[lines_build.serial])
    with columns[1]:
        show_side(f"AST (max {config.max_tokens} tokens)", ast_build, "ast", now[ast_build.serial])


def any_running() -> bool:
    return any(b is not None and b.progress().running for b in current_builds())


RUNNING_AT_START = any_running()
MODEL_LOADING_AT_START = indexing.model_loading(config.words_view)


@st.fragment(
    run_every=1.0 if RUNNING_AT_START or TARGETS_PENDING or MODEL_LOADING_AT_START else None
)
def results() -> None:
    """Progress and answers, redrawn every second while a build runs (widgets stay live)."""
    ast_build, lines_build = current_builds()
    # One snapshot per build and redraw: its progress line and its Partial box agree.
    now = {b.serial: b.progress() for b in (ast_build, lines_build) if b is not None}
    show_progress("AST index", ast_build, "ast", now[ast_build.serial])
    if lines_build is not None:
        show_progress("Line-based index", lines_build, "lines", now[lines_build.serial])
    if query.strip():
        show_answers(ast_build, lines_build, now)
    else:
        st.info("Type a query to search. The URL keeps query and settings, for sharing.")
    # After the answers: the thread that lists the targets is started only now.
    targets_in = (
        TARGETS_PENDING
        and not ast_build.progress().chunking
        and analyses.unit_targets(repo, wait_s=0) is not None
    )
    if (RUNNING_AT_START and not any_running()) or targets_in:
        st.rerun()  # redraw the page once: the targets are in, or all is done


results()
