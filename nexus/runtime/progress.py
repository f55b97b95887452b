"""What a background index build has done so far: its phase and a ``BuildProgress``
snapshot that the pages read while the build goes on; the ``Pace`` that sizes its steps."""

from __future__ import annotations

import math
from dataclasses import dataclass

QUEUED, CHUNKING = "queued", "chunking files"
LOADING, EMBEDDING = "loading the embedding model", "embedding"
DONE, CANCELLED, IDLE, FAILED = "done", "cancelled", "stopped (nobody waiting)", "failed"
OPENED = "opened the saved index"
RUNNING_PHASES = (QUEUED, CHUNKING, LOADING, EMBEDDING)

#: Seconds of model time the pace is averaged over: each step weighs by the time it took
#: (not one step, one vote), so small steps and large ones smooth alike, and a step of
#: long chunks after short ones moves the next step's size a little, not threefold.
PACE_WINDOW_S = 30.0


@dataclass(frozen=True)
class Pace:
    """Seconds per item, an exponential moving average over the model's time only:
    waiting for the model to load, chunking and reading the cache do not count."""

    seconds_per_item: float | None = None

    def after(self, items: int, seconds: float) -> Pace:
        """The pace once ``items`` more took ``seconds`` (the first step sets it)."""
        if items <= 0:
            return self
        now = max(seconds, 0.0) / items
        if self.seconds_per_item is None:
            return Pace(now)
        weight = 1.0 - math.exp(-max(seconds, 0.0) / PACE_WINDOW_S)
        return Pace(self.seconds_per_item + weight * (now - self.seconds_per_item))


@dataclass(frozen=True)
class BuildProgress:
    """What a build has done so far (a snapshot; the build goes on)."""

    phase: str
    done: int  # chunks whose vectors are in the index so far
    total: int  # chunks made so far (all of them once every file is chunked)
    embedded: int  # of those, texts the model embedded (the rest came from the cache)
    # Chunks the model embeds a second: those it embedded over the time it took (cache
    # hits count in neither); frozen once the build is done. None before its first chunk.
    rate: float | None
    error: str = ""
    files_done: int = 1  # files chunked so far
    files: int = 1
    model_loading: bool = False  # the model is still loading (while files are chunked)
    bytes_done: int = 0  # bytes of the files chunked so far
    bytes: int = 0  # bytes of all files to chunk
    files_embedded: int = 0  # files whose every chunk is embedded (most useful files first)
    files_with_chunks: int = 0  # files that have chunks: what ``files_embedded`` counts up to
    # Chunks the embedding cache held when the build began embedding (saved by a build of
    # these settings that was stopped, or by builds of others sharing chunk texts): they
    # come first, at the cache's speed, and take none of the model's time.
    cached_first: int = 0
    # An earlier build of the same key began and never finished (cancelled, stopped while
    # nobody was waiting, failed, or the server went down): this one resumes it.
    interrupted: bool = False
    opened_from: str = ""  # the saved index's folder, when one was opened

    @property
    def running(self) -> bool:
        return self.phase in RUNNING_PHASES

    @property
    def complete(self) -> bool:
        """Every chunk is in the index (built here, or a saved index opened)."""
        return self.phase in (DONE, OPENED)

    @property
    def chunking(self) -> bool:
        return self.files_done < self.files

    @property
    def expected_total(self) -> int:
        """Chunks there will be: counted once every file is chunked, estimated before
        from the chunks per byte so far (files differ too much in size for chunks per
        file: the first few small ones said 72,960 where there were 26,565)."""
        if not self.chunking or not self.bytes_done:
            return self.total
        return max(self.total, round(self.total * self.bytes / self.bytes_done))

    @property
    def fraction(self) -> float:
        total = self.expected_total
        return self.done / total if total else 1.0

    @property
    def eta_s(self) -> float | None:
        """Seconds the model has left at its ``rate``: the cached chunks still to read
        take none (None before the model's first chunk: its rate is unknown). The rate
        over all the model's time, not a recent window: on excalidraw at 0.6 chunks/s a
        30-s window swung the estimate between 56 min and 2 h 21 min within 4 minutes."""
        left = self.expected_total - max(self.done, self.cached_first)
        return max(left, 0) / self.rate if self.rate else None

    @property
    def resumed_note(self) -> str:
        """What a build resuming an interrupted one found already embedded ("" when it
        resumes nothing: a first build whose chunks other builds cached is no resume)."""
        if not (self.interrupted and self.cached_first):
            return ""
        return (
            f"Resumed: {self.cached_first:,} of {self.total:,} chunks were already embedded "
            "(saved by the build of these settings that was stopped before it finished)"
        )

    def summary(self) -> str:
        """One line for people: phase, files chunked, chunks and files embedded, speed,
        time left, cache share, whether the model is still loading, and what a resumed
        build or an opened index found on disk."""
        if self.phase == QUEUED or (self.phase == LOADING and not self.chunking):
            waiting = f"{self.phase.capitalize()}… ({self.total:,} chunks to index)"
            return " · ".join(filter(None, [waiting, self.resumed_note]))
        if self.phase == OPENED:
            where = f" {self.opened_from}" if self.opened_from else ""
            return f"{self.phase}{where} from disk ({self.total:,} chunks, nothing embedded)"
        parts = [self.phase]
        if self.chunking:
            parts.append(
                f"{self.files_done:,}/{self.files:,} files chunked, {self.total:,} chunks so far"
            )
            parts.append(f"{self.done:,}/about {self.expected_total:,} chunks embedded")
        else:
            parts.append(f"{self.done:,}/{self.total:,} chunks ({self.fraction:.0%})")
            if self.files_with_chunks:
                parts.append(
                    f"{self.files_embedded:,}/{self.files_with_chunks:,} files fully embedded"
                )
        if self.resumed_note:
            parts.append(self.resumed_note)
        if self.model_loading and self.phase != LOADING:
            parts.append("loading the embedding model meanwhile")
        if self.rate:
            parts.append(f"the model embeds {self.rate:,.1f} chunks/s")
        if self.running and self.eta_s is not None:
            parts.append(f"about {duration(self.eta_s)} left")
        cached = self.done - self.embedded
        if self.running:
            parts.append(
                f"{self.embedded:,} embedded by the model so far, {cached:,} from the cache"
            )
        else:  # said of the build, not of whoever looks at it now (it may have reused it)
            parts.append(
                f"the build embedded {self.embedded:,} with the model and took {cached:,} "
                "from the cache"
            )
        if self.error:
            parts.append(self.error)
        return " · ".join(parts)


def duration(seconds: float) -> str:
    """``42 s``, ``3 min``, ``1 h 05 min``."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
