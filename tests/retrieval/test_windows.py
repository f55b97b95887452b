"""Result windows: neighbouring chunks of one file gathered into one exact hit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nexus.retrieval.ranking import RankingRules, hit_chunk, rank
from nexus.retrieval.windows import clip, join, joinable, window_chunk
from tests import helpers

SOURCE = (
    "def parse(text):\n"  # 1
    "    return split(text)\n"  # 2
    "\n"  # 3
    "def split(text):\n"  # 4
    "    return text.split()\n"  # 5
    "\n"  # 6
    "def render(items):\n"  # 7
    "    return ' '.join(items)\n"  # 8
)


def _slice(chunk_id: str, first: int, last: int, file: str = "src/text.py", **fields):
    """A chunk that is exactly lines ``first``-``last`` of ``SOURCE`` (no final newline)."""
    lines = SOURCE.splitlines(keepends=True)
    start = len("".join(lines[: first - 1]).encode())
    text = "".join(lines[first - 1 : last]).removesuffix("\n")
    return helpers.make_chunk(
        chunk_id, file, first, last, start_byte=start, end_byte=start + len(text.encode()),
        text=text, symbol=chunk_id, symbols=(chunk_id,), **fields,
    )  # fmt: skip


PARSE, SPLIT, RENDER = _slice("parse", 1, 2), _slice("split", 4, 5), _slice("render", 7, 8)


def test_a_window_is_exactly_the_files_slice() -> None:
    window = join(join(PARSE, SPLIT), RENDER)
    assert window.text == SOURCE.removesuffix("\n")
    assert (window.start_line, window.end_line) == (1, 8)
    assert window.text.encode() == SOURCE.encode()[window.start_byte : window.end_byte]
    assert window.symbols == ("parse", "split", "render")


def test_overlapping_chunks_join_on_their_shared_bytes() -> None:
    first, second = _slice("a", 1, 5), _slice("b", 4, 8)
    assert joinable(first, second)
    assert join(first, second).text == SOURCE.removesuffix("\n")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (PARSE, RENDER),  # a chunk between them is not in the window
        (SPLIT, PARSE),  # out of file order
        (PARSE, _slice("split", 4, 5, file="src/other.py")),  # another file
        (PARSE, helpers.make_chunk("made", "src/text.py", 4, 5)),  # text not its byte span
    ],
)
def test_only_exact_neighbours_join(first, second) -> None:
    assert not joinable(first, second)


def test_the_top_k_holds_k_places_and_each_hit_shows_its_window() -> None:
    chunks = [PARSE, SPLIT, RENDER, _slice("elsewhere", 1, 2, file="src/b.py")]
    dense, keyword = np.array([0.8, 0.9, 0.7, 0.6]), np.zeros(4)
    # a window takes every neighbour, whatever the answer costs (no answer budget)
    any_neighbour = RankingRules(window_share=0.0, answer_lines=0)
    ranked = rank(chunks, dense, keyword, "how is text split", 2, any_neighbour)
    shown = [hit_chunk(chunks, r) for r in ranked]
    assert [(c.file, c.start_line, c.end_line) for c in shown] == [
        ("src/text.py", 1, 8),
        ("src/b.py", 1, 2),
    ]
    assert shown[0].symbol == "split"  # the best-scored chunk names the window
    alone = rank(chunks, dense, keyword, "how is text split", 2, RankingRules(window_lines=0))
    assert [hit_chunk(chunks, r).id for r in alone] == ["split", "parse"]


def test_a_window_headed_by_module_code_is_named_after_its_unit() -> None:
    module = replace(_slice("tail", 7, 8), symbol=None, symbols=())
    chunks = [PARSE, SPLIT, module]
    window = window_chunk(chunks, 2, (1, 2))  # the module lines scored best
    assert (window.symbol, window.start_line, window.end_line) == ("split", 4, 8)
    assert window_chunk(chunks, 1, (1, 2)).symbol == "split"
    assert window_chunk([module], 0, (0,)).symbol is None  # nothing else to name it


def test_a_clipped_chunk_is_the_files_slice_of_its_lines() -> None:
    window = join(join(PARSE, SPLIT), RENDER)
    cut = clip(window, 4, 5)
    assert (cut.start_line, cut.end_line, cut.text) == (4, 5, SPLIT.text)
    assert cut.text.encode() == SOURCE.encode()[cut.start_byte : cut.end_byte]
    assert clip(window, 1, 8) is window
