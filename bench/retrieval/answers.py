"""Answers shaped by the budget: what each lever of hit selection buys, per question style.

An agent pays for every line of an answer. Each variant is today's ranking stage with one
lever changed (``VARIANTS``: rule overrides and the AST chunk budgets of the index it
searches); levers are chosen on the tuning half and the held-out half is scored once with
what was kept; ``fresh`` (questions written apart, over four repositories no lever saw) is
only ever reported. Every table shows the three question styles apart (paraphrase, topical,
symbol; ``nexus.evaluation.questions.STYLES``), budget metrics first: R@1k, R@2k,
lines@10, then NDCG@10 and MRR@10, and ``mean of styles`` (each style weighs the same,
whatever its number of questions: the bar is lines@10 <= 200 on that mean).

    nice -n 10 .venv/bin/python bench/retrieval/answers.py [--split tune|heldout|fresh]
        [--variant NAME ...] [--label lever] [--tier fast|quality] [--rescore] [--files] [--write]

Needs the fast tier's saved indexes
(``bench/retrieval/questions_index.py --tier fast --strategy ast``, and ``--sizes 192-32`` /
``256-32`` for the variants that name them); ``--tier quality`` searches MiniLM's own
indexes instead (``questions_index.py --tier quality --strategy ast``: every chunk embedded
by MiniLM, so nothing to re-score). ``--rescore`` also
scores each variant with its best ``RESCORE_DEPTH`` hits re-scored by MiniLM, as
``Workspace.search`` answers by default (MiniLM embeds those hits through the embedding
cache: slow on a CPU, keep it to the final default). ``--files`` scores each target's
whole file instead of its definition (``nexus.evaluation.questions.by_file``): a benchmark
whose targets are files credits a reader for reaching the right file, and the peer's
figures on such a benchmark are reproduced only under this rule. ``--write`` merges the
rows into ``bench/results/answers.json`` and renders ``answers.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.retrieval.per_token import covers  # noqa: E402
from bench.retrieval.questions_eval import cases, load_questions  # noqa: E402
from bench.retrieval.questions_index import INDEXES, index_folder, tier_cache  # noqa: E402
from nexus.evaluation.budget import budget_outcome, summarize_budgets  # noqa: E402
from nexus.evaluation.questions import (  # noqa: E402
    STYLE_COLUMNS,
    STYLES,
    by_file,
    question_scores,
    style_of,
)
from nexus.retrieval.budget import READ_DEPTH  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import DEFAULT_RULES, RankingRules, rank  # noqa: E402
from nexus.retrieval.rescore import rescore, rescore_texts  # noqa: E402
from nexus.retrieval.search import Hit, ranked_hits  # noqa: E402
from nexus.retrieval.tiers import FAST, QUALITY  # noqa: E402
from nexus.tables import render_markdown, render_text  # noqa: E402

RESULTS = ROOT / "bench" / "results"
MEAN = "mean of styles"
GROUPS = (*STYLES, MEAN, "all")
#: The question sets, in the order the results show them.
SPLITS = ("tune", "heldout", "fresh")

#: Each lever alone: overrides of today's ``RankingRules`` and the index's AST chunk
#: budgets (``MAX-MIN``; "" = the defaults of ``ChunkConfig``).
#: The rules before issue 39 (answers shaped by the budget), over today's: windows of 80
#: lines whatever they cost (a name's hits too), every line of a hit shown, lines shown
#: twice, hits in score order.
BEFORE_ANSWERS = {
    "window_lines": 80,
    "window_share": 0.6,
    "answer_lines": 0,
    "piece_lines": 0,
    "distinct_lines": False,
    "hit_lines": 0,
    "lead_lines": 0,
    "lead_unit_lines": 0,
    "top_lines": 0,
    "topic_path_word": 0.05,
    "topic_name_words": 0.1,
    "symbol_hits_alone": False,
    "file_spread": 0.0,
}
VARIANTS: dict[str, tuple[dict[str, Any], str]] = {
    "defaults": ({}, ""),
    "without the cap on the top 10's lines (before 5 Dec)": ({"top_lines": 0}, ""),
    "the top 10 within 200 lines, trims of 25": ({"trim_lines": 25}, ""),
    "the top 10 within 200 lines, trims of 20": ({"trim_lines": 20}, ""),
    "same-file damping 0.02": ({"same_file": 0.02}, ""),
    "same-file damping 0.05": ({"same_file": 0.05}, ""),
    "same-file damping 0.1 after 3": ({"same_file": 0.1, "same_file_free": 3}, ""),
    "the lead hit's neighbours within 120 lines, joins at 0.4": (
        {"lead_lines": 120, "window_share": 0.4},
        "",
    ),
    "the lead hit's neighbours within 120 lines, joins at 0.5": (
        {"lead_lines": 120, "window_share": 0.5},
        "",
    ),
    "the defaults of 4 Dec (neighbours of the lead hit within 80 lines, joins at 0.6)": (
        {"lead_unit_lines": 0, "window_share": 0.6, "top_lines": 0},
        "",
    ),
    "the lead hit's neighbours within 160 lines, joins at 0.4": (
        {"lead_lines": 160, "window_share": 0.4},
        "",
    ),
    "long hits cut to 40": ({"hit_lines": 40}, ""),
    "long hits cut to 30": ({"hit_lines": 30}, ""),
    "before issue 39 (AST 320/48)": (BEFORE_ANSWERS, "320-48"),
    "after issue 39 (AST 256/32)": ({}, "256-32"),
    "after issue 39 (AST 320/48)": ({}, "320-48"),
    "no result windows": ({"window_lines": 0}, ""),
    "AST 192/32, windows within 180 lines": ({"answer_lines": 180}, "192-32"),
    "AST 256/32, windows within 180 lines": ({"answer_lines": 180}, "256-32"),
    "AST 256/32": ({}, "256-32"),
    "AST 240/32": ({}, "240-32"),
    "AST 224/32": ({}, "224-32"),
    "AST 232/32": ({}, "232-32"),
    "AST 256/32, no windows": ({"window_lines": 0}, "256-32"),
    "AST 192/32": ({}, "192-32"),
    "AST 192/32, no windows": ({"window_lines": 0}, "192-32"),
    "no windows, same-file saturation 0.1 after 2": (
        {"window_lines": 0, "same_file": 0.1, "same_file_free": 2},
        "",
    ),
    "no windows, rrf fusion": ({"window_lines": 0, "fusion": "rrf"}, ""),
    "no windows, file coherence 0.05": ({"window_lines": 0, "file_coherence": 0.05}, ""),
    "no windows, pieces merged": ({"window_lines": 0, "piece_lines": 80}, ""),
    "no windows, distinct lines": ({"window_lines": 0, "distinct_lines": True}, ""),
    "windows within 200 lines": ({"answer_lines": 200}, ""),
    "windows within 180 lines": ({"answer_lines": 180}, ""),
    "windows within 160 lines": ({"answer_lines": 160}, ""),
    "windows within 140 lines": ({"answer_lines": 140}, ""),
    "windows within 120 lines": ({"answer_lines": 120}, ""),
    "without the answer budget and the top 10's line cap": (
        {"answer_lines": 0, "top_lines": 0},
        "",
    ),
    "pieces merged, windows within 200 lines": ({"piece_lines": 80, "answer_lines": 200}, ""),
    "no windows, path word 0.1": ({"window_lines": 0, "path_word": 0.1}, ""),
    "no windows, path word 0.15": ({"window_lines": 0, "path_word": 0.15}, ""),
    "no windows, name words 0.2": ({"window_lines": 0, "name_words": 0.2}, ""),
    "AST 256/32, pieces merged, windows within 200 lines": (
        {"piece_lines": 80, "answer_lines": 200},
        "256-32",
    ),
    "no windows, topic path word 0.15": ({"window_lines": 0, "topic_path_word": 0.15}, ""),
    "no windows, topic path word 0.25": ({"window_lines": 0, "topic_path_word": 0.25}, ""),
    "no windows, topic name words 0.2": ({"window_lines": 0, "topic_name_words": 0.2}, ""),
    "no windows, topic name words 0.3": ({"window_lines": 0, "topic_name_words": 0.3}, ""),
    "no windows, topic path 0.15 and name words 0.2": (
        {"window_lines": 0, "topic_path_word": 0.15, "topic_name_words": 0.2},
        "",
    ),
    "AST 256/32, windows within 200 lines": ({"answer_lines": 200}, "256-32"),
    "AST 256/32, windows, hits cut to 24": ({"hit_lines": 24}, "256-32"),
    "AST 256/32, windows, hits cut to 20": ({"hit_lines": 20}, "256-32"),
    "AST 256/32, windows within 200 lines, topic path 0.15": (
        {"answer_lines": 200, "topic_path_word": 0.15},
        "256-32",
    ),
    "AST 256/32, windows within 200 lines, topic path 0.25": (
        {"answer_lines": 200, "topic_path_word": 0.25},
        "256-32",
    ),
    "AST 256/32, windows within 200 lines, topic path 0.35": (
        {"answer_lines": 200, "topic_path_word": 0.35},
        "256-32",
    ),
    "AST 256/32, windows, hits cut to 24, topic path 0.15": (
        {"hit_lines": 24, "topic_path_word": 0.15},
        "256-32",
    ),
    "AST 256/32, windows, hits cut to 22, topic path 0.15": (
        {"hit_lines": 22, "topic_path_word": 0.15},
        "256-32",
    ),
    "AST 256/32, windows, hits cut to 22, topic path 0.25": (
        {"hit_lines": 22, "topic_path_word": 0.25},
        "256-32",
    ),
    "AST 256/32, windows, hits cut to 23, topic path 0.35": (
        {"hit_lines": 23, "topic_path_word": 0.35},
        "256-32",
    ),
    "AST 256/32, windows, hits cut to 24, topic path 0.35": (
        {"hit_lines": 24, "topic_path_word": 0.35},
        "256-32",
    ),
    "AST 256/32, windows, hits cut to 20, topic path 0.25": (
        {"hit_lines": 20, "topic_path_word": 0.25},
        "256-32",
    ),
    "AST 192/32, windows within 200 lines, join at 0.4": (
        {"answer_lines": 200, "window_share": 0.4},
        "192-32",
    ),
    "AST 192/32, windows within 200 lines, join at 0.2": (
        {"answer_lines": 200, "window_share": 0.2},
        "192-32",
    ),
    "AST 256/32, windows within 200 lines, join at 0.4": (
        {"answer_lines": 200, "window_share": 0.4},
        "256-32",
    ),
    "AST 192/32, windows within 200 lines, topic path 0.15": (
        {"answer_lines": 200, "topic_path_word": 0.15},
        "192-32",
    ),
    "AST 192/32, windows within 200 lines, topic path 0.25": (
        {"answer_lines": 200, "topic_path_word": 0.25},
        "192-32",
    ),
    "AST 192/32, windows within 200 lines, topic name words 0.2": (
        {"answer_lines": 200, "topic_name_words": 0.2},
        "192-32",
    ),
    "AST 192/32, windows within 200 lines": ({"answer_lines": 200}, "192-32"),
    "AST 192/32, windows within 240 lines": ({"answer_lines": 240}, "192-32"),
    "windows, hits cut to 20 matched lines": ({"hit_lines": 20}, ""),
    "windows, hits cut to 30 matched lines": ({"hit_lines": 30}, ""),
    "windows within 240 lines, hits cut to 30": ({"answer_lines": 240, "hit_lines": 30}, ""),
    "AST 192/32, windows, hits cut to 24": ({"hit_lines": 24}, "192-32"),
    "without the lead hit's neighbours": ({"lead_lines": 0, "lead_unit_lines": 0}, ""),
    "the lead hit's neighbours within 60 lines": ({"lead_lines": 60}, ""),
    "the lead hit's neighbours within 120 lines": ({"lead_lines": 120}, ""),
    "AST 320/48 without the lead hit's neighbours (the defaults before)": (
        {"lead_lines": 0, "lead_unit_lines": 0},
        "320-48",
    ),
    "AST 320/48": ({}, "320-48"),
    "AST 288/40 without the lead hit's neighbours": (
        {"lead_lines": 0, "lead_unit_lines": 0},
        "288-40",
    ),
    "AST 288/40": ({}, "288-40"),
    "windows and the lead hit join at 0.5": ({"window_share": 0.5}, ""),
    "windows and the lead hit join at 0.4": ({"window_share": 0.4}, ""),
    "symbol hits with windows and the lead hit's neighbours (before 5 Dec)": (
        {"symbol_hits_alone": False},
        "",
    ),
    "without other files first (before 6 Dec)": ({"file_spread": 0.0}, ""),
    "other files first at 0.9": ({"file_spread": 0.9}, ""),
    "other files first at 0.85": ({"file_spread": 0.85}, ""),
    "other files first at 0.8": ({"file_spread": 0.8}, ""),
    "the lead hit takes in only its own unit": ({"lead_lines": 0}, ""),
    "AST 192/32, pieces merged, windows within 200 lines": (
        {"piece_lines": 80, "answer_lines": 200},
        "192-32",
    ),
}


def tier_hits(case: Any, rules: RankingRules) -> list[Hit]:
    """One question's ranked hits from its index's tier, read as deep as the budgets go."""
    found, rules = case.candidates, rules.for_model(case.model)
    top = rank(found.chunks, found.dense, found.keyword, case.question.query, READ_DEPTH, rules)
    return ranked_hits(found, top)


def measure(
    split: str,
    rules: RankingRules,
    sizes: str,
    with_rescore: bool,
    tier: str = FAST,
    files: bool = False,
) -> dict:
    """Per run (``fast tier`` or ``quality tier``, and ``re-scored`` with ``with_rescore``):
    per group (``GROUPS``) the question count and the means of ``STYLE_COLUMNS``; with
    ``files``, each target's whole file is the target (``by_file``; runs named so)."""
    own = tier_cache(tier, sizes)
    minilm = tier_cache(QUALITY) if with_rescore else None
    scored: dict[str, dict[str, list[tuple[dict, Any]]]] = defaultdict(lambda: defaultdict(list))
    for repo, questions in load_questions(split).items():
        folder = index_folder(INDEXES[tier], repo, "ast", sizes)
        if VectorIndex.read_manifest(folder) is None:
            print(f"(no index {folder}: run bench/retrieval/questions_index.py)", file=sys.stderr)
            continue
        index = VectorIndex.load(folder)
        indexed = {c.file for c in index.chunks}
        for case in cases(index, questions, own, rules):
            hits = tier_hits(case, rules)
            runs = {f"{tier} tier": hits}
            if minilm is not None:
                vectors = minilm.encode([case.question.query, *rescore_texts(hits)])
                cosines = (vectors[1:] @ vectors[0]).tolist()
                runs["re-scored"] = rescore(hits, cosines, case.question.query, rules)
            question = by_file(case.question) if files else case.question
            style = style_of(question.category)
            for run, hits in runs.items():
                deep = [hit.chunk for hit in hits]
                row = (
                    question_scores(question, deep[:10], indexed),
                    budget_outcome(deep, question.targets, covers),
                )
                scored[f"{run}, file targets" if files else run][style].append(row)
    return {run: summarize(groups) for run, groups in scored.items()}


#: Also shown, after the style columns: the median tokens read through the first hit that
#: shows a target (per style; the mean of the styles' medians for ``mean of styles`` and
#: ``all``). Rows written before it was shown leave it blank.
FIRST = "tokens to first hit"
COLUMNS = (*STYLE_COLUMNS, FIRST)


def summarize(by_style: dict[str, list[tuple[dict, Any]]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for style, rows in by_style.items():
        budget = summarize_budgets([b for _, b in rows])
        quality = {m: statistics.fmean(q[m] for q, _ in rows) for m in ("NDCG@10", "MRR@10")}
        out[style] = {"n": len(rows), **{c: (budget | quality)[c] for c in COLUMNS}}
    styles = [s for s in STYLES if s in out]
    if styles:
        out[MEAN] = {"n": sum(out[s]["n"] for s in styles)} | {
            c: statistics.fmean(out[s][c] for s in styles) for c in COLUMNS
        }
        total = out[MEAN]["n"]
        out["all"] = {"n": total} | {
            c: sum(out[s][c] * out[s]["n"] for s in styles) / total for c in STYLE_COLUMNS
        }
        out["all"][FIRST] = out[MEAN][FIRST]
    return out


def table(rows: dict[str, dict[str, dict[str, float]]]) -> tuple[list[str], list[list[str]]]:
    """One line per run and group: ``run | group | n | R@1k | R@2k | lines@10 | NDCG@10 ...``."""
    headers = ["run", "group", "n", *COLUMNS]
    body = []
    for name, groups in rows.items():
        for group in GROUPS:
            if group in groups:
                m = groups[group]
                cells = [_cell(c, m.get(c)) for c in COLUMNS]
                body.append([name, group, str(int(m["n"])), *cells])
    return headers, body


def _cell(column: str, value: float | None) -> str:
    if value is None or value != value:  # not measured then, or no question found a target
        return ""
    return f"{value:.0f}" if column in ("lines@10", FIRST) else f"{value:.3f}"


def write(found: dict[str, dict]) -> None:
    """Merge ``found`` (``label|split|variant|run`` -> groups) into the results files."""
    path = RESULTS / "answers.json"
    report = json.loads(path.read_text()) if path.exists() else {"rows": {}}
    report["rows"].update(found)
    report["date"] = str(date.today())
    path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    by_split: dict[str, dict[str, dict]] = defaultdict(dict)
    for key, groups in report["rows"].items():
        label, split, variant, run = key.split("|")
        by_split[split][f"{label}: {variant} ({run})"] = groups
    text = [
        "# Answers shaped by the budget\n\n",
        "`bench/retrieval/answers.py --split tune|heldout|fresh --variant ... --write` "
        "(fast tier, AST chunks, today's ranking stage with one lever changed; "
        "`(re-scored)`: its best 30 hits scored again by MiniLM, as `Workspace.search` "
        "answers by default). Per question style (paraphrase = semantic + architecture, "
        "topical, symbol), budget metrics first. R@Bk: share of a question's targets "
        "covered when its hits are read in rank order until B thousand cl100k tokens are "
        "spent; lines@10: lines of the top 10 hits; `mean of styles`: each style weighs "
        "the same; tokens to first hit: the median tokens read through the first hit that "
        "shows a target; `file targets`: each target's whole file is the target "
        "(`--files`). Levers chosen on `tune`; `heldout` scored once with what was kept; "
        "`fresh`: questions written apart over four other repositories, never chosen on "
        "(`bench/questions/README.md`).\n",
    ]
    for split in sorted(by_split, key=SPLITS.index):
        heading = f"{split} set" if split == "fresh" else f"{split} half"
        text.append(f"\n## {heading}\n\n{render_markdown(table(by_split[split]))}\n")
    notes_mark = "## What each lever bought"
    page = RESULTS / "answers.md"
    old = page.read_text() if page.exists() else ""
    notes = old[old.index(notes_mark) :] if notes_mark in old else ""
    page.write_text("".join(text) + ("\n" + notes if notes else ""))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", action="append", choices=SPLITS, default=[])
    parser.add_argument("--variant", action="append", choices=tuple(VARIANTS), default=[])
    parser.add_argument("--label", default="lever", help="names the rows (before, after, ...)")
    parser.add_argument("--tier", default=FAST, choices=(FAST, QUALITY))
    parser.add_argument("--rescore", action="store_true", help="also re-scored by MiniLM")
    parser.add_argument(
        "--files", action="store_true", help="score each target's whole file (by_file)"
    )
    parser.add_argument("--write", action="store_true", help="merge into bench/results")
    args = parser.parse_args(argv)
    found = {}
    for split in args.split or ["tune"]:
        for variant in args.variant or ["defaults"]:
            overrides, sizes = VARIANTS[variant]
            rules = replace(DEFAULT_RULES, **overrides)
            measured = measure(split, rules, sizes, args.rescore, args.tier, args.files)
            for run, groups in measured.items():
                found[f"{args.label}|{split}|{variant}|{run}"] = groups
                print(f"\n## {split}: {variant} ({run}; load {os.getloadavg()[0]:.1f})")
                print(render_text(table({variant: groups})), flush=True)
    if args.write:
        write(found)


if __name__ == "__main__":
    main()
