"""Chunks and AST: one file's chunks drawn over its source, its syntax tree and its units."""

from __future__ import annotations

import streamlit as st

from nexus.chunking.pipeline import pick_profile
from nexus.ui import (
    analyses,
    cache,
    codeview,
    linewindow,
    links,
    paging,
    render,
    repos,
    safe,
    settings,
    state,
    tuning,
    views,
    wordpieces,
)

state.page_setup("Chunks and AST")
config = settings.settings_sidebar()
repo = repos.current_repo()
st.title("Chunks and AST")

path = settings.file_picker(repo)
if path is None:
    st.warning(f"{safe.code(repo.name)} has no chunkable files (the Repository page says why).")
    st.stop()

analysis = analyses.file_analysis(repo, path, config.encoding)
chunks = analyses.file_chunks(repo, path, analysis, config)
profile, reason = pick_profile(analysis, config)
pieces, window, exact = wordpieces.window_counts(chunks)
over = [i for i, n in enumerate(pieces) if n > window]

cols = st.container(key="nx_metrics_chunks").columns(5)
cols[0].metric("Chunks", len(chunks))
cols[1].metric("Units found", len(analysis.units))
cols[2].metric("Lines", linewindow.line_count(analysis.source.text))
cols[3].metric("Largest chunk", f"{max((c.token_count for c in chunks), default=0)} tok")
cols[4].metric(
    "Over model window",
    len(over),
    help=f"Chunks whose embedding text exceeds {window} word pieces, counted with the "
    "model's tokenizer" + ("" if exact else " (estimated: no model folder found)"),
)
st.caption(f"Profile **{safe.md(profile.name)}**: {safe.md(reason)}.")

if not chunks:
    st.info("This file is empty: there is nothing to chunk.")
    st.stop()

# Built once per file, settings and word-piece count (thousands of chunks in a large file).
labels_plain, labels = cache.shared(
    "chunk_labels",
    (*analyses.file_key(repo, path, config), tuple(pieces), window),
    lambda: views.chunk_labels(chunks, analysis.units, pieces, window),
)
# The selection is kept as a chunk index plus its first line: after a re-chunk the
# chunk holding that line is selected, and the list shows the current chunks' labels.
selected = tuning.pick_chunk(chunks, path, labels_plain)
links.write_url_params(tuning.link_params())  # a link opens on the same chunk
start = chunks[selected].start_line
shown = paging.window(tuning.VIEW, path, analysis.source.text, anchor=start)
pick, find = st.container(key="nx_stack_pick").columns([3, 1])
pick.selectbox(
    "Chunk to inspect" if shown.whole else f"Chunk to inspect ({shown.label().lower()})",
    [labels_plain[i] for i in tuning.listed(chunks, shown, selected)],
    key="chunk_pick",
    on_change=tuning.chunk_picked,
    help="Or click a band in the source."
    + ("" if shown.whole else " The list holds the chunks of the lines drawn."),
)
find.text_input(
    "Find a symbol",
    key="chunk_find",
    on_change=tuning.symbol_entered,
    placeholder="e.g. getImage",
    help="Selects the next chunk whose symbol holds this text (any case).",
)
if missed := tuning.find_missed():
    find.caption(f"No chunk's symbol holds {safe.code(missed)}.")
diff = tuning.chunking_change(path, config, chunks)
if diff:
    st.info(safe.md(diff))

lines = analyses.highlighted(analysis.source.text, analysis.language)
code, tree = st.container(key="nx_stack_code").columns([3, 2])
with code:
    st.markdown("**Source with chunk boundaries** (the selected chunk in green; click a band)")
    paging.controls(tuning.VIEW, shown, hint="choosing a chunk in the list moves there too")
    pane = render.Pane("AST chunks", chunks, labels, selected, clickable=True)
    codeview.code_view(
        render.code_view(lines, [pane], height=680, window=shown),
        key="chunk_view",
        scroll_to=start if start in shown else shown.first,
        window=shown,
        on_click=tuning.band_clicked,
    )
with tree:
    chunk = chunks[selected]
    st.markdown(f"**Syntax tree of chunk #{selected + 1}** (L{chunk.start_line}–{chunk.end_line})")
    rows, cut = render.ast_outline(analysis.tree, chunk.start_byte, chunk.end_byte)
    st.html(render.outline_html(rows, cut=cut))

sizes, table, units = st.tabs(["Chunk sizes", "Chunk metadata", "Units vs regex baseline"])
with sizes:
    fig = cache.shared(
        "token_histogram",
        analyses.file_key(repo, path, config),
        lambda: views.token_histogram(chunks, config.max_tokens, config.min_tokens),
    )
    st.plotly_chart(fig, key="size_histogram")
with table:
    st.dataframe(
        cache.shared_table(
            "chunk_table",
            (*analyses.file_key(repo, path, config), tuple(pieces)),
            lambda: views.chunk_table(chunks, pieces),
        ),
        hide_index=True,
    )
    st.caption("word pieces: " + ("counted with the model's tokenizer" if exact else "estimated"))
with units:
    unit_rows, regex_count = analyses.unit_rows(repo, path)
    missed = sum(1 for row in unit_rows if not row["regex_found"])
    c1, c2, c3 = st.columns(3)
    c1.metric("Units (AST)", len(unit_rows))
    c2.metric("Functions (regex baseline)", regex_count)
    c3.metric("Units the regex misses", missed)
    if 0 < len(unit_rows) <= views.STYLED_UNIT_ROWS:
        frame = cache.shared(
            "unit_table", analyses.file_key(repo, path), lambda: views.unit_table(unit_rows)
        )
        styled = frame.style.apply(
            lambda row: ["background-color:#fee2e2" if not row["regex_found"] else ""] * len(row),
            axis=1,
        )
        st.dataframe(styled, hide_index=True)
        st.caption("Rows in red: units the regex baseline does not find.")
    elif unit_rows:
        st.dataframe(
            cache.shared_table(
                "unit_table_misses_first",
                analyses.file_key(repo, path),
                lambda: views.unit_table(unit_rows, misses_first=True),
            ),
            hide_index=True,
        )
        st.caption(
            f"The {missed:,} units the regex baseline does not find come first "
            f"(regex_found unticked; rows are coloured only up to {views.STYLED_UNIT_ROWS} units)."
        )
