"""What the Search page draws: a build's progress line, the hits of an answer (each with
the lines that match the query, the selected one whole), the chart of every chunk's
score and the chunks clicked on it. The answers themselves come from
``nexus.ui.searching`` (the front door)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from nexus.chunking.languages import lexer_name
from nexus.evaluation.metrics import target_mask
from nexus.evaluation.query_sets import Target
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.preview import hit_preview, whole_chunk
from nexus.retrieval.ranking import SYMBOL, explain, query_kind
from nexus.retrieval.rescore import RESCORE_DEPTH
from nexus.retrieval.search import Hit
from nexus.runtime.builds import IndexBuild
from nexus.runtime.progress import CANCELLED, FAILED, BuildProgress
from nexus.types import Chunk
from nexus.ui import links, render, safe
from nexus.workspace import SearchAnswer


def show_progress(
    label: str, build: IndexBuild, origin: str, progress: BuildProgress, key: str
) -> bool:
    """The build's progress bar, with a cancel button while it runs, resume once
    cancelled (``origin``: whose build it is). True when Resume was pressed."""
    text = f"{label}: {safe.md(progress.summary())} · {origin}"
    if progress.running:
        bar, button = st.columns([5, 1])
        bar.progress(progress.fraction, text=text)
        if button.button("Cancel", key=f"cancel_{key}", help="Stop after the batch in flight."):
            build.cancel()
    elif progress.phase == CANCELLED:
        st.warning(text)
        return st.button("Resume", key=f"resume_{key}", help="Go on; cached batches are kept.")
    elif progress.phase == FAILED:
        st.error(text)
    else:
        st.caption(text)
    return False


def show_hits(answer: SearchAnswer, target: Target | None, key: str) -> None:
    """The hits, each with the lines that match the query; the selected one (it travels
    in the link) in full: the first hit holding the selected file and line. With a token
    budget, only what fits: the hit that crosses it is cut at a line and says so."""
    hits, reads, budget = answer.hits, answer.reads, answer.budget
    chosen = st.session_state.get(links.HIT_KEY)
    selected = next((hit for hit in hits if links.holds_hit(hit.chunk, chosen)), None)
    if budget:
        st.caption(
            f"{answer.tokens_used:,} of {budget:,} tokens read: {len(reads)} of {len(hits)} hits"
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
            f"score **{hit.score:.3f}** · {cost(answer, position)}{mark}"
        )
        if hit.parts:
            st.caption(safe.md(explain(hit.parts)))
        toggle = f"hit_{key}_{hit.rank}"
        st.session_state[toggle] = hit is selected
        st.toggle(
            "Whole chunk",
            key=toggle,
            on_change=_toggle_hit,
            args=(toggle, chunk),
            help="Shows the whole chunk and selects it: the link then carries it.",
        )
        if hit is selected:  # numbered as in the file, like the preview
            with st.container(key=f"whole_{toggle}"):
                st.html(render.preview_html(whole_chunk(chunk, answer.query), chunk))
        else:
            st.html(render.preview_html(hit_preview(chunk, answer.query), chunk))


def cost(answer: SearchAnswer, position: int) -> str:
    """What reading the hit at ``position`` costs: its lines and tokens (what the budget
    reads of it when it is cut; a hit may be a window of neighbouring units, larger than
    one chunk: readers pay for all of it)."""
    if position < len(answer.reads):
        read = answer.reads[position]
        lines, tokens = read.lines, read.tokens
    else:
        chunk = answer.hits[position].chunk
        lines, tokens = chunk.n_lines, chunk.token_count
    return f"{lines:,} lines, {tokens:,} tokens"


def _toggle_hit(toggle: str, chunk: Chunk) -> None:
    """A hit's toggle moved: its chunk is selected, or none."""
    links.select_hit(links.hit_value(chunk) if st.session_state[toggle] else "")


def answered_by(answer: SearchAnswer) -> str:
    """Which tier and model answered (the fast tier's static model or MiniLM), and the
    model that scored the fast tier's best hits again, if one did."""
    line = f"Answered by the {answer.tier} tier ({safe.code(answer.model)})"
    if answer.rescored_by:
        line += (
            f", its best {RESCORE_DEPTH} hits scored again by the quality tier's model "
            f"({safe.code(answer.rescored_by)})"
        )
    elif answer.rescore:
        # Not re-scored (yet, or why not): the fast tier's own order, and the page says so.
        line += f"; {safe.md(answer.rescore)}"
    return line + "."


def ranking_caption(query: str, hits: Sequence[Hit]) -> str:
    """How the ranking stage read the query and what goes into a hit's score; and, when
    ``hits`` are not in falling score order, why (other files first)."""
    kind = "a name (symbol query)" if query_kind(query) == SYMBOL else "a sentence"
    caption = (
        f"Read as {kind}. Ranking stage: dense and keyword scores scaled over the "
        "candidates and weighted for the query's kind, then definition, path and file "
        "evidence; each hit's line shows its parts."
    )
    if any(hit.score < after.score for hit, after in pairwise(hits)):
        caption += (
            " A hit may come before a higher score: a file's later hits wait behind the "
            "first hit of another file that scores nearly as well (other files first)."
        )
    return caption


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
