"""The window of lines the code view draws of a large file, and the bands drawn in it."""

from __future__ import annotations

import re

import pytest
from helpers import make_chunk

from nexus.ui import render
from nexus.ui.linewindow import (
    LEAD_LINES,
    WHOLE_FILE_BYTES,
    WHOLE_FILE_LINES,
    LineWindow,
    line_count,
    page,
    whole_file,
    window_around,
    window_from,
)


def test_a_small_file_is_drawn_whole_and_a_large_one_is_not() -> None:
    assert whole_file(10, 300) == LineWindow(1, 10, 10)
    assert whole_file(0, 0) == LineWindow(1, 1, 1)  # an empty file still has line 1
    assert whole_file(WHOLE_FILE_LINES + 1, 1000) is None
    assert whole_file(50, WHOLE_FILE_BYTES + 1) is None  # a few very long lines


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", 0),
        ("\n", 1),  # one empty line
        ("a", 1),
        ("a\n", 1),  # a final newline ends the line, it does not start another
        ("a\nb", 2),
        ("a\nb\n", 2),
        ("a\n\n", 2),  # an empty last line is a line
    ],
)
def test_lines_are_counted_as_an_editor_numbers_them(text: str, lines: int) -> None:
    assert line_count(text) == lines


@pytest.mark.parametrize(
    ("first", "total", "expected"),
    [
        (1, 1000, (1, 100)),
        (-5, 1000, (1, 100)),
        (950, 1000, (901, 1000)),  # the last page is full
        (5000, 1000, (901, 1000)),
        (1, 30, (1, 30)),  # a file shorter than a window
    ],
)
def test_window_from_stays_inside_the_file(first, total, expected) -> None:
    window = window_from(first, total, size=100)
    assert (window.first, window.last) == expected and window.total == total


def test_window_around_a_line_shows_lines_above_it() -> None:
    window = window_around(500, 10_000, size=400)
    assert window.first == 500 - LEAD_LINES and 500 in window and 499 in window
    assert window_around(3, 10_000, size=400).first == 1


def test_paging_covers_the_file_and_stops_at_both_ends() -> None:
    window = window_from(1, 1234, size=100)
    seen = set(range(window.first, window.last + 1))
    while window.last < window.total:
        moved = page(window, "next", size=100)
        assert moved.first > window.first and moved.first <= window.last + 1  # no gap
        window = moved
        seen |= set(range(window.first, window.last + 1))
    assert seen == set(range(1, 1235))
    assert page(window, "next", size=100) == window
    assert page(window, "first", size=100).first == 1
    assert page(page(window, "first", size=100), "previous", size=100).first == 1
    assert page(window_from(1, 1234, size=100), "last", size=100).last == 1234
    with pytest.raises(ValueError, match="first, previous, next or last"):
        page(window, "sideways")


def test_window_label_reads_as_text() -> None:
    assert window_from(1201, 39_430, size=400).label() == "Lines 1,201–1,600 of 39,430"


def test_band_view_draws_only_the_window_and_labels_a_chunk_begun_above_it() -> None:
    lines = [f"line {n}" for n in range(1, 101)]
    chunks = [
        make_chunk("a", start=1, end=40, symbol="first"),
        make_chunk("b", start=41, end=100, symbol="second"),
    ]
    pane = render.Pane("AST", chunks, clickable=True)
    html = render.band_view(lines, pane, window=window_from(51, 100, size=20))
    numbers = [int(n) for run in re.findall(r'nx-pre">([\d\n]+)<', html) for n in run.split()]
    assert numbers == list(range(51, 71))
    assert "line 50<" not in html and "line 71<" not in html
    assert html.count('class="nx-label"') == 1 and "<b>second</b>" in html  # began at L41
    assert 'data-chunk="1"' in html and 'data-chunk="0"' not in html
    assert render.band_view(lines, pane) == render.band_view(lines, pane, window=None)


def test_the_chunk_list_offers_the_chunks_drawn_and_the_selected_one() -> None:
    from nexus.ui.tuning import find_chunk, listed

    chunks = [
        make_chunk(f"c{i}", start=10 * i + 1, end=10 * i + 10, symbol=f"Name{i}") for i in range(9)
    ]
    assert listed(chunks, window_from(25, 90, size=20), selected=0) == [0, 2, 3, 4]
    assert listed(chunks, whole_file(90, 900), selected=5) == list(range(9))
    assert find_chunk(chunks, 3, "name") == 4  # the next match after the selection
    assert find_chunk(chunks, 8, "NAME") == 0  # wraps around
    assert find_chunk(chunks, 0, "missing") is None
