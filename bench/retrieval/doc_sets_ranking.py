"""Doc-comment query sets with the ranking stage off and on, at the default chunking.

The ranking stage (``nexus.retrieval.ranking``) was tuned on the question set; search
now goes through it by default. Its weights must not cost the doc-comment sets what
they measured before: on each set (dev, held-out and check from ``bench/retrieval/eval_sets.py``;
python, python-tuning and go from ``bench/retrieval/language_eval.py``) the doc variant's MRR@10
with ranking on must stay within ``TOLERANCE`` of ranking off (cosine + lexical_weight x
relative BM25) or be better. Nothing here tunes a weight: it only measures.

Each set is chunked at ``ChunkConfig()`` and embedded once through the embedding cache
(``$NEXUS_CACHE_DIR``, else ``.nexus-cache/embeddings``; a rerun takes a few minutes);
both runs go through ``evaluate_config``, the benchmarks' own path. For the doc queries
that rank worse with ranking on, the largest drops are listed with their hits' score
parts (``Hit.parts``), so the rule that moved them can be named.

    nice -n 5 .venv/bin/python bench/retrieval/doc_sets_ranking.py [--set dev --set go ...]

Results: ``bench/results/doc_sets_ranking.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from bench.retrieval import language_eval  # noqa: E402
from bench.retrieval.eval_sets import QuerySet, check_set, dev_set, heldout_set  # noqa: E402
from bench.retrieval.retrieval import BUDGET_HEADER, VARIANTS, budget_cells, row  # noqa: E402
from nexus.chunking.pipeline import analyze_files, chunk_analyses  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.evaluation.experiments import ConfigResult, describe, evaluate_config  # noqa: E402
from nexus.evaluation.metrics import is_hit  # noqa: E402
from nexus.evaluation.query_sets import Query, load_queries  # noqa: E402
from nexus.evaluation.runs import QueryRow, evaluate  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache, default_embedder  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import BOOSTS, DEFAULT_RULES, RankingRules, explain, rules_for  # noqa: E402
from nexus.retrieval.search import Hit, search  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: How much doc MRR@10 the ranking stage may cost a set (the issue's bar).
TOLERANCE = 0.01
#: Worsened doc queries listed per set, largest reciprocal-rank drop first.
EXAMPLES = 4
#: How deep the ranking stage is asked, to find a target it pushed out of the top 10.
DEEP = 100


def language_set(name: str) -> Callable[[], QuerySet]:
    """A ``bench/retrieval/language_eval.py`` set as a corpus and its queries (rebuilt: seconds)."""

    def built() -> QuerySet:
        corpus, queries = language_eval.build(language_eval.SETS[name])
        return QuerySet(name, corpus, queries)

    return built


SETS: dict[str, Callable[[], QuerySet]] = {
    "dev": dev_set,
    "heldout": heldout_set,
    "check": check_set,
    "python": language_set("python"),
    "python-tuning": language_set("python-tuning"),
    "go": language_set("go"),
}


def reciprocal(query_row: QueryRow) -> float:
    rank = query_row.rank
    return 1.0 / rank if rank is not None and rank <= 10 else 0.0


def describe_hit(hit: Hit) -> dict[str, object]:
    chunk = hit.chunk
    return {
        "rank": hit.rank,
        "chunk": f"{chunk.file}:{chunk.start_line}-{chunk.end_line}",
        "symbol": chunk.symbol,
        "kind": chunk.symbol_kind,
        "score": round(hit.score, 3),
        "parts": explain(hit.parts),
    }


def example(
    index: VectorIndex, vector: np.ndarray, query: Query, off: QueryRow
) -> dict[str, object]:
    """One worsened query: the target's place and parts with ranking on (searched
    ``DEEP`` deep), the hits above it, and where ranking off had it."""
    hits = search(index, vector, query.query, DEEP, rules=rules_for(ChunkConfig()))
    target = next((h for h in hits if is_hit(h.chunk, query.target)), None)
    above = hits[: (target.rank - 1) if target else 3][:3]
    return {
        "id": query.id,
        "query": query.query,
        "target": f"{query.target.file}:{query.target.start_line}-{query.target.end_line} "
        f"({query.target.kind})",
        "rank_off": off.rank,
        "rank_on": target.rank if target else None,
        "target_on": describe_hit(target) if target else None,
        "above_on": [describe_hit(h) for h in above],
        "top_off": off.outcome.hits[0].chunk.id if off.outcome.hits else None,
    }


def ablations() -> dict[str, RankingRules]:
    """The default rules with every boost off (fusion only), and each rule off alone:
    what each is worth on a set (measured, never tuned here)."""
    fusion_only = replace(DEFAULT_RULES, **{f: 0.0 for fs in BOOSTS.values() for f in fs})
    alone = {
        f"without {rule}": DEFAULT_RULES.without(rule)
        for rule, weights in BOOSTS.items()
        if any(getattr(DEFAULT_RULES, w) for w in weights)
    }
    return {"fusion only (no boosts)": fusion_only, **alone}


def extra_parts(hit: Hit) -> list[str]:
    """The names of a hit's boosts and dampings (not the fused dense and keyword)."""
    return [p.name for p in hit.parts if p.name not in ("dense", "keyword")]


def run_set(
    query_set: QuerySet, embedder: CachedEmbedder
) -> tuple[dict[str, ConfigResult], dict[str, object]]:
    """Both runs on one set, and what changed for its doc queries."""
    queries = load_queries(query_set.queries)
    repo = open_repository(query_set.corpus, name=query_set.name)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    vectors = embedder.encode([q.query for q in queries])
    configs = {"ranking off": ChunkConfig().with_(ranking=False), "ranking on": ChunkConfig()}
    results = {}
    for label, config in configs.items():
        results[label] = evaluate_config(analyses, repo.name, config, queries, embedder, vectors)
        print(
            f"[{query_set.name}] {label:12} chunks {results[label].chunks:5}  "
            + "  ".join(f"{v} MRR@10 {results[label].metric('MRR@10', v):.3f}" for v in VARIANTS),
            flush=True,
        )
    off_rows = {r.id: r for r in results["ranking off"].report.rows}
    pairs = [(off_rows[r.id], r) for r in results["ranking on"].report.rows if r.variant == "doc"]
    worse = sorted(
        (p for p in pairs if reciprocal(p[1]) < reciprocal(p[0])),
        key=lambda p: reciprocal(p[1]) - reciprocal(p[0]),
    )
    better = sum(1 for off, on in pairs if reciprocal(on) > reciprocal(off))
    # Which rules sit on the hits that overtook a target, over every worsened query.
    overtaking: Counter[str] = Counter()
    on_target: Counter[str] = Counter()
    for off, on in worse:
        above_off = {h.chunk.id for h in off.outcome.hits[: (off.rank or 11) - 1]}
        for hit in on.outcome.hits[: (on.rank or 11) - 1]:
            if hit.chunk.id not in above_off:
                overtaking.update(set(extra_parts(hit)) or {"(fusion only)"})
        target = next((h for h in on.outcome.hits if is_hit(h.chunk, on.query.target)), None)
        if target is not None:
            on_target.update(set(extra_parts(target)) or {"(none)"})
    index = VectorIndex.from_chunks(
        chunk_analyses(analyses, ChunkConfig(), repo=repo.name), embedder
    )
    position = {q.id: i for i, q in enumerate(queries)}
    examples = [
        example(index, vectors[position[on.id]], on.query, off) for off, on in worse[:EXAMPLES]
    ]
    worth = {
        label: round(
            evaluate(queries, index, embedder, query_vectors=vectors, ranking=rules).metric(
                "doc", "MRR@10"
            ),
            3,
        )
        for label, rules in ablations().items()
    }
    changes = {
        "doc_queries": len(pairs),
        "doc_MRR@10_ablations": worth,
        "better": better,
        "worse": len(worse),
        "parts_on_overtaking_hits": dict(overtaking.most_common()),
        "parts_on_worsened_targets_in_top10": dict(on_target.most_common()),
        "worst": examples,
    }
    return results, changes


def summarise(name: str, results: dict[str, ConfigResult]) -> dict[str, object]:
    off, on = results["ranking off"], results["ranking on"]
    delta = on.metric("MRR@10") - off.metric("MRR@10")
    return {
        "set": name,
        "doc_queries": on.report.metrics["doc"]["n"],
        "doc_MRR@10_off": round(off.metric("MRR@10"), 3),
        "doc_MRR@10_on": round(on.metric("MRR@10"), 3),
        "delta": round(delta, 3),
        "within_tolerance_or_better": delta >= -TOLERANCE,
    }


def markdown(summary: dict) -> str:
    lines = [
        f"# Doc-comment sets, ranking stage off vs on ({summary['date']})",
        "",
        f"{summary['machine']}; {summary['load']}; model `{summary['model']}`; chunking "
        f"`ChunkConfig()` ({describe(ChunkConfig())}); exact top 10, overlap>=50% rule. "
        f"Off: cosine + {ChunkConfig().lexical_weight} x relative BM25 "
        "(`ChunkConfig(ranking=False)`); on: the ranking stage with `RankingRules()` "
        "(chosen on the question set, not on these). "
        f"Bar: doc MRR@10 with ranking on >= off - {TOLERANCE}.",
        "",
        "| set | doc queries | doc MRR@10 off | doc MRR@10 on | delta | within 0.01 or better |",
        "|---|---|---|---|---|---|",
        *(
            f"| {s['set']} | {s['doc_queries']:.0f} | {s['doc_MRR@10_off']:.3f} | "
            f"{s['doc_MRR@10_on']:.3f} | {s['delta']:+.3f} | "
            f"{'yes' if s['within_tolerance_or_better'] else '**no**'} |"
            for s in summary["verdicts"]
        ),
        "",
        "| set | run | chunks | doc R@1 | doc R@5 | doc MRR@10 | doc lines@5 | name MRR | "
        f"name R@1 | calls MRR | calls R@1 | {BUDGET_HEADER} |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, rows in summary["runs"].items():
        lines += [
            f"| {name} | {r['run']} | {r['chunks']} | {r['doc:R@1']:.3f} | {r['doc:R@5']:.3f} | "
            f"**{r['doc:MRR@10']:.3f}** | {r['doc:lines@5']:.1f} | {r['name:MRR@10']:.3f} | "
            f"{r['name:R@1']:.3f} | {r['calls:MRR@10']:.3f} | {r['calls:R@1']:.3f} | "
            f"{budget_cells(r)} |"
            for r in rows
        ]
    for name, change in summary["changes"].items():
        lines += [
            "",
            f"## {name}: doc queries that moved",
            "",
            f"{change['better']} of {change['doc_queries']} better, {change['worse']} worse. "
            f"Parts on hits that overtook a worsened target: {change['parts_on_overtaking_hits']}; "
            f"on worsened targets still in the top 10: "
            f"{change['parts_on_worsened_targets_in_top10']}.",
            "",
            "Doc MRR@10 with ranking on, one rule off at a time: "
            + ", ".join(f"{k} {v:.3f}" for k, v in change["doc_MRR@10_ablations"].items())
            + ".",
        ]
        for ex in change["worst"]:
            lines += [
                "",
                f'- `{ex["id"]}` "{ex["query"]}" -> {ex["target"]}: rank {ex["rank_off"]} '
                f"off, {ex['rank_on']} on",
                "  - target on: "
                + (ex["target_on"]["parts"] if ex["target_on"] else f"not in top {DEEP}"),
                *(
                    f"  - above it: #{h['rank']} {h['chunk']} ({h['symbol']}, {h['kind']}): "
                    f"{h['parts']}"
                    for h in ex["above_on"]
                ),
            ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=list(SETS), help="default: all")
    names = parser.parse_args(argv).set or list(SETS)
    embedder = CachedEmbedder(default_embedder(), EmbeddingCache())
    runs, changes, verdicts = {}, {}, []
    for name in names:
        results, changes[name] = run_set(SETS[name](), embedder)
        runs[name] = [row(label, result) for label, result in results.items()]
        verdicts.append(summarise(name, results))
    summary = {
        "date": date.today().isoformat(),
        "machine": ", ".join(f"{k} {v}" for k, v in machine().items()),
        "load": "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()),
        "model": embedder.name,
        "tolerance": TOLERANCE,
        "verdicts": verdicts,
        "runs": runs,
        "changes": changes,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "doc_sets_ranking.json").write_text(json.dumps(summary, indent=2) + "\n")
    text = markdown(summary)
    (RESULTS / "doc_sets_ranking.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
