"""``nexus scan``, ``nexus functions`` and ``nexus profiles``: what a repository, a file
or the settings hold, as tables or JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nexus.cli.common import open_target
from nexus.config import PRESETS


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
