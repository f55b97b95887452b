"""The charts and tables the pages draw, built from data alone (no streamlit).

Every session that looks at the same repository with the same settings sees the
same figures and tables, and building them costs more than the rest of a rerun
(a Plotly Express figure ~0.1 s, a chunk table tens of ms): the pages build them
through ``cache.shared``, once per (repository, settings) for every session, and
draw the kept objects. So nothing here may depend on a session, and callers must
not change what they are given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pathspec
import plotly.express as px
import plotly.graph_objects as go
import plotly.io as pio
import pyarrow as pa

from nexus.chunking.fragmentation import UnitFate, piece_numbers, summarize
from nexus.evaluation.budget import DEFAULT_BUDGETS, budget_label
from nexus.evaluation.metrics import QueryOutcome
from nexus.evaluation.runs import Comparison
from nexus.types import Chunk, FileInfo, Unit
from nexus.ui import render, safe

#: Measured (tracemalloc): a Plotly Express figure holds ~300 KB (its template and
#: validators) whatever its data, plus a few bytes of objects per byte of its JSON.
FIGURE_BYTES = 300_000
FIGURE_BYTES_PER_JSON_BYTE = 5


def view_bytes(value: Any) -> int:
    """Estimated memory of a kept view: figures, tables, arrays, strings and tuples of them."""
    if isinstance(value, go.Figure):
        return FIGURE_BYTES + FIGURE_BYTES_PER_JSON_BYTE * len(pio.to_json(value, validate=False))
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=True).sum()) + 2_000
    if isinstance(value, np.ndarray | pa.Table):
        return value.nbytes + 1_000
    if isinstance(value, int | float):
        return 32
    if isinstance(value, str | bytes):
        return len(value) + 100
    if isinstance(value, tuple | list):
        return sum(view_bytes(item) for item in value) + 100
    if isinstance(value, dict):
        return sum(view_bytes(k) + view_bytes(v) for k, v in value.items()) + 200
    if isinstance(value, QueryOutcome):  # the ranked candidates it keeps, windows' text too
        return 1_000 + sum(len(h.chunk.text) + 500 for h in (*value.hits, *value.ranked))
    return 200


#: Pixels kept free above a chart's title: Plotly's toolbar (the mode bar) is drawn in
#: the chart's top right corner, about 30 px high, over whatever lies there (it covered
#: the titles of the sweep charts and of "Why each hit ranks" in a narrow column).
TOOLBAR_PX = 34
#: Pixels from the top of a chart to its plot area: the toolbar, then a title line.
TITLE_TOP_PX = TOOLBAR_PX + 36


def titled(fig: go.Figure, title: str) -> go.Figure:
    """``fig`` with ``title`` on its own line below the toolbar's band, at the left."""
    fig.update_layout(
        title=dict(
            text=title,
            x=0,
            xanchor="left",
            y=1,
            yref="container",
            yanchor="top",
            pad=dict(t=TOOLBAR_PX, l=10),
        ),
        margin_t=TITLE_TOP_PX,
    )
    return fig


#: Colours of the category chart's languages: 24 before one repeats (Plotly's default
#: ten gave binary files JavaScript's red); files without a language are grey.
LANGUAGE_COLOURS = px.colors.qualitative.Dark24
NO_LANGUAGE_COLOUR = "#9ca3af"


def language_colours(languages: Iterable[str]) -> dict[str, str]:
    """One colour per language, none repeated within the first 24, binary and unknown
    files grey (they are not a language)."""
    named = sorted({lang for lang in languages if lang not in ("binary", "unknown", "")})
    colours = {lang: LANGUAGE_COLOURS[i % len(LANGUAGE_COLOURS)] for i, lang in enumerate(named)}
    return colours | dict.fromkeys(("binary", "unknown", ""), NO_LANGUAGE_COLOUR)


def category_chart(rows: pd.DataFrame) -> go.Figure:
    """Home page: files by category, coloured by language."""
    fig = px.bar(
        rows,
        x="category",
        y="files",
        color="language",
        color_discrete_map=language_colours(rows["language"]),
        height=340,
    )
    fig.update_layout(margin=dict(l=10, r=10, b=10), legend_title_text="language")
    return titled(fig, "Files by category and language")


def category_table(by_category_language: list[dict[str, Any]]) -> pd.DataFrame:
    """Home page: the category x language rows with sizes in KB."""
    rows = pd.DataFrame(by_category_language)
    rows["size (KB)"] = (rows.pop("bytes") / 1000).round(1)
    return rows


def chunked_files_table(files: Iterable[FileInfo], tokens: Mapping[str, int]) -> pd.DataFrame:
    """Repository page: one row per chunked file, in path order (``tokens``: per path,
    from the parse the page does anyway)."""
    chunked = sorted((info for info in files if info.chunkable), key=lambda info: info.path)
    return pd.DataFrame(
        {
            "path": [info.path for info in chunked],
            "language": [info.language for info in chunked],
            "category": [info.category.value for info in chunked],
            "size (KB)": [round(info.size / 1000, 1) for info in chunked],
            "tokens": [tokens.get(info.path, 0) for info in chunked],
        }
    )


#: A filter holding one of these is a glob; otherwise it is a part of the path.
GLOB_CHARACTERS = "*?["


def filter_files(table: pd.DataFrame, pattern: str) -> pd.DataFrame:
    """The rows whose path holds ``pattern`` (any case), or matches it as a gitignore
    glob (as the include box does) when it has a glob character.

    Raises:
        ValueError: the glob cannot be read.
    """
    pattern = pattern.strip()
    if not pattern:
        return table
    if any(c in pattern for c in GLOB_CHARACTERS):
        try:
            spec = pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception as exc:  # pathspec raises several types for bad patterns
            raise ValueError(f"{pattern!r} is not a valid glob: {exc}") from exc
        mask = [spec.match_file(path) for path in table["path"]]
    else:
        mask = table["path"].str.contains(pattern, case=False, regex=False).tolist()
    return table[mask]


#: Bins of the chunk-size histogram up to ``max_tokens``.
SIZE_BINS = 16


def budget_bins(largest: int, max_tokens: int) -> dict[str, float]:
    """Histogram bins whose edges fall half a token past whole multiples of
    ``max_tokens / SIZE_BINS``: a bin holds sizes (a, b], so a chunk of exactly
    ``max_tokens`` lies in the bin that ends at the max line, not in one drawn past it
    (Plotly's bins hold [a, b): the 320-340 bar beside a max of 320)."""
    size = max(max_tokens, 1) / SIZE_BINS
    return dict(start=0.5, end=max(largest, max_tokens) + 0.5, size=size)


def token_histogram(chunks: Sequence[Chunk], max_tokens: int, min_tokens: int) -> go.Figure:
    """Chunks page: tokens per chunk, with the budget's two limits (a plain ``go``
    figure: Plotly Express took ~0.08 s to build it, a fifth of a rerun's budget)."""
    sizes = [c.token_count for c in chunks]
    fig = go.Figure(
        go.Histogram(
            x=sizes,
            xbins=budget_bins(max(sizes, default=0), max_tokens),
            hovertemplate="%{y} chunks of %{x} tokens<extra></extra>",
        )
    )
    fig.add_vline(x=max_tokens, line_dash="dash", line_color="red", annotation_text="max")
    fig.add_vline(x=min_tokens, line_dash="dot", line_color="gray", annotation_text="min")
    fig.update_layout(
        height=320,
        xaxis_title="tokens per chunk",
        yaxis_title="chunks",
        margin=dict(l=10, r=10, t=30, b=10),
    )
    return fig


def chunk_table(chunks: Sequence[Chunk], pieces: Sequence[int]) -> pd.DataFrame:
    """Chunks page: one row of metadata per chunk (built by column: a 4,600-chunk file's
    table in a few ms rather than a tenth of a second from row dicts)."""
    return pd.DataFrame(
        {
            "#": range(1, len(chunks) + 1),
            "lines": [f"{c.start_line}–{c.end_line}" for c in chunks],
            "tokens": [c.token_count for c in chunks],
            "word pieces": list(pieces),
            "symbol": [c.symbol or "" for c in chunks],
            "kind": [c.symbol_kind or "" for c in chunks],
            "parent": [c.parent or "" for c in chunks],
            "symbols": [", ".join(c.symbols) for c in chunks],
            "imports": [", ".join(c.imports) for c in chunks],
            "exported": [c.exported for c in chunks],
            "profile": [c.profile for c in chunks],
            "parse error": [c.has_error for c in chunks],
            "id": [c.id for c in chunks],
        }
    )


def chunk_labels(
    chunks: Sequence[Chunk], units: Sequence[Unit], pieces: Sequence[int], window: int
) -> tuple[list[str], list[str]]:
    """Chunks page: each chunk's line in the chunk list, and its label over its band
    (HTML: ``k/n`` for a piece of a split unit, flagged over ``window`` word pieces)."""
    pieces_of = piece_numbers(units, list(chunks))
    plain = [
        f"#{i + 1}  L{c.start_line}–{c.end_line}  {c.symbol or '(module code)'}  ·  "
        f"{c.token_count} tok"
        for i, c in enumerate(chunks)
    ]
    html = [
        render.chunk_label(i, c, pieces[i], window if pieces[i] > window else 0, pieces_of[i])
        for i, c in enumerate(chunks)
    ]
    return plain, html


#: Above this many units the unit table is not coloured row by row: pandas' Styler
#: took 0.7 s per rerun on lib.dom.d.ts's 1,566 units. The misses come first instead.
STYLED_UNIT_ROWS = 300


def unit_table(unit_rows: list[dict[str, object]], misses_first: bool = False) -> pd.DataFrame:
    """Chunks page: the file's units and whether the regex baseline finds each
    (``misses_first``: the units the regex misses on top, in file order)."""
    frame = pd.DataFrame(unit_rows)
    frame["range"] = frame["start_line"].astype(str) + "–" + frame["end_line"].astype(str)
    frame = frame[["name", "kind", "lines", "range", "exported", "regex_found"]]
    if misses_first:
        frame = frame.sort_values("regex_found", kind="stable").reset_index(drop=True)
    return frame


def summary_table(by_strategy: dict[str, tuple[Sequence[Chunk], list[UnitFate]]]) -> pd.DataFrame:
    """Compare page: one row per strategy: chunk counts and sizes, units split, mean unit share."""
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
                "classes divided": s.divided,
                "intact share": f"{s.intact_share:.0%}",
                "mean pieces when split": round(s.mean_pieces_when_split, 2) if s.split else None,
                "unit share (higher is better)": round(s.mean_dilution, 3) if s.units else None,
            }
        )
    return pd.DataFrame(rows)


def size_overlay(line_chunks: Sequence[Chunk], ast_chunks: Sequence[Chunk]) -> go.Figure:
    """Compare page: both strategies' chunk sizes over the same bins, so the bars compare."""
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
        margin=dict(l=10, r=10, b=10),
    )
    return titled(fig, "Chunk sizes")


def per_file_table(
    line_all: Sequence[Chunk],
    ast_all: Sequence[Chunk],
    line_fates: dict[str, list[UnitFate]],
    ast_fates: dict[str, list[UnitFate]],
) -> pd.DataFrame:
    """Compare page: per file, units, chunks, splits and unit share of both strategies."""
    line_count: dict[str, int] = {}
    ast_count: dict[str, int] = {}
    for counts, chunks in ((line_count, line_all), (ast_count, ast_all)):
        for chunk in chunks:
            counts[chunk.file] = counts.get(chunk.file, 0) + 1
    per_file = []
    for file, fates in ast_fates.items():
        line_summary, ast_summary = summarize(line_fates[file]), summarize(fates)
        per_file.append(
            {
                "file": file,
                "units": len(fates),
                "chunks (lines)": line_count.get(file, 0),
                "chunks (AST)": ast_count.get(file, 0),
                "split (lines)": line_summary.split,
                "split (AST)": ast_summary.split,
                "unit share (lines)": round(line_summary.mean_dilution, 3) if fates else None,
                "unit share (AST)": round(ast_summary.mean_dilution, 3) if fates else None,
            }
        )
    return pd.DataFrame(per_file)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> pd.DataFrame:
    """A table given as headers and rows (``nexus.evaluation.runs``'s tables)."""
    return pd.DataFrame(rows, columns=list(headers))


def metric_bars(comparison: Comparison) -> pd.DataFrame:
    """Evaluate page: the first two budget recalls (R@1k, R@2k), MRR@10 and lines@10 per
    strategy and query variant."""
    recalls = [budget_label(b) for b in comparison.baseline.budgets[:2]]
    return pd.DataFrame(
        {
            "strategy": report.label,
            "variant": safe.plot(group),
            **{label: m.get(label, float("nan")) for label in recalls},
            "MRR@10": m["overlap50:MRR@10"],
            "lines@10": m.get("lines@10", float("nan")),
        }
        for report in (comparison.baseline, comparison.candidate)
        for group, m in report.metrics.items()
        if "|" not in group
    )


def quality_chart(bars: pd.DataFrame) -> go.Figure:
    """Evaluate page: the budget recalls first, then MRR@10, per variant and strategy."""
    metrics = [c for c in bars.columns if c not in ("strategy", "variant", "lines@10")]
    long = bars.melt(["strategy", "variant"], metrics, "metric")
    fig = px.bar(
        long,
        x="variant",
        y="value",
        color="strategy",
        facet_col="metric",
        barmode="group",
        height=340,
        range_y=[0, 1],
    )
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    fig.update_layout(margin=dict(l=10, r=10, b=10), yaxis_title="")
    return titled(fig, "Found within a token budget, and MRR@10 (higher is better)")


def cost_chart(bars: pd.DataFrame) -> go.Figure:
    """Evaluate page: lines the top 10 hits show, per variant and strategy."""
    fig = px.bar(
        bars,
        x="variant",
        y="lines@10",
        color="strategy",
        barmode="group",
        height=340,
    )
    fig.update_layout(margin=dict(l=10, r=10, b=10), showlegend=False)
    return titled(fig, "Lines the top 10 show (lower is better)")


def budget_curves(
    metrics: Mapping[str, Mapping[str, float]], budgets: Sequence[int] = DEFAULT_BUDGETS
) -> dict[str, dict[int, float]]:
    """Recall per budget of each named run, from its metrics (``R@1k``...)."""
    return {
        name: {b: m[budget_label(b)] for b in budgets if budget_label(b) in m}
        for name, m in metrics.items()
    }


def budget_chart(curves: Mapping[str, Mapping[int, float]], title: str) -> go.Figure:
    """Quality against budget: recall within B tokens (y) for each budget B (x), a line
    per strategy or sweep setting, so a team sees which wins at the budget it has."""
    fig = go.Figure()
    budgets: set[int] = set()
    for name, curve in curves.items():
        points = sorted(curve.items())
        budgets.update(b for b, _ in points)
        fig.add_scatter(
            x=[b for b, _ in points],
            y=[round(float(r), 4) for _, r in points],
            mode="lines+markers",
            name=safe.plot(name),
            hovertemplate=f"{safe.plot(name)}: %{{y:.3f}} within %{{x}} tokens<extra></extra>",
        )
    fig.update_xaxes(type="log", tickvals=sorted(budgets), title="budget (tokens)")
    values = [float(r) for curve in curves.values() for r in curve.values()]
    fig.update_yaxes(range=zoomed_range(values), title="share of targets read (axis zoomed)")
    fig.update_layout(
        height=360,
        margin=dict(l=10, r=10, b=10),
        legend=dict(orientation="h", y=-0.25, yanchor="top"),
    )
    return titled(fig, title)


#: Least span of a zoomed axis of shares, and the share of the span added each side.
ZOOM_MIN_SPAN = 0.04
ZOOM_PAD = 0.15


def zoomed_range(values: Sequence[float]) -> list[float]:
    """A share axis around ``values`` (within 0..1.02), not 0..1: seven settings within
    0.82-0.95 on a 0-1 axis could not be told apart."""
    if not values:
        return [0.0, 1.02]
    low, high = min(values), max(values)
    pad = max(ZOOM_MIN_SPAN - (high - low), 0) / 2 + ZOOM_PAD * (high - low) + 0.005
    return [max(0.0, low - pad), min(1.02, high + pad)]


def sweep_chart(
    table: pd.DataFrame, metric: str, higher_is_better: bool, variant: str
) -> go.Figure:
    """Evaluate's sweep: ``metric`` against max_tokens, a line per min_tokens, its best
    starred and the setting in use ringed, with its value as a dotted reference line."""
    fig = px.line(
        table.assign(min_tokens=table["min_tokens"].astype(str)),  # one line per value
        x="max_tokens",
        y=metric,
        color="min_tokens",
        markers=True,
        height=380,
    )
    winner = table[metric].idxmax() if higher_is_better else table[metric].idxmin()
    fig.add_scatter(
        x=[table.loc[winner, "max_tokens"]],
        y=[table.loc[winner, metric]],
        mode="markers",
        name=f"best {metric}",
        marker=dict(symbol="star", size=18, color="#dc2626"),
        hovertemplate=f"best {metric}: %{{y}} at max %{{x}}<extra></extra>",
    )
    in_use = table[table["row"].str.contains("in use")].iloc[0]
    fig.add_hline(y=in_use[metric], line_dash="dot", line_color="#6b7280")
    fig.add_scatter(
        x=[in_use["max_tokens"]],
        y=[in_use[metric]],
        mode="markers",
        name=f"in use (min {in_use['min_tokens']})",
        marker=dict(symbol="circle-open", size=16, color="#111827", line=dict(width=2)),
        hovertemplate="in use: %{y} at max %{x}<extra></extra>",
    )
    fig.update_xaxes(type="log", tickvals=sorted(table["max_tokens"].unique()))
    fig.update_layout(  # the legend below: three charts side by side keep their width
        margin=dict(l=10, r=10, b=10),
        legend=dict(title_text="min_tokens", orientation="h", y=-0.25, yanchor="top"),
    )
    better = "higher" if higher_is_better else "lower"
    return titled(fig, f"{metric} ({safe.plot(variant)} queries; {better} is better)")
