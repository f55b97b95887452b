"""Warm query latency's tail and Python's garbage collection pauses, by the size of the
ranking stage's per-query memos (``nexus.retrieval.evidence.QUERY_MEMO``).

Run: ``NEXUS_MODEL_PRECISION=float32 .venv/bin/python bench/speed/gc_pauses.py
--corpus /tmp/nexus-bench/scale/corpus [--n 600] [--memo 65536 --memo 4096] [--rounds 2]``
(``bench/speed/query_latency.py`` builds the corpus's index and MiniLM's vectors first).

Each run is a fresh process: it opens the saved index, answers one warm-up query, then
``--n`` distinct questions with ``Workspace.search(q, 10)`` (re-scored), with the two memos
of query words (``_path_matches``, ``_words_meeting``) holding ``--memo`` entries (with
``--freeze``, also with ``gc.freeze()`` after the warm-up, as ``nexus mcp`` freezes what a
repository's opening made). It counts
every collection ``gc.callbacks`` reports and how long each took. The memo sizes run in
turn, round by round. Figures go to stdout and ``bench/results/gc_pauses.{json,md}``.
Never asserts times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"

CHILD = """
import functools, gc, json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[4])
import query_latency as Q
import nexus.retrieval.evidence as E
size = int(sys.argv[3])
E._path_matches = functools.lru_cache(maxsize=size)(E._path_matches.__wrapped__)
E._words_meeting = functools.lru_cache(maxsize=size)(E._words_meeting.__wrapped__)
pauses, began = [], {}
def watch(phase, info):
    if phase == "start":
        began["t"] = time.perf_counter()
    else:
        pauses.append((info["generation"], time.perf_counter() - began["t"]))
corpus = Path(sys.argv[1])
queries = Q._queries(corpus, int(sys.argv[2]))
ws = Q._workspace(corpus, Q._cache_for(corpus), rescore=True)
ws.search("warm up the process", 10)
if sys.argv[5] == "freeze":  # as `nexus mcp` does once a repository's index is open
    gc.freeze()
gc.callbacks.append(watch)
times = []
for query in queries:
    t = time.perf_counter()
    ws.search(query, 10)
    times.append(time.perf_counter() - t)
times.sort()
full = [d for g, d in pauses if g == 2]
ms = lambda s: round(s * 1000, 1)
print(json.dumps({
    "n": len(times), "p50": ms(times[len(times) // 2]), "p95": ms(times[int(len(times) * .95)]),
    "p99": ms(times[int(len(times) * .99)]), "max": ms(times[-1]),
    "full_collections": len(full), "full_ms": ms(sum(full)), "longest_ms": ms(max(full, default=0)),
    "all_collections_ms": ms(sum(d for _, d in pauses)), "tracked": len(gc.get_objects()),
}))
"""


def run(corpus: Path, n: int, memo: int, freeze: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    speed = str(ROOT / "bench" / "speed")
    frozen = "freeze" if freeze else "no"
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(corpus), str(n), str(memo), speed, frozen],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=ROOT,
    ).stdout
    return json.loads(out.strip().splitlines()[-1]) | {
        "memo": memo,
        "frozen": freeze,
        "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
    }


def markdown(report: dict) -> str:
    lines = [
        "# Warm query tail and garbage collection pauses (`bench/speed/gc_pauses.py`)",
        "",
        f"{report['date']}, nproc {os.cpu_count()}, `NEXUS_MODEL_PRECISION="
        f"{os.environ.get('NEXUS_MODEL_PRECISION', 'auto')}`, corpus `{report['corpus']}` "
        f"({report['n']} distinct questions a run, re-scored, one process each, the memo "
        "sizes in turn). Full collections: Python's generation-2 passes over every tracked "
        "object; tracked: objects the collector follows after the run.",
        "",
        "| query memos | gc.freeze() after opening | p50 ms | p95 ms | p99 ms | max ms "
        "| full collections | their ms | longest ms | all collections ms | tracked | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["runs"]:
        lines.append(
            f"| {r['memo']:,} | {'yes' if r['frozen'] else 'no'} | {r['p50']} | {r['p95']} "
            f"| {r['p99']} | {r['max']} "
            f"| {r['full_collections']} | {r['full_ms']} | {r['longest_ms']} "
            f"| {r['all_collections_ms']} | {r['tracked']:,} | {r['load']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/nexus-bench/scale/corpus"))
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--memo", type=int, action="append", default=[])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--freeze", action="store_true", help="also each size with gc.freeze(), as nexus mcp runs"
    )
    args = parser.parse_args()
    memos = args.memo or [65536, 4096]
    runs = []
    for _ in range(args.rounds):
        for memo in memos:
            for freeze in (False, True) if args.freeze else (False,):
                runs.append(run(args.corpus, args.n, memo, freeze))
            print(json.dumps(runs[-1]), flush=True)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "corpus": args.corpus.name,
        "n": args.n,
        "runs": runs,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "gc_pauses.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "gc_pauses.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
