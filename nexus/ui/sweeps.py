"""The Evaluate page's budget sweep: run on its own thread, kept in the session.

A sweep takes minutes on a real repository, so a script run must not own it: the
Run button starts a ``SweepJob`` on a thread and the page polls its ``SweepStatus``
(a fragment on a timer) with a Cancel button beside the bar. The job keeps the
settings it finished, also when cancelled; the next job for the same sweep key
(repository, query set and search settings) starts from them, so Run after Cancel
resumes, and a slider moved after a sweep runs only the new setting in use. A sweep
nobody has looked at for ``IDLE_AFTER`` seconds (the browser has gone) stops as if
cancelled, like an index build.
The work a job runs, the key it is kept by, and when the page starts one are here too;
the table built here is what the page shows and Export downloads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from nexus.config import ChunkConfig
from nexus.evaluation import experiments  # called as ``experiments.sweep``: tests wrap it
from nexus.evaluation.budget import DEFAULT_BUDGETS, budget_label
from nexus.evaluation.experiments import (
    LOWER_IS_BETTER,
    Budget,
    ConfigResult,
    SweepCancelled,
    SweepStatus,
    best,
    default_choice,
    describe,
    sweep_grid,
)
from nexus.evaluation.query_sets import Query
from nexus.ingest.sources import Repository
from nexus.retrieval import tiers
from nexus.retrieval.embedding import CachedEmbedder, Embedder
from nexus.runtime.builds import IDLE_AFTER
from nexus.ui import analyses, cache, indexing
from nexus.ui.evaluating import QuerySet

#: Seconds a script run waits for the sweep it started (AppTests set 60, so a run
#: shows the answer); the page polls otherwise.
WAIT_S = 0.0
#: The budget metrics a sweep shows: recall within each budget, then what reading costs.
BUDGET_METRICS = (*(budget_label(b) for b in DEFAULT_BUDGETS), "tokens to first hit", "tokens@10")
#: Per metric the sweep's table shows: whether higher is better (budgets first; the rank
#: metrics beside them).
METRICS = {
    **{name: name not in LOWER_IS_BETTER for name in BUDGET_METRICS},
    "MRR@10": True,
    "R@5": True,
    "lines@5": False,
}
#: What a sweep's best setting is chosen by unless the page says otherwise.
DEFAULT_CHOICE = default_choice(DEFAULT_BUDGETS)
#: The metrics the best setting can be chosen by on the page.
CHOICES = (*BUDGET_METRICS[: len(DEFAULT_BUDGETS)], "MRR@10", "R@5", "tokens@10")


def charted(choose_by: str) -> dict[str, bool]:
    """The sweep's charts: the metric it is chosen by, MRR@10 beside it, and the cost."""
    names = dict.fromkeys([choose_by, "MRR@10", "tokens@10"])
    return {name: METRICS[name] for name in names}


_JOB = "_sweep_job"

#: ``work(progress=..., cancel=..., finished=...)``: runs ``experiments.sweep`` on the
#: page's repository, queries and embedder, over this job's grid.
Work = Callable[..., list[ConfigResult]]


#: The sweep's embedder choices, as the page names them.
TIER_LABELS = {
    tiers.QUALITY: "quality (MiniLM)",
    tiers.FAST: "fast (static, distilled from MiniLM; best hits re-scored by MiniLM)",
}
#: ... what a fast sweep too large to re-score scored (``experiments.RESCORE_TEXTS``).
FAST_ORDER_LABEL = (
    "fast (static, distilled from MiniLM), its own order: re-scoring this many queries and "
    "settings would keep MiniLM busy for minutes"
)


#: "Files in the sweep": every file, or the target files plus this many others (strings:
#: a select box shows ``None`` as "Choose an option").
EVERY_FILE = "all"
DISTRACTOR_CHOICES: tuple[str, ...] = (EVERY_FILE, "1000", "300")


def distractors_of(choice: str) -> int | None:
    """The sample size of a "Files in the sweep" choice (None: every file)."""
    return None if choice == EVERY_FILE else int(choice)


def distractors_label(choice: str) -> str:
    if choice == EVERY_FILE:
        return "every file"
    return f"files with targets + {int(choice):,} others (sampled)"


def fast_embedder(words_view: bool) -> Embedder:
    """The fast tier, distilled into the cache folder on first use (a few minutes, on the
    sweep's thread), loaded in about a second after that."""
    return tiers.tier_embedder(
        tiers.FAST, words_view, cache_dir=os.environ.get(cache.CACHE_ENV) or None
    )


def fast_tier_ready() -> bool:
    """Whether the fast tier's model is already distilled (nothing to wait for)."""
    folder = tiers.models_dir(os.environ.get(cache.CACHE_ENV) or None) / tiers.STATIC_MODEL_NAME
    return folder.is_dir()


class SweepJob:
    """One run of a sweep on its own thread: its grid, status, results and how it ended."""

    def __init__(
        self,
        key: Hashable,
        maxes: Sequence[int],
        mins: Sequence[int],
        current: Budget,
        finished: dict[Budget, ConfigResult],
        tier: str = tiers.QUALITY,
        files: str = EVERY_FILE,
    ) -> None:
        self.key = key
        self.maxes, self.mins, self.current = list(maxes), list(mins), current
        self.tier, self.files = tier, files
        self.grid = sweep_grid(self.maxes, self.mins, [current])
        self.resumed = sum(1 for pair in self.grid if pair in finished)
        self.results = dict(finished)
        self.status: SweepStatus | None = None
        self.cancelled = False
        self.error = ""
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen = time.monotonic()

    def start(self, work: Work) -> SweepJob:
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self._thread.start()
        return self

    def _run(self, work: Work) -> None:
        try:
            found = work(progress=self._report, cancel=self._stopping, finished=self.results)
            self.results.update({(r.config.max_tokens, r.config.min_tokens): r for r in found})
        except SweepCancelled as stopped:
            self.results.update(stopped.results)
            self.cancelled = True
        except Exception as exc:  # noqa: BLE001 - shown on the page, the session goes on
            self.error = f"{type(exc).__name__}: {exc}"

    def _report(self, status: SweepStatus) -> None:
        self.status = status

    def _stopping(self) -> bool:
        return self._cancel.is_set() or time.monotonic() - self._seen > IDLE_AFTER

    def touch(self) -> None:
        """Someone is looking: the sweep goes on (see ``IDLE_AFTER``)."""
        self._seen = time.monotonic()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def cancelling(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Stop at the next batch of texts; the finished settings are kept."""
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def rows(self) -> list[ConfigResult]:
        """The finished settings of this job's grid, by max then min tokens."""
        return sorted(
            (self.results[pair] for pair in self.grid if pair in self.results),
            key=lambda r: (r.config.max_tokens, r.config.min_tokens),
        )

    def complete(self) -> bool:
        """Every setting of the grid is done (not cancelled, not failed, not running)."""
        return not self.running and all(pair in self.results for pair in self.grid)

    @property
    def rescored(self) -> bool:
        """Whether every finished setting was scored as Search answers (re-scored by
        MiniLM; a fast sweep that could not afford it scored the fast tier's order)."""
        rows = self.rows()
        return bool(rows) and all(r.rescored for r in rows)


def progress_text(job: SweepJob) -> str:
    """The running sweep's bar text: its status, or what it waits for before the first
    one (the fast tier's model, distilled once, takes minutes)."""
    if job.status is not None:
        return f"Sweeping: {job.status.summary()}"
    if job.tier == tiers.FAST and not fast_tier_ready():
        return "Sweeping: distilling (once) the fast tier's model from MiniLM, 3-5 minutes"
    return "Sweeping: starting"


def session_job() -> SweepJob | None:
    """The session's latest sweep job, if any."""
    return st.session_state.get(_JOB)


def start(
    key: Hashable,
    maxes: Sequence[int],
    mins: Sequence[int],
    current: Budget,
    work: Work,
    tier: str = tiers.QUALITY,
    files: str = EVERY_FILE,
) -> SweepJob:
    """Start a sweep over ``maxes`` x ``mins`` and ``current``, keeping the settings the
    session's last job for ``key`` finished (a resume); ``tier`` and ``files`` (the "Files
    in the sweep" choice) are recorded for the page and export."""
    last = session_job()
    if last is not None and last.running:
        last.cancel()
        last.join()
    finished = last.results if last is not None and last.key == key else {}
    job = SweepJob(key, sorted(maxes), sorted(mins), current, finished, tier, files)
    job.start(work)
    st.session_state[_JOB] = job
    if WAIT_S:
        job.join(WAIT_S)
    return job


def reference(job: SweepJob, current: Budget) -> Budget:
    """The row the sweep is read against: the setting in use now when the sweep has it
    (after "Apply the best setting"), else the one in use when it ran."""
    return current if current in job.results else job.current


def sweep_key(
    repo_key: str,
    query_set: QuerySet,
    embedder_name: str,
    tier: str,
    files: str,
    config: ChunkConfig,
) -> tuple[Hashable, ...]:
    """What a sweep's answers depend on besides the budgets: the repository and query
    set first (``kept_job`` reads them), then the embedders, the "Files in the sweep"
    choice and the search settings. A job under another key does not resume this one."""
    return (
        *_set_key(repo_key, query_set),
        embedder_name,
        tier,
        files,
        config.profile,
        config.lexical_weight,
        config.ranking,
        config.line_window,
    )


def _set_key(repo_key: str, query_set: QuerySet) -> tuple[Hashable, ...]:
    return (repo_key, query_set.docs_blanked, query_set.digest)


def kept_job(repo_key: str, query_set: QuerySet) -> SweepJob | None:
    """The session's sweep of this repository and query set when it has an answer (shown
    while the indexes of a setting just applied build), whatever its other settings."""
    job = session_job()
    if job is None or job.running or job.current not in job.results:
        return None
    prefix = _set_key(repo_key, query_set)
    return job if tuple(job.key[: len(prefix)]) == prefix else None


@dataclass(frozen=True)
class SweepChoice:
    """What the page's sweep controls say."""

    maxes: tuple[int, ...]
    mins: tuple[int, ...]
    tier: str  # a ``TIER_LABELS`` key
    files: str  # one of ``DISTRACTOR_CHOICES``
    run: bool  # Run sweep was pressed


@dataclass(frozen=True)
class SweepStart:
    """A sweep the page starts now: its grid, and whether the user asked for it (Run, or
    a link) rather than the sliders having moved since it finished."""

    maxes: tuple[int, ...]
    mins: tuple[int, ...]
    asked: bool


def due(
    job: SweepJob | None, key: Hashable, current: Budget, choice: SweepChoice, linked: bool
) -> SweepStart | None:
    """The sweep to start now, or None (the session's job stands): the controls' grid when
    Run is pressed, or when a link (``linked``) with a grid asks for a sweep the session
    does not have; the finished job's grid when only the sliders moved since (the setting
    in use alone runs, the rest is kept)."""
    wanted = linked and bool(choice.maxes) and bool(choice.mins)
    if choice.run or (wanted and (job is None or job.key != key)):
        return SweepStart(choice.maxes, choice.mins, asked=True)
    if job is not None and job.key == key and job.complete() and current not in job.results:
        return SweepStart(tuple(job.maxes), tuple(job.mins), asked=False)
    return None


def embedder_label(job: SweepJob) -> str:
    """The embedder and order a finished sweep scored, as the page names them."""
    if job.tier == tiers.FAST and not job.rescored:
        return FAST_ORDER_LABEL
    return TIER_LABELS.get(job.tier, job.tier)


def sweep_work(
    repo: Repository,
    config: ChunkConfig,
    queries: Sequence[Query],
    choice: SweepChoice,
    grid: SweepStart,
    current: Budget,
) -> Work:
    """The sweep of ``grid`` and ``current`` over ``repo``'s files (every one, or the
    targets' and a sample: ``choice.files``) and ``queries``, with the tier's embedder:
    the fast one is built on the job's thread (distilled there if it is not yet) and has
    no disk cache (it would cost as much as it saves); the quality one is the model the
    indexes use, behind the embedding cache. A fast sweep scores what Search answers on
    the fast tier: each setting's best hits re-scored by that quality model, while that
    asks it for at most ``experiments.RESCORE_TEXTS`` texts its cache lacks (else the
    fast tier's own order: ``SweepJob.rescored``)."""
    files = experiments.sweep_files(
        analyses.repo_analyses(repo), queries, distractors_of(choice.files)
    )
    model = indexing.get_embedder(config.words_view)

    def work(**how: object) -> list[ConfigResult]:
        quality = CachedEmbedder(model, cache.embedding_cache())
        fast = choice.tier == tiers.FAST
        return experiments.sweep(
            files, repo.name, config, queries,
            fast_embedder(config.words_view) if fast else quality,
            grid.maxes, grid.mins, extra=[current], rescore_with=quality if fast else None,
            rescore_limit=experiments.RESCORE_TEXTS, **how,
        )  # fmt: skip

    return work


def export(current: Budget) -> tuple[pd.DataFrame, dict[str, object]] | None:
    """The session's last sweep answer for Export: its table and what it was run on
    (grid, variant, tier, files, the setting its deltas are against: ``current``, the
    setting in use now, when the sweep has it), or None before a sweep has an answer."""
    job = session_job()
    if job is None or job.current not in job.results:
        return None
    variant = str(st.session_state.get("sweep_variant") or "doc")
    choose_by = str(st.session_state.get("sweep_choose_by") or DEFAULT_CHOICE)
    in_use = reference(job, current)
    table = sweep_table(job.rows(), in_use, variant, choose_by)
    about = {
        "max_tokens": job.maxes,
        "min_tokens": job.mins,
        "variant": variant,
        "tier": job.tier,
        "embedder": embedder_label(job),
        "files": distractors_label(job.files),
        "distractors": distractors_of(job.files),
        "in_use": list(in_use),
        "chosen_by": choose_by,
        "complete": job.complete(),
        "settings_done": len(job.rows()),
        "settings": len(job.grid),
    }
    return table, about


def sweep_table(
    results: Sequence[ConfigResult], current: Budget, variant: str, choose_by: str = DEFAULT_CHOICE
) -> pd.DataFrame:
    """One row per setting: chunks, each metric and its difference from the setting in
    use; ``row`` names the setting in use and the best one (``experiments.best`` by
    ``choose_by``)."""
    base = next(r for r in results if (r.config.max_tokens, r.config.min_tokens) == current)
    top = best(results, variant, choose_by=choose_by)
    return pd.DataFrame(
        {
            "setting": describe(r.config),
            "max_tokens": r.config.max_tokens,
            "min_tokens": r.config.min_tokens,
            "row": ", ".join(
                label for label, hit in (("in use", r is base), ("best", r is top)) if hit
            ),
            "chunks": r.chunks,
            "over window": r.over_window,
            **{m: round(r.metric(m, variant), 3) for m in METRICS},
            **{f"Δ {m}": round(r.metric(m, variant) - base.metric(m, variant), 3) for m in METRICS},
        }
        for r in results
    )


def budget_curves(table: pd.DataFrame) -> dict[str, dict[int, float]]:
    """Recall per budget of each setting of a sweep table (for ``views.budget_chart``)."""
    return {
        str(row["setting"]): {b: float(row[budget_label(b)]) for b in DEFAULT_BUDGETS}
        for _, row in table.iterrows()
    }
