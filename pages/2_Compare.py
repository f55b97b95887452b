"""Compare: line-based and AST chunks of the same code, side by side and in numbers."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nexus.fragmentation import cuts_at_start, summarize, unit_fates
from nexus.pipeline import chunk_analysis
from nexus.types import Chunk
from nexus.ui import codeview, render, safe, state

state.page_setup("Compare")
config = state.settings_sidebar()
lines_config = config.with_(strategy="lines")
repo = state.current_repo()
st.title("Line-based vs AST chunks")
st.caption(
    f"Baseline: windows of {config.line_window} lines. AST: max {config.max_tokens} / "
    f"min {config.min_tokens} tokens, profile {config.profile}. A unit is *split* when no "
    "single chunk holds all of it; *unit share* is the share of the chunk's lines that are "
    "the unit's own, averaged over units (1 = each unit has a chunk to itself; higher is "
    "better). Files without units are left out of it."
)
if not state.chunkable_paths(repo):
    st.warning(f"{safe.code(repo.name)} has no chunkable files (the Repository page says why).")
    st.stop()


def summary_rows(by_strategy: dict[str, tuple[list[Chunk], list]]) -> pd.DataFrame:
    """One row per strategy: chunk counts and sizes, units split, mean unit share."""
    rows = []
    for name, (chunks, fates) in by_strategy.items():
        s = summarize(fates)
        sizes = [c.token_count for c in chunks]
        rows.append(
            {
                "strategy": name,
                "chunks": len(chunks),
                "mean tokens": round(sum(sizes) / max(len(sizes), 1)),
                "max tokens": max(sizes, default=0),
                "units": s.units,
                "units split": s.split,
                "intact share": f"{s.intact_share:.0%}",
                "mean pieces when split": round(s.mean_pieces_when_split, 2) if s.split else None,
                "unit share (higher is better)": round(s.mean_dilution, 3) if s.units else None,
            }
        )
    return pd.DataFrame(rows)


def size_histogram(line_chunks: list[Chunk], ast_chunks: list[Chunk], key: str) -> None:
    """Both strategies' chunk sizes over the same bins, so the bars compare."""
    largest = max((c.token_count for c in [*line_chunks, *ast_chunks]), default=1)
    bins = dict(start=0, end=largest + 1, size=max(1, -(-largest // 30)))
    fig = go.Figure()
    for name, chunks, colour in (
        ("lines", line_chunks, "#f59e0b"),
        ("AST", ast_chunks, "#3b82f6"),
    ):
        fig.add_histogram(
            x=[c.token_count for c in chunks],
            name=name,
            opacity=0.6,
            marker_color=colour,
            xbins=bins,
            hovertemplate=f"{name}: %{{y}} chunks of %{{x}} tokens<extra></extra>",
        )
    fig.update_layout(
        barmode="overlay",
        height=300,
        xaxis_title="tokens per chunk",
        yaxis_title="chunks",
        margin=dict(l=10, r=10, t=30, b=10),
        title="Chunk sizes",
    )
    st.plotly_chart(fig, key=key)


this_file, whole = st.tabs(["This file", "Whole repository"])
with this_file:
    path = state.file_picker(repo)
    analysis = state.file_analysis(repo, path, config.encoding)
    ast_chunks = chunk_analysis(analysis, config, repo=repo.name)
    line_chunks = chunk_analysis(analysis, lines_config, repo=repo.name)
    st.dataframe(
        summary_rows(
            {
                "lines": (line_chunks, unit_fates(analysis.units, line_chunks)),
                "AST": (ast_chunks, unit_fates(analysis.units, ast_chunks)),
            }
        ),
        hide_index=True,
    )
    lines = state.highlighted(analysis.source.text, analysis.language)
    panes = []
    head = ""
    for title, chunks in (("Line-based", line_chunks), ("AST", ast_chunks)):
        cuts = cuts_at_start(analysis.units, chunks)
        labels = [render.chunk_label(i, c, cuts=cuts[i]) for i, c in enumerate(chunks)]
        panes.append(render.Pane(f"{title} ({len(chunks)} chunks)", chunks, labels))
        split = [f.unit for f in unit_fates(analysis.units, chunks) if not f.intact]
        head += render.unit_links(f"Units the {title} chunks split (click to scroll)", split)
    codeview.code_view(render.code_view(lines, panes, height=640, head=head), key="compare_view")
    size_histogram(line_chunks, ast_chunks, "file_sizes")

with whole:
    line_all = state.repo_chunks(repo, lines_config)
    ast_all = state.repo_chunks(repo, config)
    line_fates = state.repo_fates(repo, lines_config)
    ast_fates = state.repo_fates(repo, config)
    st.dataframe(
        summary_rows(
            {
                "lines": (line_all, [f for fs in line_fates.values() for f in fs]),
                "AST": (ast_all, [f for fs in ast_fates.values() for f in fs]),
            }
        ),
        hide_index=True,
    )
    size_histogram(line_all, ast_all, "repo_sizes")
    per_file = []
    for file, fates in ast_fates.items():
        line_summary, ast_summary = summarize(line_fates[file]), summarize(fates)
        per_file.append(
            {
                "file": file,
                "units": len(fates),
                "chunks (lines)": sum(1 for c in line_all if c.file == file),
                "chunks (AST)": sum(1 for c in ast_all if c.file == file),
                "split (lines)": line_summary.split,
                "split (AST)": ast_summary.split,
                "unit share (lines)": round(line_summary.mean_dilution, 3) if fates else None,
                "unit share (AST)": round(ast_summary.mean_dilution, 3) if fates else None,
            }
        )
    st.markdown("**Per file**")
    st.dataframe(pd.DataFrame(per_file), hide_index=True)
