"""Hit selection: pieces of one unit are one hit, windows grow within the budget, the first
hit takes in its strong neighbours, and no line is shown twice in one answer."""

from __future__ import annotations

from dataclasses import replace
from functools import reduce

import numpy as np

from nexus.retrieval import selection
from nexus.retrieval.candidates import Candidates
from nexus.retrieval.lexical import terms
from nexus.retrieval.ranking import Ranked, RankingRules, hit_chunk, rank
from nexus.retrieval.rescore import rescore, rescore_texts
from nexus.retrieval.search import hit_record, ranked_hits
from nexus.retrieval.selection import Selected, Selection, matched_lines, select
from tests import helpers

SOURCE = "".join(f"line {n}\n" for n in range(1, 41))


def _slice(chunk_id: str, first: int, last: int, file: str = "src/a.py", **fields):
    """A chunk that is exactly lines ``first``-``last`` of ``SOURCE`` (no final newline)."""
    lines = SOURCE.splitlines(keepends=True)
    start = len("".join(lines[: first - 1]).encode())
    text = "".join(lines[first - 1 : last]).removesuffix("\n")
    fields.setdefault("symbol", chunk_id)
    return helpers.make_chunk(
        chunk_id, file, first, last, start_byte=start, end_byte=start + len(text.encode()),
        text=text, **fields,
    )  # fmt: skip


def _piece(n: int, first: int, last: int):
    return _slice(f"run-{n}", first, last, symbol="Runner.run", symbol_kind="method")


#: One method cut into three pieces (lines 1-30), then two other units of the file.
RUN = [_piece(1, 1, 10), _piece(2, 11, 20), _piece(3, 21, 30)]
CHUNKS = [*RUN, _slice("stop", 31, 35), _slice("close", 36, 40), _slice("b", 1, 4, "src/b.py")]
#: One lever at a time: no windows, every line of a hit, lines shown twice allowed.
NO_WINDOWS = reduce(
    RankingRules.without,
    (
        "result windows",
        "hits cut to matched lines",
        "distinct lines",
        "lead hit's neighbours",
        "top 10's line cap",
    ),
    RankingRules(),
)


def _shown(rules: RankingRules, dense: list[float], k: int = 3) -> list[tuple[str, int, int]]:
    scores = np.array(dense)
    found = rank(CHUNKS, scores, np.zeros(len(CHUNKS)), "how does the runner run", k, rules)
    return [(c.file, c.start_line, c.end_line) for c in (hit_chunk(CHUNKS, r) for r in found)]


def test_a_unit_split_in_three_is_one_hit() -> None:
    dense = [0.9, 0.85, 0.8, 0.1, 0.1, 0.5]
    assert _shown(NO_WINDOWS, dense) == [
        ("src/a.py", 1, 10),
        ("src/a.py", 11, 20),
        ("src/a.py", 21, 30),
    ]
    merged = _shown(replace(NO_WINDOWS, piece_lines=80), dense)
    assert merged == [("src/a.py", 1, 30), ("src/b.py", 1, 4), ("src/a.py", 31, 35)]


def test_pieces_join_only_within_their_line_cap_and_their_unit() -> None:
    dense = [0.9, 0.85, 0.8, 0.7, 0.1, 0.5]
    capped = _shown(replace(NO_WINDOWS, piece_lines=20), dense)
    assert capped[0] == ("src/a.py", 1, 20)  # the third piece would pass 20 lines
    assert ("src/a.py", 31, 35) not in capped[:1]  # another unit never joins as a piece


def test_windows_grow_only_with_the_lines_the_hits_leave(monkeypatch) -> None:
    monkeypatch.setattr(selection, "ANSWER_HITS", 2)  # an answer of two hits shown
    order = [3, 5, 2, 4]  # stop, b, then their neighbours
    scores = [0.0, 0.0, 0.9, 1.0, 0.9, 0.95]
    roomy = Selection(window_lines=80, window_share=0.5, answer_lines=40)
    assert select(order, CHUNKS, 2, scores, roomy) == [Selected(3, (2, 3, 4)), Selected(5, (5,))]
    tight = Selection(window_lines=80, window_share=0.5, answer_lines=15)  # 6 lines left
    assert select(order, CHUNKS, 2, scores, tight) == [Selected(3, (3, 4)), Selected(5, (5,))]


def test_the_first_hit_takes_in_its_strong_neighbours_only() -> None:
    order = [3, 5, 4, 2]  # stop, b, close (after stop), run-3 (before stop)
    scores = [0.0, 0.0, 0.5, 1.0, 0.7, 0.9]
    lead = Selection(window_share=0.6, lead_lines=80)
    # close scores 0.7 of stop and joins it; run-3 (0.5) and b (another file) stay hits
    assert select(order, CHUNKS, 3, scores, lead) == [
        Selected(3, (3, 4)),
        Selected(5, (5,)),
        Selected(2, (2,)),
    ]
    # only the first hit grows: with b first, close stays a hit of its own beside stop
    assert select([5, 3, 4], CHUNKS, 3, scores, lead) == [
        Selected(5, (5,)),
        Selected(3, (3,)),
        Selected(4, (4,)),
    ]
    # within its line cap: stop and close together are 10 lines
    assert select(order, CHUNKS, 2, scores, replace(lead, lead_lines=9))[0] == Selected(3, (3,))
    assert select(order, CHUNKS, 2, scores, replace(lead, lead_lines=0))[0] == Selected(3, (3,))


def test_the_first_hit_takes_in_its_own_units_pieces_within_a_longer_cap() -> None:
    scores = [0.9, 1.0, 0.9, 0.9, 0.0, 0.0]
    lead = Selection(window_share=0.6, lead_lines=10, lead_unit_lines=30)
    # run-3 is a piece of run-2's unit: 20 lines together, within 30; stop (another
    # unit) would make 25, over the 10 of any neighbour, so it stays a hit of its own
    assert select([1, 2, 3], CHUNKS, 3, scores, lead) == [
        Selected(1, (1, 2)),
        Selected(3, (3,)),
    ]
    assert select([1, 2, 3], CHUNKS, 3, scores, replace(lead, lead_unit_lines=0)) == [
        Selected(1, (1,)),
        Selected(2, (2,)),
        Selected(3, (3,)),
    ]


def test_a_symbol_querys_first_hit_takes_in_its_own_units_pieces_only() -> None:
    """A name asks for its definition: a symbol query's hits get no windows, and the first
    takes in the other pieces of its own unit but no neighbour of another unit."""
    symbol = RankingRules().for_symbol().selection()
    assert (symbol.window_lines, symbol.lead_lines, symbol.lead_unit_lines) == (0, 0, 120)
    windowed = RankingRules(symbol_hits_alone=False)
    assert windowed.for_symbol() == windowed
    scores = [0.9, 1.0, 0.9, 0.9, 0.0, 0.0]
    pieces_only = replace(symbol, lead_unit_lines=30)
    # run-3 (a piece of run-2's unit) joins; stop, next to it and as strong, does not
    assert select([1, 2, 3], CHUNKS, 3, scores, pieces_only) == [
        Selected(1, (1, 2)),
        Selected(3, (3,)),
    ]
    dense = np.array([0.9, 0.85, 0.8, 0.1, 0.1, 0.5])
    found = rank(CHUNKS, dense, np.zeros(len(CHUNKS)), "Runner.run", 3, RankingRules())
    first = hit_chunk(CHUNKS, found[0])
    assert (first.start_line, first.end_line) == (1, 30)


def test_fewer_hits_asked_are_the_first_hits_of_more(monkeypatch) -> None:
    """A budget reads deeper than ``k``: its first hits (and their windows) must be the
    answer of ``k``, so the answer budget counts the same top hits whatever ``k`` is."""
    order = [3, 5, 2, 4, 0, 1]
    scores = [0.2, 0.1, 0.9, 1.0, 0.9, 0.95]
    rules = Selection(window_lines=80, window_share=0.5, answer_lines=40)
    deep = select(order, CHUNKS, 6, scores, rules)
    assert [select(order, CHUNKS, k, scores, rules) for k in (1, 2, 3)] == [
        deep[:1],
        deep[:2],
        deep[:3],
    ]
    # The first hit takes in its neighbours only while the shown top hits fill: run-3
    # comes third, after the top two, so it joins stop in no answer, however deep.
    monkeypatch.setattr(selection, "ANSWER_HITS", 2)
    lead = Selection(window_lines=80, window_share=0.5, answer_lines=1, lead_lines=80)
    deep = select(order, CHUNKS, 6, scores, lead)
    assert deep[0] == Selected(3, (3,))
    assert [select(order, CHUNKS, k, scores, lead) for k in (1, 2)] == [deep[:1], deep[:2]]


def test_no_line_appears_in_two_hits_of_one_answer() -> None:
    overlapping = [_slice("w1", 1, 20), _slice("w2", 16, 35), _slice("w3", 5, 15)]
    scores = np.array([0.9, 0.8, 0.7])
    for rules, expect_overlap in (
        (NO_WINDOWS, True),
        (replace(NO_WINDOWS, distinct_lines=True), False),
    ):
        found = rank(overlapping, scores, np.zeros(3), "runner", 3, rules)
        shown = [hit_chunk(overlapping, r) for r in found]
        lines = [n for c in shown for n in range(c.start_line, c.end_line + 1)]
        assert (len(lines) != len(set(lines))) is expect_overlap
    assert [(c.start_line, c.end_line) for c in shown] == [(1, 20), (21, 35)]
    assert shown[1].text == "\n".join(f"line {n}" for n in range(21, 36))
    # ... and the second hit says it shows part of its chunk.
    candidates = Candidates(np.arange(3), tuple(overlapping), scores, np.zeros(3))
    assert [hit.trimmed_from for hit in ranked_hits(candidates, found)] == [None, (16, 35)]


def test_a_long_hit_shows_the_lines_that_hold_the_query_words() -> None:
    text = "\n".join(["def run(self):", *(["    pass"] * 10), "    cookie = parse(header)"])
    chunk = helpers.make_chunk("run", "src/a.py", 1, 12, text=text)
    assert matched_lines(chunk, frozenset(terms("parse the cookie")), 4) == (9, 12)
    assert matched_lines(chunk, frozenset(terms("run")), 4) == (1, 4)  # its signature
    assert matched_lines(chunk, frozenset(terms("anything")), 20) == (1, 12)


def test_a_cut_hit_keeps_the_first_line_of_the_unit_that_ranked() -> None:
    text = "\n".join(["def run(self):", *(["    pass"] * 10), "    cookie = parse(header)"])
    chunk = helpers.make_chunk("run", "src/a.py", 1, 12, text=text)
    assert matched_lines(chunk, frozenset(terms("parse the cookie")), 4, anchor=1) == (1, 4)
    assert matched_lines(chunk, frozenset(terms("parse the cookie")), 4, anchor=9) == (9, 12)


def _unit(name: str, n_lines: int, marked: range = range(0)):
    """A unit of ``n_lines`` lines alone in its file; ``marked`` lines hold the query's words."""
    lines = [
        f"    cookie_header = {n}" if n in marked else f"    x = {n}" for n in range(1, n_lines + 1)
    ]
    text = "\n".join([f"def {name}():", *lines[1:]])
    return helpers.make_chunk(
        name, f"src/{name}.py", 1, n_lines, end_byte=len(text.encode()), text=text,
        language="python", symbol=name, symbol_kind="function",
    )  # fmt: skip


def test_the_top_10_are_trimmed_from_the_4th_hit_longest_first_within_their_line_cap() -> None:
    sizes = [30, 30, 30, 40, 60, 22, 22, 22, 22, 22]  # 300 lines in the top 10
    units = [_unit(f"u{i}", n, range(41, 46) if n == 60 else range(0)) for i, n in enumerate(sizes)]
    scores = np.linspace(1.0, 0.5, len(units))
    rules = replace(NO_WINDOWS, top_lines=245, trim_lines=20, trim_from=4)
    found = rank(units, scores, np.zeros(len(units)), "cookie header", 10, rules)
    shown = [hit_chunk(units, r) for r in found]
    # The 60-line unit goes first (to 260 lines), then the 40-line one (240 <= 245): the
    # first three and the rest stay whole.
    assert [c.n_lines for c in shown] == [30, 30, 30, 20, 20, 22, 22, 22, 22, 22]
    # The earliest 20-line run holding all the query's words, and for a unit without them
    # its signature.
    assert (shown[4].start_line, shown[4].end_line) == (26, 45)
    assert (shown[3].start_line, shown[3].end_line) == (1, 20)
    # Asked for fewer, the answer is the first hits of the capped 10.
    assert rank(units, scores, np.zeros(len(units)), "cookie header", 5, rules) == found[:5]
    # Without the cap every hit is whole.
    whole = rank(units, scores, np.zeros(len(units)), "cookie header", 10, NO_WINDOWS)
    assert [hit_chunk(units, r).n_lines for r in whole] == sizes


def test_re_scoring_keeps_the_top_10_within_their_line_cap() -> None:
    # Eleven short units, then a 60-line one that re-scoring moves up from the 12th place.
    sizes = [10] * 11 + [60]
    units = [_unit(f"u{i}", n, range(41, 46) if n == 60 else range(0)) for i, n in enumerate(sizes)]
    candidates = Candidates(
        np.arange(len(units)), tuple(units), np.linspace(1.0, 0.5, len(units)), np.zeros(len(units))
    )
    rules = replace(NO_WINDOWS, top_lines=120, trim_lines=20, trim_from=4)
    found = ranked_hits(
        candidates, rank(units, candidates.dense, candidates.keyword, "cookie header", 12, rules)
    )
    assert [hit.chunk.n_lines for hit in found] == sizes  # 100 lines in the fast top 10
    cosines = [0.1] * 11 + [1.0]
    moved = rescore(found, cosines, "cookie header", rules)
    assert moved[0].head is None and moved[0].chunk == units[11]  # the first hits stay whole
    # Moved to the 4th place instead, it shows its 20 lines with the query's words.
    late = rescore(found, [0.9, 0.8, 0.7] + [0.1] * 8 + [0.65], "cookie header", rules)
    assert late[3].head == units[11] and late[3].trimmed_from == (1, 60)
    assert (late[3].chunk.start_line, late[3].chunk.end_line) == (26, 45)
    assert sum(hit.chunk.n_lines for hit in late[:10]) <= 120
    # Without the cap it shows all 60.
    whole = rescore(found, [0.9, 0.8, 0.7] + [0.1] * 8 + [0.65], "cookie header", NO_WINDOWS)
    assert whole[3].chunk == units[11] and whole[3].head is None


def test_a_trimmed_window_says_which_lines_it_would_show_whole() -> None:
    # stop (31-35) ranked with its neighbours run-3 and close (21-40), trimmed to 28-37:
    # the chunk that ranked is shorter than what is shown, the window is not.
    candidates = Candidates(np.arange(len(CHUNKS)), tuple(CHUNKS), np.ones(6), np.zeros(6))
    trimmed = Ranked(3, 1.0, (), window=(2, 3, 4), shown=(28, 37))
    [hit] = ranked_hits(candidates, [trimmed])
    assert (hit.chunk.start_line, hit.chunk.end_line) == (28, 37) and hit.head == CHUNKS[3]
    assert hit.trimmed_from == (21, 40) and hit_record(hit)["trimmed_from"] == [21, 40]
    [whole] = ranked_hits(candidates, [Ranked(3, 1.0, (), window=(2, 3, 4))])
    assert whole.trimmed_from is None and whole.chunk.n_lines == 20


def test_a_trimmed_hit_is_re_scored_by_the_chunk_that_ranked() -> None:
    units = [_unit(f"u{i}", n) for i, n in enumerate([30, 30, 30, 80])]
    candidates = Candidates(np.arange(4), tuple(units), np.linspace(1.0, 0.7, 4), np.zeros(4))
    rules = replace(NO_WINDOWS, top_lines=100, trim_lines=20)
    ranked = rank(units, candidates.dense, candidates.keyword, "run", 4, rules)
    found = ranked_hits(candidates, ranked)
    assert found[3].chunk.n_lines == 20 and found[3].head == units[3]
    assert rescore_texts(found)[3] == units[3].embedding_text
    # What a reader is told: the lines shown, and the unit's own.
    assert hit_record(found[3])["trimmed_from"] == [1, 80]
    assert found[0].trimmed_from is None and "trimmed_from" not in hit_record(found[0])
