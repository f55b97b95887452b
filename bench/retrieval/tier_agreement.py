"""Do the fast (static) and quality (MiniLM) tiers rank chunking settings alike?

A sweep is only worth running on the fast tier if the setting it picks is the one the
quality tier would pick. On each doc-comment set (dev, held-out and check from
``bench/retrieval/eval_sets.py``) this runs the same sweep of AST budgets (``GRID_MAX`` x
``GRID_MIN`` plus the default setting) with each tier through ``experiments.sweep``,
and reports the Spearman rank correlation of the settings' doc MRR@10 (and R@5)
between the tiers, the best setting of each, and the sweep's wall time per tier.

Vectors go through the embedding cache (``$NEXUS_CACHE_DIR``, else
``.nexus-cache/embeddings``), keyed per tier, so a rerun of the MiniLM side is quick.

    nice -n 5 .venv/bin/python bench/retrieval/tier_agreement.py [--set dev ...] [--tier fast ...]

Results: ``bench/results/tier_agreement.{json,md}``, updated after every sweep (a run of
one tier keeps the other tier's figures; the two tiers may run at once).

Set ``NEXUS_CACHE_DIR`` to a cache that already holds MiniLM's vectors of the doc sets, or the
first run embeds them (tens of minutes on two shared cores); the fast tier is distilled into the
same folder on first use (~3-5 minutes). The same holds for ``bench/speed/fast_sweep.py`` and
``bench/retrieval/first_answer_tiers.py``.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from bench.retrieval.eval_sets import check_set, dev_set, heldout_set  # noqa: E402
from nexus.chunking.pipeline import analyze_files  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.evaluation.experiments import sweep  # noqa: E402
from nexus.evaluation.query_sets import load_queries  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache  # noqa: E402
from nexus.retrieval.tiers import TIERS, tier_embedder  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SETS = {"dev": dev_set, "heldout": heldout_set, "check": check_set}
#: The Evaluate page's default grid, plus the setting in use (the default, 512/64) as
#: the page adds it: 7 ranked settings. (MiniLM on two shared cores is what limits it.)
GRID_MAX = (128, 256, 512)
GRID_MIN = (0, 48)
METRICS = ("MRR@10", "R@5")


def run_sweep(name: str, tier: str) -> dict[str, object]:
    """One tier's sweep on one set: the doc metrics per setting and the wall time."""
    query_set = SETS[name]()
    queries = load_queries(query_set.queries)
    repo = open_repository(query_set.corpus, name=name)
    base = ChunkConfig()
    analyses = analyze_files(repo.source_files(), base.encoding)
    embedder = CachedEmbedder(tier_embedder(tier), EmbeddingCache())
    start = time.perf_counter()
    results = sweep(
        analyses,
        repo.name,
        base,
        queries,
        embedder,
        GRID_MAX,
        GRID_MIN,
        extra=[(base.max_tokens, base.min_tokens)],
    )
    seconds = time.perf_counter() - start
    settings = {
        f"{r.config.max_tokens}/{r.config.min_tokens}": {
            "chunks": r.chunks,
            **{m: round(r.metric(m), 4) for m in METRICS},
        }
        for r in results
    }
    print(
        f"[{name}] {tier}: {seconds:.1f} s, {embedder.misses} texts embedded, "
        f"{embedder.hits} from the cache; "
        + ", ".join(f"{k} {v['MRR@10']:.3f}" for k, v in settings.items()),
        flush=True,
    )
    return {
        "model": embedder.name,
        "seconds": round(seconds, 1),
        "embedded": embedder.misses,
        "cached": embedder.hits,
        "load": f"{os.getloadavg()[0]:.1f}",
        "settings": settings,
    }


def agreement(fast: dict, quality: dict) -> dict[str, object]:
    """Spearman per metric between the tiers' scores of the same settings, and the
    best setting (by MRR@10) of each."""
    keys = list(quality["settings"])
    out: dict[str, object] = {}
    for metric in METRICS:
        rho = spearmanr(
            [fast["settings"][k][metric] for k in keys],
            [quality["settings"][k][metric] for k in keys],
        ).statistic
        out[f"spearman {metric}"] = round(float(rho), 3)
    for tier, run in (("fast", fast), ("quality", quality)):
        out[f"best {tier}"] = max(keys, key=lambda k: run["settings"][k]["MRR@10"])
    return out


def markdown(summary: dict) -> str:
    lines = [
        f"# Fast (static) vs quality (MiniLM) tier: same ranking of settings? ({summary['date']})",
        "",
        f"{summary['machine']}. Sweep: AST max_tokens {list(GRID_MAX)} x min_tokens "
        f"{list(GRID_MIN)} plus the default 512/64, through `experiments.sweep`, ranking "
        "stage on, doc-comment queries' doc variant. Spearman over the settings' scores; "
        "target >= 0.8 on each set. Load: 1-minute load average when each sweep ended "
        "(2 cores shared with other engineers; times under load are rough).",
        "",
        "| set | Spearman MRR@10 | Spearman R@5 | best fast | best quality | "
        "fast s (load) | quality s (load) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, runs in summary["sets"].items():
        if "agreement" not in runs:
            continue
        a, f, q = runs["agreement"], runs["fast"], runs["quality"]
        lines.append(
            f"| {name} | **{a['spearman MRR@10']:.3f}** | {a['spearman R@5']:.3f} | "
            f"{a['best fast']} | {a['best quality']} | {f['seconds']} ({f['load']}) | "
            f"{q['seconds']} ({q['load']}) |"
        )
    lines += [
        "",
        "| set | setting | chunks | fast MRR@10 | quality MRR@10 | fast R@5 | quality R@5 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, runs in summary["sets"].items():
        if "agreement" not in runs:
            continue
        for key, q in runs["quality"]["settings"].items():
            f = runs["fast"]["settings"][key]
            lines.append(
                f"| {name} | {key} | {q['chunks']} | {f['MRR@10']:.3f} | {q['MRR@10']:.3f} | "
                f"{f['R@5']:.3f} | {q['R@5']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=list(SETS), help="default: all")
    parser.add_argument("--tier", action="append", choices=TIERS, help="default: both")
    args = parser.parse_args(argv)
    for name in args.set or list(SETS):
        for tier in args.tier or TIERS:
            record(name, tier, run_sweep(name, tier))


def record(name: str, tier: str, run: dict[str, object]) -> None:
    """Merge one sweep into the results files (locked: one run per tier may go at once,
    and each keeps what it measured as soon as it has it)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "tier_agreement.json"
    with open(Path(tempfile.gettempdir()) / "nexus-tier-agreement.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sets = json.loads(path.read_text())["sets"] if path.exists() else {}
        runs = sets.setdefault(name, {})
        runs[tier] = run
        if "fast" in runs and "quality" in runs:
            runs["agreement"] = agreement(runs["fast"], runs["quality"])
        summary = {
            "date": date.today().isoformat(),
            "machine": ", ".join(f"{k} {v}" for k, v in machine().items()),
            "sets": sets,
        }
        path.write_text(json.dumps(summary, indent=2) + "\n")
        text = markdown(summary)
        (RESULTS / "tier_agreement.md").write_text(text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
