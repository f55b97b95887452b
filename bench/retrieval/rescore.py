"""The fast tier's best hits scored again by MiniLM (``nexus.retrieval.rescore``), on the
hand-written questions: beside the fast tier alone and the quality tier alone.

    NEXUS_CACHE_DIR=... .venv/bin/python bench/retrieval/rescore.py [--split tune] [--depth 30 ...]

Needs both tiers' saved indexes at AST 320/48 (``bench/retrieval/questions_index.py --tier fast
--sizes 320-48`` and ``--tier quality --sizes 320-48``): the same chunks, so MiniLM's vector
of a fast-tier hit is read from the quality index instead of embedded again. Scored as
``bench/retrieval/per_token.py`` scores (NDCG@10 ... R@4k, lines@10), plus the cost per query: how
many chunks a first query embeds, and MiniLM's seconds for that many (both views), on
this machine. Results: ``bench/results/rescore.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from bench.retrieval.per_token import covers  # noqa: E402
from bench.retrieval.questions_eval import cases, load_questions  # noqa: E402
from bench.retrieval.questions_index import INDEXES, index_folder, tier_cache  # noqa: E402
from nexus.evaluation.budget import budget_outcome, summarize_budgets  # noqa: E402
from nexus.evaluation.questions import METRICS, question_scores  # noqa: E402
from nexus.retrieval.budget import READ_DEPTH  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import DEFAULT_RULES, rank  # noqa: E402
from nexus.retrieval.rescore import RESCORE_DEPTH, rescore, rescore_texts  # noqa: E402
from nexus.retrieval.search import Hit, ranked_hits  # noqa: E402
from nexus.retrieval.tiers import FAST, QUALITY  # noqa: E402
from nexus.tables import render_markdown  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SIZES = "320-48"
COLUMNS = ("NDCG@10", "MRR@10", "R@5", "R@1k", "R@2k", "R@4k", "lines@10")


def fast_hits(case) -> list[Hit]:
    """The fast tier's ranked hits of one question, as ``search`` returns them."""
    found, rules = case.candidates, DEFAULT_RULES.for_model(case.model)
    top = rank(found.chunks, found.dense, found.keyword, case.question.query, READ_DEPTH, rules)
    return ranked_hits(found, top)


def measure(split: str, depths: list[int], strategy: str) -> dict[str, dict[str, float]]:
    """Each run's means over the split: the fast tier, and re-scored at each depth."""
    sizes = SIZES if strategy == "ast" else ""
    fast, quality = tier_cache(FAST, SIZES), tier_cache(QUALITY, SIZES)
    runs: dict[str, tuple[list, list]] = {}

    def score(name: str, case, hits: list[Hit], files: set[str]) -> None:
        quality_rows, budget_rows = runs.setdefault(name, ([], []))
        deep = [hit.chunk for hit in hits]
        quality_rows.append(question_scores(case.question, deep[:10], files))
        budget_rows.append(budget_outcome(deep, case.question.targets, covers))

    for repo, questions in load_questions(split).items():
        fast_index = VectorIndex.load(index_folder(INDEXES[FAST], repo, strategy, sizes))
        minilm = VectorIndex.load(index_folder(INDEXES[QUALITY], repo, strategy, sizes))
        ids = [c.id for c in minilm.chunks]
        if ids != [c.id for c in fast_index.chunks]:
            raise SystemExit(f"{repo}: the two tiers' indexes hold different chunks")
        vectors = np.asarray(minilm.vectors, dtype=np.float32)
        files = {c.file for c in fast_index.chunks}
        query_vectors = quality.encode([q.query for q in questions])
        for case, query_vec in zip(cases(fast_index, questions, fast), query_vectors, strict=True):
            hits = fast_hits(case)
            score("fast tier", case, hits, files)
            for depth in depths:
                cosines = vectors[[hit.key for hit in hits[:depth]]] @ query_vec
                rescored = rescore(hits, cosines.tolist(), case.question.query, DEFAULT_RULES)
                score(f"fast tier, best {depth} re-scored by MiniLM", case, rescored, files)
    out = {}
    for name, (quality_rows, budget_rows) in runs.items():
        row = {m: statistics.fmean(q[m] for q in quality_rows) for m in METRICS}
        out[name] = {"n": len(quality_rows), **row, **summarize_budgets(budget_rows)}
    return out


def cost(split: str, depth: int) -> dict[str, float]:
    """MiniLM's seconds to embed ``depth`` hits' texts (both views), on one repository's
    first few questions: what a first query pays before its chunks are cached."""
    from nexus.retrieval.tiers import tier_embedder

    model = tier_embedder(QUALITY)
    repo, questions = next(iter(load_questions(split).items()))
    index = VectorIndex.load(index_folder(INDEXES[FAST], repo, "ast", SIZES))
    fast = tier_cache(FAST, SIZES)
    seconds = []
    for case in cases(index, questions[:6], fast):
        texts = rescore_texts(fast_hits(case), depth)
        start = time.perf_counter()
        model.encode([case.question.query, *texts])
        seconds.append(time.perf_counter() - start)
    return {"model": model.name, "texts": depth + 1, "median_s": statistics.median(seconds[1:])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", action="append", choices=("tune", "heldout"), default=[])
    parser.add_argument("--depth", type=int, action="append", default=[])
    parser.add_argument("--strategy", choices=("ast", "lines"), default="ast")
    args = parser.parse_args()
    depths = args.depth or [RESCORE_DEPTH]
    found = {
        f"{split}, {args.strategy}": measure(split, depths, args.strategy)
        for split in args.split or ["tune", "heldout"]
    }
    path = RESULTS / "rescore.json"
    if path.exists():  # the other strategy's rows stay
        found = json.loads(path.read_text())["splits"] | found
    report = {
        "date": str(date.today()),
        "machine": machine(),
        "splits": found,
        "cost": cost("tune", RESCORE_DEPTH),
    }
    (RESULTS / "rescore.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "rescore.md").write_text(markdown(report))
    print(markdown(report))


def markdown(report: dict) -> str:
    lines = [
        "# The fast tier's best hits scored again by MiniLM",
        "",
        f"`bench/retrieval/rescore.py`, {report['date']}: fast tier (AST 320/48 or 50-line "
        "windows), "
        "today's rules; "
        "MiniLM's vectors of the hits from the quality tier's index of the same chunks. "
        "Scored as `per_token.md` (budgets read as deep as they last). The quality tier "
        "alone, for comparison: `per_token.md`, rows `quality tier`.",
    ]
    for split, rows in report["splits"].items():
        headers = ["run", "n", *COLUMNS]
        body = [
            [name, str(int(row["n"]))]
            + [f"{row[c]:.3f}" if c != "lines@10" else f"{row[c]:.0f}" for c in COLUMNS]
            for name, row in rows.items()
        ]
        lines += ["", f"## {split}", "", render_markdown((headers, body))]
    c, m = report["cost"], report["machine"]
    lines += [
        "",
        f"Cost of a first query: MiniLM ({c['model']}) embeds the query and {c['texts'] - 1} "
        f"chunk texts, both views, in {c['median_s']:.2f} s (median; {m['nproc']} CPUs, "
        f"{m['cpu']}); the chunks are cached after, so a later query pays only for hits "
        "it has not met.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
