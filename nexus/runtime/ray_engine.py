"""The Ray engine: chunk and embed a repository on a Ray cluster (``--engine ray``).

The driver reads and classifies the repository as usual (ignore rules, safety limits)
and hands the chunkable files to Ray Data as a dataset of ``(file info, bytes)`` rows,
so the workers need no shared file system. Chunking runs in ``map_batches`` tasks
(one CPU each) through the same per-file functions as the local engine (``analyze``,
then ``nexus.chunking.pipeline.chunk_analysis``), so both engines give the same chunks;
embedding runs in an actor pool, one model per actor, each actor on one core. The dataset keeps file
order, and the driver streams the results into ``OUT/parquet/part-NNNNN.parquet``
shards (the chunk fields, plus ``vector`` when embedding), ``OUT/chunks.jsonl`` (the
same records as ``nexus chunk --format jsonl``) and ``OUT/run.json`` (the manifest).

``ray`` is an optional dependency (``pip install -e .[ray]``), imported only here.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nexus.chunking.profiles import Profile
from nexus.config import ChunkConfig
from nexus.ingest.sources import FileRef, Repository
from nexus.retrieval.embedding import CachedEmbedder, Embedder, EmbeddingCache, default_embedder
from nexus.runtime.stream import chunk_ref
from nexus.types import Category, Chunk, FileInfo

#: Chunks per Parquet shard (and per batch the driver reads back).
SHARD_ROWS = 10_000
#: Files per chunking task.
FILES_PER_TASK = 16
#: Chunks per embedding call in an actor.
EMBED_BATCH = 64


class RayUnavailableError(RuntimeError):
    """``--engine ray`` was asked for but ray cannot be imported or reached."""


def require_ray() -> Any:
    """Import Ray, or say how to install it.

    Ray must be imported before usearch (``nexus.retrieval.index``) in a process: the two C++
    runtimes clash, and ``ray.init`` then aborts the process (``std::regex_error``).
    The CLI imports Ray first for ``--engine ray``; library callers do the same.
    """
    if "ray" not in sys.modules and "usearch" in sys.modules:
        raise RayUnavailableError(
            "usearch was imported before ray, and ray.init would abort this process: "
            "call nexus.runtime.ray_engine.require_ray() before importing nexus.retrieval.index"
        )
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data ships in the same wheel, needs pyarrow/pandas
    except ImportError as exc:
        raise RayUnavailableError(
            f"--engine ray needs Ray: pip install -e '.[ray]' ({exc})"
        ) from exc
    return ray


def connect(address: str | None = None, num_cpus: int | None = None) -> Any:
    """Join the cluster at ``address`` (``auto``, ``ray://host:10001``, ``host:6379``), or
    start Ray on this machine; an already started Ray is used as it is."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING"}
    if address:
        # The workers import this very Nexus: ship the package with the job.
        import nexus

        kwargs["runtime_env"] = {"py_modules": [str(Path(nexus.__file__).parent)]}
        kwargs["address"] = address
    else:
        kwargs["num_cpus"] = num_cpus
    logging.getLogger("ray.data").setLevel(logging.WARNING)  # no progress lines every 10 s
    try:
        ray.init(**kwargs)
    except Exception as exc:  # Ray raises bare Exception when a node times out starting
        where = address or "local"
        raise RayUnavailableError(f"cannot start or reach Ray at {where}: {exc}") from exc
    return ray


def _schema() -> Any:
    import pyarrow as pa

    text, num = pa.string(), pa.int64()
    fields = [
        ("id", text), ("repo", text), ("file", text), ("language", text), ("strategy", text),
        ("start_line", num), ("end_line", num), ("start_byte", num), ("end_byte", num),
        ("token_count", num), ("text", text), ("context", text), ("symbol", text),
        ("symbol_kind", text), ("parent", text), ("symbols", pa.list_(text)),
        ("imports", pa.list_(text)), ("exported", pa.bool_()), ("profile", text),
        ("has_error", pa.bool_()), ("starts_mid_line", pa.bool_()), ("embedding_text", text),
    ]  # fmt: skip
    return pa.schema(fields)


#: A column only the tasks' output has: a row with it set is no chunk but a file that
#: could not be chunked (``file``, and the error here). The driver takes those rows out
#: into run.json's ``not_chunked``; the shards and chunks.jsonl never hold them.
NOT_CHUNKED = "not_chunked"


def _task_schema() -> Any:
    import pyarrow as pa

    return _schema().append(pa.field(NOT_CHUNKED, pa.string()))


def _file_row(info: FileInfo, data: bytes) -> dict[str, Any]:
    return {
        "path": info.path,
        "size": info.size,
        "category": str(info.category),
        "language": info.language,
        "reason": info.reason,
        "data": data,
    }


def _chunk_files(
    batch: Any, config: ChunkConfig, repo: str, profiles: dict[str, Profile] | None
) -> Any:
    """``map_batches`` task: a batch of file rows -> their chunks, in file order.

    A file that fails is named on stderr (Ray forwards a task's output to the driver's
    console) and skipped, as the local engine does; the other files go on. It comes back
    as a row of its own (``NOT_CHUNKED``), which the driver writes to run.json.
    """
    import pyarrow as pa

    rows = []
    for row in batch.to_pylist():
        info = FileInfo(
            row["path"], row["size"], Category(row["category"]), row["language"], row["reason"]
        )
        result = chunk_ref(
            FileRef(info, data=row["data"]), config, repo=repo, custom_profiles=profiles
        )
        if result.error:
            print(f"nexus: {info.path}: not chunked: {result.error}", file=sys.stderr)
            rows.append({"file": info.path, NOT_CHUNKED: result.error})
        rows.extend(c.to_dict() for c in result.chunks)
    return pa.Table.from_pylist(rows, schema=_task_schema())


def _split_failures(batch: Any) -> tuple[Any, list[dict[str, str]]]:
    """A batch of task output -> (its chunk rows, without the column; the files that
    could not be chunked, as ``{"path", "error"}``)."""
    import pyarrow.compute as pc

    failed = pc.is_valid(batch.column(NOT_CHUNKED))
    failures = [
        {"path": row["file"], "error": row[NOT_CHUNKED]}
        for row in batch.filter(failed).select(["file", NOT_CHUNKED]).to_pylist()
    ]
    chunks = batch.filter(pc.invert(failed)) if failures else batch
    return chunks.drop_columns([NOT_CHUNKED]), failures


class _EmbedChunks:
    """Actor: one embedder, built once, adds a ``vector`` column to batches of chunks."""

    def __init__(self, make_embedder: Callable[[], Embedder], cache: str | None) -> None:
        embedder = make_embedder()
        self.embedder = CachedEmbedder(embedder, EmbeddingCache(cache)) if cache else embedder

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        texts = batch.column("embedding_text").to_pylist()
        keep = [i for i, text in enumerate(texts) if text is not None]  # not failure rows
        vectors = np.zeros((len(texts), self.embedder.dim), np.float32)
        if keep:
            found = self.embedder.encode([texts[i] for i in keep])
            vectors[keep] = np.asarray(found, dtype=np.float32).reshape(len(keep), -1)
        flat = pa.array(vectors.reshape(-1), type=pa.float32())
        return batch.append_column(
            "vector", pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1])
        )


def model_embedder(words_view: bool, model_path: str | None, precision: str) -> Embedder:
    """The CLI's embedder inside an actor: the model on one thread (one actor per core), in
    the precision the driver chose (``resolve_precision`` there), so an index never mixes
    vectors of workers whose CPUs would choose differently."""
    import torch

    torch.set_num_threads(1)
    return default_embedder(words_view=words_view, model_path=model_path, precision=precision)


@dataclass
class RayRun:
    """What a Ray run produced, in file order (``vectors`` only when it embedded)."""

    chunks: list[Chunk]
    vectors: np.ndarray | None
    files: int
    shards: list[str]
    seconds: float
    manifest: Path


def run(
    repo: Repository,
    config: ChunkConfig,
    out: str | os.PathLike[str],
    *,
    embedder: Callable[[], Embedder] | None = None,
    model: str = "",
    cache: str | None = None,
    actors: int | None = None,
    custom_profiles: dict[str, Profile] | None = None,
) -> RayRun:
    """Chunk (and with ``embedder``, a picklable factory, embed) ``repo`` on the connected
    Ray cluster (see ``connect``) and write the results to the folder ``out``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ray = require_ray()
    if not ray.is_initialized():
        raise RayUnavailableError(
            "Ray is not started: call nexus.runtime.ray_engine.connect() first"
        )
    started = time.perf_counter()
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # chunks come back in file order
    infos = [info for info in repo.files if info.chunkable]
    rows = [_file_row(info, repo.contents[info.path]) for info in infos]
    # At least two blocks per CPU so every worker gets some, at most FILES_PER_TASK files each.
    blocks = min(len(rows), max(2 * _cpus(ray), -(-len(rows) // FILES_PER_TASK)))
    files = ray.data.from_items(rows, override_num_blocks=max(1, blocks))
    chunks = files.map_batches(
        _chunk_files,
        fn_kwargs={"config": config, "repo": repo.name, "profiles": custom_profiles},
        batch_format="pyarrow",
        batch_size=FILES_PER_TASK,
        num_cpus=1,
    )
    if embedder is not None:
        chunks = chunks.map_batches(
            _EmbedChunks,
            fn_constructor_kwargs={"make_embedder": embedder, "cache": cache},
            batch_format="pyarrow",
            batch_size=EMBED_BATCH,
            compute=ray.data.ActorPoolStrategy(size=actors or _cpus(ray)),
            num_cpus=1,
        )
    out = Path(out)
    (out / "parquet").mkdir(parents=True, exist_ok=True)
    for old in (out / "parquet").glob("part-*.parquet"):
        old.unlink()  # shards of an earlier run
    records: list[Chunk] = []
    vectors: list[np.ndarray] = []
    shards: list[str] = []
    not_chunked: list[dict[str, str]] = []
    with open(out / "chunks.jsonl", "w", encoding="utf-8") as jsonl:
        for output in chunks.iter_batches(batch_size=SHARD_ROWS, batch_format="pyarrow"):
            batch, failures = _split_failures(output)
            not_chunked.extend(failures)
            if batch.num_rows == 0:
                continue
            name = f"part-{len(shards):05d}.parquet"
            pq.write_table(batch, out / "parquet" / name)
            shards.append(name)
            for row in batch.drop_columns(["vector"] if embedder else []).to_pylist():
                chunk = Chunk.from_dict(row)
                records.append(chunk)
                jsonl.write(json.dumps(chunk.to_dict(), ensure_ascii=False) + "\n")
            if embedder is not None:
                column = batch.column("vector").combine_chunks()
                dim = column.type.list_size
                vectors.append(column.flatten().to_numpy().reshape(-1, dim))
    seconds = time.perf_counter() - started
    stacked = None
    if embedder is not None:
        stacked = np.concatenate(vectors) if vectors else np.zeros((0, 0), np.float32)
    manifest = {
        "engine": "ray",
        "ray": ray.__version__,
        "cluster_cpus": _cpus(ray),
        "repo": repo.name,
        "files": len(infos),
        "chunks": len(records),
        "not_chunked": not_chunked,  # files a task could not chunk, with the error
        "settings": config.to_dict(),
        "model": model if embedder is not None else None,
        "seconds": round(seconds, 3),
        "jsonl": "chunks.jsonl",
        "parquet": [f"parquet/{name}" for name in shards],
        "schema": str(pa.schema(_schema())),
    }
    path = out / "run.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return RayRun(records, stacked, len(infos), shards, seconds, path)


def _cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
