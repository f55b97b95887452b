"""``nexus index``, and the saved indexes that ``search`` and ``eval`` open or build."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from nexus.cli.cache import cache_folder, open_cache
from nexus.cli.common import (
    collected_chunks,
    config_from_args,
    custom_profiles_from_args,
    open_target,
)
from nexus.config import ChunkConfig
from nexus.ingest.sources import Repository


def cached_embedder(args: argparse.Namespace, config: ChunkConfig):
    """The embedder behind the on-disk cache (imports torch only when it embeds).

    ``--model DIR`` or ``[embedding] model`` in the config file names a local
    sentence-transformers folder; the default is the bundled all-MiniLM-L6-v2.
    ``--tier fast`` is the static model distilled from it (``nexus.retrieval.tiers``).
    """
    from nexus.config import load_model_path
    from nexus.retrieval.embedding import CachedEmbedder
    from nexus.retrieval.tiers import tier_embedder

    if args.tier == "fast" and getattr(args, "engine", "local") == "ray":
        raise ValueError("--engine ray embeds with the quality tier: leave out --tier fast")
    model = args.model or (load_model_path(args.config) if args.config else None)
    cache = open_cache(args)
    embedder = tier_embedder(
        args.tier,
        words_view=config.words_view,
        model_path=model,
        cache_dir=cache.folder,
        say=lambda line: print(f"nexus: {line}", file=sys.stderr),
    )
    return CachedEmbedder(embedder, cache)


def saved_indexes(
    args: argparse.Namespace, config: ChunkConfig, strategies: Sequence[str], repo: Repository
):
    """The embedder and one index per strategy of ``repo``: the saved one that matches
    the files, settings and model, else built (chunked and embedded, here or with
    ``--engine ray``) and saved. Says which on stderr. ``--out`` (index) names the folder;
    ``--rebuild`` ignores saved indexes."""
    from nexus.retrieval.embedding import tqdm_progress
    from nexus.retrieval.store import (
        IndexStore,
        chunk_and_embed,
        files_digest,
        identity_for,
        open_or_build,
    )

    embedder = cached_embedder(args, config)
    custom = custom_profiles_from_args(args)
    digest = files_digest(repo)
    configs = [config.with_(strategy=s) for s in strategies]
    identities = [identity_for(repo.name, digest, c, embedder.name, custom) for c in configs]
    store = IndexStore(cache_folder(args) / "indexes")
    out = getattr(args, "out", None)
    folders = [Path(out) if out else None for _ in strategies]

    def make_chunks(missing):
        return [
            collected_chunks(args, repo, config.with_(strategy=i.strategy), custom) for i in missing
        ]

    build = chunk_and_embed(make_chunks, embedder, tqdm_progress("embedding chunks"))
    if getattr(args, "engine", "local") == "ray":
        build = _ray_builder(args, repo, embedder, store, folders)
    opened = open_or_build(
        store, identities, build, rebuild=getattr(args, "rebuild", False), folders=folders
    )
    for strategy, one in zip(strategies, opened, strict=True):
        print(f"nexus: {one.describe(strategy)}", file=sys.stderr)
    return embedder, opened


def _ray_builder(args: argparse.Namespace, repo, embedder, store, folders):
    """Builds indexes with ``--engine ray``: chunked and embedded on the cluster, with the
    Parquet shards, JSONL and run manifest written into the index folder."""
    from functools import partial

    from nexus.config import load_model_path
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
                embedder=partial(ray_engine.model_embedder, config.words_view, model),
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
    embedder, (opened,) = saved_indexes(args, config, [config.strategy], repo)
    chunks = opened.index.chunks
    if opened.reused:
        print(
            f"{len(chunks)} {config.strategy} chunks of {repo.name}: index up to date in "
            f"{opened.folder} (same files, settings and model; --rebuild to build anew)"
        )
        return 0
    if args.engine == "ray":
        print(f"indexed {len(chunks)} {config.strategy} chunks of {repo.name} into {opened.folder}")
        return 0
    window = embedder.max_seq_length
    over = sum(n > window for n in embedder.count_wordpieces([c.embedding_text for c in chunks]))
    share = f" ({over / len(chunks):.0%})" if chunks else ""
    print(
        f"indexed {len(chunks)} {config.strategy} chunks of {repo.name} into {opened.folder} "
        f"({embedder.last_hits} cached, {embedder.last_misses} embedded); "
        f"{over} chunks{share} are longer than the model's {window} word pieces "
        "and are embedded from their start (--preset model-window avoids that)"
    )
    return 0
