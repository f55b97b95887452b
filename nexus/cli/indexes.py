"""``nexus index``, and the saved indexes that ``search`` and ``eval`` open or build."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from nexus.cli.cache import cache_folder
from nexus.cli.common import (
    chunk_stream,
    config_from_args,
    custom_profiles_from_args,
    ingest_settings_from_args,
    open_target,
)
from nexus.config import ChunkConfig
from nexus.ingest.sources import Repository


def workspace_settings(args: argparse.Namespace, config: ChunkConfig):
    """The workspace settings the flags name (the one place args become settings)."""
    from nexus.config import load_model_path
    from nexus.retrieval.embedding_cache import megabytes
    from nexus.workspace import Settings

    max_mb = getattr(args, "cache_max_mb", None)
    return Settings(
        config=config,
        tier=args.tier,  # resolved by `main` (`common.default_tier`) when not given
        cache_dir=cache_folder(args),
        cache_max_bytes=megabytes(max_mb) if max_mb is not None else None,
        model_path=args.model or (load_model_path(args.config) if args.config else None),
        files=ingest_settings_from_args(args),
        custom_profiles=custom_profiles_from_args(args),
        workers=args.workers,
        rescore=getattr(args, "rescore", True),
    )


def cached_embedder(args: argparse.Namespace, config: ChunkConfig):
    """The embedder behind the on-disk cache (imports torch only when it embeds).

    ``--model DIR`` or ``[embedding] model`` in the config file names a local
    sentence-transformers folder; the default is the bundled all-MiniLM-L6-v2.
    ``--tier fast`` is the static model distilled from it (``nexus.retrieval.tiers``).
    """
    from nexus.workspace import open_embedder

    if args.tier == "fast" and getattr(args, "engine", "local") == "ray":
        raise ValueError("--engine ray embeds with the quality tier: leave out --tier fast")
    settings = workspace_settings(args, config)
    return open_embedder(settings, say=lambda line: print(f"nexus: {line}", file=sys.stderr))


def rescoring_embedder(args: argparse.Namespace, config: ChunkConfig):
    """MiniLM behind the on-disk cache, as ``Workspace.search`` re-scores a fast-tier
    index with it; None when it would not (another tier, ``--fast-order`` or
    ``--no-rescore``, or the ranking stage off)."""
    from dataclasses import replace

    from nexus.retrieval.ranking import rules_for
    from nexus.retrieval.tiers import FAST, QUALITY
    from nexus.workspace import open_embedder

    settings = workspace_settings(args, config)
    if settings.tier != FAST or not settings.rescore or rules_for(config) is None:
        return None
    return open_embedder(replace(settings, tier=QUALITY))


def open_workspace(args: argparse.Namespace, config: ChunkConfig, repo: Repository):
    """The workspace of ``repo`` under the flags' settings and embedder."""
    from nexus.workspace import Workspace

    return Workspace(repo, workspace_settings(args, config), cached_embedder(args, config))


def index_workspace(args: argparse.Namespace, workspace, strategies: Sequence[str]):
    """``workspace.index`` with the CLI's progress bars, ``--out``, ``--rebuild`` and
    ``--engine``; says on stderr which index was opened or built."""
    from nexus.retrieval.embedding import tqdm_progress
    from nexus.retrieval.store import IndexStore

    repo = workspace.repo
    custom = custom_profiles_from_args(args)
    out = getattr(args, "out", None)
    folder = Path(out) if out else None
    builder = None
    if getattr(args, "engine", "local") == "ray":
        store = IndexStore(cache_folder(args) / "indexes")
        builder = _ray_builder(args, repo, workspace.embedder, store, [folder])
    bar = tqdm_progress("embedding chunks")
    opened = workspace.index(
        strategies,
        rebuild=getattr(args, "rebuild", False),
        folder=folder,
        chunker=lambda chosen, prepare: chunk_stream(args, repo, chosen, custom, prepare=prepare),
        builder=builder,
        report=lambda stage, done, total: bar(done, total) if stage == "embedding" else None,
    )
    for strategy, one in zip(strategies, opened, strict=True):
        print(f"nexus: {one.describe(strategy)}", file=sys.stderr)
    return opened


def _ray_builder(args: argparse.Namespace, repo, embedder, store, folders):
    """Builds indexes with ``--engine ray``: chunked and embedded on the cluster, with the
    Parquet shards, JSONL and run manifest written into the index folder."""
    from functools import partial

    from nexus.config import load_model_path
    from nexus.retrieval.embedding import resolve_precision
    from nexus.retrieval.index import VectorIndex
    from nexus.runtime import ray_engine

    model = args.model or (load_model_path(args.config) if args.config else None)

    def build(missing):
        ray_engine.connect(args.address, args.ray_cpus)
        out = []
        for identity in missing:
            config = config_from_args(args).with_(strategy=identity.strategy)
            run = ray_engine.run(
                repo,
                config,
                folders[0] or store.folder(identity),
                embedder=partial(
                    ray_engine.model_embedder, config.words_view, model, resolve_precision()
                ),
                model=embedder.name,
                cache=str(cache_folder(args)),
                custom_profiles=custom_profiles_from_args(args),
            )
            print(
                f"nexus: ray: {run.files} files, {len(run.chunks)} chunks in "
                f"{run.seconds:.1f} s; manifest {run.manifest}",
                file=sys.stderr,
            )
            if not run.chunks:
                out.append(VectorIndex(embedder.dim, embedder.name))
            else:
                out.append(VectorIndex.build(run.chunks, run.vectors, embedder.name))
        return out

    return build


def cmd_index(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    repo = open_target(args)
    workspace = open_workspace(args, config, repo)
    embedder = workspace.embedder
    (opened,) = index_workspace(args, workspace, [config.strategy])
    chunks = opened.index.chunks
    if opened.reused:
        print(
            f"{len(chunks)} {config.strategy} chunks of {repo.name}: index up to date in "
            f"{opened.folder} (same files, settings and model; --rebuild to build anew)"
        )
        return _rescore_vectors(workspace, config.strategy)
    if args.engine == "ray":
        print(f"indexed {len(chunks)} {config.strategy} chunks of {repo.name} into {opened.folder}")
        return 0
    from nexus.retrieval.embedding import over_window

    over = over_window(embedder, [c.embedding_text for c in chunks])
    said = f"about {over.count}" if over.estimated else str(over.count)
    share = f" ({over.share:.0%})" if chunks else ""
    print(
        f"indexed {len(chunks)} {config.strategy} chunks of {repo.name} into {opened.folder} "
        f"({embedder.last_hits} cached, {embedder.last_misses} embedded); "
        f"{said} chunks{share} are longer than the model's {embedder.max_seq_length} word pieces "
        "and are embedded from their start (--preset model-window avoids that)"
    )
    return _rescore_vectors(workspace, config.strategy)


def _rescore_vectors(workspace, strategy: str) -> int:  # noqa: ANN001
    """With the fast tier: wait for MiniLM's vectors of the chunks (computed once, in a
    child process), so that later searches are re-scored from their first answer."""
    from nexus.retrieval.rescore import RESCORED

    if not (workspace.settings.rescore and workspace.settings.tier == "fast"):
        return 0
    print("computing MiniLM's vectors of the chunks for re-scoring (once; --no-rescore skips)")
    state = workspace.wait_for_rescore(strategy)
    print(f"re-scoring: {state}")
    return 0 if state in ("", RESCORED) else 1
