"""Evaluate: a query set on both indexes, and a sweep over the AST token budgets."""

from __future__ import annotations

import hashlib

import pandas as pd
import plotly.express as px
import streamlit as st

from nexus.embedding import CachedEmbedder, ModelUnavailableError
from nexus.evaluation import (
    QuerySetError,
    compare,
    comparison_table,
    metrics_table,
    parse_queries,
    unreachable_summary,
    unreachable_table,
    unreachable_targets,
)
from nexus.experiments import best, sweep
from nexus.ui import safe, state

state.page_setup("Evaluate")
config = state.settings_sidebar()
repo = state.current_repo()
st.title("Evaluate")
if not state.chunkable_paths(repo):
    st.warning(f"{safe.code(repo.name)} has no chunkable JavaScript/TypeScript files.")
    st.stop()

own = repo.contents.get("queries.jsonl")
sources = (["Repository's queries.jsonl"] if own else []) + ["Upload a JSONL file"]
picked = st.radio("Query set", sources, key="query_set", horizontal=True)
data = own if picked == sources[0] and own else None
if data is None:
    upload = st.file_uploader("Queries (JSONL)", type=["jsonl", "json"], key="queries_upload")
    if upload is None:
        st.info(
            'One JSON object a line: {"id", "query", "variant", "target": {"file", '
            '"start_line", "end_line"}} (the format of the sample repos\' queries.jsonl).'
        )
        st.stop()
    data = upload.getvalue()
try:
    queries = parse_queries(data)
except QuerySetError as exc:
    st.error(f"Could not read the query set: {safe.md(exc.summary)}")
    if exc.problems:
        st.code("\n".join(exc.problems), language=None)
    st.stop()
unreachable = unreachable_targets(queries, repo.files)
if unreachable:
    st.warning(unreachable_summary(unreachable, len(queries)))
    headers, rows = unreachable_table(unreachable)
    st.dataframe(pd.DataFrame(rows, columns=headers), hide_index=True)

try:
    engine = state.side_by_side(repo, config)
except ModelUnavailableError as exc:
    st.error(f"The embedding model is not available: {safe.md(exc)}")
    st.stop()
comparison = compare(
    queries,
    engine.lines_index,
    engine.ast_index,
    engine.embedder,
    k=10,
    lexical_weight=config.lexical_weight,
)
st.caption(
    f"{len(queries)} queries · line windows of {config.line_window} vs AST "
    f"max {config.max_tokens} / min {config.min_tokens} · "
    f"embedder {safe.code(engine.embedder.name)} · "
    "a hit is a chunk holding at least half of the target's lines."
)

headers, rows = metrics_table(comparison.baseline, comparison.candidate)
st.subheader("Metrics per strategy and query variant")
st.dataframe(pd.DataFrame(rows, columns=headers), hide_index=True)
bars = pd.DataFrame(
    {
        "strategy": report.label,
        "variant": safe.plot(group),
        "MRR@10": m["overlap50:MRR@10"],
        "R@5": m["overlap50:R@5"],
        "lines@5": m["lines@5"],
    }
    for report in (comparison.baseline, comparison.candidate)
    for group, m in report.metrics.items()
    if "|" not in group
)
quality, cost = st.columns([2, 1])
with quality:
    long = bars.melt(["strategy", "variant"], ["MRR@10", "R@5"], "metric")
    fig = px.bar(
        long,
        x="variant",
        y="value",
        color="strategy",
        facet_col="metric",
        barmode="group",
        height=320,
        range_y=[0, 1],
        title="Retrieval quality (higher is better)",
    )
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    fig.update_layout(margin=dict(l=10, r=10, t=60, b=10), yaxis_title="")
    st.plotly_chart(fig, key="metric_bars")
with cost:
    fig = px.bar(
        bars,
        x="variant",
        y="lines@5",
        color="strategy",
        barmode="group",
        height=320,
        title="Lines to read in the top 5 (lower is better)",
    )
    fig.update_layout(margin=dict(l=10, r=10, t=60, b=10), showlegend=False)
    st.plotly_chart(fig, key="lines_bars")

st.subheader("Per query")
headers, rows = comparison_table(comparison)
st.dataframe(pd.DataFrame(rows, columns=headers), hide_index=True)
st.caption("`>10 (37)`: not in the top 10; 37 is the target's rank over the whole index.")

st.subheader("Sweep the AST token budgets")
c1, c2, c3 = st.columns([2, 2, 1])
maxes = c1.multiselect(
    "max_tokens values",
    [64, 96, 128, 192, 256, 384, 512, 768, 1024],
    [128, 256, 512],
    key="sweep_max",
)
mins = c2.multiselect("min_tokens values", [0, 16, 32, 48, 64, 96, 128], [0, 48], key="sweep_min")
run = c3.button("Run sweep", key="run_sweep", type="primary", disabled=not maxes or not mins)
sweep_key = (
    state.repo_key(),
    hashlib.sha256(data).hexdigest(),
    config.profile,
    config.lexical_weight,
)
if run:
    progress, done = state.progress_callback("Sweeping…")
    embedder = CachedEmbedder(engine.embedder, state.embedding_cache())
    try:
        results = sweep(
            state.repo_analyses(repo),
            repo.name,
            config,
            queries,
            embedder,
            max_tokens=sorted(maxes),
            min_tokens=sorted(mins),
            progress=progress,
        )
    finally:
        done()
    st.session_state["sweep"] = (sweep_key, results)
saved = st.session_state.get("sweep")
if not saved or saved[0] != sweep_key:
    st.caption("Pick the values and run the sweep: each setting is chunked, embedded and scored.")
    st.stop()
results = saved[1]
if not results:
    st.warning("No setting to try: every min_tokens value was at or above every max_tokens.")
    st.stop()
top = best(results)
table = pd.DataFrame(
    {
        "max_tokens": r.config.max_tokens,
        "min_tokens": str(r.config.min_tokens),
        "chunks": r.chunks,
        "over window": r.over_window,
        "MRR@10": round(r.metric("MRR@10"), 3),
        "R@5": round(r.metric("R@5"), 3),
        "lines@5": round(r.metric("lines@5"), 1),
        "best": "★" if r is top else "",
    }
    for r in results
)
charts = st.columns(2)
for column, metric in zip(charts, ("MRR@10", "lines@5"), strict=True):
    fig = px.line(
        table,
        x="max_tokens",
        y=metric,
        color="min_tokens",
        markers=True,
        height=300,
        title=f"{metric} by max_tokens (doc queries)",
    )
    fig.add_scatter(
        x=[top.config.max_tokens],
        y=[table.loc[table["best"] == "★", metric].iloc[0]],
        mode="markers",
        name="best",
        marker=dict(symbol="star", size=18, color="#dc2626"),
    )
    fig.update_layout(margin=dict(l=10, r=10, t=40, b=10), legend_title_text="min_tokens")
    column.plotly_chart(fig, key=f"sweep_{metric}")
st.dataframe(table, hide_index=True)


def use_best() -> None:
    st.session_state["max_tokens"] = top.config.max_tokens
    st.session_state["min_tokens"] = top.config.min_tokens


st.button(
    f"Use the best setting (max {top.config.max_tokens}, min {top.config.min_tokens})",
    key="use_best",
    on_click=use_best,
)
