"""What a per-token pipeline costs the doc-comment sets: the rules before 2 Dec beside other
chunking and ranking (the defaults now, and 50-line windows), on each set of
``bench/retrieval/doc_sets_ranking.py``.

The question set chooses the pipeline; these sets only check it. The bar (issue 27): doc
MRR@10 within 0.01 of the rules before 2 Dec, at equal or fewer lines@5 (overlap50 rule),
with the budget metrics beside them (rule ``half_the_lines``).

    nice .venv/bin/python bench/retrieval/per_token_docs.py [--tier quality|fast] [--set dev ...]
        [--sizes 512/64,320/48 | --answers] [--rescore] [--write]

``--sizes``: AST budgets (``MAX/MIN``, comma-separated) with today's ranking rules instead
of ``SETTINGS``; the first is the bar's reference (the chunk-size grid of 2 Dec).
``--rescore`` (fast tier): each answer's best hits re-scored by MiniLM, as
``Workspace.search`` answers (written beside the others with ``_rescored`` in the name).

Each set is chunked at both settings and embedded through the embedding cache
(``$NEXUS_CACHE_DIR``). ``--write``: ``bench/results/per_token_docs.{json,md}``.
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.retrieval.doc_sets_ranking import SETS  # noqa: E402
from bench.retrieval.questions_index import tier_cache  # noqa: E402
from nexus.chunking.pipeline import analyze_files, chunk_analyses  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.evaluation.query_sets import load_queries  # noqa: E402
from nexus.evaluation.rescoring import rescored_answers  # noqa: E402
from nexus.evaluation.runs import evaluate  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import DEFAULT_RULES, RankingRules  # noqa: E402
from nexus.retrieval.tiers import FAST, QUALITY, TIERS  # noqa: E402
from nexus.tables import render_markdown  # noqa: E402

RESULTS = ROOT / "bench" / "results"
TOLERANCE = 0.01
#: The ranking rules before 2 Dec (100 candidates, any neighbour joins a window, name words
#: 0.05, no query feedback, a dense share of 0.5 whatever the model): the reference every
#: other setting is held to. The Rust-only rules of 2 Dec (test modules, impl blocks) touch
#: none of these sets.
BEFORE = replace(
    DEFAULT_RULES,
    candidates=100,
    window_share=0.0,
    name_words=0.05,
    feedback=0.0,
    contextual_dense=0.5,
)
#: The settings compared: strategy, AST budgets (max, min) and the ranking rules.
SETTINGS: dict[str, tuple[str, tuple[int, int], RankingRules]] = {
    "AST 512/64, rules before 2 Dec": ("ast", (512, 64), BEFORE),
    "AST 192/32, rules before 2 Dec": ("ast", (192, 32), BEFORE),
    "AST 512/64, defaults now (200 candidates, windows join at 0.5)": (
        "ast",
        (512, 64),
        DEFAULT_RULES,
    ),
    "AST 192/32, defaults now": ("ast", (192, 32), DEFAULT_RULES),
    "AST 320/48 (the default budgets since 2 Dec), defaults now": ("ast", (320, 48), DEFAULT_RULES),
    "AST 320/48, defaults now without query feedback": (
        "ast",
        (320, 48),
        replace(DEFAULT_RULES, feedback=0.0),
    ),
    "50-line windows, rules before 2 Dec": ("lines", (512, 64), BEFORE),
    "50-line windows, defaults now": ("lines", (512, 64), DEFAULT_RULES),
}
#: Issue 39 (answers shaped by the budget): today's defaults beside the rules and chunk
#: budgets before it (windows without an answer budget, a name's hits too, lines shown twice,
#: hits in score order, 320/48); ``--answers``.
BEFORE_ANSWERS = replace(
    DEFAULT_RULES,
    window_lines=80,
    window_share=0.6,
    piece_lines=0,
    answer_lines=0,
    distinct_lines=False,
    hit_lines=0,
    lead_lines=0,
    lead_unit_lines=0,
    top_lines=0,
    topic_path_word=0.05,
    topic_name_words=0.1,
    symbol_hits_alone=False,
    file_spread=0.0,
)
ANSWERS: dict[str, tuple[str, tuple[int, int], RankingRules]] = {
    "AST 320/48, rules before issue 39": ("ast", (320, 48), BEFORE_ANSWERS),
    "AST 320/48, answers within 140 lines (the defaults of 4 Dec)": (
        "ast",
        (320, 48),
        replace(DEFAULT_RULES, lead_lines=0, lead_unit_lines=0, window_share=0.6, top_lines=0),
    ),
    f"AST {ChunkConfig().max_tokens}/{ChunkConfig().min_tokens} (the defaults now), defaults now": (
        "ast",
        (ChunkConfig().max_tokens, ChunkConfig().min_tokens),
        DEFAULT_RULES,
    ),
    "AST 256/32, the lead hit's neighbours within 80 lines joining at 0.6 (4 Dec)": (
        "ast",
        (256, 32),
        replace(DEFAULT_RULES, lead_unit_lines=0, window_share=0.6, top_lines=0),
    ),
    "defaults now without the cap on the top 10's lines (before 5 Dec)": (
        "ast",
        (ChunkConfig().max_tokens, ChunkConfig().min_tokens),
        replace(DEFAULT_RULES, top_lines=0),
    ),
    "defaults now, long hits cut to 40 lines (not kept)": (
        "ast",
        (ChunkConfig().max_tokens, ChunkConfig().min_tokens),
        replace(DEFAULT_RULES, hit_lines=40),
    ),
    "defaults now without other files first (before 6 Dec)": (
        "ast",
        (ChunkConfig().max_tokens, ChunkConfig().min_tokens),
        replace(DEFAULT_RULES, file_spread=0.0),
    ),
    "defaults now without the answer budget and the top 10's line cap (what they cost)": (
        "ast",
        (ChunkConfig().max_tokens, ChunkConfig().min_tokens),
        replace(DEFAULT_RULES, answer_lines=0, top_lines=0),
    ),
}
COLUMNS = ("MRR@10", "R@1", "R@5", "lines@5", "R@1k", "R@2k", "R@4k", "tokens to first hit")


def grid(sizes: str) -> dict[str, tuple[str, tuple[int, int], RankingRules]]:
    """``512/64,320/48`` -> AST settings at those budgets with today's rules."""
    budgets = [tuple(int(x) for x in size.split("/")) for size in sizes.split(",")]
    return {f"AST {high}/{low}": ("ast", (high, low), DEFAULT_RULES) for high, low in budgets}


def measure(
    name: str,
    tier: str,
    settings: dict[str, tuple[str, tuple[int, int], RankingRules]] = SETTINGS,
    rescored: bool = False,
) -> dict[str, dict[str, float]]:
    """Each setting's doc-variant figures on one set (``rescored``: as re-scored by MiniLM)."""
    query_set = SETS[name]()
    queries = load_queries(query_set.queries)
    repo = open_repository(query_set.corpus, name=query_set.name)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    embedder = tier_cache(tier)
    texts = [q.query for q in queries]
    vectors = embedder.encode(texts)
    out = {}
    for label, (strategy, (high, low), rules) in settings.items():
        config = ChunkConfig().with_(strategy=strategy, max_tokens=high, min_tokens=low)
        chunks = chunk_analyses(analyses, config, repo=repo.name)
        index = VectorIndex.from_chunks(chunks, embedder)
        answered = (
            rescored_answers(index, texts, vectors, rules, tier_cache(QUALITY))
            if rescored
            else None
        )
        report = evaluate(
            queries, index, embedder, query_vectors=vectors, ranking=rules, answered=answered
        )
        out[label] = {"chunks": len(chunks), **{c: report.metric("doc", c) for c in COLUMNS}}
        print(f"[{name}] {label}: " + ", ".join(f"{c} {out[label][c]:.3f}" for c in COLUMNS))
    return out


def table(found: dict[str, dict[str, dict[str, float]]]) -> tuple[list[str], list[list[str]]]:
    headers = ["set", "setting", "chunks", *COLUMNS, "bar"]
    rows = []
    for name, settings in found.items():
        reference = next(iter(settings.values()))
        for label, m in settings.items():
            ok = (
                m["MRR@10"] >= reference["MRR@10"] - TOLERANCE
                and m["lines@5"] <= reference["lines@5"]
            )
            cells = [f"{m[c]:.3f}" for c in COLUMNS[:3]] + [f"{m['lines@5']:.1f}"]
            cells += [f"{m[c]:.3f}" for c in COLUMNS[4:7]] + [f"{m[COLUMNS[7]]:.0f}"]
            bar = "" if m is reference else ("yes" if ok else "**no**")
            rows.append([name, label, str(m["chunks"]), *cells, bar])
    return headers, rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", default=QUALITY, choices=TIERS)
    parser.add_argument("--set", action="append", choices=list(SETS), help="default: all")
    parser.add_argument("--sizes", help="AST budgets MAX/MIN,... (today's rules) instead")
    parser.add_argument("--answers", action="store_true", help="issue 39: before and after")
    parser.add_argument("--rescore", action="store_true", help="fast tier, re-scored by MiniLM")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    if args.rescore and args.tier != FAST:
        parser.error("--rescore re-scores the fast tier's answers: add --tier fast")
    settings = grid(args.sizes) if args.sizes else ANSWERS if args.answers else SETTINGS
    found = {
        name: measure(name, args.tier, settings, args.rescore) for name in args.set or list(SETS)
    }
    text = render_markdown(table(found))
    print(text)
    if args.write:
        load = "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
        name = ("answers_docs" if args.answers else "per_token_docs") + (
            "_rescored" if args.rescore else ""
        )
        (RESULTS / f"{name}.json").write_text(
            json.dumps(
                {
                    "date": str(date.today()),
                    "tier": args.tier,
                    "rescored": args.rescore,
                    "sets": found,
                },
                indent=1,
            )
            + "\n"
        )
        # Sections added by hand below the table ("## ...") are kept.
        page = RESULTS / f"{name}.md"
        old = page.read_text() if page.exists() else ""
        notes = old[old.index("\n## ") :] if "\n## " in old else ""
        flags = f"--tier {args.tier}{' --answers' if args.answers else ''}"
        flags += " --rescore" if args.rescore else ""
        page.write_text(
            "# Doc-comment sets: the rules before beside the per-token pipeline\n\n"
            f"`bench/retrieval/per_token_docs.py {flags} --write`, {date.today()}: doc queries "
            "only, overlap50 rule; R@Bk and tokens to first hit under `half_the_lines`, read "
            f"as deep as the budget lasts. Bar: MRR@10 within {TOLERANCE} of the first row's at "
            f"equal or fewer lines@5. Load average {load} on 2 cores.\n\n{text}\n{notes}"
        )


if __name__ == "__main__":
    main()
