"""Compare: line-based and AST chunks of the same code, side by side and in numbers."""

from __future__ import annotations

import streamlit as st

from nexus.chunking.analysis import FileAnalysis
from nexus.fragmentation import cuts_at_start, unit_fates
from nexus.pipeline import chunk_analysis
from nexus.types import Chunk
from nexus.ui import codeview, render, safe, state, views

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


def compare_html(analysis: FileAnalysis, line_chunks: list[Chunk], ast_chunks: list[Chunk]) -> str:
    """Both chunkings' bands over the file, and the units each one splits."""
    lines = state.highlighted(analysis.source.text, analysis.language)
    panes = []
    head = ""
    for title, chunks in (("Line-based", line_chunks), ("AST", ast_chunks)):
        cuts = cuts_at_start(analysis.units, chunks)
        labels = [render.chunk_label(i, c, cuts=cuts[i]) for i, c in enumerate(chunks)]
        panes.append(render.Pane(f"{title} ({len(chunks)} chunks)", chunks, labels))
        split = [f.unit for f in unit_fates(analysis.units, chunks) if not f.intact]
        head += render.unit_links(f"Units the {title} chunks split (click to scroll)", split)
    return render.code_view(lines, panes, height=640, head=head)


this_file, whole = st.tabs(["This file", "Whole repository"])
with this_file:
    path = state.file_picker(repo)
    analysis = state.file_analysis(repo, path, config.encoding)
    ast_chunks = chunk_analysis(analysis, config, repo=repo.name)
    line_chunks = chunk_analysis(analysis, lines_config, repo=repo.name)
    key = state.file_key(repo, path, config)
    st.dataframe(
        state.shared_table(
            "file_summary",
            key,
            lambda: views.summary_table(
                {
                    "lines": (line_chunks, unit_fates(analysis.units, line_chunks)),
                    "AST": (ast_chunks, unit_fates(analysis.units, ast_chunks)),
                }
            ),
        ),
        hide_index=True,
    )
    html = state.shared("file_code", key, lambda: compare_html(analysis, line_chunks, ast_chunks))
    codeview.code_view(html, key="compare_view")
    fig = state.shared("file_sizes", key, lambda: views.size_overlay(line_chunks, ast_chunks))
    st.plotly_chart(fig, key="file_sizes")

with whole:
    line_all = state.repo_chunks(repo, lines_config)
    ast_all = state.repo_chunks(repo, config)
    line_fates = state.repo_fates(repo, lines_config)
    ast_fates = state.repo_fates(repo, config)
    key = state.settings_key(config)
    st.dataframe(
        state.shared_table(
            "repo_summary",
            key,
            lambda: views.summary_table(
                {
                    "lines": (line_all, [f for fs in line_fates.values() for f in fs]),
                    "AST": (ast_all, [f for fs in ast_fates.values() for f in fs]),
                }
            ),
        ),
        hide_index=True,
    )
    fig = state.shared("repo_sizes", key, lambda: views.size_overlay(line_all, ast_all))
    st.plotly_chart(fig, key="repo_sizes")
    st.markdown("**Per file**")
    st.dataframe(
        state.shared_table(
            "per_file",
            key,
            lambda: views.per_file_table(line_all, ast_all, line_fates, ast_fates),
        ),
        hide_index=True,
    )
