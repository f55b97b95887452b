"""What one ranking rule costs a warm query: ``Workspace.search`` with today's rules against
the same rules with some fields overridden, in one process, query by query in turn.

Run: ``NEXUS_MODEL_PRECISION=float32 nice -n 10 .venv/bin/python bench/speed/rules_latency.py
--corpus DIR [--corpus DIR ...] --override top_lines=0 [--n 200]``, on corpora that
``bench/speed/query_latency.py`` has indexed (its cache folders, MiniLM's vectors included,
so answers are re-scored).

The two rule sets take turns over ``--n`` distinct questions (each asked once, by one of
them), so a drift of the shared machine falls on both alike. Figures go to stdout and
``bench/results/rules_latency.{json,md}``: wall p50 / p95 per rule set, with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from bench.mcp.mcp_latency import _queries  # noqa: E402
from bench.speed.query_latency import RESULTS, _cache_for, _load, _percentiles  # noqa: E402
from nexus.retrieval import rules  # noqa: E402


def override(text: str) -> tuple[str, int | float | bool]:
    """``FIELD=VALUE`` of ``RankingRules`` from the command line."""
    name, _, value = text.partition("=")
    current = getattr(rules.DEFAULT_RULES, name, None)
    if current is None or not value:
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE of RankingRules, got {text!r}")
    return name, type(current)(json.loads(value))


def measure(corpus: Path, changed: dict[str, object], n: int) -> dict:
    """Warm p50 / p95 of today's rules and of ``changed`` ones, questions taken in turn."""
    from nexus.workspace import Settings, Workspace

    ws = Workspace.open(corpus, Settings(tier="fast", cache_dir=_cache_for(corpus)))
    ws.wait_for_rescore()
    first = ws.search("warm up the process", 10)
    today = rules.DEFAULT_RULES
    sets = {"today": today, "changed": replace(today, **changed)}
    times: dict[str, list[float]] = {name: [] for name in sets}
    try:
        for i, query in enumerate(_queries(corpus, n)):
            name = list(sets)[i % 2]
            rules.DEFAULT_RULES = sets[name]  # what rules_for hands every search
            began = time.perf_counter()
            ws.search(query, 10)
            times[name].append(time.perf_counter() - began)
    finally:
        rules.DEFAULT_RULES = today
    return {
        "corpus": str(corpus),
        "chunks": ws.status().chunks,
        "rescore": first.rescore,
        **{name: _percentiles(t) for name, t in times.items()},
        "load": _load(),
    }


def markdown(report: dict) -> str:
    rows = [
        f"| {Path(r['corpus']).name} | {r['chunks']:,} | {r['rescore']} | "
        f"{r['today']['p50_ms']} / {r['today']['p95_ms']} | "
        f"{r['changed']['p50_ms']} / {r['changed']['p95_ms']} | {r['load']} |"
        for r in report["corpora"]
    ]
    return "\n".join(
        [
            "# One ranking rule's cost to a warm query (`bench/speed/rules_latency.py`)\n",
            f"{report['date']}, `NEXUS_MODEL_PRECISION={report['precision']}`, "
            f"{report['machine']['nproc']} CPUs; changed rules: `{report['changed']}`; "
            "the two rule sets take turns over distinct questions in one process "
            f"({report['n']} in all). Wall ms.\n",
            "| corpus | chunks | answers | today p50 / p95 | changed p50 / p95 | load |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append", required=True)
    parser.add_argument("--override", type=override, action="append", required=True)
    parser.add_argument("--n", type=int, default=200, help="questions in all, split in turn")
    parser.add_argument("--name", default="rules_latency", help="results file stem")
    args = parser.parse_args()
    changed = dict(args.override)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "precision": os.environ.get("NEXUS_MODEL_PRECISION", "auto"),
        "machine": machine(),
        "changed": changed,
        "n": args.n,
        "corpora": [measure(corpus, changed, args.n) for corpus in args.corpus],
    }
    print(json.dumps(report["corpora"], indent=1))
    (RESULTS / f"{args.name}.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / f"{args.name}.md").write_text(markdown(report))


if __name__ == "__main__":
    main()
