"""The Search page's scores: the target's rank, score and margin, the chart of every score,
and each hit's parts, all on the one final score the hits are ranked by.

With the ranking stage a hit's score is its fused dense + keyword score plus boosts
(1.02-1.47 is common), while the cosine + keyword score before it tops out near 0.8: a
page that shows the ranked list beside the earlier score contradicts itself (rank 1
with a negative margin). So rank, score, margin, full rank and the chart all come from
``metrics.score_query`` over the ranked candidates (``keep_ranked``); chunks the ranking
stage did not rank have no final score and are left off the chart.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from nexus.config import ChunkConfig
from nexus.evaluation.metrics import QueryOutcome, is_hit
from nexus.evaluation.query_sets import Target
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.search import Hit
from nexus.ui import render
from nexus.ui.views import TITLE_TOP_PX, titled


def target_metrics(outcome: QueryOutcome, k: int) -> tuple[str, str, str]:
    """The target's rank, score and margin as the page shows them."""
    if outcome.score is None:
        rank = (
            f">{k} (not among the {outcome.scored} ranked)"
            if outcome.scored is not None
            else "no target chunk"
        )
        return rank, "–", "–"
    rank = str(outcome.rank) if outcome.rank else f">{k} (#{outcome.full_rank})"
    margin = f"{outcome.margin:+.3f}" if outcome.margin is not None else "–"
    return rank, f"{outcome.score:.3f}", margin


def _target_hits(
    index: VectorIndex, scores: np.ndarray, outcome: QueryOutcome, target: Target
) -> list[tuple[int, float]]:
    """(key, final score) of each result holding the target: the ranked ones (a window
    holding it counts) with the ranking stage, else every target chunk."""
    if outcome.ranked:
        return [(h.key, h.score) for h in outcome.ranked if is_hit(h.chunk, target)]
    chunks = index.chunks
    return [(key, float(scores[key])) for key in range(len(index)) if is_hit(chunks[key], target)]


def score_figure(
    index: VectorIndex,
    scores: np.ndarray,
    outcome: QueryOutcome,
    target: Target | None,
    k: int,
    config: ChunkConfig,
) -> go.Figure:
    """Every chunk's final score, the top k marked with their rank numbers and the target
    results starred (markers carry their chunk's key in the index, for clicks)."""
    fig = go.Figure()
    fig.add_histogram(
        x=np.where(np.isnan(scores), None, scores),  # unranked chunks: no final score
        nbinsx=40,
        name="ranked chunks" if outcome.ranked else "all chunks",
        marker_color="#cbd5e1",
        hovertemplate="%{y} chunks scoring %{x}<extra></extra>",
    )
    hover = "%{hovertext}<br>score %{x:.3f}<extra></extra>"
    fig.add_scatter(
        x=[h.score for h in outcome.hits],
        y=[0] * len(outcome.hits),
        mode="markers+text",
        name=f"top {k} (numbered by rank)",
        marker=dict(symbol="triangle-up", size=12, color="#2563eb"),
        text=[str(h.rank) for h in outcome.hits],
        textposition="top center",
        customdata=[h.key for h in outcome.hits],
        hovertext=[f"#{h.rank} {render.chunk_hover(h.chunk)}" for h in outcome.hits],
        hovertemplate=hover,
    )
    if target is not None:
        found = _target_hits(index, scores, outcome, target)
        chunks = index.chunks
        fig.add_scatter(
            x=[score for _, score in found],
            y=[0.5] * len(found),
            mode="markers",
            name="target",
            marker=dict(symbol="star", size=15, color="#dc2626"),
            customdata=[key for key, _ in found],
            hovertext=[render.chunk_hover(chunks[key]) for key, _ in found],
            hovertemplate=hover,
        )
    ranked = len(outcome.ranked)
    fig.update_layout(
        height=300,
        margin=dict(l=10, r=10, b=10),
        xaxis_title=(
            f"final score: ranking stage, the {ranked:,} candidates it ranked"
            if outcome.ranked
            else "cosine + keyword score"
            if config.lexical_weight
            else "cosine similarity"
        ),
        yaxis_title="chunks",
        legend=dict(orientation="h", y=-0.35),
    )
    return titled(fig, "Final score of every chunk (click a marker or a bar)")


#: Parts every ranked hit has, and the usual boosts and dampings, each with its own colour
#: (in every chart: the line-based and AST columns side by side agree).
_KNOWN_PARTS = (
    "dense",
    "keyword",
    "defines",
    "name words",
    "path",
    "file has several matches",
    "declares a shape",
    "module code",
    "mostly comments",
    "same file as a higher hit",
)
_PALETTE = qualitative.Dark24


def part_colour(name: str) -> str:
    """One colour per part name, the same in every chart: the known parts by their order,
    any other by a stable hash of its name into the rest of the palette."""
    if name in _KNOWN_PARTS:
        return _PALETTE[_KNOWN_PARTS.index(name)]
    rest = len(_PALETTE) - len(_KNOWN_PARTS)
    return _PALETTE[len(_KNOWN_PARTS) + zlib.crc32(name.encode()) % rest]


#: Pixels per hit in "Why each hit ranks", and below the bars: the x labels, then the
#: legend at the chart's foot (placed in the plot's own fraction it sat on the labels).
PARTS_BAR_PX = 30
PARTS_BELOW_PX = 110


def parts_figure(hits: Sequence[Hit]) -> go.Figure:
    """Each hit's score as a bar of its parts (dense, keyword, boosts; dampings to the
    left of zero): why the ranking stage put it where it is."""
    names = list(dict.fromkeys(p.name for h in hits for p in h.parts))
    labels = [f"#{h.rank} {h.chunk.file.rsplit('/', 1)[-1]}:{h.chunk.start_line}" for h in hits]
    fig = go.Figure()
    for name in names:
        values = [sum(p.value for p in h.parts if p.name == name) for h in hits]
        fig.add_bar(
            y=labels,
            x=values,
            name=name,
            orientation="h",
            marker_color=part_colour(name),
            hovertemplate=f"{name} %{{x:+.3f}}<extra></extra>",
        )
    # Every bar labelled (Plotly skips category labels it finds crowded: #1, #3, #5 only),
    # and room below for the x labels and a legend of up to three rows.
    fig.update_layout(
        barmode="relative",
        height=TITLE_TOP_PX + PARTS_BAR_PX * len(hits) + PARTS_BELOW_PX,
        margin=dict(l=10, r=10, b=PARTS_BELOW_PX - 30),
        yaxis=dict(autorange="reversed", tickmode="array", tickvals=labels, automargin=True),
        legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0),
    )
    return titled(fig, "Why each hit ranks where it does (parts of its score)")
