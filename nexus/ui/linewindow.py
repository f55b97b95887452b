"""Which lines of a file the code view draws: all of a small file, a window of a large one.

Drawing every line of ``lib.dom.d.ts`` (39,430 lines, 8 MB of highlighted HTML) cost
the browser 4-10 s of layout on every slider move (bench/dashboard/first_answer.py's slider
case). A window of a few hundred lines costs what a small file costs, whatever the
file's size; the page pages it and moves it to the selected chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Files up to this many lines (and bytes) are drawn whole: the samples' largest file
#: (1,033 lines) settles in ~0.4 s (bench/dashboard/ui_latency.py).
WHOLE_FILE_LINES = 2_000
WHOLE_FILE_BYTES = 250_000
#: Lines in the window of a larger file, and how many of them lie above the line it
#: is opened at (so the chunk before the selected one shows too).
WINDOW_LINES = 400
LEAD_LINES = 40


@dataclass(frozen=True)
class LineWindow:
    """Lines ``first``..``last`` (1-based, inclusive) of a file of ``total`` lines."""

    first: int
    last: int
    total: int

    @property
    def whole(self) -> bool:
        return self.first == 1 and self.last == self.total

    def __contains__(self, line: int) -> bool:
        return self.first <= line <= self.last

    def label(self) -> str:
        """``Lines 1,201–1,600 of 39,430``."""
        return f"Lines {self.first:,}–{self.last:,} of {self.total:,}"


def line_count(text: str) -> int:
    """Lines as an editor numbers them: a final newline ends the last line, it does not
    start one more (hono's ``src/types.ts``, 2,778 lines, was said to have 2,779)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def whole_file(total: int, size_bytes: int) -> LineWindow | None:
    """The window of the whole file when it is small enough to draw at once, else None."""
    if total <= WHOLE_FILE_LINES and size_bytes <= WHOLE_FILE_BYTES:
        return LineWindow(1, max(total, 1), max(total, 1))
    return None


def window_from(first: int, total: int, size: int = WINDOW_LINES) -> LineWindow:
    """``size`` lines from ``first``, moved back from the end so the last page is full."""
    total = max(total, 1)
    first = max(1, min(first, total - size + 1))
    return LineWindow(first, min(total, first + size - 1), total)


def window_around(line: int, total: int, size: int = WINDOW_LINES) -> LineWindow:
    """The window that shows ``line`` with ``LEAD_LINES`` above it."""
    return window_from(line - min(LEAD_LINES, size // 4), total, size)


def page(window: LineWindow, step: str, size: int = WINDOW_LINES) -> LineWindow:
    """The window after ``step`` (first | previous | next | last); pages overlap by a
    few lines so the reader keeps their place."""
    overlap = min(LEAD_LINES // 4, size // 4)
    starts = {
        "first": 1,
        "previous": window.first - size + overlap,
        "next": window.first + size - overlap,
        "last": window.total,
    }
    if step not in starts:
        raise ValueError(f"unknown step {step!r}: first, previous, next or last")
    return window_from(starts[step], window.total, size)
