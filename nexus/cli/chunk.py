"""``nexus chunk``: a repository's chunks as a table or JSONL (or a Ray Data run)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nexus.cli.common import (
    chunk_stream,
    config_from_args,
    custom_profiles_from_args,
    say_unsupported,
    scan_target,
)
from nexus.config import ChunkConfig


def cmd_chunk(args: argparse.Namespace) -> int:
    from nexus.evaluation.report import chunks_table
    from nexus.runtime.stream import collect_chunks, start_fork_server

    config = config_from_args(args)
    if args.engine != "ray" and (args.workers is None or args.workers > 1):
        start_fork_server()  # while the folder is read (unused if it has few files)
    scan = scan_target(args)  # chunked as the folder's walk finds its files
    if args.engine == "ray":
        repo = scan.repository()
        say_unsupported(repo)
        return _chunk_with_ray(args, config, repo)
    jsonl = args.format == "jsonl"
    results = chunk_stream(args, scan, config, custom_profiles_from_args(args), jsonl=jsonl)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
    try:
        if jsonl:  # encoded on the workers, written file by file: nothing is kept
            for result in results:
                out.write(result.text)
        else:
            out.write(chunks_table(collect_chunks(results)[0], config.max_tokens) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    say_unsupported(scan.repository())
    return 0


def _chunk_with_ray(args: argparse.Namespace, config: ChunkConfig, repo) -> int:
    from nexus.runtime import ray_engine

    if not args.output:
        raise ValueError(
            "--engine ray writes a folder (JSONL, Parquet shards, manifest): add -o DIR"
        )
    ray_engine.connect(args.address, args.ray_cpus)
    run = ray_engine.run(repo, config, args.output, custom_profiles=custom_profiles_from_args(args))
    print(
        f"chunked {run.files} files of {repo.name} into {len(run.chunks)} chunks with Ray in "
        f"{run.seconds:.1f} s: {Path(args.output) / 'chunks.jsonl'}, {len(run.shards)} Parquet "
        f"shards, manifest {run.manifest}"
    )
    return 0
