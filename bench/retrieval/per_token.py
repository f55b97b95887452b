"""Retrieval per token on the hand-written questions: NDCG@10, MRR@10, R@5 beside recall
within 1k / 2k / 4k tokens (hits read as deep as the budget lasts: ``READ_DEPTH`` are
ranked), tokens to the first hit and the lines and tokens of the top 10, per split
(tuning, held-out), chunking strategy (AST, 50-line windows) and variant.

A variant is the ranking stage with one lever changed (``VARIANTS``); levers are measured
alone on the tuning half and the held-out half is reported once with what was kept.

    .venv/bin/python bench/retrieval/per_token.py --tier fast [--split tune] [--strategy ast]
        [--variant NAME ...] [--label before] [--write]

Needs the saved indexes of ``bench/retrieval/questions_index.py --tier fast`` (``--sizes 192-32``,
``--sizes 256-32``, ``--sizes no-header`` for the variants that name them). ``--write``
merges the rows into ``bench/results/per_token.json`` (keyed by label, split, strategy,
variant) and renders ``bench/results/per_token.md`` from all of them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.retrieval.questions_eval import cases, load_questions, ranked  # noqa: E402
from bench.retrieval.questions_index import INDEXES, index_folder, tier_cache  # noqa: E402
from nexus.evaluation.budget import (  # noqa: E402
    any_line,
    budget_outcome,
    summarize_budgets,
)
from nexus.evaluation.questions import METRICS, Place, question_scores  # noqa: E402
from nexus.retrieval.budget import READ_DEPTH, Read  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import DEFAULT_RULES, RankingRules  # noqa: E402
from nexus.retrieval.tiers import FAST, TIERS  # noqa: E402
from nexus.tables import render_markdown, render_text  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: Where the hand-written notes of ``per_token.md`` begin (``write`` keeps them).
NOTES = "## Measured and left out"
BUDGET_COLUMNS = ("R@1k", "R@2k", "R@4k", "tokens to first hit", "lines@10", "tokens@10")

#: Each lever alone: overrides of today's ``RankingRules``, and the AST chunk budgets
#: (``MAX-MIN``; "" = the defaults) of the index it searches. The rows in
#: ``bench/results/per_token.md`` before 2 Dec, 04:40 UTC were measured against the rules of
#: the time (100 candidates, any neighbour joining a window): since then "200 candidates,
#: windows join at 0.5" is the defaults. "defaults" names the index built at the default
#: chunk budgets: 512/64 until 2 Dec, 13:00 UTC, 320/48 since.
VARIANTS: dict[str, tuple[dict[str, Any], str]] = {
    "defaults": ({}, ""),
    "no result windows": ({"window_lines": 0}, ""),
    "rrf fusion": ({"fusion": "rrf"}, ""),
    "same-file damping 0.05": ({"same_file": 0.05}, ""),
    "definition lookup 20": ({"definition_lookup": 20}, ""),
    "saturation after 2 hits of a file, 0.1": ({"same_file": 0.1, "same_file_free": 2}, ""),
    "fusion weights 0.5 / 0.3": ({"natural_dense": 0.5, "symbol_dense": 0.3}, ""),
    "windows of 40 lines": ({"window_lines": 40}, ""),
    "windows join at 0.5 of the hit": ({"window_share": 0.5}, ""),
    "windows join at 0.8 of the hit": ({"window_share": 0.8}, ""),
    "windows join at 0.9 of the hit": ({"window_share": 0.9}, ""),
    "AST 192/32, windows of 40 lines": ({"window_lines": 40}, "192-32"),
    "AST 192/32": ({}, "192-32"),
    "AST 192/32, no windows": ({"window_lines": 0}, "192-32"),
    "AST 256/32, no windows": ({"window_lines": 0}, "256-32"),
    "AST 256/32": ({}, "256-32"),
    "AST 256/32, windows join at 0.5": ({"window_share": 0.5}, "256-32"),
    "AST 192/32, windows of 60 lines": ({"window_lines": 60}, "192-32"),
    "AST 192/32, windows of 120 lines": ({"window_lines": 120}, "192-32"),
    "AST 192/32, windows join at 0.5": ({"window_share": 0.5}, "192-32"),
    "200 candidates": ({"candidates": 200}, ""),
    "200 candidates, windows join at 0.5": ({"candidates": 200, "window_share": 0.5}, ""),
    "AST 192/32, 200 candidates, no windows": ({"candidates": 200, "window_lines": 0}, "192-32"),
    "AST 192/32, 200 candidates, windows join at 0.5": (
        {"candidates": 200, "window_share": 0.5},
        "192-32",
    ),
    "AST 256/32, 200 candidates, windows join at 0.5": (
        {"candidates": 200, "window_share": 0.5},
        "256-32",
    ),
    # The chunk-size grid of 2 Dec, 13:00 UTC (the default became 320/48 after it).
    "AST 384/48": ({}, "384-48"),
    "AST 320/48": ({}, "320-48"),
    "AST 320/32": ({}, "320-32"),
    "AST 256/48": ({}, "256-48"),
    "AST 256/64": ({}, "256-64"),
    "AST 224/48": ({}, "224-48"),
    "AST 192/64": ({}, "192-64"),
    "AST 320/48, dense share 0.4": ({"natural_dense": 0.4}, "320-48"),
    "AST 512/64, dense share 0.4": ({"natural_dense": 0.4}, "512-64"),
    "AST 320/48, name words 0.05": ({"name_words": 0.05}, "320-48"),
    "AST 320/48, name words 0.15": ({"name_words": 0.15}, "320-48"),
    # Query feedback (2 Dec, sixth session): the default since, for a static model's index.
    "AST 320/48, no query feedback": ({"feedback": 0.0}, "320-48"),
    "AST 320/48, query feedback 0.3 x 2": ({"feedback": 0.3}, "320-48"),
    "AST 320/48, query feedback 0.4 x 2": ({"feedback": 0.4}, "320-48"),
    "AST 320/48, query feedback 0.8 x 2": ({"feedback": 0.8}, "320-48"),
    "AST 320/48, query feedback 0.5 x 1": ({"feedback_hits": 1}, "320-48"),
    "AST 320/48, query feedback 0.6 x 3": ({"feedback": 0.6, "feedback_hits": 3}, "320-48"),
    "no query feedback": ({"feedback": 0.0}, ""),
    "AST 320/48, windows join at 0.5": ({"window_share": 0.5}, "320-48"),
    "AST 320/48, windows join at 0.55": ({"window_share": 0.55}, "320-48"),
    "AST 320/48, windows join at 0.65": ({"window_share": 0.65}, "320-48"),
    "AST 320/48, windows join at 0.7": ({"window_share": 0.7}, "320-48"),
    # The dense share over a MiniLM index (2 Dec, seventh session): 0.6 since, 0.5 before.
    "AST 320/48, contextual dense 0.5": ({"contextual_dense": 0.5}, "320-48"),
    "contextual dense 0.5": ({"contextual_dense": 0.5}, ""),
    "AST 320/48, contextual dense 0.55": ({"contextual_dense": 0.55}, "320-48"),
    "AST 320/48, contextual dense 0.65": ({"contextual_dense": 0.65}, "320-48"),
    "AST 320/48, contextual dense 0.7": ({"contextual_dense": 0.7}, "320-48"),
    "AST 320/48, contextual dense 0.8": ({"contextual_dense": 0.8}, "320-48"),
    "AST 320/48, dense share 0.55": ({"natural_dense": 0.55}, "320-48"),
    "AST 320/48, dense share 0.6": ({"natural_dense": 0.6}, "320-48"),
    "no context header": ({}, "no-header"),
    "one view: the text as written": ({}, "as-written"),
    "one view: its words only": ({}, "words-only"),
}


def covers(target: Place, read: Read) -> bool:
    return any_line(target.file, target.start_line, target.end_line, read)


def measure(
    split: str, strategy: str, tier: str, rules: RankingRules, sizes: str
) -> dict[str, float]:
    """Means over the split's questions (budget figures as ``summarize_budgets`` gives)."""
    embedder = tier_cache(tier, sizes)
    run = ranked(rules, READ_DEPTH)  # the budgets read past the top 10
    quality: list[dict[str, float]] = []
    budgets = []
    for repo, questions in load_questions(split).items():
        folder = index_folder(INDEXES[tier], repo, strategy, sizes if strategy == "ast" else "")
        if VectorIndex.read_manifest(folder) is None:
            print(f"(no index {folder}: run bench/retrieval/questions_index.py)", file=sys.stderr)
            continue
        index = VectorIndex.load(folder)
        files = {c.file for c in index.chunks}
        for case in cases(index, questions, embedder, rules):
            deep = run(case)
            quality.append(question_scores(case.question, deep[:10], files))
            budgets.append(budget_outcome(deep, case.question.targets, covers))
    if not quality:
        return {}
    summary = {name: sum(q[name] for q in quality) / len(quality) for name in METRICS}
    return {"n": len(quality), **summary, **summarize_budgets(budgets)}


def table(rows: dict[str, dict[str, float]]) -> tuple[list[str], list[list[str]]]:
    headers = ["run", "n", *METRICS, *BUDGET_COLUMNS]
    body = []
    for name, row in rows.items():
        cells = [f"{row[c]:.3f}" for c in METRICS] + [f"{row[c]:.3f}" for c in BUDGET_COLUMNS[:3]]
        cells += [f"{row[c]:.0f}" for c in BUDGET_COLUMNS[3:]]
        body.append([name, str(int(row["n"])), *cells])
    return headers, body


def write(found: dict[str, dict[str, float]]) -> None:
    """Merge ``found`` (``label|split|strategy|variant`` -> row) into the results files."""
    path = RESULTS / "per_token.json"
    report = json.loads(path.read_text()) if path.exists() else {"rows": {}}
    report["rows"].update(found)
    report["date"] = str(date.today())
    path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    groups: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    order = sorted(
        report["rows"],
        key=lambda k: (k != "before" and not k.startswith("before|"), k.startswith("after|"), k),
    )
    for key in order:
        row = report["rows"][key]
        label, split, strategy, variant = key.split("|")
        groups.setdefault((split, strategy), {})[f"{label}: {variant}"] = row
    text = [
        "# Retrieval per token on the hand-written questions\n\n",
        "`bench/retrieval/per_token.py --tier fast --write`: fast tier (the static model distilled "
        "from MiniLM) unless a row's label says `quality tier` (`--tier quality`: "
        "all-MiniLM-L6-v2), ranking stage. R@Bk: share of a question's targets covered when its "
        "hits are read in rank order until B thousand cl100k tokens are spent, as deep as "
        f"the budget lasts ({READ_DEPTH} hits ranked; the crossing hit up to the line where the "
        "budget runs out); tokens to first hit: median, read as deep; NDCG@10, MRR@10, R@5, "
        "lines@10 / tokens@10: the top 10. `tuning`: each lever alone on the tuning half "
        "(variant = today's rules with that one change; `AST 192/32` etc. name the index's "
        "chunk budgets); `held-out, once`: what the tuning half chose, scored once on the "
        "240 held-out questions. Figures with the earlier rule (budgets read in the top 10 "
        "only) are in git history. Load 3-6 on 2 cores (no timings here).\n",
    ]
    for (split, strategy), rows in sorted(groups.items(), key=lambda g: (g[0][0] != "tune", g)):
        text.append(f"\n## {split} half, {strategy} chunks\n\n{render_markdown(table(rows))}\n")
    # Notes written by hand below the tables ("## Measured and left out ...") are kept.
    page = RESULTS / "per_token.md"
    old = page.read_text() if page.exists() else ""
    notes = old[old.index(NOTES) :] if NOTES in old else ""
    page.write_text("".join(text) + ("\n" + notes if notes else ""))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", default=FAST, choices=TIERS)
    parser.add_argument("--split", action="append", choices=("tune", "heldout"), default=[])
    parser.add_argument("--strategy", action="append", choices=("ast", "lines"), default=[])
    parser.add_argument("--variant", action="append", choices=tuple(VARIANTS), default=[])
    parser.add_argument("--label", default="lever", help="names the rows (before, after, ...)")
    parser.add_argument("--write", action="store_true", help="merge into bench/results")
    args = parser.parse_args(argv)
    found = {}
    for split in args.split or ["tune"]:
        for strategy in args.strategy or ["ast", "lines"]:
            rows = {}
            for variant in args.variant or ["defaults"]:
                overrides, sizes = VARIANTS[variant]
                if sizes and strategy != "ast":
                    continue
                rules = replace(DEFAULT_RULES, **overrides)
                rows[variant] = measure(split, strategy, args.tier, rules, sizes)
                found[f"{args.label}|{split}|{strategy}|{variant}"] = rows[variant]
            print(f"\n## {split}, {strategy} ({args.label}, load {os.getloadavg()[0]:.1f})")
            print(render_text(table({k: v for k, v in rows.items() if v})), flush=True)
    if args.write:
        write({k: v for k, v in found.items() if v})


if __name__ == "__main__":
    main()
