"""The Chunks page's memory between reruns: which chunk is selected (also after
"Go to line"), and what the last settings change did to the file's chunks.

A chunk index alone goes stale when a slider re-chunks the file, so the selection
also keeps the chunk's first line and follows it; the select box is given the
current label on every run, so it never shows a chunk that no longer exists.
"""

from __future__ import annotations

from bisect import bisect_right

import streamlit as st

from nexus.chunking.chunkdiff import diff_chunks, setting_changes
from nexus.config import ChunkConfig
from nexus.types import Chunk
from nexus.ui import codeview, paging
from nexus.ui.linewindow import LineWindow

_INDEX, _LINE, _LABELS = "chunk_index", "chunk_line", "_chunk_labels"
_FIND, _MISSED = "_chunk_find", "_chunk_find_missed"
#: The code view's name for ``nexus.ui.paging`` (its widget keys start with it).
VIEW = "code"


def pick_chunk(chunks: list[Chunk], path: str, labels: list[str]) -> int:
    """The selected chunk of ``chunks``: the same index when the chunks did not change,
    else the chunk holding the line the old selection started at."""
    ss = st.session_state
    key = (path, tuple(c.id for c in chunks))
    index = int(ss.get(_INDEX, 0))
    goto = paging.take_goto(VIEW)
    if ss.get("_chunk_key") != key or goto is not None:
        line = ss.get(_LINE) if ss.get("_chunk_path") == path else None
        line = goto if goto is not None else line
        starts = [c.start_line for c in chunks]
        index = max(bisect_right(starts, line) - 1, 0) if line else 0
    index = min(max(index, 0), len(chunks) - 1)
    find = ss.pop(_FIND, None)
    if find is not None:
        found = find_chunk(chunks, index, find)
        ss[_MISSED] = None if found is not None else find
        index = index if found is None else found
    ss["_chunk_key"], ss["_chunk_path"] = key, path
    ss[_INDEX], ss[_LINE], ss[_LABELS] = index, chunks[index].start_line, labels
    ss["chunk_pick"] = labels[index]
    return index


def chunk_picked() -> None:
    """The select box moved: remember its index (its labels are the last run's)."""
    labels = st.session_state.get(_LABELS, [])
    picked = st.session_state.get("chunk_pick")
    if picked in labels:
        st.session_state[_INDEX] = labels.index(picked)


def listed(chunks: list[Chunk], window: LineWindow, selected: int) -> list[int]:
    """The chunks the list offers: those on the lines drawn (every chunk of a file drawn
    whole) and the selected one. Thousands of options cost the browser ~0.2 s per rerun
    (lib.dom.d.ts at max_tokens 128: 4,614 chunks); paging and Find reach the rest."""
    first, last = window.first, window.last
    shown = [i for i, c in enumerate(chunks) if c.end_line >= first and c.start_line <= last]
    return shown if selected in shown else sorted({*shown, selected})


def find_chunk(chunks: list[Chunk], after: int, text: str) -> int | None:
    """The first chunk after ``after`` (wrapping) whose symbol holds ``text`` (any case)."""
    needle = text.casefold()
    hits = [i for i, c in enumerate(chunks) if needle in (c.symbol or "").casefold()]
    return next((i for i in hits if i > after), hits[0]) if hits else None


def symbol_entered() -> None:
    """ "Find a symbol": the next run selects the next chunk whose symbol holds it."""
    text = str(st.session_state.get("chunk_find") or "").strip()
    if text:
        st.session_state[_FIND] = text


def find_missed() -> str | None:
    """The text the last Find looked for in vain, if it did."""
    return st.session_state.get(_MISSED)


def band_clicked() -> None:
    """A band of the code view was clicked: select its chunk."""
    clicked = codeview.clicked_chunk("chunk_view")
    if clicked is not None:
        st.session_state[_INDEX] = clicked


def chunking_change(path: str, config: ChunkConfig, chunks: list[Chunk]) -> str:
    """What the last settings change did to this file's chunks ("" before any change).

    The message stays until the settings or the file change again, so selecting a
    chunk after a slider move does not hide it.
    """
    ss = st.session_state
    last = ss.get("_last_chunking")
    if last is not None and last[0] == path and last[1] != config:
        changes = ", ".join(setting_changes(last[1], config))
        ss["_chunk_diff"] = (path, config, f"{changes}: {diff_chunks(last[2], chunks).summary()}")
    ss["_last_chunking"] = (path, config, chunks)
    shown = ss.get("_chunk_diff")
    return shown[2] if shown and shown[0] == path and shown[1] == config else ""
