"""``nexus search``: one query against the line-based and AST indexes."""

from __future__ import annotations

import argparse
import json

from nexus.cli.common import STRATEGY_LABELS, config_from_args, open_target, strategies
from nexus.cli.indexes import saved_indexes


def cmd_search(args: argparse.Namespace) -> int:
    from nexus.evaluation.metrics import PRIMARY_RULE, render_text, score_query

    config = config_from_args(args)
    embedder, opened = saved_indexes(args, config, strategies(args), open_target(args))
    indexes = [one.index for one in opened]
    vec = embedder.encode([args.query])[0]
    weight = config.lexical_weight
    shown = [
        (
            STRATEGY_LABELS[strategy],
            score_query(index, vec, None, args.k, PRIMARY_RULE, True, args.query, weight),
        )
        for strategy, index in zip(strategies(args), indexes, strict=True)
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
