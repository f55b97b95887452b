"""Compare: line-based and AST chunks of the same code, side by side and in numbers."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.fragmentation import cuts_at_start, unit_fates
from nexus.types import Chunk
from nexus.ui import analyses, cache, codeview, paging, render, repos, safe, settings, state, views

state.page_setup("Compare")
config = settings.settings_sidebar()
lines_config = config.with_(strategy="lines")
VIEW = "compare"  # the code view's name for nexus.ui.paging (its widget keys start with it)
repo = repos.current_repo()
st.title("Line-based vs AST chunks")
st.caption(
    f"Baseline: windows of {config.line_window} lines. AST: max {config.max_tokens} / "
    f"min {config.min_tokens} tokens, profile {config.profile}. A unit is *split* when a "
    "chunk boundary falls inside its code; a class too large for one chunk is *divided* "
    "between its members instead (a member cut in two is split). *Unit share* is the "
    "share of the chunk's lines that are the unit's own, averaged over units (1 = each "
    "unit has a chunk to itself; higher is better). Files without units are left out of it."
)
if not repos.chunkable_paths(repo):
    st.warning(f"{safe.code(repo.name)} has no chunkable files (the Repository page says why).")
    st.stop()


def compare_labels(
    analysis: FileAnalysis, line_chunks: list[Chunk], ast_chunks: list[Chunk]
) -> tuple[list[str], list[str], str]:
    """Both chunkings' band labels (with the units each chunk's first line cuts) and the
    list of the units each one splits (one pass over the file; windows reuse them)."""
    labels, head = [], ""
    for title, chunks in (("Line-based", line_chunks), ("AST", ast_chunks)):
        cuts = cuts_at_start(analysis.units, chunks)
        labels.append([render.chunk_label(i, c, cuts=cuts[i]) for i, c in enumerate(chunks)])
        split = [f.unit for f in unit_fates(analysis.units, chunks) if f.split]
        head += render.unit_links(f"Units the {title} chunks split (click to scroll)", split)
    return labels[0], labels[1], head


def dashed(frame: pd.DataFrame) -> pd.DataFrame:
    """Empty cells as "—" (``st.dataframe`` writes a grey "None": a unit share of a file
    without units read as a value); the other cells of those columns as written."""
    out = frame.copy()
    for column in out.columns[out.isna().any()]:
        out[column] = ["—" if pd.isna(value) else f"{value:g}" for value in out[column]]
    return out


def window_moved() -> None:
    """A unit link outside the window drawn: show its line."""
    line = codeview.goto_line("compare_view")
    if line is not None:
        paging.go_to(VIEW, line)


this_file, whole = st.tabs(["This file", "Whole repository"])
with this_file:
    path = settings.file_picker(repo)
    analysis = analyses.file_analysis(repo, path, config.encoding)
    ast_chunks = analyses.file_chunks(repo, path, analysis, config)
    line_chunks = analyses.file_chunks(repo, path, analysis, lines_config)
    key = analyses.file_key(repo, path, config)
    # A line between the picker and the table: the table's toolbar (shown on hover)
    # sits above its top right corner, where it covered the picker's arrow.
    st.markdown("**This file, chunked both ways**")
    st.dataframe(
        cache.shared_table(
            "file_summary",
            key,
            lambda: dashed(
                views.summary_table(
                    {
                        "lines": (line_chunks, unit_fates(analysis.units, line_chunks)),
                        "AST": (ast_chunks, unit_fates(analysis.units, ast_chunks)),
                    }
                )
            ),
        ),
        hide_index=True,
    )
    line_labels, ast_labels, head = cache.shared(
        "file_labels", key, lambda: compare_labels(analysis, line_chunks, ast_chunks)
    )
    panes = [
        render.Pane(f"Line-based ({len(line_chunks)} chunks)", line_chunks, line_labels),
        render.Pane(f"AST ({len(ast_chunks)} chunks)", ast_chunks, ast_labels),
    ]
    window = paging.window(VIEW, path, analysis.source.text)
    paging.controls(VIEW, window, hint="a split unit's link moves there too")
    lines = analyses.highlighted(analysis.source.text, analysis.language)
    html = cache.shared(
        "file_code",
        (*key, window.first, window.last),
        lambda: render.code_view(lines, panes, height=640, head=head, window=window),
    )
    codeview.code_view(
        html,
        key="compare_view",
        scroll_to=paging.target(VIEW),
        window=window,
        on_goto=window_moved,
    )
    fig = cache.shared("file_sizes", key, lambda: views.size_overlay(line_chunks, ast_chunks))
    st.plotly_chart(fig, key="file_sizes")

with whole:
    line_all = analyses.repo_chunks(repo, lines_config)
    ast_all = analyses.repo_chunks(repo, config)
    line_fates = analyses.repo_fates(repo, lines_config)
    ast_fates = analyses.repo_fates(repo, config)
    key = analyses.settings_key(config)
    st.dataframe(
        cache.shared_table(
            "repo_summary",
            key,
            lambda: dashed(
                views.summary_table(
                    {
                        "lines": (line_all, [f for fs in line_fates.values() for f in fs]),
                        "AST": (ast_all, [f for fs in ast_fates.values() for f in fs]),
                    }
                )
            ),
        ),
        hide_index=True,
    )
    fig = cache.shared("repo_sizes", key, lambda: views.size_overlay(line_all, ast_all))
    st.plotly_chart(fig, key="repo_sizes")
    st.markdown("**Per file**")
    st.dataframe(
        cache.shared_table(
            "per_file",
            key,
            lambda: dashed(views.per_file_table(line_all, ast_all, line_fates, ast_fates)),
        ),
        hide_index=True,
    )
