"""The ``nexus`` command line: one verb per job, tables for people, JSON for machines.

Heavy libraries (torch, sentence-transformers) are imported only by the verbs
that embed. Each verb is a module here (``scan``, ``functions`` and ``profiles``
in ``listing``); ``common`` holds the options and helpers they share; this module
assembles the parser and runs a verb.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from nexus.cli.cache import cmd_cache
from nexus.cli.chunk import cmd_chunk
from nexus.cli.common import (
    add_cache_options,
    add_chunk_options,
    add_embedding_options,
    add_engine_options,
    add_file_options,
    add_rescore_option,
    add_search_options,
    default_tier,
)
from nexus.cli.evaluate import cmd_eval
from nexus.cli.indexes import cmd_index
from nexus.cli.listing import cmd_functions, cmd_profiles, cmd_scan
from nexus.cli.mcp import cmd_mcp
from nexus.cli.queries import cmd_queries
from nexus.cli.search import cmd_search
from nexus.cli.setup import cmd_setup
from nexus.ingest.sources import IngestError
from nexus.retrieval.embedding import EmbeddingCancelled, ModelUnavailableError
from nexus.retrieval.embedding_cache import CacheError
from nexus.runtime.ray_engine import RayUnavailableError, require_ray


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nexus", description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)

    scan = verbs.add_parser("scan", help="classify every file of a repository or zip")
    scan.add_argument("target", help="repository directory or .zip file")
    scan.add_argument("--json", action="store_true", help="machine-readable output")
    scan.add_argument("--config", help="settings file whose [files] table selects files")
    add_file_options(scan)
    scan.set_defaults(run=cmd_scan)

    functions = verbs.add_parser("functions", help="list the units of one file, vs the regex")
    functions.add_argument("file")
    functions.add_argument("--json", action="store_true")
    functions.set_defaults(run=cmd_functions)

    chunk = verbs.add_parser("chunk", help="chunk a repository; table or JSONL export")
    chunk.add_argument("target", help="repository directory or .zip file")
    add_chunk_options(chunk)
    chunk.add_argument("--format", choices=["table", "jsonl"], default="table")
    chunk.add_argument("--output", "-o", help="write here instead of stdout (ray: a folder)")
    add_engine_options(chunk)
    chunk.set_defaults(run=cmd_chunk)

    index = verbs.add_parser("index", help="chunk, embed and save a vector index")
    index.add_argument("target")
    add_chunk_options(index)
    index.add_argument(
        "--out", help="index folder (default: CACHE/indexes/REPO-STRATEGY-KEY, found by search)"
    )
    index.add_argument("--rebuild", action="store_true", help="build even if a saved one matches")
    add_rescore_option(index)
    add_engine_options(index)
    add_embedding_options(index)
    index.set_defaults(run=cmd_index)

    search = verbs.add_parser("search", help="query line-based and AST chunks side by side")
    search.add_argument("target")
    search.add_argument("query", nargs="?", help="what to search for (or --queries FILE)")
    search.add_argument(
        "--queries",
        help="a file of queries (JSONL with id and query, or one per line): one JSON line "
        "of hits a query on stdout, the model loaded once",
    )
    add_chunk_options(search, both=True)
    search.add_argument("-k", type=int, default=10)
    search.add_argument("--json", action="store_true")
    search.add_argument("--why", action="store_true", help="show each hit's score parts")
    search.add_argument(
        "--budget",
        type=int,
        metavar="TOKENS",
        help="read the hits in rank order within this many tokens, past -k if it lasts "
        '(up to 50 hits): the last one is cut at a line and marked "cut"; the JSON says the '
        'tokens used (batch: a record\'s "budget" field, this flag by default)',
    )
    add_search_options(search)
    add_rescore_option(search)
    search.set_defaults(run=cmd_search)

    evaluate = verbs.add_parser("eval", help="run a query set against line-based and AST chunks")
    evaluate.add_argument("target")
    evaluate.add_argument(
        "--queries",
        required=True,
        help="query JSONL: the doc-query format (target) or a question set (targets, category)",
    )
    add_chunk_options(evaluate, both=True)
    evaluate.add_argument("-k", type=int, default=10)
    evaluate.add_argument("--json", help="folder to write the two reports to")
    evaluate.add_argument(
        "--budgets",
        default="1000,2000,4000",
        help="token budgets of the R@1k-style metrics: the share of targets read within B "
        "tokens of the ranked hits (default 1000,2000,4000)",
    )
    evaluate.add_argument(
        "--fast-order",
        dest="rescore",
        action="store_false",
        help="with --tier fast: score the fast tier's own order (by default what search "
        "answers: its best 30 hits re-scored by MiniLM, whose vectors of the chunks are "
        "computed first, once)",
    )
    evaluate.add_argument(
        "--rescore",
        dest="rescore_any_size",
        action="store_true",
        help="with --sweep on the fast tier: re-score every setting however large the sweep "
        "(by default a sweep that would ask MiniLM for more than 6,000 texts its cache "
        "lacks, at most queries x settings x 30, scores the fast tier's own order and says so)",
    )
    evaluate.add_argument(
        "--by-file",
        action="store_true",
        help="question sets: score each target's whole file (a hit counts once it shows the "
        "file), as benchmarks whose targets are files score",
    )
    evaluate.add_argument("--sweep", action="store_true", help="grid over max/min tokens")
    evaluate.add_argument(
        "--choose-by",
        metavar="METRIC",
        help="the metric a sweep's best setting is chosen by (default: recall within the "
        "smallest budget, R@1k; also MRR@10, R@5, tokens@10...)",
    )
    evaluate.add_argument("--sweep-max", default="128,256,512")
    evaluate.add_argument("--sweep-min", default="0,48")
    evaluate.add_argument(
        "--distractors",
        default="1000",
        metavar="N",
        help="sweep over the files holding targets plus a fixed sample of N others "
        "(default 1000; `all`: every file, slower on large repositories)",
    )
    evaluate.add_argument(
        "--blank-docs",
        action=argparse.BooleanOptionalAction,
        help="blank doc comments in what is indexed (default: as the set says; "
        "sets from `nexus queries` do)",
    )
    add_search_options(evaluate)
    evaluate.set_defaults(run=cmd_eval)

    queries = verbs.add_parser(
        "queries", help="make a query set from the repository's documented functions"
    )
    queries.add_argument("target", help="repository directory or .zip file")
    queries.add_argument("--output", "-o", required=True, help="query JSONL to write")
    queries.add_argument("--cap", type=int, default=300, help="at most this many targets")
    queries.add_argument("--seed", default="", help="another sample of the same repository")
    queries.add_argument("--config", help="settings file whose [files] table selects files")
    add_file_options(queries)
    queries.set_defaults(run=cmd_queries)

    cache = verbs.add_parser("cache", help="show, clear or prune the embedding cache")
    cache.add_argument("action", nargs="?", choices=["show", "clear", "prune"], default="show")
    add_cache_options(cache)
    cache.add_argument("--model", help="clear: only the vectors of this embedder name")
    cache.add_argument("--max-mb", type=float, help="prune: down to this many MB (default: budget)")
    cache.add_argument("--json", action="store_true", help="show: machine-readable output")
    cache.set_defaults(run=cmd_cache)

    setup = verbs.add_parser(
        "setup", help="distil the fast tier's model once, so no first answer waits for it"
    )
    add_cache_options(setup)
    setup.set_defaults(run=cmd_setup)

    mcp = verbs.add_parser(
        "mcp",
        help="serve search to coding agents over MCP (stdio): search, chunks, ...",
        description="Serve search to coding agents over MCP (stdio). Run `nexus setup` "
        "once first: it distils the fast tier's model, which the first answer would "
        "otherwise wait minutes for.",
    )
    mcp.add_argument(
        "paths", nargs="*", metavar="PATH", help="repository folders (default: the current one)"
    )
    add_chunk_options(mcp)
    add_embedding_options(mcp)
    add_rescore_option(mcp)
    mcp.add_argument(
        "--warm",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="open and index the repositories at start (default), not at the first call",
    )
    mcp.add_argument(
        "--refine",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --tier quality: answer from the fast tier while the quality tier builds "
        "(default, when the fast tier's model is distilled), then from the quality tier",
    )
    mcp.set_defaults(run=cmd_mcp)

    profiles = verbs.add_parser("profiles", help="list hierarchy profiles and budget presets")
    profiles.add_argument("--toml", action="store_true", help="print them as an editable file")
    profiles.set_defaults(run=cmd_profiles)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if "tier" in vars(args) and args.tier is None:
        args.tier = default_tier(args)
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
