"""Evaluate chunking settings on a query set: one config, both strategies, or a sweep.

The benchmark, the ``nexus eval`` command and the dashboard's Evaluate page all
run through these functions, so their numbers agree.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.pipeline import chunk_analyses
from nexus.config import ChunkConfig
from nexus.evaluation.budget import DEFAULT_BUDGETS, budget_label
from nexus.evaluation.query_sets import Query
from nexus.evaluation.rescoring import rescored_answers
from nexus.evaluation.runs import EvalReport, evaluate
from nexus.evaluation.text_memo import TextMemo
from nexus.retrieval.embedding import CachedEmbedder, Embedder, EmbeddingCancelled, over_window
from nexus.retrieval.embedding_cache import text_key
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import rules_for
from nexus.retrieval.rescore import RESCORE_DEPTH
from nexus.runtime.progress import Pace, duration
from nexus.types import Chunk

HEADLINE_VARIANT = "doc"


@dataclass(frozen=True)
class ConfigResult:
    """One chunking config evaluated on a query set."""

    config: ChunkConfig
    chunks: int
    over_window: int  # chunks whose embedding text exceeds the model's window (estimated
    # from an even sample past OVER_WINDOW_SAMPLE chunks)
    under_32: int  # chunks under 32 tokens
    report: EvalReport
    #: Scored as ``Workspace.search`` answers: the fast tier's best hits re-scored by MiniLM.
    rescored: bool = False

    def metric(self, name: str, variant: str = HEADLINE_VARIANT) -> float:
        group = variant if variant in self.report.metrics else "all"
        return self.report.metric(group, name)

    @property
    def budgets(self) -> tuple[int, ...]:
        return self.report.budgets


def evaluate_config(
    analyses: Sequence[FileAnalysis],
    repo: str,
    config: ChunkConfig,
    queries: Sequence[Query],
    embedder: Embedder,
    query_vectors: np.ndarray | None = None,
    progress: Callable[[int, int], None] | None = None,
    chunks: Sequence[Chunk] | None = None,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    cancel: Callable[[], bool] | None = None,
    rescore_with: Embedder | None = None,
) -> ConfigResult:
    """Chunk with ``config`` (unless its ``chunks`` are given), embed (through whatever
    cache ``embedder`` has), score: ranks and budget metrics (no per-query margins).
    ``cancel`` is asked once the chunks are embedded: True raises ``EmbeddingCancelled``
    rather than score (seconds on a large repository). ``rescore_with`` (MiniLM, over a
    fast-tier ``embedder``): score the hits as ``Workspace.search`` answers them, the best
    re-scored (``nexus.evaluation.rescoring``; with the ranking stage only)."""
    if chunks is None:
        chunks = chunk_analyses(analyses, config, repo=repo)
    index = VectorIndex.from_chunks(chunks, embedder, progress)
    if cancel is not None and cancel():
        raise EmbeddingCancelled(f"cancelled before scoring {describe(config)}")
    over = over_window(embedder, [c.embedding_text for c in chunks]).count
    rules, answered = rules_for(config), None
    if rescore_with is not None and rules is not None:
        texts = [q.query for q in queries]
        vectors = embedder.encode(texts) if query_vectors is None else query_vectors
        answered = rescored_answers(index, texts, vectors, rules, rescore_with)
    report = evaluate(
        queries,
        index,
        embedder,
        query_vectors=query_vectors,
        label=describe(config),
        lexical_weight=config.lexical_weight,
        ranking=rules,
        budgets=budgets,
        detail=False,
        answered=answered,
    )
    under = sum(1 for c in chunks if c.token_count < 32)
    return ConfigResult(config, len(chunks), over, under, report, rescored=answered is not None)


def describe(config: ChunkConfig) -> str:
    """A short label: ``lines 50/0`` or ``ast 512/16 auto``."""
    if config.strategy == "lines":
        return f"lines {config.line_window}/{config.line_overlap}"
    return f"ast {config.max_tokens}/{config.min_tokens} {config.profile}"


#: ``(max_tokens, min_tokens)``: one setting of a sweep.
Budget = tuple[int, int]


class SweepCancelled(RuntimeError):
    """``sweep`` stopped because ``cancel()`` said so; ``results`` holds the settings it
    finished (with those it was given), which a rerun with ``finished`` keeps."""

    def __init__(self, results: dict[Budget, ConfigResult]) -> None:
        super().__init__(f"sweep cancelled after {len(results)} setting(s)")
        self.results = results


@dataclass(frozen=True)
class SweepStatus:
    """Where a sweep stands (a snapshot): settings and distinct chunk texts done, and the
    paces the time left is reckoned from (``progress.Pace``, over timed work only)."""

    what: str
    settings_done: int
    settings: int
    texts_done: int  # distinct chunk texts embedded (or answered by the cache) so far
    texts: int  # distinct chunk texts the pending settings need (0 before they are counted)
    seconds_per_text: float | None = None  # the model's, per text it embedded
    seconds_per_setting: float | None = None  # scoring one setting (its index, its queries)
    cached_left: int = 0  # of the texts left, those the embedding cache holds: no model time

    @property
    def fraction(self) -> float:
        """Share done: of the texts while there are texts to embed, else of the settings."""
        if self.settings_done >= self.settings:
            return 1.0
        if self.texts:
            return min(self.texts_done / self.texts, 1.0)
        return self.settings_done / self.settings

    @property
    def eta_s(self) -> float | None:
        """Seconds left: the texts the model has left at its pace, plus the settings left
        at the scoring pace. None while either pace it needs is unknown: a partial sum
        (the embedding without the scoring) would read as a time left that then jumps."""
        if self.settings_done >= self.settings:
            return 0.0
        model_left = max(self.texts - self.texts_done - self.cached_left, 0)
        if (model_left and self.seconds_per_text is None) or self.seconds_per_setting is None:
            return None
        settings_left = self.settings - self.settings_done
        return model_left * (self.seconds_per_text or 0.0) + settings_left * (
            self.seconds_per_setting
        )

    def summary(self) -> str:
        """One line for people: what runs, texts embedded (the one counter), speed and
        time left."""
        parts = [self.what, f"{self.settings_done}/{self.settings} settings done"]
        if self.texts:
            parts.append(f"{self.texts_done:,}/{self.texts:,} distinct chunk texts embedded")
        if self.seconds_per_text:
            parts.append(f"{1 / self.seconds_per_text:,.1f} texts/s")
        eta = self.eta_s
        if eta is not None and self.settings_done < self.settings:
            parts.append(f"about {duration(eta)} left")
        return " · ".join(parts)


#: The seed of the distractor sample: the same files for every setting and every run.
DISTRACTOR_SEED = "nexus-sweep"


def sweep_files(
    analyses: Sequence[FileAnalysis], queries: Sequence[Query], distractors: int | None
) -> list[FileAnalysis]:
    """The analysed files a sweep chunks: those of ``sweep_paths``, in their order."""
    kept = sweep_paths([a.source.info.path for a in analyses], queries, distractors)
    return [a for a in analyses if a.source.info.path in kept]


def sweep_paths(
    paths: Sequence[str], queries: Sequence[Query], distractors: int | None
) -> set[str]:
    """The files a sweep chunks, of ``paths``: every file holding a target, plus a fixed
    random sample of ``distractors`` others (``None``: every file).

    On a large repository most of a sweep's time is chunking and searching files no query
    targets; a sample of them keeps the competition while cutting that time. Scores run
    higher than over every file (fewer distractors), the settings' order barely moves
    (measured in ``bench/speed/fast_sweep.py``). Chosen by path alone, so a caller can leave the
    other files unread and unparsed.
    """
    if distractors is None:
        return set(paths)
    targets = {q.target.file for q in queries}
    others = sorted(path for path in paths if path not in targets)
    picked = set(random.Random(DISTRACTOR_SEED).sample(others, min(distractors, len(others))))
    return {path for path in paths if path in targets or path in picked}


def sweep_grid(
    max_tokens: Sequence[int], min_tokens: Sequence[int], extra: Sequence[Budget] = ()
) -> list[Budget]:
    """Every (max, min) pair with ``min < max``, then the ``extra`` pairs not in it."""
    grid = [(hi, lo) for hi in max_tokens for lo in min_tokens if lo < hi]
    return grid + [pair for pair in dict.fromkeys(extra) if pair not in grid and pair[1] <= pair[0]]


#: Most texts a sweep's re-scoring may ask MiniLM for by default (queries x settings x
#: ``RESCORE_DEPTH`` hit texts at most, and never more than the sweep's chunk texts that
#: MiniLM's cache lacks): a few minutes of MiniLM cold, at ~30 texts/s in float32 on two
#: cores. Past it a sweep scores the fast tier's own order unless asked: the scale
#: corpus's default sweep (300 queries x 6 settings, up to 54,000 texts) took 739 s
#: re-scored cold against 73 s in the fast order (bench/results/fast_sweep.md). A
#: repository whose index MiniLM has read (the background job fills the cache) lacks few.
RESCORE_TEXTS = 6_000


def rescore_texts_bound(queries: int, settings: int, uncached: int | None = None) -> int:
    """The most texts re-scoring ``settings`` settings of ``queries`` queries asks MiniLM
    for: each query's hit texts, or (``uncached``) the sweep's chunk texts and queries
    its cache lacks, whichever is fewer."""
    bound = queries * settings * RESCORE_DEPTH
    return bound if uncached is None else min(bound, uncached)


def rescore_affordable(
    queries: int, settings: int, uncached: int | None = None, limit: int = RESCORE_TEXTS
) -> bool:
    """Whether a sweep re-scores by default: it asks MiniLM for at most ``limit`` texts."""
    return rescore_texts_bound(queries, settings, uncached) <= limit


#: Chunks the counting pass keeps for the settings' runs (1-2 KB each); past this a
#: setting is chunked again when it runs rather than held in memory meanwhile. The
#: default sweep of the 6,405-file scale corpus (targets + 1,000 files) makes 131k.
KEPT_CHUNKS = 200_000


def sweep(
    analyses: Sequence[FileAnalysis],
    repo: str,
    base: ChunkConfig,
    queries: Sequence[Query],
    embedder: Embedder,
    max_tokens: Sequence[int],
    min_tokens: Sequence[int] = (0,),
    progress: Callable[[SweepStatus], None] | None = None,
    extra: Sequence[Budget] = (),
    finished: Mapping[Budget, ConfigResult] | None = None,
    cancel: Callable[[], bool] | None = None,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    clock: Callable[[], float] = time.perf_counter,
    rescore_with: Embedder | None = None,
    rescore_limit: int | None = None,
) -> list[ConfigResult]:
    """Evaluate every setting of ``sweep_grid``, each distinct chunk text embedded once.

    The settings share one ``TextMemo`` (in front of ``embedder`` and its cache), and run
    cheapest first: the ``extra`` ones (the setting in use: its index is built, so its
    texts are cached), then the largest budgets, whose chunks the smaller ones share
    least. Before any embedding, each pending setting is chunked to count the distinct
    texts the sweep needs (and those the embedding cache holds), so ``progress`` has one
    counter with a total from the start; those chunks are kept for the setting's run (up
    to ``KEPT_CHUNKS`` in all), so a setting is chunked once. The time left is the
    model's texts left at its pace plus the settings left at the scoring's pace (each a
    ``progress.Pace``, timed on ``clock``): chunking is not in either, so a slow setting
    to chunk does not move it.

    Args:
        finished: results of an earlier run of the same sweep (same repository, queries,
            embedder and search settings): those settings are not run again.
        cancel: asked between batches of texts and between settings; True raises
            ``SweepCancelled`` holding the settings finished so far.
        budgets: the token budgets each setting's ``R@1k``-style metrics are read at.
        clock: seconds, monotonic, the paces are timed on (tests pass a fake one).
        rescore_with: MiniLM, over a fast-tier ``embedder``: every setting scored as
            ``Workspace.search`` answers, its best hits re-scored (``evaluate_config``);
            a hit's text is embedded once for the sweep. Its time counts as scoring.
        rescore_limit: with ``rescore_with``, re-score only when it would ask MiniLM for at
            most this many texts (``rescore_affordable`` over the whole grid, counted
            after the counting pass from what MiniLM's cache lacks of the pending
            settings' texts); else score the fast tier's own order. Each result says which
            (``ConfigResult.rescored``); ``finished`` ones scored in the other order run
            again. None: re-score whatever it costs.

    Returns:
        One result per setting, in ``sweep_grid`` order.
    """
    grid = sweep_grid(max_tokens, min_tokens, extra)
    earlier = finished or {}
    results = {pair: earlier[pair] for pair in grid if pair in earlier}
    cheapest_first = [pair for pair in grid if pair in extra] + sorted(grid, reverse=True)
    pending = [pair for pair in dict.fromkeys(cheapest_first) if pair not in results]
    memo = TextMemo(embedder, cancel=cancel, clock=clock)
    rescorer = None if rescore_with is None else TextMemo(rescore_with, cancel=cancel, clock=clock)
    stopped = cancel or (lambda: False)
    needed: set[bytes] = set()
    cached: set[bytes] = set()  # of the needed texts, those the embedding cache holds
    # The model's pace per text it embeds, and the scoring's per setting (``Pace``):
    # chunking, the queries' embedding and the cache's answers are not timed.
    model, scoring = Pace(), Pace()
    texts_done = cache_answered = 0
    embedding_s = 0.0  # every batch's, the cache's answers included: not the scoring's

    def report(what: str) -> None:
        if progress is None:
            return
        progress(
            SweepStatus(
                what=what,
                settings_done=len(results),
                settings=len(grid),
                texts_done=min(texts_done, len(needed)),
                texts=len(needed),
                seconds_per_text=model.seconds_per_item,
                seconds_per_setting=scoring.seconds_per_item,
                cached_left=max(len(cached) - cache_answered, 0),
            )
        )

    def batch_done(texts: int, seconds: float) -> None:
        nonlocal model, texts_done, cache_answered, embedding_s
        misses = embedder.last_misses if isinstance(embedder, CachedEmbedder) else texts
        model = model.after(misses, seconds)
        embedding_s += seconds
        texts_done += texts
        cache_answered += texts - misses

    def configured(pair: Budget) -> ChunkConfig:
        return base.with_(strategy="ast", max_tokens=pair[0], min_tokens=pair[1])

    counted: dict[Budget, list[Chunk]] = {}  # kept for their run, up to KEPT_CHUNKS
    for number, pair in enumerate(pending, 1):
        report(f"counting the chunks of setting {number} of {len(pending)}")
        if stopped():
            raise SweepCancelled(results)
        chunks = chunk_analyses(analyses, configured(pair), repo=repo)
        needed.update(text_key(c.embedding_text) for c in chunks)
        if sum(map(len, counted.values())) + len(chunks) <= KEPT_CHUNKS:
            counted[pair] = chunks
    if isinstance(embedder, CachedEmbedder) and needed:
        cached = embedder.cache.present(embedder.name, list(needed))
    if rescore_with is not None and rescore_limit is not None:
        uncached = _lacking(rescore_with, needed | {text_key(q.query) for q in queries})
        if not rescore_affordable(len(queries), len(grid), uncached, rescore_limit):
            rescorer = None
    # Every row of one sweep is scored in one order: finished settings scored in the
    # other one run again (the fast order costs no model; re-scoring, their hits).
    rescoring = rescorer is not None and rules_for(base) is not None
    other_order = [pair for pair, result in results.items() if result.rescored != rescoring]
    for pair in other_order:
        del results[pair]
    pending += other_order
    report(f"embedding {len(queries)} queries")
    try:
        query_vectors = memo.encode([q.query for q in queries])
        memo.on_batch = batch_done  # the pace of chunk texts: queries are shorter
        for pair in pending:
            if stopped():
                raise SweepCancelled(results)
            what = f"max {pair[0]}, min {pair[1]}"
            chunks = counted.pop(pair, None)
            if chunks is None:
                report(f"{what}: chunking")
                chunks = chunk_analyses(analyses, configured(pair), repo=repo)
            began, embedded_before = clock(), embedding_s
            results[pair] = evaluate_config(
                analyses, repo, configured(pair), queries, memo, query_vectors,
                lambda _done, _total, what=what: report(f"{what}: embedding"), chunks, budgets,
                cancel, rescorer,
            )  # fmt: skip
            scoring = scoring.after(1, clock() - began - (embedding_s - embedded_before))
    except EmbeddingCancelled:
        raise SweepCancelled(results) from None
    report("done")
    return [results[pair] for pair in grid]


def _lacking(embedder: Embedder, keys: set[bytes]) -> int:
    """How many of the texts ``keys`` ``embedder`` would have to embed (all of them
    without a cache)."""
    if not isinstance(embedder, CachedEmbedder) or not keys:
        return len(keys)
    return len(keys) - len(embedder.cache.present(embedder.name, list(keys)))


#: Metrics a sweep may be chosen by where lower is better (the others: higher).
LOWER_IS_BETTER = frozenset({"lines@5", "lines@10", "tokens@10", "tokens to first hit"})


def default_choice(budgets: Sequence[int] = DEFAULT_BUDGETS) -> str:
    """What a sweep is chosen by unless told: recall within the smallest budget. MRR@10
    counts a 300-line hit like a 15-line one, so it picks the fattest chunks."""
    return budget_label(min(budgets))


def choices(budgets: Sequence[int] = DEFAULT_BUDGETS) -> tuple[str, ...]:
    """The metrics a sweep can be chosen by, for these budgets."""
    return (
        *(budget_label(b) for b in budgets),
        "MRR@10",
        "R@1",
        "R@5",
        "R@10",
        *sorted(LOWER_IS_BETTER),
    )


def check_choice(name: str, budgets: Sequence[int] = DEFAULT_BUDGETS) -> str:
    """``name`` if a sweep can be chosen by it, else ValueError naming the choices."""
    if name not in choices(budgets):
        raise ValueError(
            f"cannot choose a sweep by {name!r}; choose by one of {', '.join(choices(budgets))}"
        )
    return name


def best(
    results: Sequence[ConfigResult],
    variant: str = HEADLINE_VARIANT,
    tolerance: float = 0.005,
    choose_by: str | None = None,
) -> ConfigResult:
    """The row best on ``choose_by`` (default: ``default_choice`` of the results'
    budgets). Rows within ``tolerance`` of it (about one query in a few hundred) are
    ties (for a cost: within that share of the best), won by fewer tokens in the top 10
    (what a prompt pays for), then fewer lines in the top 5, then fewer chunks under 32
    tokens. Raises ValueError for an unknown metric."""
    name = choose_by or default_choice(results[0].budgets)
    top = max(_signed(r, name, variant) for r in results)
    tied = [r for r in results if _signed(r, name, variant) >= top - _slack(name, top, tolerance)]
    return min(
        tied,
        key=lambda r: (
            _or_inf(r, "tokens@10", variant),
            r.metric("lines@5", variant),
            r.under_32 / max(r.chunks, 1),
        ),
    )


def gains_over(
    result: ConfigResult,
    base: ConfigResult,
    variant: str = HEADLINE_VARIANT,
    tolerance: float = 0.005,
    choose_by: str | None = None,
) -> bool:
    """Whether ``result`` is better than ``base`` on ``choose_by`` by more than ``best``'s
    tie ``tolerance``: a setting that only ties the one in use (and wins the tie on
    tokens) is no reason to move (issue 41: 128/0 tied R@1k 0.841 and lost MRR@10, R@5)."""
    name = choose_by or default_choice(result.budgets)
    ahead = _signed(result, name, variant)
    return ahead - _signed(base, name, variant) > _slack(name, ahead, tolerance)


def _signed(result: ConfigResult, name: str, variant: str) -> float:
    """The metric, higher better (costs negated; NaN lowest)."""
    number = (-1.0 if name in LOWER_IS_BETTER else 1.0) * result.metric(name, variant)
    return -math.inf if math.isnan(number) else number


def _slack(name: str, top: float, tolerance: float) -> float:
    """What counts as a tie below ``top``: ``tolerance``, a share of it for a cost."""
    return tolerance * abs(top) if name in LOWER_IS_BETTER else tolerance


def _or_inf(result: ConfigResult, name: str, variant: str) -> float:
    try:
        return result.metric(name, variant)
    except (KeyError, ValueError):
        return math.inf
