"""Search: one query against the line-based and the AST index, side by side.

The indexes are built in the background (``nexus.runtime.builds`` via ``indexing.index_build``)
with the fast tier, as ``nexus mcp`` answers (``indexing.search_tier``): seconds for a
whole repository. Until an index is complete the page answers with keyword hits over
every chunk made so far, said to be partial, and redraws every second. Every answer
comes from the front door (``nexus.ui.searching`` over ``nexus.workspace.Workspace``);
this page only draws.
"""

from __future__ import annotations

import streamlit as st

from nexus.retrieval.embedding import ModelUnavailableError
from nexus.retrieval.tiers import FAST
from nexus.runtime.builds import IndexBuild
from nexus.runtime.progress import BuildProgress
from nexus.ui import (
    analyses,
    cache,
    indexing,
    links,
    repos,
    safe,
    searching,
    settings,
    state,
    widgets,
)
from nexus.ui import scores as score_views
from nexus.ui import search_views as views
from nexus.workspace import SearchAnswer

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
TIER = indexing.search_tier()
if TIER != FAST:
    st.info(
        "The fast tier's model is not in the cache folder yet, so this page builds the "
        "quality tier (MiniLM: tens of chunks a second, hours on a large repository) and "
        "answers by keywords until it is done. `nexus index --tier fast PATH` distils the "
        "fast tier once (a few minutes); then this page answers in seconds."
    )
if refresh:
    indexing.forget_builds(repo, config, TIER)
try:
    first_build = indexing.index_build(repo, config, "ast", rebuild=refresh, tier=TIER)
except ModelUnavailableError as exc:
    st.error(f"The embedding model is not available: {safe.md(exc)}")
    st.stop()

left, middle, right = st.columns([4, 1, 1])
query = left.text_input(
    "Query", key="query", placeholder="e.g. resize an image and upload the thumbnail"
)
k = middle.slider("Top k", *widgets.SLIDERS["k"][:2], key="k")
st.session_state.setdefault("budget", None)  # a link may carry one (``budget=``)
budget = right.number_input(
    "Token budget",
    min_value=0,
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


def current_builds() -> tuple[IndexBuild, IndexBuild | None]:
    """The AST build, and the line-based one once the AST one is done (or when asked)."""
    ast_build = indexing.index_build(repo, config, "ast", rebuild=refresh, tier=TIER)
    if lines_now or ast_build.progress().complete:
        return ast_build, indexing.index_build(repo, config, "lines", rebuild=refresh, tier=TIER)
    return ast_build, None


def show_progress(label: str, build: IndexBuild, key: str, progress: BuildProgress) -> None:
    """The build's progress line (Cancel while it runs, Resume once cancelled)."""
    if views.show_progress(label, build, indexing.build_origin(build), progress, key):
        indexing.index_build(repo, config, key, resume=True, tier=TIER)
        st.rerun()


def show_side(title: str, build: IndexBuild, key: str, progress: BuildProgress) -> None:
    """One index's answer: by embeddings (+ keywords) once every chunk is embedded;
    until then keyword (BM25) hits over every chunk made so far, said to be partial,
    never a ranking of the chunks embedded so far (``progress``: the snapshot its
    progress line shows)."""
    st.markdown(f"#### {title}")
    if not progress.complete:
        covered = (
            f"the {progress.total:,} chunks of the {progress.files_done:,} files chunked so far"
            if progress.chunking
            else f"all {progress.total:,} chunks of all {progress.files_done:,} files"
        )
        st.warning(
            f"Partial: {progress.done:,} of {progress.expected_total:,} chunks embedded so far "
            f"({progress.phase}). The answer by embeddings comes once every chunk is; "
            f"meanwhile keyword (BM25) hits over {covered}."
        )
        st.markdown(f"**Keyword (BM25), {covered}**")
        views.show_hits(keyword(build, key), target, f"{key}_keyword")
        return
    index = build.index()
    if index is None:  # a repository without chunks
        return
    if indexing.model_loading(config.words_view, TIER):
        st.info(
            "Loading the embedding model (the query must be embedded): keyword (BM25) hits "
            "over every chunk meanwhile; the embedding hits follow."
        )
        st.markdown("**Keyword (BM25), all chunks**")
        views.show_hits(keyword(build, key), target, f"{key}_keyword")
        return

    def dense() -> searching.DenseAnswer:
        return searching.dense_answer(
            repo, config, key, build, index, query, k, budget, target, TIER
        )

    # The same answer for every session asking the same.
    asked = (query, k, budget, target_id, config.lexical_weight, config.ranking)
    found = cache.shared("answer", (build.serial, *asked), dense)
    outcome = found.outcome
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
    views.show_picked(views.score_chart(index, found.scores, found.figure, f"scores_{key}"))
    st.caption(views.answered_by(found.answer))
    hits = found.answer.hits
    if hits and hits[0].parts:
        st.caption(views.ranking_caption(query, hits))
        st.plotly_chart(score_views.parts_figure(hits), key=f"parts_{key}")
    views.show_hits(found.answer, target, key)


def keyword(build: IndexBuild, key: str) -> SearchAnswer:
    """Keyword hits over the chunks made so far, through the ranking stage."""
    return searching.keyword_answer(build, config, key, query, k, budget, TIER)


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
MODEL_LOADING_AT_START = indexing.model_loading(config.words_view, TIER)


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
