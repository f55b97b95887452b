"""The Chunks page's memory between reruns: which chunk is selected, which lines of
a large file the code view draws, and what the last settings change did to the
file's chunks.

A chunk index alone goes stale when a slider re-chunks the file, so the selection
also keeps the chunk's first line and follows it; the select box is given the
current label on every run, so it never shows a chunk that no longer exists.
"""

from __future__ import annotations

from bisect import bisect_right

import streamlit as st

from nexus.chunkdiff import diff_chunks, setting_changes
from nexus.config import ChunkConfig
from nexus.types import Chunk
from nexus.ui import codeview, linewindow
from nexus.ui.linewindow import LineWindow

_INDEX, _LINE, _LABELS = "chunk_index", "chunk_line", "_chunk_labels"
_WINDOW, _GOTO = "_code_window", "_goto_line"


def pick_chunk(chunks: list[Chunk], path: str, labels: list[str]) -> int:
    """The selected chunk of ``chunks``: the same index when the chunks did not change,
    else the chunk holding the line the old selection started at."""
    ss = st.session_state
    key = (path, tuple(c.id for c in chunks))
    index = int(ss.get(_INDEX, 0))
    goto = ss.pop(_GOTO, None)
    if ss.get("_chunk_key") != key or goto is not None:
        line = ss.get(_LINE) if ss.get("_chunk_path") == path else None
        line = goto if goto is not None else line
        starts = [c.start_line for c in chunks]
        index = max(bisect_right(starts, line) - 1, 0) if line else 0
    index = min(max(index, 0), len(chunks) - 1)
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


def code_window(path: str, chunks: list[Chunk], selected: int, text: str) -> LineWindow:
    """The lines the code view draws: all of a small file; of a large one, the window
    the reader paged to, moved to the selected chunk when another chunk outside it is
    selected (a slider move keeps the reader's place)."""
    total = text.count("\n") + 1
    whole = linewindow.whole_file(total, len(text))
    if whole is not None:
        return whole
    ss = st.session_state
    line = chunks[selected].start_line
    kept = ss.get(_WINDOW)
    if kept is not None and kept[0] == path:
        window = linewindow.window_from(kept[1], total)
        if kept[2] != line and line not in window:
            window = linewindow.window_around(line, total)
    else:
        window = linewindow.window_around(line, total)
    ss[_WINDOW] = (path, window.first, line, total)
    return window


def move_window(step: str) -> None:
    """A paging button: the window of the code view moves (the selection stays)."""
    kept = st.session_state.get(_WINDOW)
    if kept is not None:
        path, first, line, total = kept
        moved = linewindow.page(linewindow.window_from(first, total), step)
        st.session_state[_WINDOW] = (path, moved.first, line, total)


def line_entered() -> None:
    """ "Go to line": select the chunk holding that line and show it."""
    ss = st.session_state
    line, kept = ss.get("goto_line"), ss.get(_WINDOW)
    if line is None:
        return
    ss[_GOTO] = int(line)
    if kept is not None:
        path, _, _, total = kept
        ss[_WINDOW] = (path, linewindow.window_around(int(line), total).first, None, total)
    ss["goto_line"] = None


def window_controls(window: LineWindow) -> None:
    """Paging buttons and "Go to line" above the window of a large file."""
    if window.whole:
        return
    with st.container(horizontal=True, vertical_alignment="center", key="nx_code_nav"):
        for step, icon, off in (
            ("first", "first_page", window.first == 1),
            ("previous", "chevron_left", window.first == 1),
            ("next", "chevron_right", window.last == window.total),
            ("last", "last_page", window.last == window.total),
        ):
            st.button(
                step.capitalize(),
                key=f"code_{step}",
                icon=f":material/{icon}:",
                on_click=move_window,
                args=(step,),
                disabled=off,
            )
        st.number_input(
            "Go to line",
            min_value=1,
            max_value=window.total,
            value=None,
            step=1,
            key="goto_line",
            on_change=line_entered,
            placeholder=f"Go to line (1–{window.total})",
            label_visibility="collapsed",
            width=200,
        )
    st.caption(
        f"{window.label()} (a large file is drawn {linewindow.WINDOW_LINES} lines at a time; "
        "choosing a chunk in the list also moves there)"
    )
