"""Embedding benchmark: `nexus index` against the bare model, and what each embedding choice buys.

Run: ``NEXUS_CACHE_DIR=/work/shared-cache .venv/bin/python bench/speed/embedding.py`` (``--help``).
Needs the query sets of ``bench/retrieval/eval_sets.py`` (built on first use).

Throughput, on the same chunk texts (Nexus AST chunks at the defaults of the dev,
held-out and check sets, ``--texts`` of them, every length class represented), each
repeat measuring everything back-to-back so machine load hits all rows alike:

* bare: ``SentenceTransformer.encode(texts, batch_size=32)``, one process, all threads;
  for the dual view, ``encode`` of the texts and of their words view;
* nexus: what ``nexus index`` runs after chunking, on a fresh cache: ``CachedEmbedder``
  (hashes, cache lookups, per-batch commits) over the embedder, the over-window count
  and the vector index;
* where the difference goes: the tokenizer alone, the over-window count, cache I/O,
  batch sizes 16/32/64;
* N processes x 1 thread against 1 process x N threads (N = the CPU count).

Quality, with the real model (vectors computed once and kept in ``$NEXUS_BENCH_DIR``):
MRR@10 of the defaults (hybrid search on) with float32 vectors and with float16 ones
(what the cache stores), and with and without the dual view, on all three sets; how
many chunks exceed the model's 256 word pieces, and what embedding them as extra
windows would cost in model tokens.

Times are printed and written, never asserted. ``uptime`` load is printed beside every
repeat. Results: ``bench/results/embedding.{json,md}``.

Options: ``--texts N`` (256), ``--repeat N`` (3), ``--skip-processes``, ``--only
throughput|quality`` (the other part's figures are kept from the last run), ``--quality-sets
dev,heldout,check`` (default check). The float32 model vectors are kept in
``$NEXUS_BENCH_DIR/embedding-f32-vectors.npz`` for reruns. Wall and CPU seconds (``getrusage``,
all threads) are both reported: on a shared machine CPU seconds say what the work costs.
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
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from bench.retrieval.eval_sets import QuerySet, check_set, dev_set, heldout_set  # noqa: E402
from nexus.chunking.pipeline import analyze_files, chunk_analyses  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.evaluation.experiments import evaluate_config  # noqa: E402
from nexus.evaluation.query_sets import load_queries  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.embedding import (  # noqa: E402
    CachedEmbedder,
    DualView,
    Embedder,
    SentenceTransformerEmbedder,
)
from nexus.retrieval.embedding_cache import EmbeddingCache, text_key  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.textview import code_as_words  # noqa: E402

RESULTS = ROOT / "bench" / "results"
BENCH_DIR = Path(os.environ.get("NEXUS_BENCH_DIR") or "/tmp/nexus-bench")
VARIANTS = ("doc", "name", "calls")
# Measured by the previous session (same sets, same defaults): embedding the rest of an
# over-window chunk as extra windows and averaging, MRR@10 change per set.
WINDOWS_DELTA = {"dev": -0.013, "heldout": +0.003, "check": +0.007}


def load() -> str:
    """The 1, 5 and 15-minute load averages."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


# --- the texts -----------------------------------------------------------------------


def set_chunks(query_set: QuerySet, config: ChunkConfig):
    repo = open_repository(query_set.corpus, name=query_set.name)
    analyses = analyze_files(repo.source_files(), config.encoding)
    return analyses, repo.name, chunk_analyses(analyses, config, repo=repo.name)


def sample(chunks: list, n: int) -> list:
    """``n`` chunks spread evenly over the length order (short and long ones alike)."""
    if n >= len(chunks):
        return chunks
    ordered = sorted(chunks, key=lambda c: len(c.embedding_text))
    picks = np.linspace(0, len(ordered) - 1, n).round().astype(int)
    return [ordered[i] for i in picks]


# --- throughput ----------------------------------------------------------------------


def cpu_seconds() -> float:
    """CPU seconds of this process, all threads (steadier than the wall clock, which on a
    busy machine mostly measures the other jobs)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(run) -> tuple[float, float]:
    """(wall, CPU) seconds of ``run()``."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    run()
    return time.perf_counter() - wall, cpu_seconds() - cpu


def bare(model, texts: list[str], batch_size: int = 32) -> tuple[float, float]:
    return timed(
        lambda: model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
        )
    )


def nexus_index(embedder: Embedder, chunks: list) -> tuple[float, float]:
    """What ``nexus index`` does after chunking, on a fresh cache."""
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedEmbedder(embedder, EmbeddingCache(tmp))

        def run() -> None:
            VectorIndex.from_chunks(chunks, cached)
            cached.count_wordpieces([c.embedding_text for c in chunks])

        return timed(run)


def breakdown(model, embedder: SentenceTransformerEmbedder, texts: list[str]) -> dict:
    """Seconds of the parts around the model, on the same texts."""
    out: dict[str, float] = {}
    start = time.perf_counter()
    for i in range(0, len(texts), 32):
        model.tokenize(texts[i : i + 32])
    out["tokenize_s"] = time.perf_counter() - start
    start = time.perf_counter()
    embedder.count_wordpieces(texts)
    out["count_wordpieces_s"] = time.perf_counter() - start
    start = time.perf_counter()
    for text in texts:
        code_as_words(text)
    out["words_view_s"] = time.perf_counter() - start
    vectors = np.random.default_rng(0).standard_normal((len(texts), 384)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(tmp)
        start = time.perf_counter()
        keys = [text_key(t) for t in texts]
        cache.get("m", keys)
        for i in range(0, len(keys), 256):
            cache.put("m", dict(zip(keys[i : i + 256], vectors[i : i + 256], strict=True)))
        cache.get("m", keys)
        out["cache_io_s"] = time.perf_counter() - start
    return {k: round(v, 3) for k, v in out.items()}


WORKER = r"""
import sys, time, json, os
import torch
torch.set_num_threads(int(sys.argv[1]))
os.environ["HF_HUB_OFFLINE"] = "1"
from nexus.retrieval.embedding import SentenceTransformerEmbedder
model = SentenceTransformerEmbedder().load()
texts = json.loads(sys.stdin.readline())
model.encode(texts[:8])
print("ready", flush=True)
sys.stdin.readline()
start = time.perf_counter()
model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
print(time.perf_counter() - start, flush=True)
"""


def processes_vs_threads(texts: list[str], n: int) -> dict[str, float]:
    """Wall seconds for ``texts``: 1 process x n threads, and n processes x 1 thread
    (each with 1/n of the texts, sorted by length and dealt round-robin)."""

    def run(parts: list[list[str]], threads: int) -> float:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, str(threads)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            for _ in parts
        ]
        for proc, part in zip(procs, parts, strict=True):
            proc.stdin.write(json.dumps(part) + "\n")
            proc.stdin.flush()
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready"
        start = time.perf_counter()
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            proc.stdout.readline()
            proc.wait()
        return time.perf_counter() - start

    ordered = sorted(texts, key=len)
    return {
        f"1x{n}_s": round(run([texts], n), 2),
        f"{n}x1_s": round(run([ordered[i::n] for i in range(n)], 1), 2),
    }


# --- quality -------------------------------------------------------------------------


class MemoEmbedder:
    """The model's float32 vectors, computed once per text and kept on disk."""

    def __init__(self, inner: SentenceTransformerEmbedder, path: Path) -> None:
        self.inner, self.path = inner, path
        self.name, self.dim, self.max_seq_length = inner.name, 384, inner.max_seq_length
        self.memo: dict[bytes, np.ndarray] = {}
        if path.exists():
            data = np.load(path)
            self.memo = dict(zip(map(bytes, data["keys"]), data["vectors"], strict=True))

    def encode(self, texts, progress=None) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        missing = list(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self.memo}.items()
        )
        if missing:
            vecs = self.inner.encode([t for _, t in missing])
            self.memo.update((k, v) for (k, _), v in zip(missing, vecs, strict=True))
        if not keys:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self.memo[k] for k in keys])

    def count_wordpieces(self, texts):
        return self.inner.count_wordpieces(texts)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array([np.frombuffer(k, np.uint8) for k in self.memo], dtype=np.uint8)
        np.savez(self.path, keys=keys, vectors=np.stack(list(self.memo.values())))


class Float16:
    """Vectors as the cache stores them: rounded to float16."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name = inner, inner.name
        self.dim, self.max_seq_length = inner.dim, inner.max_seq_length

    def encode(self, texts, progress=None) -> np.ndarray:
        return self.inner.encode(texts).astype(np.float16).astype(np.float32)

    def count_wordpieces(self, texts):
        return self.inner.count_wordpieces(texts)


def mrr(result) -> dict[str, float]:
    return {v: round(result.metric("MRR@10", v), 3) for v in VARIANTS}


def quality(sets: list[QuerySet], memo: MemoEmbedder) -> dict:
    """Per set: MRR@10 with float32 vectors, float16 ones, and the single view."""
    default = ChunkConfig()
    dual = DualView(memo)
    out = {}
    for query_set in sets:
        analyses, repo, _ = set_chunks(query_set, default)
        queries = load_queries(query_set.queries)
        f32 = evaluate_config(analyses, repo, default, queries, dual)
        f16 = evaluate_config(analyses, repo, default, queries, Float16(dual))
        single = evaluate_config(analyses, repo, default.with_(words_view=False), queries, memo)
        out[query_set.name] = {"f32": mrr(f32), "f16": mrr(f16), "single": mrr(single)}
        print(f"[{query_set.name}] MRR@10 {out[query_set.name]}", flush=True)
        memo.save()
    return out


def over_window(sets: list[QuerySet], embedder: SentenceTransformerEmbedder) -> dict:
    """Per set: chunks over the model's window, and the model tokens that embedding the
    rest of each as extra windows (254 word pieces + 2 special tokens each) would add."""
    out = {}
    for query_set in sets:
        chunks = set_chunks(query_set, ChunkConfig())[2]
        pieces = np.array(embedder.count_wordpieces([c.embedding_text for c in chunks]))
        window = embedder.max_seq_length
        windows = np.maximum(1, np.ceil((pieces - 2) / (window - 2))).astype(int)
        read_now = int(np.minimum(pieces, window).sum())
        read_windows = int((pieces + 2 * (windows - 1)).sum())
        out[query_set.name] = {
            "chunks": len(chunks),
            "over_window": int((pieces > window).sum()),
            "extra_windows": int((windows - 1).sum()),
            "window_token_cost": round(read_windows / read_now, 3),
        }
    print(f"over the window: {out}", flush=True)
    return out


# --- main ----------------------------------------------------------------------------


def throughput(args: argparse.Namespace, sets: list[QuerySet], st) -> dict:
    """The throughput sections: nexus vs bare, the parts around the model, processes."""
    model = st.load()
    all_chunks = [c for s in sets for c in set_chunks(s, ChunkConfig())[2]]
    chunks = sample(all_chunks, args.texts)
    texts = [c.embedding_text for c in chunks]
    words = [code_as_words(t) for t in texts]
    threads = os.cpu_count() or 1
    bare(model, texts[:16])  # warm up
    print(f"{len(texts)} chunk texts of {len(all_chunks)}; {uptime()}", flush=True)

    repeats = []
    for rep in range(args.repeat):
        runs = {
            "bare_single_s": lambda: bare(model, texts),
            "nexus_single_s": lambda: nexus_index(st, chunks),
            "bare_dual_s": lambda: bare(model, texts + words),
            "nexus_dual_s": lambda: nexus_index(DualView(st), chunks),
        }
        # Every other repeat in reverse order, so a load trend favours neither side.
        order = list(runs) if rep % 2 == 0 else list(reversed(runs))
        row: dict[str, object] = {"load": load()}
        for name in order:
            wall, cpu = runs[name]()
            row[name], row[name.removesuffix("_s") + "_cpu_s"] = round(wall, 2), round(cpu, 2)
        row["load_after"] = load()
        repeats.append(row)
        print(f"repeat {rep + 1}: {row}", flush=True)
    best = {k: min(r[k] for r in repeats) for k in repeats[0] if k.endswith("_s")}
    rates = {
        k.removesuffix("_s") + "_chunks_per_s": round(len(texts) / v, 1) for k, v in best.items()
    }
    ratio = {  # nexus chunks/s over the bare model's, by wall and by CPU seconds
        f"{view}{kind}": round(best[f"bare_{view}{kind}"] / best[f"nexus_{view}{kind}"], 3)
        for view in ("single", "dual")
        for kind in ("_s", "_cpu_s")
    }
    print(f"best of {args.repeat}: {rates}; nexus / bare: {ratio}", flush=True)

    parts = breakdown(model, st, texts)
    batch_sizes = {str(b): [round(x, 2) for x in bare(model, texts, b)] for b in (16, 32, 64)}
    print(f"around the model: {parts}; bare seconds by batch size: {batch_sizes}", flush=True)
    split = {} if args.skip_processes else processes_vs_threads(texts, threads)
    print(f"processes vs threads ({threads} CPUs): {split}", flush=True)
    return {
        "date": date.today().isoformat(),
        "machine": machine(),
        "uptime": uptime(),
        "texts": len(texts),
        "repeats": repeats,
        "best_seconds": best,
        "chunks_per_s": rates,
        "nexus_over_bare": ratio,
        "around_the_model_s": parts,
        "bare_s_by_batch_size": batch_sizes,
        "processes_vs_threads_s": split,
        "cpus": threads,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=256, help="chunk texts to embed per run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only",
        choices=["throughput", "quality"],
        help="measure one part; the other part's figures are kept from the last results file",
    )
    parser.add_argument("--skip-processes", action="store_true")
    parser.add_argument(
        "--quality-sets",
        default="check",
        help="comma-separated sets for the MRR figures: dev, heldout, check (default check: "
        "the one never tuned on; every set costs ~1k model passes on a fresh memo)",
    )
    args = parser.parse_args()

    sets = [dev_set(), heldout_set(), check_set()]
    st = SentenceTransformerEmbedder()
    measured: dict = {}
    if args.only != "quality":
        measured.update(throughput(args, sets, st))
    if args.only != "throughput":
        memo = MemoEmbedder(st, BENCH_DIR / "embedding-f32-vectors.npz")
        wanted = args.quality_sets.split(",")
        measured["quality"] = quality([s for s in sets if s.name in wanted], memo)
        measured["quality_date"] = date.today().isoformat()
        measured["over_window"] = over_window(sets, st)
    # Read the last results only now: a run of the other part may have finished meanwhile.
    previous = RESULTS / "embedding.json"
    summary = json.loads(previous.read_text()) if args.only and previous.exists() else {}
    summary.update(measured)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "embedding.json").write_text(json.dumps(summary, indent=2) + "\n")
    if "repeats" in summary:
        (RESULTS / "embedding.md").write_text(markdown(summary))
    print(f"wrote {RESULTS / 'embedding.md'} and .json")


def markdown(s: dict) -> str:
    r, best, n = s["chunks_per_s"], s["best_seconds"], s["texts"]
    lines = [
        f"# Embedding benchmark ({s['date']}, {s['machine']['nproc']} CPUs, {s['machine']['cpu']})",
        "",
        "The machine is shared with other jobs: figures are best of "
        f"{len(s['repeats'])} repeats, each measuring every row back-to-back. "
        f"`uptime` at the end: {s['uptime']}",
        "",
        f"## Throughput on {n} chunk texts (all-MiniLM-L6-v2, CPU, batch 32)",
        "",
        "| run | wall s (best) | chunks/s | CPU s (best) | chunks per CPU s |",
        "|---|---|---|---|---|",
    ]
    labels = {
        "bare_single": "bare model, `encode(texts)`",
        "nexus_single": "`nexus index` path, single view (`words_view = false`)",
        "bare_dual": "bare model, `encode(texts + words views)`",
        "nexus_dual": "`nexus index` path, dual view (default)",
    }
    for key, label in labels.items():
        lines.append(
            f"| {label} | {best[key + '_s']} | {r[key + '_chunks_per_s']} | "
            f"{best[key + '_cpu_s']} | {r[key + '_cpu_chunks_per_s']} |"
        )
    lines += [
        "",
        "nexus / bare chunks/s (target >= 90%): single view "
        f"{s['nexus_over_bare']['single_s']:.1%} by wall, "
        f"{s['nexus_over_bare']['single_cpu_s']:.1%} by CPU; dual view "
        f"{s['nexus_over_bare']['dual_s']:.1%} by wall, "
        f"{s['nexus_over_bare']['dual_cpu_s']:.1%} by CPU.",
        "",
        "Repeats (wall s / CPU s; load = 1/5/15-minute load averages before and after):",
        "",
        "| load | bare single | nexus single | bare dual | nexus dual | load after |",
        "|---|---|---|---|---|---|",
    ]
    for row in s["repeats"]:
        lines.append(
            f"| {row['load']} | "
            + " | ".join(
                f"{row[k + '_s']} / {row[k + '_cpu_s']}"
                for k in ("bare_single", "nexus_single", "bare_dual", "nexus_dual")
            )
            + f" | {row['load_after']} |"
        )
    parts = s["around_the_model_s"]
    lines += [
        "",
        f"Around the model, on the same {n} texts (seconds): tokenizer alone "
        f"{parts['tokenize_s']}, over-window count {parts['count_wordpieces_s']}, words view "
        f"{parts['words_view_s']}, cache I/O (hash, get, put per 256, get) {parts['cache_io_s']}.",
        f"Bare model (wall, CPU) seconds by batch size: {s['bare_s_by_batch_size']}.",
    ]
    if s["processes_vs_threads_s"]:
        lines.append(
            f"{s['cpus']} CPUs, same texts, model loaded beforehand: "
            + ", ".join(
                f"{k.removesuffix('_s').replace('x', ' process(es) x ')} thread(s) {v} s"
                for k, v in s["processes_vs_threads_s"].items()
            )
            + "."
        )
    if "quality" in s:

        def fmt(m: dict) -> str:
            return " / ".join(f"{m[v]:.3f}" for v in VARIANTS)

        lines += [
            "",
            "## What the stored precision and the dual view buy",
            "",
            "Defaults (AST 512/64, hybrid search at weight 0.2); MRR@10 of doc / name / calls "
            "queries. float16 is what the cache stores.",
            "",
            "| set | dual view, float32 | dual view, float16 | single view, float32 |",
            "|---|---|---|---|",
        ]
        for name, q in s["quality"].items():
            lines.append(f"| {name} | {fmt(q['f32'])} | {fmt(q['f16'])} | {fmt(q['single'])} |")
        lines += [
            "",
            "## Chunks longer than the model's window (256 word pieces)",
            "",
            "| set | chunks | over 256 | extra windows | model tokens if embedded as windows | "
            "MRR@10 change measured for windows (earlier session) |",
            "|---|---|---|---|---|---|",
        ]
        for name, w in s["over_window"].items():
            lines.append(
                f"| {name} | {w['chunks']} | {w['over_window']} | {w['extra_windows']} | "
                f"{w['window_token_cost']}x | {WINDOWS_DELTA[name]:+.3f} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
