"""The Evaluate page's budget sweep: run on its own thread, kept in the session.

A sweep takes minutes on a real repository, so a script run must not own it: the
Run button starts a ``SweepJob`` on a thread and the page polls its ``SweepStatus``
(a fragment on a timer) with a Cancel button beside the bar. The job keeps the
settings it finished, also when cancelled; the next job for the same sweep key
(repository, query set and search settings) starts from them, so Run after Cancel
resumes, and a slider moved after a sweep runs only the new setting in use. A sweep
nobody has looked at for ``IDLE_AFTER`` seconds (the browser has gone) stops as if
cancelled, like an index build.
The table built here is what the page shows and Export downloads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Hashable, Sequence

import pandas as pd
import streamlit as st

from nexus.evaluation.experiments import (
    Budget,
    ConfigResult,
    SweepCancelled,
    SweepStatus,
    best,
    sweep_grid,
)
from nexus.retrieval import tiers
from nexus.retrieval.embedding import Embedder
from nexus.runtime.builds import IDLE_AFTER
from nexus.ui.cache import CACHE_ENV

#: Seconds a script run waits for the sweep it started (AppTests set 60, so a run
#: shows the answer); the page polls otherwise.
WAIT_S = 0.0
#: Per metric the sweep shows: whether higher is better.
METRICS = {"MRR@10": True, "R@5": True, "lines@5": False}
_JOB = "_sweep_job"

#: ``work(progress=..., cancel=..., finished=...)``: runs ``experiments.sweep`` on the
#: page's repository, queries and embedder, over this job's grid.
Work = Callable[..., list[ConfigResult]]


#: The sweep's embedder choices, as the page names them.
TIER_LABELS = {
    tiers.QUALITY: "quality (MiniLM)",
    tiers.FAST: "fast (static, distilled from MiniLM)",
}


#: "Files in the sweep": every file (None), or the target files plus this many others.
DISTRACTOR_CHOICES: tuple[int | None, ...] = (None, 1000, 300)


def distractors_label(distractors: int | None) -> str:
    if distractors is None:
        return "every file"
    return f"files with targets + {distractors:,} others (sampled)"


def fast_embedder(words_view: bool) -> Embedder:
    """The fast tier, distilled into the cache folder on first use (a few minutes, on the
    sweep's thread), loaded in about a second after that."""
    return tiers.tier_embedder(tiers.FAST, words_view, cache_dir=os.environ.get(CACHE_ENV) or None)


def fast_tier_ready() -> bool:
    """Whether the fast tier's model is already distilled (nothing to wait for)."""
    folder = tiers.models_dir(os.environ.get(CACHE_ENV) or None) / tiers.STATIC_MODEL_NAME
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
    ) -> None:
        self.key = key
        self.maxes, self.mins, self.current = list(maxes), list(mins), current
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


def session_job() -> SweepJob | None:
    """The session's latest sweep job, if any."""
    return st.session_state.get(_JOB)


def start(
    key: Hashable, maxes: Sequence[int], mins: Sequence[int], current: Budget, work: Work
) -> SweepJob:
    """Start a sweep over ``maxes`` x ``mins`` and ``current``, keeping the settings the
    session's last job for ``key`` finished (a resume)."""
    last = session_job()
    if last is not None and last.running:
        last.cancel()
        last.join()
    finished = last.results if last is not None and last.key == key else {}
    job = SweepJob(key, sorted(maxes), sorted(mins), current, finished).start(work)
    st.session_state[_JOB] = job
    if WAIT_S:
        job.join(WAIT_S)
    return job


def export() -> tuple[pd.DataFrame, dict[str, object]] | None:
    """The session's last sweep answer for Export: its table and what it was run on
    (grid, variant, setting in use), or None before a sweep has an answer."""
    job = session_job()
    if job is None or job.current not in job.results:
        return None
    variant = str(st.session_state.get("sweep_variant") or "doc")
    table = sweep_table(job.rows(), job.current, variant)
    about = {"max_tokens": job.maxes, "min_tokens": job.mins, "variant": variant,
             "in_use": list(job.current), "complete": job.complete()}  # fmt: skip
    return table, about


def sweep_table(results: Sequence[ConfigResult], current: Budget, variant: str) -> pd.DataFrame:
    """One row per setting: chunks, each metric and its difference from the setting in
    use; ``row`` names the setting in use and the best one (``experiments.best``)."""
    base = next(r for r in results if (r.config.max_tokens, r.config.min_tokens) == current)
    top = best(results, variant)
    return pd.DataFrame(
        {
            "max_tokens": r.config.max_tokens,
            "min_tokens": str(r.config.min_tokens),
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
