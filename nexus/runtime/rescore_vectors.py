"""MiniLM's vectors of every chunk of a fast-tier index, computed in the background.

Re-scoring (``nexus.retrieval.rescore``) orders the fast tier's best hits by MiniLM's
cosine. Embedding those hits on each new query cost 1-3 s in float32 and kept torch
(1 GB and more) in every server. Instead, once a fast-tier index exists, a child
process (lower priority, ended when its parent ends) embeds all its chunks with MiniLM
through the embedding cache (so no chunk is embedded twice, and a later quality-tier
build reuses them), exports the ONNX query model if need be, writes the vectors beside
the saved index and exits. Until the file is there, answers come from the fast tier
and say "not re-scored yet"; after it, a query costs one ONNX pass over its own words
and a look-up of 30 rows: no model call for chunks, no torch in the process.

Run as ``python -m nexus.runtime.rescore_vectors FOLDER --cache DIR --parent PID``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nexus.retrieval.embedding import CachedEmbedder, Embedder
from nexus.retrieval.embedding_cache import EmbeddingCache, exclusive
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.onnx_minilm import ensure_onnx_model
from nexus.retrieval.tiers import QUALITY, models_dir, tier_embedder

#: How often the child looks for the index's manifest (a first build saves it once the
#: first answers pause) and whether its parent still lives.
POLL_S = 0.5
#: The child's niceness: answers in the parent come first.
NICENESS = 10
#: Log lines kept of a child (the last one says why it failed).
LOG_NAME = "rescore-vectors.log"


def vectors_file(folder: Path, model: str) -> Path:
    """Where the vectors of ``model`` for the index saved in ``folder`` are kept."""
    return folder / f"rescore-{model}.npy"


def compute_vectors(folder: Path, embedder: Embedder) -> Path:
    """Embed every chunk of the index saved in ``folder`` (in key order, as the
    re-scorer embeds a hit: ``Chunk.embedding_text``) and write them beside it, as
    float16 (the embedding cache's precision), atomically."""
    target = vectors_file(folder, embedder.name)
    index = VectorIndex.load(folder)
    texts = [chunk.embedding_text for chunk in index.chunks]
    vectors = embedder.encode(texts).astype(np.float16)
    scratch = target.with_suffix(".partial.npy")
    np.save(scratch, vectors)
    os.replace(scratch, target)
    return target


@dataclass
class VectorsJob:
    """A child process computing one index's MiniLM vectors (``compute_vectors``)."""

    folder: Path
    target: Path
    process: subprocess.Popen[bytes] | None
    log: Path

    def ready(self) -> bool:
        return self.target.is_file()

    def failure(self) -> str:
        """Why the child ended without writing the vectors ("" while it runs, after it
        succeeded, or when none was started)."""
        if self.process is None or self.process.poll() is None or self.ready():
            return ""
        try:
            lines = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            lines = []
        return lines[-1] if lines else f"the vectors job exited with {self.process.returncode}"


_JOBS: dict[Path, VectorsJob] = {}
_JOBS_LOCK = threading.Lock()


def start_job(
    folder: Path, model: str, cache_dir: Path, max_bytes: int | None, words_view: bool
) -> VectorsJob:
    """The job computing ``model``'s vectors of the index in ``folder``: one per folder
    in a process (many workspaces may answer from one index), none when they exist."""
    target = vectors_file(folder, model)
    with _JOBS_LOCK:
        job = _JOBS.get(target)
        if job is not None and not job.failure():
            return job
        log = cache_dir / "logs" / f"{folder.name}.{LOG_NAME}"
        if target.is_file():
            job = VectorsJob(folder, target, None, log)
        else:
            argv = [sys.executable, "-m", __name__, str(folder), "--cache", str(cache_dir)]
            argv += ["--parent", str(os.getpid())]
            argv += [] if max_bytes is None else ["--max-bytes", str(max_bytes)]
            argv += [] if words_view else ["--no-words-view"]
            job = VectorsJob(folder, target, spawn(argv, log), log)
        _JOBS[target] = job
        return job


def spawn(argv: list[str], log: Path) -> subprocess.Popen[bytes] | None:
    """Start the child ``argv``, its output appended to ``log`` (the test suite replaces
    this: its workspaces never wait for MiniLM)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        return subprocess.Popen(  # noqa: S603 - our own module, our own arguments
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=_child_env()
        )


def _child_env() -> dict[str, str]:
    """The parent's environment, offline, with one core of a few left to the answers."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 2) - 1)))
    return env


def _die_with(parent: int) -> None:
    """End this process when ``parent`` does (its orphans are re-parented)."""
    while os.getppid() == parent:
        time.sleep(POLL_S)
    os._exit(1)


def _wait_for_index(folder: Path) -> None:
    """Return once the index in ``folder`` is saved (its manifest is written last)."""
    while VectorIndex.read_manifest(folder) is None:
        time.sleep(POLL_S)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--parent", type=int, default=0)
    parser.add_argument("--max-bytes", type=int, default=None)
    parser.add_argument("--no-words-view", dest="words_view", action="store_false")
    args = parser.parse_args(argv)
    if args.parent:  # a background job: it yields to its parent and ends with it
        threading.Thread(target=_die_with, args=(args.parent,), daemon=True).start()
        os.nice(NICENESS)
    _wait_for_index(args.folder)
    inner = tier_embedder(QUALITY, words_view=args.words_view)
    target = vectors_file(args.folder, inner.name)
    with exclusive(args.folder / "rescore-vectors.lock"):  # another process's job
        if target.is_file():
            return 0
        began = time.perf_counter()
        ensure_onnx_model(models_dir(args.cache), say=print)
        embedder = CachedEmbedder(inner, EmbeddingCache(args.cache, max_bytes=args.max_bytes))
        compute_vectors(args.folder, embedder)
        print(
            f"{len(VectorIndex.load(args.folder))} chunk vectors ({embedder.last_misses} "
            f"embedded now) in {time.perf_counter() - began:.0f} s: {target}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
