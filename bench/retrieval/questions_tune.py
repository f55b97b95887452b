"""Choose the ranking stage's weights on the tuning half of the question set only.

Coordinate descent over ``RankingRules`` (each weight over a few values, two passes),
scored by mean NDCG@10 over the tuning half's repositories; the candidates are picked
once per question (``RankingRules.candidates`` is not tuned here), so a setting costs
milliseconds. The held-out half is then
scored once with the chosen weights (never used to choose). Prints the path and the
choice; paste the choice into ``RankingRules`` by hand.

    .venv/bin/python bench/retrieval/questions_tune.py [--strategy ast]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.retrieval.questions_eval import INDEXES, Case, cases, load_questions, ranked  # noqa: E402
from bench.retrieval.questions_index import index_folder  # noqa: E402
from nexus.evaluation.questions import question_scores  # noqa: E402
from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache, default_embedder  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import DEFAULT_RULES, RankingRules  # noqa: E402

GRID: dict[str, tuple[object, ...]] = {
    "fusion": ("minmax", "rrf"),
    "natural_dense": (0.5, 0.6, 0.7, 0.8, 0.9),
    "symbol_dense": (0.2, 0.3, 0.4, 0.5, 0.6),
    "defines": (0.2, 0.35, 0.5, 0.7),
    "defines_in_sentence": (0.0, 0.05, 0.1, 0.2),
    "name_words": (0.0, 0.05, 0.1, 0.2, 0.3),
    "path_word": (0.0, 0.02, 0.05, 0.1),
    "file_coherence": (0.0, 0.02, 0.04, 0.08),
    "same_file": (0.0, 0.01, 0.02, 0.04, 0.08),
    "test_file": (0.0, 0.1, 0.2),
    "mostly_comments": (0.0, 0.04, 0.08, 0.15),
    "shape_only": (0.0, 0.05, 0.1, 0.15, 0.2, 0.3),
    "module_code": (0.0, 0.05, 0.1, 0.15, 0.2, 0.3),
}


def tuning_cases(split: str, strategy: str) -> list[tuple[Case, set[str]]]:
    """Per question: its case (``bench/questions_eval.cases``) and the indexed files."""
    embedder = CachedEmbedder(default_embedder(), EmbeddingCache(INDEXES / "cache"))
    out = []
    for repo, questions in load_questions(split).items():
        folder = index_folder(INDEXES, repo, strategy)
        if not folder.exists():
            print(f"(no index of {repo})", file=sys.stderr)
            continue
        index = VectorIndex.load(folder)
        files = {c.file for c in index.chunks}
        found = cases(index, questions, embedder)
        out += [(case, files) for case in found]
    return out


def score(data: list[tuple[Case, set[str]]], rules: RankingRules) -> float:
    run = ranked(rules)
    total = sum(question_scores(c.question, run(c), files)["NDCG@10"] for c, files in data)
    return total / len(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", default="ast", choices=("ast", "lines"))
    args = parser.parse_args()
    tune = tuning_cases("tune", args.strategy)
    rules, best = DEFAULT_RULES, score(tune, DEFAULT_RULES)
    print(f"start: NDCG@10 {best:.4f} on {len(tune)} tuning questions")
    for sweep in (1, 2):
        for name, values in GRID.items():
            for value in values:
                trial = replace(rules, **{name: value})
                result = score(tune, trial)
                if result > best + 1e-4:
                    rules, best = trial, result
                    print(f"pass {sweep}: {name} = {value!r}: {best:.4f}", flush=True)
    print("chosen:", asdict(rules))
    heldout = tuning_cases("heldout", args.strategy)
    if heldout:
        print(
            f"held-out ({len(heldout)} questions): defaults {score(heldout, DEFAULT_RULES):.4f}, "
            f"chosen {score(heldout, rules):.4f}"
        )


if __name__ == "__main__":
    main()
