"""Hit selection: which ranked candidates become the ``k`` hits, and which lines each shows.

A reader pays for every line of an answer, so the ranking stage's order is turned into
hits under these rules (weights in ``nexus.retrieval.rules.RankingRules``):

- **pieces of one unit are one hit** (``piece_lines``): a function that outgrew the chunk
  budget is cut into pieces; a piece next to a hit of the same unit joins that hit
  instead of taking another of the ``k`` places;
- **windows only where the budget leaves room** (``window_lines``, ``window_share``,
  ``answer_lines``): a hit gathers its neighbouring candidates (chunks next to it that the
  query also retrieved, nearly as good as it) into a window of at most ``window_lines``;
  with ``answer_lines`` the windows of the first ``ANSWER_HITS`` hits grow only with the
  lines those hits leave of it, best neighbours first;
- **no line shown twice** (``distinct_lines``): a candidate whose lines an earlier hit
  shows is skipped, and a hit that shares its first or last lines with an earlier one
  (chunks cut inside a line share it) shows only the rest.

- **the first hit takes in its strong neighbours** (``lead_lines``): while the top hits
  fill, a candidate next to the first hit that scores at least ``window_share`` of it
  joins that hit (within ``lead_lines``) instead of taking another place: the best
  answer often spans two chunks (a function and the helper cut from it, a doc-less
  method and its class), and a reader of only the first hit then sees both. Pieces of
  its own unit join within ``lead_unit_lines``; with ``lead_lines`` 0 only they do.

- **long hits cut to the lines that matched** (``hit_lines``): a hit longer than that shows
  the run of ``hit_lines`` lines that holds the most query words, the earliest of equals
  (a unit's signature names it, so it usually stays). Keeping the first line of the chunk
  that ranked whatever the words (``matched_lines``' ``anchor``) measured worse: one
  symbol question lost on the tuning half.

A window's text is exactly its file's slice (``nexus.retrieval.windows``), and a hit cut
to some of its lines is the slice of those lines (``clip``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nexus.retrieval.lexical import terms
from nexus.retrieval.windows import joinable
from nexus.types import Chunk

#: The hits whose lines ``answer_lines`` counts: the top 10 a reader is shown (the
#: budgets read deeper are scored as the reader gets them: ``nexus.retrieval.budget``).
ANSWER_HITS = 10


@dataclass(frozen=True)
class Selection:
    """What selection may do: each field as in ``RankingRules`` (0 or False: off)."""

    window_lines: int = 0
    window_share: float = 0.0
    piece_lines: int = 0
    answer_lines: int = 0
    distinct_lines: bool = False
    lead_lines: int = 0
    lead_unit_lines: int = 0


@dataclass(frozen=True)
class Selected:
    """One hit: the key that ranked (``head``), every key it shows in file order, and the
    lines it shows when they are fewer than its chunks hold (``shown``; None: all)."""

    head: int
    keys: tuple[int, ...]
    shown: tuple[int, int] | None = None


@dataclass
class _Hit:
    head: int
    low: int
    high: int
    start_line: int
    end_line: int
    keys: list[int] = field(default_factory=list)

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1


def same_unit(first: Chunk, second: Chunk) -> bool:
    """Whether two chunks of a file are pieces of one unit (its symbol path and kind)."""
    return (
        first.file == second.file
        and first.symbol is not None
        and first.symbol == second.symbol
        and first.symbol_kind == second.symbol_kind
    )


def select(
    order: Sequence[int],
    chunks: Sequence[Chunk],
    k: int,
    scores: Sequence[float],
    rules: Selection,
) -> list[Selected]:
    """The ``k`` best hits of candidates ``order``ed best first (``scores`` per key).

    With ``answer_lines`` the top ``ANSWER_HITS`` are chosen and given their windows
    whatever ``k`` is, so an answer of 5 hits is the first 5 of an answer of 50 (a budget
    that reads deeper than ``k`` reads the same hits first)."""
    budgeted = bool(rules.answer_lines and rules.window_lines)
    depth = max(k, ANSWER_HITS) if budgeted else k
    hits: list[_Hit] = []
    classic_windows = rules.window_lines > 0 and not rules.answer_lines
    joins = bool(rules.piece_lines) or classic_windows
    for key in order:
        if len(hits) >= depth and not joins:
            break  # nothing later can join a hit or become one
        chunk = chunks[key]
        if _joins_lead(hits, key, min(depth, ANSWER_HITS), chunks, scores, rules):
            _extend(hits[0], key, chunk)
            continue
        if _join(hits, key, chunks, scores, rules, classic_windows):
            continue
        if len(hits) >= depth or (rules.distinct_lines and _shown_already(hits, chunk, chunks)):
            continue
        hits.append(_Hit(key, key, key, chunk.start_line, chunk.end_line, [key]))
    if budgeted:
        top = hits[:ANSWER_HITS]
        shown = {key for hit in top for key in hit.keys}
        _grow_within_budget(top, order, shown, chunks, scores, rules)
        hits = top + [hit for hit in hits[ANSWER_HITS:] if not shown & set(hit.keys)]
    selected = [Selected(h.head, tuple(sorted(h.keys))) for h in hits[:k]]
    return _distinct(selected, chunks) if rules.distinct_lines else selected


def _span_with(hit: _Hit, key: int, chunks: Sequence[Chunk]) -> int | None:
    """The lines ``hit`` would span with ``key`` when ``key`` directly extends it (the
    chunk after its last or before its first) and the two may join; None otherwise."""
    if key == hit.high + 1:
        before, after = hit.high, key
    elif key == hit.low - 1:
        before, after = key, hit.low
    else:
        return None
    if not joinable(chunks[before], chunks[after]):
        return None
    chunk = chunks[key]
    return max(hit.end_line, chunk.end_line) - min(hit.start_line, chunk.start_line) + 1


def _joins_lead(
    hits: list[_Hit],
    key: int,
    filling: int,
    chunks: Sequence[Chunk],
    scores: Sequence[float],
    rules: Selection,
) -> bool:
    """Whether ``key``, met while the first ``filling`` hits fill, is the first hit's
    neighbour scoring at least ``window_share`` of it and fits in ``lead_lines`` with it,
    or in ``lead_unit_lines`` when it is a piece of the same unit.
    (The top 10 at most, whatever ``k``: a deeper read has the same first hit.)"""
    if not (rules.lead_lines or rules.lead_unit_lines) or not hits or len(hits) >= filling:
        return False
    lead = hits[0]
    if scores[key] < rules.window_share * scores[lead.head]:
        return False
    span = _span_with(lead, key, chunks)
    if span is None:
        return False
    inside = chunks[lead.high if key > lead.high else lead.low]
    unit = rules.lead_unit_lines if same_unit(inside, chunks[key]) else 0
    return span <= max(rules.lead_lines, unit)


def _join(
    hits: list[_Hit],
    key: int,
    chunks: Sequence[Chunk],
    scores: Sequence[float],
    rules: Selection,
    windows: bool,
) -> bool:
    """Join ``key`` to the first hit it extends as a piece of its unit or (``windows``) as a
    window's neighbour; whether it joined."""
    chunk = chunks[key]
    for hit in hits:
        span = _span_with(hit, key, chunks)
        if span is None:
            continue
        inside = chunks[hit.high if key > hit.high else hit.low]
        piece = rules.piece_lines and span <= rules.piece_lines and same_unit(inside, chunk)
        window = (
            windows
            and span <= rules.window_lines
            and scores[key] >= rules.window_share * scores[hit.head]
        )
        if piece or window:
            _extend(hit, key, chunk)
            return True
    return False


def _extend(hit: _Hit, key: int, chunk: Chunk) -> None:
    hit.low, hit.high = min(hit.low, key), max(hit.high, key)
    hit.start_line = min(hit.start_line, chunk.start_line)
    hit.end_line = max(hit.end_line, chunk.end_line)
    hit.keys.append(key)


def _grow_within_budget(
    hits: list[_Hit],
    order: Sequence[int],
    used: set[int],
    chunks: Sequence[Chunk],
    scores: Sequence[float],
    rules: Selection,
) -> None:
    """Windows for ``hits`` from the lines they leave of ``answer_lines``: the best unused
    neighbours first, each only while its lines fit what is left."""
    left = rules.answer_lines - sum(hit.lines for hit in hits)
    for key in order:
        if left <= 0:
            return
        if key in used:
            continue
        for hit in hits:
            if scores[key] < rules.window_share * scores[hit.head]:
                continue
            span = _span_with(hit, key, chunks)
            if span is None or span > rules.window_lines or span - hit.lines > left:
                continue
            left -= span - hit.lines
            _extend(hit, key, chunks[key])
            used.add(key)
            break


def _shown_already(hits: list[_Hit], chunk: Chunk, chunks: Sequence[Chunk]) -> bool:
    """Whether every line of ``chunk`` is shown by a hit already picked."""
    return any(
        chunks[hit.head].file == chunk.file
        and hit.start_line <= chunk.start_line
        and chunk.end_line <= hit.end_line
        for hit in hits
    )


def _distinct(selected: list[Selected], chunks: Sequence[Chunk]) -> list[Selected]:
    """Each hit cut to the lines no earlier hit shows (a hit with none left is dropped)."""
    shown: dict[str, list[tuple[int, int]]] = {}
    out = []
    for hit in selected:
        file = chunks[hit.head].file
        start, end = chunks[hit.keys[0]].start_line, chunks[hit.keys[-1]].end_line
        for low, high in shown.get(file, []):
            if low <= start <= high:
                start = high + 1
            if low <= end <= high:
                end = low - 1
        if start > end:
            continue
        shown.setdefault(file, []).append((start, end))
        whole = (chunks[hit.keys[0]].start_line, chunks[hit.keys[-1]].end_line)
        out.append(Selected(hit.head, hit.keys, None if (start, end) == whole else (start, end)))
    return out


def matched_lines(
    chunk: Chunk, query_terms: frozenset[str], max_lines: int, anchor: int | None = None
) -> tuple[int, int]:
    """The run of ``max_lines`` lines of ``chunk`` that holds the most lines with a query
    word, the earliest on a tie; with ``anchor`` (a line of the chunk: the first line of
    the unit that ranked, its signature) only runs that show it. The whole chunk when it
    is no longer."""
    if chunk.n_lines <= max_lines:
        return chunk.start_line, chunk.end_line
    lines = chunk.text.split("\n")[: chunk.n_lines]
    hits = [1 if query_terms.intersection(terms(line)) else 0 for line in lines]
    first, last = 0, len(hits) - max_lines  # where a run may start (offsets in the chunk)
    if anchor is not None and chunk.start_line <= anchor <= chunk.end_line:
        offset = anchor - chunk.start_line
        first, last = max(first, offset - max_lines + 1), min(last, offset)
    count = sum(hits[first : first + max_lines])
    best, best_at = count, first
    for start in range(first + 1, last + 1):
        count += hits[start + max_lines - 1] - hits[start - 1]
        if count > best:
            best, best_at = count, start
    return chunk.start_line + best_at, chunk.start_line + best_at + max_lines - 1
