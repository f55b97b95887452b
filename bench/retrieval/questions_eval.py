"""Hand-written questions (``bench/questions``): NDCG@10 / MRR@10 / R@5 per category, for
today's hybrid score, each retriever alone, the ranking stage, and the ranking stage with
each rule switched off (the ablation), on the tuning and the held-out half.

    .venv/bin/python bench/retrieval/questions_eval.py [--split tune|heldout|all]
        [--strategy ast|lines]

Needs the saved indexes of ``bench/retrieval/questions_index.py``. Writes
``bench/results/questions.{md,json}`` (with ``--write``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.retrieval.questions_index import QUESTIONS, index_folder  # noqa: E402
from nexus.chunking import CHUNKS_VERSION  # noqa: E402
from nexus.evaluation.questions import (  # noqa: E402
    Question,
    QuestionRow,
    parse_questions,
    question_scores,
    summarize,
    summary_table,
)
from nexus.retrieval.candidates import Candidates, candidates_for  # noqa: E402
from nexus.retrieval.embedding import (  # noqa: E402
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    default_embedder,
)
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import BOOSTS, DEFAULT_RULES, RankingRules, hit_chunk, rank  # noqa: E402
from nexus.tables import render_markdown, render_text  # noqa: E402
from nexus.types import Chunk  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: The saved indexes (``bench/retrieval/questions_index.py --indexes``);
#: ``$NEXUS_QUESTIONS_INDEXES`` points the question benchmarks at another build (e.g. one by
#: a newer chunker).
INDEXES = Path(os.environ.get("NEXUS_QUESTIONS_INDEXES", "/tmp/nexus-questions-indexes"))


@dataclass(frozen=True)
class Case:
    """One question on one index: every chunk's scores, and the ranking stage's candidates
    (picked once: the runs compared share them)."""

    question: Question
    chunks: Sequence[Chunk]
    dense: np.ndarray
    keyword: np.ndarray
    candidates: Candidates
    model: str  # the index's: the rules apply as they do to it (``RankingRules.for_model``)


# A run turns a case into the chunks (or windows) of its top 10.
Run = Callable[[Case], list[Chunk]]


def top_by(chunks: Sequence[Chunk], scores: np.ndarray) -> list[Chunk]:
    return [chunks[key] for key in np.argsort(-scores, kind="stable")[:10].tolist()]


def ranked(rules: RankingRules, k: int = 10) -> Run:
    """The ranking stage with ``rules`` over the case's candidates (its top ``k``)."""

    def run(case: Case) -> list[Chunk]:
        found, query = case.candidates, case.question.query
        top = rank(found.chunks, found.dense, found.keyword, query, k, rules.for_model(case.model))
        return [hit_chunk(found.chunks, x) for x in top]

    return run


def runs(rules: RankingRules) -> dict[str, Run]:
    """The ranking variants compared, by name."""

    def hybrid(case: Case) -> list[Chunk]:
        best = case.keyword.max()
        kw = case.keyword / best if best > 0 else case.keyword
        return top_by(case.chunks, case.dense + 0.2 * kw)

    table: dict[str, Run] = {
        "before: cosine + 0.2 x BM25": hybrid,
        "dense alone": lambda case: top_by(case.chunks, case.dense),
        "keyword alone": lambda case: top_by(case.chunks, case.keyword),
        "ranking stage": ranked(rules),
    }
    for rule in BOOSTS:
        table[f"ranking without {rule}"] = ranked(rules.without(rule))
    return table


def lines_shown(rows: Sequence[QuestionRow]) -> float:
    """Mean lines the top 10 shows (a window counts its whole span): what a run reads."""
    return sum(sum(c.end_line - c.start_line + 1 for c in row.top) for row in rows) / len(rows)


def load_questions(split: str) -> dict[str, list[Question]]:
    """Questions per repository of the split."""
    out: dict[str, list[Question]] = {}
    for manifest in sorted((QUESTIONS / "repos").glob("*.json")):
        meta = json.loads(manifest.read_text())
        if split in ("all", meta["split"]):
            out[meta["name"]] = parse_questions(manifest.with_suffix(".jsonl").read_bytes())
    return out


def cases(
    index: VectorIndex,
    questions: Sequence[Question],
    embedder: Embedder,
    rules: RankingRules = DEFAULT_RULES,
) -> list[Case]:
    """Each question's scores over ``index`` and its candidates (as ``rules`` pick them)."""
    chunks = index.chunks
    vectors = embedder.encode([q.query for q in questions])
    return [
        Case(
            q,
            chunks,
            index.cosines(vec),
            index.keyword_scores(q.query),
            candidates_for(index, vec, q.query, rules),
            index.model,
        )
        for q, vec in zip(questions, vectors, strict=True)
    ]


def evaluate(
    split: str, strategy: str, rules: RankingRules, names: Sequence[str] | None = None
) -> dict[str, list[QuestionRow]]:
    """Every run's rows over the split's repositories."""
    embedder = CachedEmbedder(default_embedder(), EmbeddingCache(INDEXES / "cache"))
    table = runs(rules)
    if names is not None:
        table = {name: table[name] for name in names}
    rows: dict[str, list[QuestionRow]] = {name: [] for name in table}
    for repo, questions in load_questions(split).items():
        folder = index_folder(INDEXES, repo, strategy)
        if not folder.exists():
            print(
                f"(no index of {repo} yet: run bench/retrieval/questions_index.py)", file=sys.stderr
            )
            continue
        index = VectorIndex.load(folder)
        files = {c.file for c in index.chunks}
        for case in cases(index, questions, embedder, rules):
            for name, run in table.items():
                top = tuple(run(case))
                scores = question_scores(case.question, top, files)
                rows[name].append(QuestionRow(case.question, scores, top))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="tune", choices=("tune", "heldout", "all"))
    parser.add_argument("--strategy", default="ast", choices=("ast", "lines"))
    parser.add_argument("--write", action="store_true", help="write bench/results/questions.*")
    args = parser.parse_args()
    started = time.perf_counter()
    splits = ("tune", "heldout") if args.write else (args.split,)
    report: dict[str, object] = {"date": str(date.today()), "rules": asdict(DEFAULT_RULES)}
    text = []
    for split in splits:
        for strategy in ("ast", "lines") if args.write else (args.strategy,):
            rows = evaluate(split, strategy, DEFAULT_RULES)
            summaries = {name: summarize(r) for name, r in rows.items()}
            report[f"{split}/{strategy}"] = summaries
            table = summary_table(summaries)
            shown = ", ".join(f"{name} {lines_shown(r):.0f}" for name, r in rows.items() if r)
            print(f"\n## {split} half, {strategy} chunks\n")
            print(render_text(table))
            print(f"lines in the top 10 (mean): {shown}")
            text.append(
                f"\n## {split} half, {strategy} chunks\n\n{render_markdown(table)}\n\n"
                f"Lines in the top 10 (mean): {shown}.\n"
            )
    print(f"({time.perf_counter() - started:.1f} s)")
    if args.write:
        (RESULTS / "questions.json").write_text(json.dumps(report, indent=1) + "\n")
        (RESULTS / "questions.md").write_text(
            "# Hand-written questions: ranking stage and ablation\n\n"
            "`bench/retrieval/questions_eval.py --write`; all-MiniLM-L6-v2, defaults 512/64 "
            "(AST) or "
            "50-line windows (lines). NDCG@10 with binary gains over primary targets. "
            f"Indexes `{INDEXES}` (chunks version {CHUNKS_VERSION}); load average "
            f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} (figures are not timings).\n"
            + "".join(text)
        )


if __name__ == "__main__":
    main()
