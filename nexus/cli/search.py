"""``nexus search``: one query against the line-based and AST indexes, or a file of
queries answered in one process (the model loads once)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nexus.cli.common import STRATEGY_LABELS, config_from_args, open_target, strategies
from nexus.cli.indexes import saved_indexes


def cmd_search(args: argparse.Namespace) -> int:
    from nexus.evaluation.metrics import render_text
    from nexus.retrieval.ranking import explain, rules_for
    from nexus.retrieval.search import BatchQuery, hit_record, read_batch, search

    if (args.query is None) == (args.queries is None):
        raise ValueError("give one query, or a file of them with --queries FILE")
    if args.queries is not None:
        try:
            batch = read_batch(Path(args.queries).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read {args.queries}: {exc.strerror or exc}") from None
    else:
        batch = [BatchQuery("1", args.query)]
    config = config_from_args(args)
    chosen = strategies(args)
    embedder, opened = saved_indexes(args, config, chosen, open_target(args))
    vectors = embedder.encode([q.query for q in batch])
    rules = rules_for(config)
    for query, vec in zip(batch, vectors, strict=True):
        answers = {
            STRATEGY_LABELS[strategy]: search(
                one.index,
                vec,
                query.query,
                args.k,
                rules=rules,
                lexical_weight=config.lexical_weight,
                exact=True,
            )
            for strategy, one in zip(chosen, opened, strict=True)
        }
        if args.queries is not None:  # one JSON line a query, for scripts and benchmarks
            record = {"id": query.id, "query": query.query}
            record |= {label: [hit_record(h) for h in hits] for label, hits in answers.items()}
            sys.stdout.write(json.dumps(record) + "\n")
        elif args.json:
            record = {
                label: [
                    {"rank": h.rank, "score": round(h.score, 4), **h.chunk.to_dict()}
                    | {"parts": {p.name: round(p.value, 4) for p in h.parts}}
                    for h in hits
                ]
                for label, hits in answers.items()
            }
            print(json.dumps(record, indent=2))
        else:
            for label, hits in answers.items():
                rows = [
                    [
                        str(h.rank),
                        f"{h.score:.3f}",
                        f"{h.chunk.file}:{h.chunk.start_line}-{h.chunk.end_line}",
                        h.chunk.symbol or "",
                        explain(h.parts) if args.why else str(h.chunk.token_count),
                    ]
                    for h in hits
                ]
                last = "why" if args.why else "tokens"
                print(f"\n{label} top {args.k} for {query.query!r}")
                print(render_text((["rank", "score", "where", "symbol", last], rows), 90))
    return 0
