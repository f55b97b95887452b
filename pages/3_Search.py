"""Search: one query against the line-based and the AST index, side by side."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from nexus.embedding import ModelUnavailableError
from nexus.evaluation import QueryOutcome, Target, target_mask
from nexus.index import VectorIndex
from nexus.languages import lexer_name
from nexus.types import Chunk
from nexus.ui import render, safe, state

state.page_setup("Search")
st.session_state.setdefault("k", 5)
config = state.settings_sidebar()
repo = state.current_repo()
st.title("Search")
if not state.chunkable_paths(repo):
    st.warning(f"{safe.code(repo.name)} has no chunkable files (the Repository page says why).")
    st.stop()

refresh = st.button("Rebuild indexes", key="refresh", help="Re-chunk and re-index (cache kept).")
try:
    engine = state.side_by_side(repo, config, refresh=refresh)
except ModelUnavailableError as exc:
    st.error(f"The embedding model is not available: {safe.md(exc)}")
    st.stop()
st.caption(
    f"{len(engine.lines_index)} line-based and {len(engine.ast_index)} AST chunks indexed with "
    f"{safe.code(engine.embedder.name)}; {state.build_note()}."
)

left, right = st.columns([3, 1])
query = left.text_input(
    "Query", key="query", placeholder="e.g. resize an image and upload the thumbnail"
)
k = right.slider("Top k", *state.SLIDERS["k"][:2], key="k")
targets = state.unit_targets(repo)
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
state.write_url_params({})
if not query.strip():
    st.info("Type a query to search both indexes. The URL keeps query and settings, for sharing.")
    st.stop()

result = engine.query(query, k=k, target=target, lexical_weight=config.lexical_weight)
vector = engine.embedder.encode([query])[0]


def score_chart(
    index: VectorIndex, outcome: QueryOutcome, target: Target | None, key: str
) -> list[tuple[Chunk, float]]:
    """Every chunk's score, with the top k and the target chunks marked; returns the
    chunks the user clicked (a marker, or a bar: the chunks in that score range)."""
    scores = index.all_scores(vector, query, config.lexical_weight)
    chunks = index.chunks
    fig = go.Figure()
    fig.add_histogram(
        x=scores,
        nbinsx=40,
        name="all chunks",
        marker_color="#cbd5e1",
        hovertemplate="%{y} chunks scoring %{x}<extra></extra>",
    )
    hover = "%{text}<br>score %{x:.3f}<extra></extra>"
    top_keys = [index.key_of(h.chunk.id) for h in outcome.hits]
    fig.add_scatter(
        x=[h.score for h in outcome.hits],
        y=[0] * len(outcome.hits),
        mode="markers",
        name=f"top {k}",
        marker=dict(symbol="triangle-up", size=12, color="#2563eb"),
        customdata=top_keys,
        text=[render.chunk_hover(chunks[key]) for key in top_keys],
        hovertemplate=hover,
    )
    if target is not None:
        mask = target_mask(chunks, target)
        target_keys = np.flatnonzero(mask).tolist()
        fig.add_scatter(
            x=scores[mask],
            y=[0.5] * int(mask.sum()),
            mode="markers",
            name="target chunks",
            marker=dict(symbol="star", size=15, color="#dc2626"),
            customdata=target_keys,
            text=[render.chunk_hover(chunks[key]) for key in target_keys],
            hovertemplate=hover,
        )
    fig.update_layout(
        height=260,
        margin=dict(l=10, r=10, t=30, b=10),
        title="Score of every chunk (click a marker or a bar)",
        xaxis_title="cosine + keyword score" if config.lexical_weight else "cosine similarity",
        yaxis_title="chunks",
        legend=dict(orientation="h", y=-0.35),
    )
    event = st.plotly_chart(fig, key=key, on_select="rerun", selection_mode="points")
    keys: list[int] = []
    for point in event.selection.points if event else []:
        if point.get("curve_number") == 0:  # a histogram bar: every chunk in its range
            keys.extend(point.get("point_indices", []))
        elif "customdata" in point:
            keys.append(int(point["customdata"]))
    # A selection made on an earlier chart (other settings) may point past this one.
    picked = sorted({key for key in keys if 0 <= key < len(chunks)}, key=lambda key: -scores[key])
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


columns = st.container(key="nx_stack_results").columns(2)
sides = (
    (f"Line-based (windows of {config.line_window} lines)", result.lines, engine.lines_index),
    (f"AST (max {config.max_tokens} tokens)", result.ast, engine.ast_index),
)
for column, (title, outcome, index) in zip(columns, sides, strict=True):
    with column:
        st.markdown(f"#### {title}")
        if target is not None:
            m1, m2, m3 = st.container(key=f"nx_metrics_{title[:3]}").columns(3)
            rank = str(outcome.rank) if outcome.rank else f">{k} (#{outcome.full_rank})"
            m1.metric("Target rank", rank if outcome.full_rank else "no target chunk")
            m2.metric("Target score", f"{outcome.score:.3f}" if outcome.score is not None else "–")
            m3.metric(
                "Margin",
                f"{outcome.margin:+.3f}" if outcome.margin is not None else "–",
                help="Best target score minus best other score; negative: a wrong chunk wins.",
            )
        show_picked(score_chart(index, outcome, target, key=f"scores_{title[:3]}"))
        for hit in outcome.hits:
            chunk = hit.chunk
            hit_target = target is not None and target_mask([chunk], target)[0]
            mark = " · :green-badge[target]" if hit_target else ""
            st.markdown(
                f"**{hit.rank}.** {safe.code(chunk.file)} L{chunk.start_line}–{chunk.end_line} · "
                f"{safe.md(chunk.symbol or '(module code)')} · score **{hit.score:.3f}**{mark}"
            )
            preview = "\n".join(chunk.text.splitlines()[:10])
            st.code(preview, language=lexer_name(chunk.language))
