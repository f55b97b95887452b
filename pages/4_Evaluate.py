"""Evaluate: a query set on both indexes, and a sweep over the AST token budgets.

The indexes are the builds Search shares, opened or built in the background; the page
waits for both. Every answer comes from ``nexus.ui.evaluating`` (the query set, its
scores, their tables and figures) and ``nexus.ui.sweeps`` (the sweep's job, its work
and its table); ``nexus.ui.evaluate_views`` draws the larger parts. This page only draws.
"""

from __future__ import annotations

import streamlit as st

from nexus.ui import evaluate_views as views
from nexus.ui import evaluating, links, repos, safe, settings, state, sweeps

state.page_setup("Evaluate")
config = settings.settings_sidebar()
repo = repos.current_repo()
st.title("Evaluate")
if not repos.chunkable_paths(repo):
    st.warning(f"{safe.code(repo.name)} has no chunkable files (the Repository page says why).")
    st.stop()

own = repo.contents.get("queries.jsonl")
MAKE, UPLOAD = "Make a query set from this repository", "Upload a JSONL file"
sources = (["Repository's queries.jsonl"] if own else []) + [MAKE, UPLOAD]
picked = st.radio("Query set", sources, key="query_set", horizontal=True)
data = own if picked == sources[0] and own else None
if picked == MAKE:
    data = views.made_query_set(repo, repos.repo_key())
if data is None:
    data = views.uploaded_query_set()
query_set = views.read_or_stop(data)
repo = evaluating.indexed_repository(repo, repos.repo_key(), query_set)
if query_set.docs_blanked:
    st.caption("Doc comments are blanked in the indexes this set runs on (lines kept).")
if query_set.is_questions:
    missing = evaluating.unchunked_target_files(query_set.questions, repo.files)
    st.caption(
        f"A question set: {len(query_set.questions)} questions with file or line targets, "
        "scored by NDCG@10 (each target found once, at its first covering chunk), MRR@10 "
        "and R@5."
    )
    if missing:
        st.warning(
            f"{len(missing)} target file(s) are not chunked here and count as misses: "
            + ", ".join(safe.code(f) for f in missing[:5])
            + (" …" if len(missing) > 5 else "")
        )
unreachable = evaluating.unreachable(query_set.queries, repo.files)
if unreachable is not None:
    st.warning(unreachable.summary)
    st.dataframe(unreachable.table, hide_index=True)

current = (config.max_tokens, config.min_tokens)
builds = evaluating.complete_builds(views.open_builds(repo, config, query_set.docs_blanked))
if builds is None:
    views.wait_for_indexes(repo, config, query_set.docs_blanked)
    kept = sweeps.kept_job(repos.repo_key(), query_set)
    if kept is not None:  # e.g. the best setting just applied: its indexes build meanwhile
        st.subheader("Sweep the AST token budgets")
        st.caption(
            f"The last sweep's answer, read against max {config.max_tokens} / min "
            f"{config.min_tokens}, while the indexes of these settings build."
        )
        views.draw_sweep(kept, current, building=True, repo_name=repo.name)
    st.stop()
if query_set.is_questions:
    whole_files = st.toggle(
        "Score each target's whole file",
        key="questions_by_file",
        help="A hit counts once it shows a target's file, wherever in the file: the rule of "
        "benchmarks whose targets are files (`nexus eval --by-file`).",
    )
    report = evaluating.question_report(repo, config, query_set, builds, whole_files)
    st.subheader("Metrics per strategy and question category")
    st.dataframe(report.summary, hide_index=True)
    st.plotly_chart(report.budget_figure, key="budget_chart")
    st.caption(views.BUDGET_HELP)
    st.subheader("Per question")
    st.dataframe(report.per_question, hide_index=True)
    st.stop()

scored = evaluating.comparison_views(repo, config, query_set, builds)
embedder_name = evaluating.embedder_name(config)
st.caption(
    f"{len(query_set.queries)} queries · line windows of {config.line_window} vs AST "
    f"max {config.max_tokens} / min {config.min_tokens} · "
    f"embedder {safe.code(embedder_name)} · "
    "a hit is a chunk holding at least half of the target's lines."
)
st.subheader("Metrics per strategy and query variant")
st.dataframe(scored.metrics, hide_index=True)
quality, cost = st.container(key="nx_stack_eval_charts").columns([2, 1])
quality.plotly_chart(scored.quality, key="metric_bars")
cost.plotly_chart(scored.cost, key="lines_bars")
st.plotly_chart(scored.budget, key="budget_chart")
st.caption(views.BUDGET_HELP)
st.subheader("Per query")
st.dataframe(scored.per_query, hide_index=True)
st.caption(
    "`>10 (37)`: not in the top 10; 37 is the target's rank over the whole index. "
    "**Δ margin** = the AST margin minus the line-based margin for that query, where a "
    "margin is the target's best score minus the best score of any other chunk (negative: "
    "a wrong chunk wins). A positive Δ margin means the AST chunks set the target further "
    "apart from the rest."
)

st.subheader("Sweep the AST token budgets")
choice = views.sweep_controls()
sweep_key = sweeps.sweep_key(
    repos.repo_key(), query_set, embedder_name, choice.tier, choice.files, config
)
job = sweeps.session_job()
linked = bool(st.session_state.pop(links.LINK_SWEEP, False))
due = sweeps.due(job, sweep_key, current, choice, linked)
if due is not None:
    work = sweeps.sweep_work(repo, config, query_set.queries, choice, due, current)
    job = sweeps.start(sweep_key, due.maxes, due.mins, current, work, choice.tier, choice.files)
    if due.asked:
        st.session_state[links.SWEEP_RUN] = True  # links carry the sweep from now on
        links.write_url_params({})

if job is not None and job.key == sweep_key and job.running:
    views.sweep_progress()
    st.stop()
if job is None or job.key != sweep_key:
    st.caption(
        "Pick the values and run the sweep: each setting is chunked, embedded and scored; "
        "the setting in use is always one of the rows. A chunk text is embedded once for "
        "the whole sweep, and the embedding cache keeps it for the next one."
    )
    st.stop()
if job.error:
    st.error(f"The sweep failed: {safe.md(job.error)}")
if job.cancelled:
    st.info(
        f"Cancelled with {len(job.rows())} of {len(job.grid)} settings done (shown below). "
        "Run sweep again to resume: the finished settings are kept."
    )
if current not in job.results:
    st.stop()
views.draw_sweep(job, current, building=False, repo_name=repo.name)
