"""Chunk a repository file by file, on worker processes, in file order.

Files flow to the workers as ``FileRef``s (a path on disk, or a zip's bytes): each
worker reads and decodes its files itself, with parsers and an encoder built once
per process. Results flow back as one ``FileChunks`` per file, in path order
whatever the number of workers, so N workers give exactly the output of one.
Nothing of a file is kept once its result is consumed: memory stays flat as the
repository grows (the caller decides what to keep: the JSONL writer keeps
nothing, the index builder keeps the chunks).

A file that fails -- an exception, or a worker process that dies on it -- gives a
``FileChunks`` with ``error`` set, and the run goes on.

A caller that only writes the chunks out asks for ``FileJsonl`` instead
(``jsonl=True``): each worker encodes its files' chunks to JSONL itself and sends back
one string per file. Sending ``Chunk`` objects back cost the parent an unpickle and a
JSON encode per chunk, on the cores the workers need: 0.9 s of CPU per 40,000 chunks
against 0.13 s to unpickle the strings (measured on lodash's chunks at load 14).
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from importlib.machinery import SourceFileLoader
from pathlib import Path

import numpy as np

from nexus.chunking.analysis import analyze
from nexus.chunking.pipeline import chunk_analysis
from nexus.chunking.profiles import Profile, resolve_profile
from nexus.chunking.tokens import get_encoding
from nexus.config import ChunkConfig
from nexus.ingest.sources import FileRef, Repository, RepositoryScan
from nexus.runtime.lifeline import die_with
from nexus.types import Chunk

#: Files go to a worker in batches of consecutive files, which spreads the cost of a
#: task (a queue round trip, two pickles) over many small files; a batch closes at
#: ``BATCH_BYTES`` of source, so a large file travels alone.
BATCH_FILES = 16
BATCH_BYTES = 200_000
#: Below this many files per worker, chunking stays in one process: a pool costs a
#: second or so to start, not worth it for a handful of files.
POOL_MIN_FILES_PER_WORKER = 50
#: Batches in flight per worker: enough that the other workers keep going while one
#: chews on a multi-MB file (results are consumed in order), few enough that the
#: results waiting their turn stay small whatever the repository's size.
WINDOW_PER_WORKER = 8


@dataclass(frozen=True)
class FileChunks:
    """The chunks of one file, or why it has none; with their vectors and keyword terms
    where the worker made them too (``prepare``)."""

    path: str
    chunks: tuple[Chunk, ...] = ()
    error: str = ""  # why the file could not be chunked ("" = it was)
    vectors: np.ndarray | None = field(default=None, compare=False)  # a row per chunk
    term_counts: tuple[Mapping[str, int], ...] = ()  # a keyword document per chunk

    @property
    def n_chunks(self) -> int:
        return len(self.chunks)


@dataclass(frozen=True)
class FileJsonl:
    """The chunks of one file as JSONL records (one ``Chunk.to_dict`` a line), or why
    it has none."""

    path: str
    text: str = ""
    n_chunks: int = 0
    error: str = ""


#: What the stream yields per file.
FileResult = FileChunks | FileJsonl


#: What a worker does to a batch of files' results before sending them back (picklable:
#: it travels to the workers), e.g. embed their chunks.
Prepare = Callable[[list[FileChunks]], list[FileChunks]]


def as_jsonl(results: list[FileChunks]) -> list[FileJsonl]:
    """Each result's chunks as the lines ``nexus chunk --format jsonl`` writes."""
    return [
        FileJsonl(
            r.path,
            "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in r.chunks),
            len(r.chunks),
            r.error,
        )
        for r in results
    ]


def default_workers() -> int:
    """All the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def chunk_ref(
    ref: FileRef,
    config: ChunkConfig,
    *,
    repo: str,
    custom_profiles: dict[str, Profile] | None = None,
) -> FileChunks:
    """Read, parse and chunk one file; a failure is reported for this file, not raised.

    The unit of work of every engine (the local workers, Ray's ``map_batches``).
    """
    try:
        analysis = analyze(ref.load(), config.encoding)
        chunks = chunk_analysis(analysis, config, repo=repo, custom_profiles=custom_profiles)
    except Exception as exc:  # one bad file must not stop a repository
        return FileChunks(ref.info.path, error=f"{type(exc).__name__}: {exc}")
    return FileChunks(ref.info.path, tuple(chunks))


def stream_chunks(
    repo: Repository,
    config: ChunkConfig,
    *,
    workers: int = 1,
    custom_profiles: dict[str, Profile] | None = None,
    jsonl: bool = False,
    prepare: Prepare | None = None,
) -> Iterator[FileResult]:
    """The chunks of every chunkable file of ``repo``, one ``FileChunks`` per file
    (``FileJsonl`` with ``jsonl``), in path order. ``workers`` > 1 chunks on that many
    processes (same output). ``prepare`` runs where the files were chunked, on each
    batch of results (``FileChunks`` only)."""
    return stream_refs(
        repo.refs(),
        config,
        repo=repo.name,
        workers=workers,
        custom_profiles=custom_profiles,
        jsonl=jsonl,
        prepare=prepare,
    )


def stream_scan(
    scan: RepositoryScan,
    config: ChunkConfig,
    *,
    workers: int,
    custom_profiles: dict[str, Profile] | None = None,
    jsonl: bool = False,
    prepare: Prepare | None = None,
) -> Iterator[FileResult]:
    """``stream_chunks`` of a folder still being read: its files go to the workers as the
    walk finds them. Up to ``workers`` processes: fewer when the walk ends before each
    would have ``POOL_MIN_FILES_PER_WORKER`` files (known after reading that many)."""
    workers = workers_that_can_start(workers)
    if workers > 1 and scan.chunkable_files() is None:
        start_fork_server()  # a large folder's workers start while its first files are read
    refs = scan.refs()
    first = list(itertools.islice(refs, workers * POOL_MIN_FILES_PER_WORKER))
    workers = min(workers, max(1, len(first) // POOL_MIN_FILES_PER_WORKER))
    return stream_refs(
        itertools.chain(first, refs),
        config,
        repo=scan.name,
        workers=workers,
        custom_profiles=custom_profiles,
        jsonl=jsonl,
        prepare=prepare,
    )


def stream_refs(
    refs: Iterable[FileRef],
    config: ChunkConfig,
    *,
    repo: str,
    workers: int = 1,
    custom_profiles: dict[str, Profile] | None = None,
    jsonl: bool = False,
    prepare: Prepare | None = None,
) -> Iterator[FileResult]:
    """``stream_chunks`` over any files, in the order given."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if jsonl and prepare is not None:
        raise ValueError("prepare works on FileChunks, not on JSONL")
    # A bad setting fails the run here, once, rather than every file in a worker.
    resolve_profile(config.profile, custom_profiles)
    get_encoding(config.encoding)
    job: _Job = (config, repo, custom_profiles, as_jsonl if jsonl else (prepare or _as_is))
    if workers_that_can_start(workers) == 1:
        return (result for ref in refs for result in _work_on([ref], job))
    return _pooled(iter(refs), workers, job)


def collect_chunks(results: Iterable[FileChunks]) -> tuple[list[Chunk], list[FileChunks]]:
    """All chunks in file order, and the files that failed."""
    chunks: list[Chunk] = []
    failed: list[FileChunks] = []
    for result in results:
        chunks.extend(result.chunks)
        if result.error:
            failed.append(result)
    return chunks, failed


# --- worker processes ----------------------------------------------------------

#: What a worker needs: the settings, the repository's name, custom profiles, and what
#: to make of a batch of files' ``FileChunks`` before it is sent back.
_Job = tuple[
    ChunkConfig, str, "dict[str, Profile] | None", Callable[[list[FileChunks]], list[FileResult]]
]
_job: _Job | None = None  # set once in each worker process


def _as_is(results: list[FileChunks]) -> list[FileChunks]:
    return results


def _work_on(refs: list[FileRef], job: _Job) -> list[FileResult]:
    config, repo, custom_profiles, finish = job
    return finish([chunk_ref(r, config, repo=repo, custom_profiles=custom_profiles) for r in refs])


def _start_worker(job: _Job, owner: int | None = None) -> None:
    """A worker's start: its job, and (given the pool's ``owner`` pid) an end with it, so
    a killed server leaves no worker behind (``nexus.runtime.lifeline``)."""
    global _job
    _job = job
    if owner is not None:
        die_with(owner)


def _work(refs: list[FileRef]) -> list[FileResult]:
    assert _job is not None, "worker started without its job"
    return _work_on(refs, _job)


def start_fork_server() -> None:
    """Start the workers' fork server now: it imports Nexus (a few tenths of a second of
    CPU) on another core while the caller reads the repository, so the pool opened after
    the scan forks its workers at once instead of waiting for it."""
    from multiprocessing import forkserver

    _context()
    forkserver.ensure_running()


def workers_that_can_start(workers: int) -> int:
    """``workers``, or 1 when worker processes would run the main script's code again.

    A worker starts by running the script that started Python (as multiprocessing does
    for ``forkserver`` and ``spawn``); a script that opens a ``Workspace`` at its top level,
    not under ``if __name__ == "__main__":``, would then start workers of its own in every
    worker, each dying at once: a build that never ends. Such a script is chunked in its
    own process instead, and told so once on stderr."""
    script = unguarded_main_script() if workers > 1 else None
    if script is not None:
        if script not in _TOLD:
            _TOLD.add(script)
            print(
                f"nexus: chunking in one process: {script} has no "
                '`if __name__ == "__main__":`, which worker processes need',
                file=sys.stderr,
            )
        return 1
    return workers


_TOLD: set[str] = set()


def unguarded_main_script() -> str | None:
    """The script Python was started with when its top level tests no ``__name__`` (None
    for ``python -m``, ``-c``, a notebook, a script with the guard, or a module that
    Python did not load from a file: Streamlit runs each page in one it makes itself)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(getattr(main, "__spec__", None), "name", None):
        return None
    if not isinstance(getattr(main, "__loader__", None), SourceFileLoader):
        return None
    return None if _tests_its_name(path) else path


@functools.lru_cache(maxsize=8)
def _tests_its_name(path: str) -> bool:
    """Whether the script's top level has an ``if`` on ``__name__`` (read once per script;
    one that cannot be read counts as guarded)."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return True
    return any(
        isinstance(node, ast.If)
        and any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(node.test))
        for node in tree.body
    )


def _context() -> multiprocessing.context.ForkServerContext:
    # forkserver: workers fork from a clean server process, never from a parent that
    # may hold threads (tqdm, torch), and import Nexus (and load the encoding) once, not
    # once per worker.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["nexus.runtime.worker_preload"])
    return context


def _pool(workers: int, job: _Job) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        workers, mp_context=_context(), initializer=_start_worker, initargs=(job, os.getpid())
    )


def _batches(refs: Iterator[FileRef]) -> Iterator[list[FileRef]]:
    """Consecutive files, up to ``BATCH_FILES`` or ``BATCH_BYTES`` at a time."""
    batch: list[FileRef] = []
    size = 0
    for ref in refs:
        batch.append(ref)
        size += ref.info.size
        if len(batch) >= BATCH_FILES or size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


class _Arriving:
    """Batches as their files arrive (a folder's walk may still be going on)."""

    def __init__(self, refs: Iterator[FileRef]) -> None:
        self._incoming = _batches(refs)
        self.batches: list[list[FileRef]] = []
        self.complete = False  # every file has arrived

    def pull(self) -> bool:
        """Take one more batch; False once there are none."""
        if not self.complete:
            batch = next(self._incoming, None)
            if batch is None:
                self.complete = True
            else:
                self.batches.append(batch)
        return not self.complete

    def has(self, index: int) -> bool:
        """Whether batch ``index`` exists (waiting for its files if need be)."""
        while len(self.batches) <= index and self.pull():
            pass
        return index < len(self.batches)

    def largest(self, start: int) -> int | None:
        """The batch with the most bytes from ``start`` on."""
        return max(
            range(start, len(self.batches)),
            key=lambda i: sum(ref.info.size for ref in self.batches[i]),
            default=None,
        )


def _pooled(refs: Iterator[FileRef], workers: int, job: _Job) -> Iterator[FileResult]:
    """Results in input order from a pool, surviving workers that die.

    The files may still be arriving (``RepositoryScan``: a folder's walk reads and
    classifies every file, 1.6-2.3 s of CPU on the scale corpus in a fresh process, up
    to a fifth of a two-worker run): batches go to the workers as they fill, and the
    walk goes on while the parent waits for a result, instead of the workers waiting
    for the walk.

    Once every batch is known, the one with the most bytes is started at once and its
    result held until its turn: started in path order, a multi-MB file near the end
    kept one worker busy after the other had run out of files (TypeScript's 6 MB
    ``_tsc.js``, 120 files from the end of the scale corpus: 8.1 s of chunking on two
    workers instead of 7.6 s, simulated from each file's CPU time in
    ``bench/speed/chunk_workers.py``).

    When a worker dies, every file in flight fails with it and the culprit is
    unknown: those files are run again one at a time in a fresh pool, so only the
    file that kills its worker again is reported as failed.
    """
    arriving = _Arriving(refs)
    next_batch = 0
    largest_started = False
    suspects: deque[FileRef] = deque()
    window: deque[tuple[list[FileRef], Future[list[FileResult]]]] = deque()
    early: dict[int, Future[list[FileResult]]] = {}
    while True:
        with _pool(workers, job) as pool:
            try:
                while suspects:
                    (result,) = pool.submit(_work, [suspects[0]]).result()
                    suspects.popleft()
                    yield result
                while True:
                    while len(window) < workers * WINDOW_PER_WORKER and arriving.has(next_batch):
                        future = early.pop(next_batch, None)
                        if future is None:
                            future = pool.submit(_work, arriving.batches[next_batch])
                        window.append((arriving.batches[next_batch], future))
                        next_batch += 1
                    if not window:
                        return
                    while not window[0][1].done() and arriving.pull():
                        pass  # the walk goes on while the workers chunk
                    if arriving.complete and not largest_started:
                        largest_started = True
                        largest = arriving.largest(next_batch)
                        if largest is not None and largest > next_batch:
                            early[largest] = pool.submit(_work, arriving.batches[largest])
                    results = window[0][1].result()
                    window.popleft()
                    yield from results
            except BrokenProcessPool:
                early.clear()  # not yet its turn: submitted again when it is
                if suspects:  # it died on this file alone: report it, go on
                    ref = suspects.popleft()
                    died = FileChunks(ref.info.path, error="the worker process died on this file")
                    yield from job[3]([died])
                else:
                    suspects.extend(ref for batch, _ in window for ref in batch)
                    window.clear()
            except BaseException:
                for future in [*(f for _, f in window), *early.values()]:
                    future.cancel()
                raise
