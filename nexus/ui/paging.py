"""The window of lines a code view draws of a large file, kept per view between reruns,
and the buttons that move it (``nexus.ui.linewindow`` decides which lines).

Each view (``code`` on Chunks and AST, ``compare`` on Compare) keeps its own window;
a page may anchor it to a line (the selected chunk) so that it follows a selection
made elsewhere, while a slider move or a rerun leaves the reader where they were.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from nexus.ui import linewindow
from nexus.ui.linewindow import LineWindow


@dataclass(frozen=True)
class _Kept:
    path: str
    first: int
    anchor: int | None  # the anchor line of the last run (None after Go to line)
    total: int
    target: int | None = None  # the line last gone to, to scroll to while it is shown


def _name(view: str) -> str:
    return f"_window_{view}"


def window(view: str, path: str, text: str, anchor: int | None = None) -> LineWindow:
    """The lines the view draws: all of a small file; of a large one, the window the
    reader paged to, moved to ``anchor`` when the anchor changed to a line outside it."""
    total = linewindow.line_count(text)
    whole = linewindow.whole_file(total, len(text))
    if whole is not None:
        return whole
    kept = st.session_state.get(_name(view))
    if isinstance(kept, _Kept) and kept.path == path:
        shown = linewindow.window_from(kept.first, total)
        if anchor is not None and kept.anchor != anchor and anchor not in shown:
            shown = linewindow.window_around(anchor, total)
    else:
        shown = linewindow.window_around(anchor or 1, total)
    target = kept.target if isinstance(kept, _Kept) and kept.path == path else None
    st.session_state[_name(view)] = _Kept(path, shown.first, anchor, total, target)
    return shown


def target(view: str) -> int | None:
    """The line the reader last went to, while the window shows it (for scrolling)."""
    kept = st.session_state.get(_name(view))
    if not isinstance(kept, _Kept) or kept.target is None:
        return None
    shown = linewindow.window_from(kept.first, kept.total)
    return kept.target if kept.target in shown else None


def move(view: str, step: str) -> None:
    """A paging button (first | previous | next | last): the window moves."""
    kept = st.session_state.get(_name(view))
    if isinstance(kept, _Kept):
        moved = linewindow.page(linewindow.window_from(kept.first, kept.total), step)
        st.session_state[_name(view)] = _Kept(kept.path, moved.first, kept.anchor, kept.total)


def go_to(view: str, line: int) -> None:
    """Show ``line`` (Go to line, a link to a unit); the page reads it with ``take_goto``."""
    kept = st.session_state.get(_name(view))
    st.session_state[f"_goto_{view}"] = line
    if isinstance(kept, _Kept):
        first = linewindow.window_around(line, kept.total).first
        st.session_state[_name(view)] = _Kept(kept.path, first, None, kept.total, line)


def take_goto(view: str) -> int | None:
    """The line the reader last asked to go to, once (None if they did not)."""
    return st.session_state.pop(f"_goto_{view}", None)


def _line_entered(view: str) -> None:
    line = st.session_state.get(f"{view}_goto")
    if line is not None:
        go_to(view, int(line))
        st.session_state[f"{view}_goto"] = None  # ready for the next line


def controls(view: str, shown: LineWindow, hint: str = "") -> None:
    """First / Previous / Next / Last and "Go to line" above a window of a large file
    (nothing for a file drawn whole)."""
    if shown.whole:
        return
    with st.container(horizontal=True, vertical_alignment="center", key=f"nx_nav_{view}"):
        for step, icon, off in (
            ("first", "first_page", shown.first == 1),
            ("previous", "chevron_left", shown.first == 1),
            ("next", "chevron_right", shown.last == shown.total),
            ("last", "last_page", shown.last == shown.total),
        ):
            st.button(
                step.capitalize(),
                key=f"{view}_{step}",
                icon=f":material/{icon}:",
                on_click=move,
                args=(view, step),
                disabled=off,
            )
        st.number_input(
            "Go to line",
            min_value=1,
            max_value=shown.total,
            value=None,
            step=1,
            key=f"{view}_goto",
            on_change=_line_entered,
            args=(view,),
            placeholder=f"Go to line (1–{shown.total})",
            label_visibility="collapsed",
            width=200,
        )
    st.caption(
        f"{shown.label()} (a large file is drawn {linewindow.WINDOW_LINES} lines at a time"
        + (f"; {hint})" if hint else ")")
    )
