"""Query latency with the ranking stage at 10k and 100k chunks, and where the time goes.

The chunks and vectors of the question set's AST indexes (``bench/retrieval/questions_index.py``)
are repeated, each copy in its own folder and with a little noise on its vectors, to
each size; the 240 questions are the queries. Timed per query, query embedding excluded
(reported on its own: the same for every search): ``nexus.retrieval.search.search`` with
the ranking stage; the ranking stage over every chunk's scores (the search before the
shortlist, ``rank`` given the full cosine and BM25 arrays); and cosine + 0.2 x BM25
(the hybrid before the stage). The searches run back-to-back, ``--repeats`` times in
turn; the load average is recorded around each size, since the machine is shared.
Also checked: the ranked search gives the same hits, order and scores as ``rank`` over
every chunk.

    .venv/bin/python bench/speed/ranking_latency.py [--chunks 10000 100000] [--repeats 3]
        [--tier fast|quality] [--sizes 320-48]

``--tier`` and ``--sizes`` name the saved indexes of ``bench/retrieval/questions_index.py`` that are
repeated (their model's name travels with them: query feedback is the fast tier's).

Writes ``bench/results/ranking_latency.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.retrieval.questions_eval import load_questions  # noqa: E402
from bench.retrieval.questions_index import INDEXES, index_folder, tier_cache  # noqa: E402
from nexus.retrieval.candidates import top_keyword_keys  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.ranking import DEFAULT_RULES, Ranked, rank  # noqa: E402
from nexus.retrieval.search import search  # noqa: E402
from nexus.retrieval.tiers import FAST, TIERS, tier_embedder  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: Questions embedded one at a time, uncached, for the embedding's own figure.
EMBEDDED_ALONE = 40


def grown_index(size: int, tier: str, sizes: str) -> VectorIndex:
    """The question set's chunks and vectors, repeated (each copy in its own folder)."""
    chunks, vectors, model = [], [], ""
    for repo in load_questions("all"):
        folder = index_folder(INDEXES[tier], repo, "ast", sizes)
        if VectorIndex.read_manifest(folder) is None:
            print(f"(no index {folder}: left out)", file=sys.stderr)
            continue
        index = VectorIndex.load(folder)
        model = index.model
        chunks += list(index.chunks)
        vectors.append(np.asarray(index.vectors))
    base = np.concatenate(vectors)
    rng = np.random.default_rng(0)
    grown, rows = [], []
    for copy in range(-(-size // len(chunks))):
        for chunk in chunks:
            if len(grown) == size:
                break
            grown.append(replace(chunk, id=f"{copy}:{chunk.id}", file=f"copy{copy}/{chunk.file}"))
        rows.append(base[: len(grown) - len(rows) * len(chunks)])
    noisy = np.concatenate(rows) + rng.normal(0, 0.01, (size, base.shape[1])).astype(np.float32)
    return VectorIndex.build(grown, noisy, model)


def percentiles(times: list[float]) -> dict[str, float]:
    return {f"p{p}_ms": round(float(np.percentile(times, p)) * 1000, 2) for p in (50, 95, 99)}


def timed(
    run: Callable[[np.ndarray, str], object], vectors: np.ndarray, queries: list[str]
) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds (all the process's threads) of each query: on a loaded machine
    the CPU time says what a query costs, the wall time what it waited for besides."""
    run(vectors[0], queries[0])  # warm (the first ranked query makes the float16 copy)
    wall, cpu = [], []
    for vec, query in zip(vectors, queries, strict=True):
        start, start_cpu = time.perf_counter(), time.process_time()
        run(vec, query)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return wall, cpu


#: The shortlist check's rules: one pass (query feedback would only repeat the check).
ONE_PASS = replace(DEFAULT_RULES, feedback=0.0)


def ranked_over_every_chunk(
    index: VectorIndex, vec: np.ndarray, query: str
) -> tuple[np.ndarray, list[Ranked]]:
    """The ranking stage over candidates picked from every chunk's cosine (no shortlist,
    no query feedback): the candidates' keys, and ``rank``'s answer (its keys are
    positions among them)."""
    count = ONE_PASS.candidates
    dense, keyword = index.cosines(vec), index.keyword_scores(query)
    keys = np.union1d(np.argpartition(-dense, count - 1)[:count], top_keyword_keys(keyword, count))
    chunks = [index.chunk(int(key)) for key in keys]
    return keys, rank(chunks, dense[keys], keyword[keys], query, 10, ONE_PASS)


def same_answers(index: VectorIndex, vectors: np.ndarray, queries: list[str]) -> dict[str, float]:
    """How many queries get other hits or order than ``rank`` over candidates picked from
    every chunk's scores, and the largest difference in any score or score part."""
    differ, worst = 0, 0.0
    for vec, query in zip(vectors, queries, strict=True):
        hits = search(index, vec, query, 10, rules=ONE_PASS)
        keys, reference = ranked_over_every_chunk(index, vec, query)
        if [h.key for h in hits] != [keys[r.key] for r in reference]:
            differ += 1
            continue
        for hit, ref in zip(hits, reference, strict=True):
            values = [(hit.score, ref.score)] + [
                (a.value, b.value) for a, b in zip(hit.parts, ref.parts, strict=True)
            ]
            worst = max(worst, *(abs(a - b) for a, b in values))
    return {"queries_with_other_hits": differ, "worst_score_difference": worst}


def measure(
    size: int, repeats: int, vectors: np.ndarray, queries: list[str], tier: str, sizes: str
) -> dict:
    index = grown_index(size, tier, sizes)
    index.keywords()  # built once, as a saved index loads it
    runs = {
        "ranking stage": lambda v, q: search(index, v, q, 10, rules=DEFAULT_RULES),
        "ranking stage, one pass (no query feedback)": lambda v, q: search(
            index, v, q, 10, rules=ONE_PASS
        ),
        "ranking stage over every chunk (before)": lambda v, q: ranked_over_every_chunk(
            index, v, q
        ),
        "cosine + 0.2 x BM25": lambda v, q: search(index, v, q, 10, lexical_weight=0.2),
    }
    load_before = os.getloadavg()[0]
    times: dict[str, list[list[float]]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            wall, cpu_times = timed(run, vectors, queries)
            times[name].append(wall)
            cpu[name] += cpu_times
    load_after = os.getloadavg()[0]
    figures = {}
    for name, rounds in times.items():
        each = [percentiles(t) for t in rounds]
        figures[name] = {
            **percentiles([t for r in rounds for t in r]),
            "best_p95_ms": min(f["p95_ms"] for f in each),
            "p95_ms_per_repeat": [f["p95_ms"] for f in each],
            "cpu": percentiles(cpu[name]),
        }
        print(f"{size:>7} {name:40} {figures[name]}", flush=True)
    check = same_answers(index, vectors, queries)
    print(f"{size:>7} same answers as rank() over every chunk: {check}", flush=True)
    return {
        "chunks": len(index),
        "load_average": [round(load_before, 2), round(load_after, 2)],
        "figures": figures,
        "check": check,
    }


def embedding_alone(questions: list[str], tier: str) -> dict[str, float]:
    """Query embedding, one question at a time without the cache (what a search adds)."""
    embedder = tier_embedder(tier, cache_dir=os.environ.get("NEXUS_CACHE_DIR"))
    embedder.encode(questions[:1])
    times = []
    for question in questions[:EMBEDDED_ALONE]:
        start = time.perf_counter()
        embedder.encode([question])
        times.append(time.perf_counter() - start)
    return {**percentiles(times), "load_average": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tier", default=FAST, choices=TIERS)
    parser.add_argument("--sizes", default="320-48", help="the indexes' AST budgets MAX-MIN")
    args = parser.parse_args()
    questions = [q.query for qs in load_questions("all").values() for q in qs]
    vectors = tier_cache(args.tier, args.sizes).encode(questions)
    sizes = [
        measure(size, args.repeats, vectors, questions, args.tier, args.sizes)
        for size in args.chunks
    ]
    embedding = embedding_alone(questions, args.tier)
    print(f"query embedding alone: {embedding}", flush=True)
    report = {
        "date": str(date.today()),
        "machine": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "queries": len(questions),
        "repeats": args.repeats,
        "tier": args.tier,
        "chunk_budgets": args.sizes,
        "sizes": sizes,
        "query_embedding": embedding,
    }
    (RESULTS / "ranking_latency.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "ranking_latency.md").write_text(markdown(report))


def markdown(report: dict) -> str:
    lines = [
        "# Query latency with the ranking stage",
        "",
        f"`bench/speed/ranking_latency.py`, {report['date']}, {report['cores']} cores (shared): "
        "the "
        f"question set's AST chunks ({report['tier']} tier, {report['chunk_budgets']}) repeated "
        f"to each size, {report['queries']} questions, "
        f"query embedding excluded, {report['repeats']} repeats back-to-back. p50/p95/p99 "
        "over all repeats; best p95 is the best repeat's; CPU: the process's CPU time per query "
        "(all its threads), less sensitive to the other jobs than wall time.",
        "",
        "| chunks | load avg (1 min, before/after) | search | p50 ms | p95 ms | best p95 ms "
        "| CPU p50 ms | CPU p95 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in report["sizes"]:
        load = "/".join(str(x) for x in size["load_average"])
        for name, f in size["figures"].items():
            lines.append(
                f"| {size['chunks']:,} | {load} | {name} | {f['p50_ms']} | {f['p95_ms']} "
                f"| {f['best_p95_ms']} | {f['cpu']['p50_ms']} | {f['cpu']['p95_ms']} |"
            )
    lines += ["", "Same answers as `rank` over every chunk's scores:", ""]
    for size in report["sizes"]:
        check = size["check"]
        lines.append(
            f"- {size['chunks']:,} chunks: {check['queries_with_other_hits']} of "
            f"{report['queries']} queries with other hits or order; largest score difference "
            f"{check['worst_score_difference']:.1e}"
        )
    embedding = report["query_embedding"]
    lines += [
        "",
        f"Query embedding alone (not in the figures above; {EMBEDDED_ALONE} questions one at a "
        f"time, uncached, load {embedding['load_average']}): p50 {embedding['p50_ms']} ms, "
        f"p95 {embedding['p95_ms']} ms.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
