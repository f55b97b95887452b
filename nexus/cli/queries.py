"""``nexus queries``: a query set made from the repository's own documented code."""

from __future__ import annotations

import argparse
from pathlib import Path

from nexus.cli.common import open_target


def cmd_queries(args: argparse.Namespace) -> int:
    """Write a query set made from the repository's documented functions and methods."""
    from nexus.evaluation.generate import generate

    repo = open_target(args)
    result = generate(repo, cap=args.cap, seed=args.seed)
    if not result.records:
        print("\n".join(result.counts_lines()))
        raise ValueError(f"{repo.name}: no documented function or method makes a query")
    out = Path(args.output)
    out.write_text(result.jsonl(), encoding="utf-8")
    print("\n".join(result.counts_lines()))
    print("\nexamples (doc query -> target):")
    for record in result.examples():
        target = record["target"]
        print(f"  {record['query']}\n    -> {target['file']}:{target['start_line']} "
              f"{target['qualname']}")  # fmt: skip
    print(
        f"\nwritten to {out}. Score it with: nexus eval {args.target} --queries {out}\n"
        "(doc comments are blanked in what is indexed, since the set asks for it; "
        "the queries read like doc comments, not like questions users type)"
    )
    return 0
