"""Held-out retrieval check: do the dev-tuned defaults generalise to other npm packages?

Same runs as ``bench/retrieval.py`` (same library calls, same row format), on a query
set built by the ``shared/eval`` scripts from packages that are NOT in the dev set
(see ``bench/results/heldout.md`` for the packages and the rebuild commands):

  * fixed 50-line windows embedded as plain text (the reference baseline);
  * Nexus AST at the library defaults (``ChunkConfig()``), and the same ablations as
    retrieval.py (plain text, no context header, no words view; windows with Nexus text);
  * a grid of max_tokens (256..1024) x min_tokens (0, 16, 32, 64);
  * the reference ``baselines.py`` rows (fixed50, function), read from their
    summaries in ``--baselines`` when present (``baselines.py`` is run separately).

    .venv/bin/python bench/heldout.py --corpus /tmp/heldout-work/corpus/heldout \\
        --queries /tmp/heldout-work/queries/heldout/queries.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.retrieval import VARIANTS, row  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.embedding import CachedEmbedder, EmbeddingCache, default_embedder  # noqa: E402
from nexus.evaluation import load_queries  # noqa: E402
from nexus.experiments import ConfigResult, best, describe, evaluate_config  # noqa: E402
from nexus.pipeline import analyze_files  # noqa: E402
from nexus.sources import open_repository  # noqa: E402

WORK = Path(os.environ.get("WORK", "/tmp/heldout-work"))
RESULTS = ROOT / "bench" / "results"
GRID_MAX = (256, 512, 768, 1024)
GRID_MIN = (0, 16, 32, 64)  # 32/64 added: the held-out set has many tiny targets


def package_mrr(result: ConfigResult) -> dict[str, float]:
    """doc MRR@10 per package (groups ``doc|<package>`` of the report)."""
    return {
        group.split("|", 1)[1]: round(result.report.metric(group, "MRR@10"), 3)
        for group in sorted(result.report.metrics)
        if group.startswith("doc|")
    }


def misses(result: ConfigResult, per_package: int = 4) -> list[dict[str, object]]:
    """A few doc queries whose target is not in the top 10 (first by id per package)."""
    out: list[dict[str, object]] = []
    seen: dict[str, int] = {}
    for r in result.report.rows:
        t = r.query.target
        if r.variant != "doc" or r.rank is not None or seen.get(t.package, 0) >= per_package:
            continue
        seen[t.package] = seen.get(t.package, 0) + 1
        out.append(
            {
                "id": r.id,
                "query": r.query.query,
                "target": f"{t.file}:{t.start_line}-{t.end_line} {t.qualname} ({t.kind})",
                "full_rank": r.outcome.full_rank,
                "top3": [
                    f"{h.chunk.file}:{h.chunk.start_line}-{h.chunk.end_line} {h.chunk.symbol or ''}"
                    for h in r.outcome.hits[:3]
                ],
            }
        )
    return out


def baseline_rows(folder: Path) -> list[dict[str, object]]:
    """Rows for the shared baselines.py summaries (fixed50, function), if they exist."""
    rows = []
    for chunker in ("fixed50", "function"):
        path = folder / f"{chunker}.summary.json"
        if not path.exists():
            continue
        s = json.loads(path.read_text())
        out: dict[str, object] = {
            "run": f"baselines.py {chunker} (reference)",
            "chunks": s["chunks"]["n"],
            "over_window": None,
            "under_32": None,
        }
        for variant in VARIANTS:
            m = s["metrics"].get(variant, {})
            for name in ("R@1", "R@5", "R@10", "MRR@10"):
                out[f"{variant}:{name}"] = round(m.get(f"overlap50:{name}", 0.0), 3)
            out[f"{variant}:lines@5"] = round(m.get("lines@5", 0.0), 3)
        out["doc:contains:MRR@10"] = round(s["metrics"]["doc"].get("contains:MRR@10", 0.0), 3)
        out["doc_mrr_by_package"] = {
            group.split("|", 1)[1]: round(m["overlap50:MRR@10"], 3)
            for group, m in sorted(s["metrics"].items())
            if group.startswith("doc|")
        }
        rows.append(out)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=WORK / "corpus" / "heldout")
    parser.add_argument(
        "--queries", type=Path, default=WORK / "queries" / "heldout" / "queries.jsonl"
    )
    parser.add_argument(
        "--baselines",
        type=Path,
        default=WORK / "runs" / "heldout",
        help="folder with baselines.py's <chunker>.summary.json",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=WORK / "nexus-cache",
        help="embedding cache (kept out of the repository)",
    )
    parser.add_argument("--name", default="heldout", help="results file stem")
    parser.add_argument(
        "--manifest",
        type=Path,
        default=Path("/tmp/heldout-eval/manifest-heldout.json"),
        help="the set's manifest, copied into the JSON so the set can be rebuilt",
    )
    args = parser.parse_args()

    queries = load_queries(args.queries)
    repo = open_repository(args.corpus, name=args.corpus.name)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    cache = EmbeddingCache(args.cache)
    plain = CachedEmbedder(default_embedder(words_view=False), cache)
    nexus = CachedEmbedder(default_embedder(), cache)
    default = ChunkConfig()
    runs: list[dict[str, object]] = []

    def run(label: str, config: ChunkConfig, embedder: CachedEmbedder) -> ConfigResult:
        result = evaluate_config(analyses, repo.name, config, queries, embedder)
        runs.append({**row(label, result), "doc_mrr_by_package": package_mrr(result)})
        m = runs[-1]
        print(
            f"{label:42} chunks {result.chunks:5}  doc MRR@10 {m['doc:MRR@10']:.3f}  "
            f"R@5 {m['doc:R@5']:.3f}  lines@5 {m['doc:lines@5']:6.1f}  "
            f"{m['doc_mrr_by_package']}",
            flush=True,
        )
        return result

    raw = default.with_(context_header=False, words_view=False)
    fixed = run("fixed 50 lines, plain text (reference)", raw.with_(strategy="lines"), plain)
    run("fixed 50 lines, nexus embedding text", default.with_(strategy="lines"), nexus)
    run("nexus AST default, plain text", raw, plain)
    run("nexus AST default, no context header", default.with_(context_header=False), nexus)
    run("nexus AST default, no words view", default.with_(words_view=False), plain)
    default_result = run("nexus AST default", default, nexus)
    grid = []
    for hi in GRID_MAX:
        for lo in GRID_MIN:
            config = default.with_(max_tokens=hi, min_tokens=lo)
            if describe(config) == describe(default):
                grid.append(default_result)  # same config: reuse, do not rerun
                continue
            grid.append(run(f"grid {describe(config)}", config, nexus))
    winner = best(grid)
    default_is_best = describe(winner.config) == describe(default_result.config)
    print(f"best grid row: {describe(winner.config)}; default is best: {default_is_best}")

    stats_path = args.queries.parent / "stats.json"
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "nexus"], capture_output=True, text=True
    ).stdout.strip()
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    summary = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "nexus": f"{head}{' + uncommitted changes under nexus/' if dirty else ''}",
        "model": nexus.name,
        "corpus": str(args.corpus),
        "queries": str(args.queries),
        "targets_by_package": stats.get("targets_by_package"),
        "queries_by_variant": stats.get("queries_by_variant"),
        "default": describe(default),
        "best_grid_row": describe(winner.config),
        "default_is_best": default_is_best,
        "runs": runs + baseline_rows(args.baselines),
        "default_doc_misses": misses(default_result),
        "manifest": json.loads(args.manifest.read_text()) if args.manifest.exists() else None,
        "fixed50_doc_misses": misses(fixed, 2),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(summary, indent=2) + "\n")
    (RESULTS / f"{args.name}.md").write_text(markdown(summary))
    print(f"wrote {RESULTS / (args.name + '.json')} and {RESULTS / (args.name + '.md')}")


def markdown(summary: dict) -> str:
    packages = sorted({p for r in summary["runs"] for p in r.get("doc_mrr_by_package", {})})
    lines = [
        f"# Held-out retrieval check ({summary['date']}, {summary['machine']})",
        "",
        f"Held-out set (packages not in dev; doc comments stripped), targets by package "
        f"{summary['targets_by_package']}, queries {summary['queries_by_variant']}. "
        f"Nexus `{summary['nexus']}`, model `{summary['model']}`, exact cosine top 10, "
        "overlap>=50% rule unless noted. Not tuned on.",
        "",
        "| run | chunks | doc R@1 | doc R@5 | doc MRR@10 | doc lines@5 | doc contains MRR | "
        "name MRR | calls MRR | " + " | ".join(f"doc MRR {p}" for p in packages) + " |",
        "|---" * (9 + len(packages)) + "|",
    ]
    for r in summary["runs"]:
        per = r.get("doc_mrr_by_package", {})
        lines.append(
            f"| {r['run']} | {r['chunks']} | {r['doc:R@1']:.3f} | {r['doc:R@5']:.3f} | "
            f"**{r['doc:MRR@10']:.3f}** | {r['doc:lines@5']:.1f} | "
            f"{r['doc:contains:MRR@10']:.3f} | {r['name:MRR@10']:.3f} | "
            f"{r['calls:MRR@10']:.3f} | "
            + " | ".join(f"{per[p]:.3f}" if p in per else "" for p in packages)
            + " |"
        )
    lines += [
        "",
        f"Default: `{summary['default']}`; best grid row on held-out: "
        f"`{summary['best_grid_row']}` (default is best: {summary['default_is_best']}).",
        "",
        "## Some doc misses of the default (target not in the top 10)",
        "",
    ]
    for m in summary["default_doc_misses"]:
        lines.append(
            f'* `{m["id"]}` "{m["query"]}" -> target `{m["target"]}` '
            f"(full rank {m['full_rank']}); top 3: " + "; ".join(f"`{t}`" for t in m["top3"])
        )
    return "\n".join(lines + REBUILD) + "\n"


REBUILD = """
## Rebuilding the held-out set

The packages, versions, integrities and globs are under `manifest` in `heldout.json`.
Write them to `/tmp/heldout-eval/manifest-heldout.json` (a writable copy of `shared/eval`), then:

```
cp -r shared/eval /tmp/heldout-eval && chmod -R u+w /tmp/heldout-eval
mkdir -p /tmp/heldout-work/tarballs && cd /tmp/heldout-work/tarballs
npm pack rxjs@7.8.1 svelte@4.2.19 luxon@3.5.0   # check sha512 against the manifest
cd /tmp/heldout-work && for t in rxjs-7.8.1 svelte-4.2.19 luxon-3.5.0; do
  n=${t%-*}; rm -rf src/$n; mkdir -p src/$n
  tar xzf tarballs/$t.tgz -C src/$n --strip-components=1; done
cd /tmp/heldout-eval; PY=/tmp/nexus-eval/venv/bin/python
$PY prepare.py --manifest manifest-heldout.json --work /tmp/heldout-work
$PY make_queries.py --manifest manifest-heldout.json --work /tmp/heldout-work
# baselines.py reads manifest.json only: a 5-line wrapper swaps in manifest-heldout.json
cat > run_baselines_heldout.py <<'PY'
import sys; from pathlib import Path; sys.path.insert(0, str(Path(__file__).parent))
import baselines, prepare
baselines.load_manifest = lambda p=None: prepare.load_manifest(Path("manifest-heldout.json"))
baselines.main(sys.argv[1:])
PY
$PY run_baselines_heldout.py --work /tmp/heldout-work --set heldout \\
  --queries-dir /tmp/heldout-work/queries --report /tmp/heldout-work/results.md
cd /work/main && .venv/bin/python bench/heldout.py
```

Expected: 100 corpus files, 19,426 lines, corpus_sha256 `acbc4fdb245cd9d8...`; 193 targets
(luxon 100, rxjs 66, svelte 27), queries doc 193 / name 188 / calls 97.
""".splitlines()


if __name__ == "__main__":
    main()
