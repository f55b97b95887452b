"""The Chunks page's memory between reruns: which chunk is selected (also after
"Go to line"), and what the last settings change did to the file's chunks.

A chunk index alone goes stale when a slider re-chunks the file, so the selection
also keeps what the user chose: the chunk's unit (its symbol) and first line, or the
line gone to. A re-chunk selects the chunk of that unit holding that line, else the
chunk holding the line; the anchor moves only when the user chooses again, so slider
moves never walk the selection away (re-anchoring on each new chunk's first line moved
``Hono.constructor`` L127 to L89-125 in three moves). The select box is given the
current label on every run, so it never shows a chunk that no longer exists. A link
carries the anchor (``unit``, ``line``).
"""

from __future__ import annotations

from bisect import bisect_right

import streamlit as st

from nexus.chunking.chunkdiff import diff_chunks, setting_changes
from nexus.config import ChunkConfig
from nexus.types import Chunk
from nexus.ui import codeview, paging
from nexus.ui.linewindow import LineWindow

_INDEX, _SHOWN, _LABELS = "chunk_index", "_chunk_shown", "_chunk_labels"
#: ``(path, symbol, line)``: the unit (or, without one, the line) the user chose.
_ANCHOR = "_chunk_anchor"
#: Session keys a link's ``unit`` and ``line`` are copied to (``links.URL_KEYS``).
LINK_UNIT, LINK_LINE = "_link_unit", "_link_line"
_FIND, _MISSED = "_chunk_find", "_chunk_find_missed"
#: The code view's name for ``nexus.ui.paging`` (its widget keys start with it).
VIEW = "code"


def pick_chunk(chunks: list[Chunk], path: str, labels: list[str]) -> int:
    """The selected chunk of ``chunks``: the same index when the chunks did not change,
    else the chunk of the unit or line the user chose (``follow``)."""
    ss = st.session_state
    key = (path, tuple(c.id for c in chunks))
    anchor = ss.get(_ANCHOR)
    if anchor is None or anchor[0] != path:
        anchor = _link_anchor(path)
    goto = paging.take_goto(VIEW)
    if goto is not None:
        index, anchor = follow(chunks, None, goto), (path, None, goto)
    elif ss.get("_chunk_key") != key:
        index = follow(chunks, anchor[1], anchor[2]) if anchor else 0
    else:
        index = min(max(int(ss.get(_INDEX, 0)), 0), len(chunks) - 1)
        if index != ss.get(_SHOWN):  # chosen in the list or by a click
            anchor = None
    find = ss.pop(_FIND, None)
    if find is not None:
        found = find_chunk(chunks, index, find)
        ss[_MISSED] = None if found is not None else find
        if found is not None:
            index, anchor = found, None
    if anchor is None:
        anchor = (path, chunks[index].symbol, chunks[index].start_line)
    ss["_chunk_key"], ss[_ANCHOR] = key, anchor
    ss[_INDEX], ss[_SHOWN], ss[_LABELS] = index, index, labels
    ss["chunk_pick"] = labels[index]
    return index


def follow(chunks: list[Chunk], symbol: str | None, line: int) -> int:
    """The chunk of unit ``symbol`` that holds ``line`` (or is nearest to it); without
    one, the chunk holding ``line``, else the first one after it."""
    own = [i for i, c in enumerate(chunks) if symbol is not None and c.symbol == symbol]
    if own:
        return min(own, key=lambda i: _distance(chunks[i], line))
    starts = [c.start_line for c in chunks]
    index = max(bisect_right(starts, line) - 1, 0)
    if chunks[index].end_line < line and index + 1 < len(chunks):
        index += 1  # the line sits between two chunks (blank lines): the one after it
    return index


def _distance(chunk: Chunk, line: int) -> int:
    """Lines from ``line`` to the chunk (0 inside it)."""
    return max(chunk.start_line - line, line - chunk.end_line, 0)


def _link_anchor(path: str) -> tuple[str, str | None, int] | None:
    """The unit and line a link selects (once), when it opened on this file."""
    ss = st.session_state
    line = ss.pop(LINK_LINE, None)
    symbol = ss.pop(LINK_UNIT, None)
    if line is None or ss.get("file") != path:
        return None
    return path, symbol or None, int(line)


def link_params() -> dict[str, object]:
    """What a link to this page adds: the selected chunk's unit and line."""
    anchor = st.session_state.get(_ANCHOR)
    if anchor is None:
        return {}
    return {"unit": anchor[1], "line": anchor[2]}


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
