"""A sweep of budget settings on the scale corpus with the fast tier: how long, and the levers.

The issue's target: six settings on the 6,270-file scale corpus (``bench/speed/scale.py``
fetches it into ``$NEXUS_BENCH_DIR/scale``) in <= 5 minutes on two cores. The query set
is the product's own (``nexus.evaluation.generate``, 300 doc-comment queries, doc
comments blanked in what is indexed). The sweep is the Evaluate page's default grid
(max_tokens 128, 256, 512 x min_tokens 0, 48, plus the default setting 512/64) through
``experiments.sweep``, run once per lever:

* ``reuse``: the fast tier through an embedding cache (a fresh folder), so a chunk text
  that several settings make is embedded once;
* ``targets + sample``: with reuse, over the files that hold a target plus a fixed
  sample (``DISTRACTORS``, seeded) of the others; its bias is its ranking of the
  settings against the full corpus's (Spearman) and the change of each setting's
  MRR@10;
* ``targets + sample, no reuse``: the same files with no cache: every setting embeds
  all its chunks (what reuse saves; on the whole corpus this takes too long here);
* ``default: targets + sample, doc queries``: what ``nexus eval --sweep`` does with no
  options, in this process: its six settings (no 512/64) over targets + sample, scoring
  the doc variant only (the one its table shows; a doc query's target files decide the
  sample), with the budget metrics, each distinct text embedded once (the sweep's memo)
  and no disk cache in front of the fast tier;
* ``the command: nexus eval --sweep``: that command itself, with default options, in a
  process of its own: reading, blanking and parsing the sampled files, loading the
  model, the sweep and its table; wall and CPU seconds of the whole command. Its 300
  queries x 6 settings are past ``experiments.RESCORE_TEXTS``, so it scores the fast
  tier's own order;
* ``the command with --rescore``: the same, every setting's best 30 hits re-scored by
  MiniLM as search answers, with a cold embedding cache (a fresh ``$NEXUS_CACHE_DIR``
  whose ``models/`` is the usual one's): what re-scoring a sweep this size costs.

Parsing the corpus (once, shared by every lever and every setting) is timed apart and
counted in each lever's total. Each lever also says how many texts it embedded.

    nice -n 5 .venv/bin/python bench/speed/fast_sweep.py [--lever reuse ...]

Results: ``bench/results/fast_sweep.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from nexus.chunking.pipeline import analyze_files  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.evaluation.experiments import sweep, sweep_files  # noqa: E402
from nexus.evaluation.generate import blanked_repository, generate  # noqa: E402
from nexus.evaluation.query_sets import load_queries  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.embedding import (  # noqa: E402
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    Wrapper,
)
from nexus.retrieval.tiers import FAST, models_dir, tier_embedder  # noqa: E402

RESULTS = ROOT / "bench" / "results"
CORPUS = Path(os.environ.get("NEXUS_BENCH_DIR", "/tmp/nexus-bench")) / "scale" / "corpus"
#: The Evaluate page's default grid; ``sweep`` adds the setting in use (512/64).
GRID_MAX = (128, 256, 512)
GRID_MIN = (0, 48)
#: Files without a target kept as distractors by the ``targets + sample`` lever.
DISTRACTORS = 1000
NO_REUSE = "targets + sample, no reuse"
#: What ``nexus eval --sweep`` does by default: targets + sample, with reuse, scoring the
#: doc variant only (the one its table shows), budget metrics included.
DEFAULT = "default: targets + sample, doc queries"
#: ``nexus eval --sweep`` with default options, timed as a command.
COMMAND = "the command: nexus eval --sweep"
COMMAND_RESCORED = "the command with --rescore, cold MiniLM cache"
#: Each command lever's extra flags.
COMMAND_FLAGS = {COMMAND: [], COMMAND_RESCORED: ["--rescore"]}
LEVERS = ("reuse", "targets + sample", NO_REUSE, DEFAULT, COMMAND, COMMAND_RESCORED)
#: The generated query set, kept beside the corpus (making it parses every file).
QUERIES = CORPUS.parent / "queries.jsonl"


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


class Counting(Wrapper):
    """Counts the texts the model is asked to embed (what the cache and memo lacked)."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.misses = 0

    def encode(self, texts: Sequence[str], progress: object = None) -> np.ndarray:
        self.misses += len(texts)
        return self.inner.encode(texts)

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_wordpieces(texts)


def run_lever(lever: str, analyses, repo_name: str, queries, embedder: Embedder) -> dict:
    """One sweep; ``embedder`` is plain or cached as the lever says."""
    embedder = Counting(embedder)
    if lever not in (NO_REUSE, DEFAULT):
        embedder = CachedEmbedder(embedder, EmbeddingCache(tempfile.mkdtemp(prefix="fast-sweep-")))
    extra = [] if lever == DEFAULT else [(ChunkConfig().max_tokens, ChunkConfig().min_tokens)]
    marks: list[tuple[float, str]] = []
    start, cpu = time.perf_counter(), time.process_time()
    results = sweep(
        analyses,
        repo_name,
        ChunkConfig(),
        queries,
        embedder,
        GRID_MAX,
        GRID_MIN,
        lambda status: marks.append((time.perf_counter() - start, status.summary())),
        extra=extra,
    )
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    settings = {
        f"{r.config.max_tokens}/{r.config.min_tokens}": {
            "chunks": r.chunks,
            "MRR@10": round(r.metric("MRR@10"), 4),
            "R@5": round(r.metric("R@5"), 4),
            "R@1k": round(r.metric("R@1k"), 4),
        }
        for r in results
    }
    embedded = embedder.misses
    out = {
        "files": len(analyses),
        "sweep_s": round(seconds, 1),
        "sweep_cpu_s": round(cpu, 1),
        "texts_embedded": embedded,
        "load_after": load(),
        "settings": settings,
    }
    print(f"[{lever}] {json.dumps(out)}", flush=True)
    return out


def run_command(lever: str) -> dict:
    """``nexus eval --sweep`` with default options and ``COMMAND_FLAGS[lever]``, as a user
    types it (this tree's code, the distilled model from ``$NEXUS_CACHE_DIR``): wall and
    CPU seconds of the whole command, and its table's figures per setting."""
    argv = [sys.executable, "-m", "nexus.cli", "eval", str(CORPUS), "--queries", str(QUERIES)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if lever == COMMAND_RESCORED:  # MiniLM's vectors cold, the distilled model as usual
        cold = Path(tempfile.mkdtemp(prefix="fast-sweep-cache-"))
        (cold / "models").symlink_to(models_dir(os.environ.get("NEXUS_CACHE_DIR")))
        env["NEXUS_CACHE_DIR"] = str(cold)
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(
        [*argv, "--sweep", *COMMAND_FLAGS[lever]], capture_output=True, text=True, env=env,
        check=True,
    )  # fmt: skip
    seconds, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    settings = {}
    for cells in (line.split() for line in done.stdout.splitlines()):
        # ast 128/0 auto | chunks | R@1k R@2k R@4k | tokens@10 | MRR@10 | R@5 | lines@5 | > window
        if len(cells) == 12 and cells[0] == "ast":
            settings[cells[1]] = {"chunks": int(cells[3]), "MRR@10": float(cells[8]),
                                  "R@5": float(cells[9]), "R@1k": float(cells[4])}  # fmt: skip
    best = next((line for line in done.stdout.splitlines() if line.startswith("best:")), "")
    out = {"sweep_s": round(seconds, 1), "sweep_cpu_s": round(cpu, 1), "load_after": load(),
           "settings": settings, "best": best}  # fmt: skip
    print(f"[{lever}] {json.dumps(out)}", flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lever", action="append", choices=LEVERS, help="default: all")
    levers = parser.parse_args(argv).lever or list(LEVERS)
    if not CORPUS.is_dir():
        raise SystemExit(f"no scale corpus in {CORPUS}: run bench/speed/scale.py first (npm pack)")
    load_before = load()
    start = time.perf_counter()
    repo = open_repository(CORPUS, name="scale")
    if not QUERIES.exists():
        QUERIES.write_text(generate(repo, cap=300, seed="").jsonl(), encoding="utf-8")
    queries = load_queries(QUERIES)
    queries_s = time.perf_counter() - start
    indexed = blanked_repository(repo)
    start, cpu = time.perf_counter(), time.process_time()
    analyses = analyze_files(indexed.source_files(), ChunkConfig().encoding)
    parse_s, parse_cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{len(queries)} queries in {queries_s:.1f} s; {len(analyses)} files parsed in "
          f"{parse_s:.1f} s, {parse_cpu:.1f} s CPU (load {load()})", flush=True)  # fmt: skip
    embedder = tier_embedder(FAST)
    embedder.encode(["warm up"])  # the model's load is not the sweep's
    sampled = sweep_files(analyses, queries, DISTRACTORS)
    targets = {q.target.file for q in queries}
    # A run of some levers keeps the others' figures from the results file.
    previous = RESULTS / "fast_sweep.json"
    runs: dict[str, dict] = json.loads(previous.read_text())["runs"] if previous.exists() else {}
    facts = {
        "machine": ", ".join(f"{k} {v}" for k, v in machine().items()),
        "load_before": load_before,
        "files": len(analyses),
        "queries": len(queries),
        "target_files": len(targets),
        "distractors": DISTRACTORS,
        "parse_s": round(parse_s, 1),
        "parse_cpu_s": round(parse_cpu, 1),
        "model": embedder.name,
    }
    doc = [q for q in queries if q.variant == "doc"]
    for lever in levers:
        if lever in COMMAND_FLAGS:  # reads, blanks and parses the files itself
            run = run_command(lever)
            run.update(files=len(sweep_files(analyses, doc, DISTRACTORS)), queries=len(doc),
                       texts_embedded="", parse_s=0.0, total_s=run["sweep_s"],
                       total_cpu_s=run["sweep_cpu_s"])  # fmt: skip
            runs[lever] = {**run, "date": date.today().isoformat()}
            write(facts, runs)
            continue
        chosen, scored = analyses, queries
        if lever.startswith("targets + sample"):
            chosen = sampled
        if lever == DEFAULT:
            chosen, scored = sweep_files(analyses, doc, DISTRACTORS), doc
        run = run_lever(lever, chosen, indexed.name, scored, embedder)
        run["queries"] = len(scored)
        # The parse is shared; a lone sweep pays it too (on its share of the files).
        share = len(chosen) / len(analyses)
        run["parse_s"] = round(parse_s * share, 1)
        run["total_s"] = round(run["sweep_s"] + run["parse_s"], 1)
        run["total_cpu_s"] = round(run["sweep_cpu_s"] + parse_cpu * share, 1)
        runs[lever] = {**run, "date": date.today().isoformat()}
        write(facts, runs)  # after every lever: a long run keeps what it measured


def bias(runs: dict[str, dict]) -> dict[str, object]:
    """The sampled corpus against the whole: Spearman of the settings' MRR@10, and each
    setting's change."""
    if "reuse" not in runs or "targets + sample" not in runs:
        return {}
    full, part = runs["reuse"]["settings"], runs["targets + sample"]["settings"]
    keys = list(full)
    rho = spearmanr([full[k]["MRR@10"] for k in keys], [part[k]["MRR@10"] for k in keys])
    return {
        "spearman MRR@10": round(float(rho.statistic), 3),
        "MRR@10 change": {k: round(part[k]["MRR@10"] - full[k]["MRR@10"], 3) for k in keys},
    }


def write(facts: dict, runs: dict[str, dict]) -> None:
    summary = {"date": date.today().isoformat(), **facts, "runs": runs, "bias": bias(runs)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "fast_sweep.json").write_text(json.dumps(summary, indent=2) + "\n")
    text = markdown(summary)
    (RESULTS / "fast_sweep.md").write_text(text)
    print(text, flush=True)


def markdown(s: dict) -> str:
    lines = [
        f"# A 7-setting sweep on the scale corpus with the fast tier ({s['date']})",
        "",
        f"{s['machine']}; load before {s['load_before']} (2 cores shared with other engineers: "
        f"times under load are rough). {s['files']} chunkable files, {s['queries']} generated "
        f"doc queries on {s['target_files']} files; model `{s['model']}`; grid max_tokens "
        f"{list(GRID_MAX)} x min_tokens {list(GRID_MIN)} + 512/64. Parsing once: "
        f"{s['parse_s']} s wall, {s['parse_cpu_s']} s CPU. Target: <= 300 s in all on 2 cores. "
        "The sweep runs in one process (one core, numpy may use both): CPU seconds say what "
        "it costs on an idle machine, wall seconds what it took here.",
        "",
        "| lever | measured | files | queries scored | texts embedded | sweep wall s | "
        "sweep CPU s | + parse wall s | total wall s | total CPU s | load after |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *(
            f"| {lever} | {r.get('date', '')} | {r['files']} | "
            f"{r.get('queries', s['queries'])} | {r['texts_embedded']} | {r['sweep_s']} | "
            f"{r['sweep_cpu_s']} | {r['parse_s']} | {r['total_s']} | **{r['total_cpu_s']}** | "
            f"{r['load_after']} |"
            for lever, r in s["runs"].items()
        ),
        "",
        "| setting | " + " | ".join(f"{lever} MRR@10" for lever in s["runs"]) + " | chunks |",
        "|---|" + "---|" * (len(s["runs"]) + 1),
    ]
    first = next(iter(s["runs"].values()))
    for key, row in first["settings"].items():
        cells = " | ".join(
            f"{r['settings'][key]['MRR@10']:.3f}" if key in r["settings"] else ""
            for r in s["runs"].values()
        )
        lines.append(f"| {key} | {cells} | {row['chunks']} |")
    for lever in COMMAND_FLAGS:
        if lever in s["runs"]:
            lines += ["", f"{lever}: {s['runs'][lever]['best']}"]
    if s["bias"]:
        lines += [
            "",
            f"Bias of targets + {s['distractors']} sampled files against the full corpus: "
            f"Spearman of the settings' MRR@10 {s['bias']['spearman MRR@10']:.3f}; "
            "MRR@10 change per setting "
            + ", ".join(f"{k} {v:+.3f}" for k, v in s["bias"]["MRR@10 change"].items())
            + ".",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
