"""The ranking stage: what happens between candidate retrieval and the results.

Dense (cosine) and keyword (BM25) retrieval each propose candidates; this stage fuses
their scores without depending on their scales, then weighs evidence that only code
has: which chunk *defines* a name the query asks for, file paths, how many strong chunks
a file has, and priors on tests, examples, compatibility copies, barrels and
declarations (``nexus.retrieval.evidence``). Last, the ranked candidates become hits
(``nexus.retrieval.selection``): pieces of one unit join, windows of neighbours grow where
the budget leaves room, no line is shown twice, and the top 10 fit their line cap (hits
from the 4th on trimmed to the lines that match). Every weight lives in ``RankingRules``
(``nexus.retrieval.rules``, one table) and each rule's worth alone is measured by
``bench/retrieval/questions_eval.py`` and ``bench/retrieval/answers.py``
(``bench/results/answers.md``).

Every hit keeps the parts of its score (``ScorePart``), so the dashboard can show why a
hit ranks where it does: the parts add up to the score.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

from nexus.retrieval.evidence import (
    NATURAL,
    SYMBOL,
    QueryName,
    ScorePart,
    evidence,
    in_test_module,
    is_topical,
    only_reexports,
    query_kind,
    query_names,
)
from nexus.retrieval.lexical import terms
from nexus.retrieval.rules import BOOSTS, DEFAULT_RULES, RankingRules, rules_for
from nexus.retrieval.selection import ANSWER_HITS, Selection, matched_lines, select
from nexus.retrieval.windows import clip, window_chunk
from nexus.types import Chunk

#: Names of the stage that callers import from here (the rules and the evidence live in
#: their own modules).
__all__ = [
    "BOOSTS",
    "DEFAULT_RULES",
    "NATURAL",
    "SYMBOL",
    "QueryName",
    "Ranked",
    "RankingRules",
    "ScorePart",
    "explain",
    "files_first",
    "hit_chunk",
    "in_test_module",
    "only_reexports",
    "query_kind",
    "query_names",
    "rank",
    "rules_for",
    "whole_lines",
    "within_line_cap",
]

#: A ranked item the line cap and other files first order: ``Ranked``, ``search.Hit``,
#: or the ranking stage's scored candidates.
Shown = TypeVar("Shown")


@dataclass(frozen=True)
class Ranked:
    """A candidate after ranking: its key in the index, score and the parts that sum to it;
    ``window``: the keys of the neighbouring chunks shown with it, its own included (in
    file order; empty when it is shown alone); ``shown``: the lines it shows when an
    earlier hit already shows the others or the answer's line cap trims it (None: all;
    ``nexus.retrieval.selection``, ``within_line_cap``)."""

    key: int
    score: float
    parts: tuple[ScorePart, ...]
    window: tuple[int, ...] = ()
    shown: tuple[int, int] | None = None


def hit_chunk(chunks: Sequence[Chunk], ranked: Ranked) -> Chunk:
    """What a ranked hit shows: its chunk, or the window of neighbours gathered with it,
    cut to the lines it shows."""
    if len(ranked.window) < 2:
        chunk = chunks[ranked.key]
    else:
        chunk = window_chunk(chunks, ranked.key, ranked.window)
    return clip(chunk, *ranked.shown) if ranked.shown else chunk


def _minmax(values: np.ndarray) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    if high - low <= 1e-9:
        return np.ones_like(values) if high > 0 else np.zeros_like(values)
    return (values - low) / (high - low)


def _fuse(dense: np.ndarray, keyword: np.ndarray, fusion: str) -> tuple[np.ndarray, np.ndarray]:
    """Both retrievers' scores of the candidates on one 0-1 scale, whatever their own."""
    dense, keyword = dense.astype(np.float64), keyword.astype(np.float64)
    if fusion == "rrf":
        return _reciprocal_ranks(dense), _reciprocal_ranks(keyword) * (keyword > 0)
    if fusion != "minmax":
        raise ValueError(f"unknown fusion {fusion!r}; use minmax or rrf")
    best_keyword = float(keyword.max())
    return _minmax(dense), keyword / best_keyword if best_keyword > 0 else keyword


def _reciprocal_ranks(scores: np.ndarray) -> np.ndarray:
    ranks = np.empty(len(scores))
    ranks[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
    return 61.0 / (60.0 + ranks)


def rank(
    chunks: Sequence[Chunk],
    dense: np.ndarray,
    keyword: np.ndarray,
    query: str,
    k: int = 10,
    rules: RankingRules = DEFAULT_RULES,
    earned: dict[str, tuple[ScorePart, ...]] | None = None,
) -> list[Ranked]:
    """The ``k`` best of the candidates ``chunks`` for ``query`` (``Ranked.key`` is a
    position in ``chunks``). Candidates are chosen before, in one place
    (``nexus.retrieval.candidates``): every chunk given here is scored.

    Args:
        chunks: the candidates, in index order (windows join neighbours among them).
        dense: cosine similarity of each candidate with the query.
        keyword: BM25 of each candidate for the query (any scale; zeros where nothing
            matches).
        earned: what each chunk earns on its own for this query and these rules
            (``evidence``), by chunk id: read where known, filled where not, so that a
            second pass over mostly the same candidates (query feedback) does not
            weigh them again.
    """
    if len(chunks) == 0 or k <= 0:
        return []
    names, is_symbol = query_names(query)
    if is_symbol:
        rules = rules.for_symbol()
    elif is_topical(query):
        rules = rules.for_topic()
    dense_share = rules.symbol_dense if is_symbol else rules.natural_dense
    dense_part, keyword_part = _fuse(np.asarray(dense), np.asarray(keyword), rules.fusion)
    dense_part, keyword_part = dense_share * dense_part, (1 - dense_share) * keyword_part
    query_terms = frozenset(terms(query))
    scored: list[tuple[int, list[ScorePart]]] = []
    for key, (d, w) in enumerate(zip(dense_part.tolist(), keyword_part.tolist(), strict=True)):
        chunk = chunks[key]
        own = earned.get(chunk.id) if earned is not None else None
        if own is None:
            own = tuple(evidence(chunk, names, is_symbol, query_terms, rules))
            if earned is not None:
                earned[chunk.id] = own
        parts = [ScorePart("dense", d), ScorePart("keyword", w), *own]
        scored.append((key, parts))
    _promote_coherent_files(scored, chunks, rules)
    # The cap on the top 10's lines is decided over the top 10 whatever ``k`` is, so an
    # answer of 5 hits is the first 5 of an answer of 10.
    depth = max(k, ANSWER_HITS) if rules.top_lines else k
    selection = rules.selection()
    if selection == Selection():
        top = _spread(scored, chunks, depth, rules)
    else:
        ranked = {r.key: r for r in _spread(scored, chunks, len(scored), rules)}
        totals = [0.0] * len(chunks)
        for r in ranked.values():
            totals[r.key] = r.score
        top = [
            replace(ranked[h.head], window=h.keys if len(h.keys) > 1 else (), shown=h.shown)
            for h in select(list(ranked), chunks, depth, totals, selection)
        ]
    if rules.top_lines:
        top = within_line_cap(
            top,
            lambda r: _shown_lines(chunks, r),
            lambda r: _cut(r, chunks, query_terms, rules.trim_lines),
            rules,
        )[:k]
    if not rules.hit_lines:
        return top
    return [_cut(r, chunks, query_terms, rules.hit_lines) for r in top]


def within_line_cap(
    top: Sequence[Shown],
    lines: Callable[[Shown], int],
    trim: Callable[[Shown], Shown],
    rules: RankingRules,
) -> list[Shown]:
    """``top`` (ranked hits, best first) with its first ``ANSWER_HITS`` showing at most
    ``rules.top_lines`` lines in all where trimming can get them there: while they show
    more, the longest hit from the ``trim_from``-th on that shows more than
    ``trim_lines`` lines (by ``lines``; the earliest of equals first) is ``trim``-med to
    ``trim_lines`` of them. The ranking stage caps its order, and re-scoring caps its own
    again: a hit it moves up from past the 10th was never trimmed."""
    top = list(top)
    if not rules.top_lines:
        return top
    shown = [lines(hit) for hit in top[:ANSWER_HITS]]
    while sum(shown) > rules.top_lines:
        long = [i for i in range(rules.trim_from - 1, len(shown)) if shown[i] > rules.trim_lines]
        if not long:
            break
        i = max(long, key=shown.__getitem__)
        top[i] = trim(top[i])
        shown[i] = lines(top[i])
    return top


def files_first(
    ranked: Sequence[Shown],
    score: Callable[[Shown], float],
    file: Callable[[Shown], str],
    rules: RankingRules,
) -> list[Shown]:
    """``ranked`` (best first) with each file's later hits waiting behind the first hit of
    another file that scores at least ``rules.file_spread`` of the best waiting one (a
    waiting hit whose score is not above 0 waits for nothing). The first hit of every file
    keeps its order; a waiting hit comes as soon as the next new file's scores less."""
    if not rules.file_spread:
        return list(ranked)
    shown: list[Shown] = []
    waiting: deque[tuple[float, Shown]] = deque()
    files: set[str] = set()
    for hit in ranked:
        name = file(hit)
        if name in files:
            waiting.append((score(hit), hit))
            continue
        bar = score(hit) / rules.file_spread  # a waiting hit scoring up to this waits
        while waiting and not 0 < waiting[0][0] <= bar:
            shown.append(waiting.popleft()[1])
        files.add(name)
        shown.append(hit)
    return shown + [hit for _, hit in waiting]


def whole_lines(chunks: Sequence[Chunk], ranked: Ranked) -> tuple[int, int]:
    """The first and last line a ranked hit shows whole: its chunk's, or its window's."""
    if len(ranked.window) < 2:
        chunk = chunks[ranked.key]
        return chunk.start_line, chunk.end_line
    return chunks[min(ranked.window)].start_line, chunks[max(ranked.window)].end_line


def _shown_lines(chunks: Sequence[Chunk], ranked: Ranked) -> int:
    """How many lines ``hit_chunk`` shows, without building its text (every query counts
    its top 10; few are trimmed)."""
    first, last = ranked.shown or whole_lines(chunks, ranked)
    return last - first + 1


def _cut(
    ranked: Ranked, chunks: Sequence[Chunk], query_terms: frozenset[str], lines: int
) -> Ranked:
    """``ranked`` showing at most ``lines`` of its lines, those that matched the query."""
    shown = hit_chunk(chunks, ranked)
    if shown.n_lines <= lines:
        return ranked
    return replace(ranked, shown=matched_lines(shown, query_terms, lines))


def _total(parts: list[ScorePart]) -> float:
    return sum(p.value for p in parts)


def _promote_coherent_files(
    scored: list[tuple[int, list[ScorePart]]], chunks: Sequence[Chunk], rules: RankingRules
) -> None:
    """Give the best chunk of each file with several strong candidates one boost."""
    if not rules.file_coherence or not scored:
        return
    totals = [_total(parts) for _, parts in scored]
    bar = rules.strong_share * max(totals)
    strong = Counter(
        chunks[key].file for (key, _), t in zip(scored, totals, strict=True) if t >= bar
    )
    best: dict[str, int] = {}
    for i, (key, _) in enumerate(scored):
        file = chunks[key].file
        if strong[file] > 1 and (file not in best or totals[i] > totals[best[file]]):
            best[file] = i
    for file, i in best.items():
        boost = rules.file_coherence * min(strong[file] - 1, 3)
        scored[i][1].append(ScorePart("file has several matches", boost))


def _spread(
    scored: list[tuple[int, list[ScorePart]]],
    chunks: Sequence[Chunk],
    k: int,
    rules: RankingRules,
) -> list[Ranked]:
    """The top ``k`` by score, each file's later hits damped (``same_file``) and waiting
    behind other files' close first hits (``file_spread``)."""
    pool = sorted(
        ((key, parts, _total(parts)) for key, parts in scored), key=lambda item: (-item[2], item[0])
    )
    if rules.same_file:
        pool = _damped(pool, chunks, k, rules)
    if rules.file_spread:
        pool = files_first(pool, lambda item: item[2], lambda item: chunks[item[0]].file, rules)
    return [Ranked(key, total, tuple(parts)) for key, parts, total in pool[:k]]


def _damped(
    pool: list[tuple[int, list[ScorePart], float]],
    chunks: Sequence[Chunk],
    k: int,
    rules: RankingRules,
) -> list[tuple[int, list[ScorePart], float]]:
    """Pick ``k`` of ``pool`` (best first) greedily; each pick of a file damps that file's
    next chunks."""
    pool = list(pool)
    picked: list[tuple[int, list[ScorePart], float]] = []
    seen: Counter[str] = Counter()

    def excess(file: str) -> int:
        return max(0, seen[file] - rules.same_file_free + 1)

    while pool and len(picked) < k:
        best_i, best_score = 0, -np.inf
        for i, (key, _, total) in enumerate(pool):
            score = total - rules.same_file * excess(chunks[key].file)
            if score > best_score:
                best_i, best_score = i, score
            if total <= best_score:  # sorted by total: no later one can win
                break
        key, parts, _ = pool.pop(best_i)
        file = chunks[key].file
        if excess(file):
            damping = -rules.same_file * excess(file)
            parts = [*parts, ScorePart("same file as higher hits", damping)]
        seen[file] += 1
        picked.append((key, parts, _total(parts)))
    return picked


def explain(parts: Sequence[ScorePart]) -> str:
    """One line: ``dense 0.41 + keyword 0.22 + defines 0.50 - test file 0.15 = 0.98``."""
    if not parts:
        return ""
    terms_ = [f"{parts[0].name} {parts[0].value:.2f}"]
    terms_ += [f"{'-' if p.value < 0 else '+'} {p.name} {abs(p.value):.2f}" for p in parts[1:]]
    return " ".join(terms_) + f" = {sum(p.value for p in parts):.2f}"
