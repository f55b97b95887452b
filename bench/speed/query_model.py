"""MiniLM's query vectors on ONNX Runtime against sentence-transformers (float32).

Run: ``NEXUS_MODEL_PRECISION=float32 .venv/bin/python bench/speed/query_model.py``.

Re-scoring (``nexus.retrieval.rescore``) orders the fast tier's best hits by the cosine
of MiniLM's query vector with MiniLM's chunk vectors. The chunk vectors are the same as
before (the quality tier's embedder, through the embedding cache); only the query's now
comes from the ONNX graph (``nexus.retrieval.onnx_minilm``). So the re-scored order is
today's wherever the two query vectors agree. This embeds every hand-written question
(``bench/questions/repos/*.jsonl``) both ways, each view as re-scoring does (as written and
as words, averaged), and reports the cosines between them and the time per query.

Figures go to stdout and ``bench/results/query_model.{json,md}``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from nexus.retrieval.embedding import DualView, SentenceTransformerEmbedder  # noqa: E402
from nexus.retrieval.onnx_minilm import (  # noqa: E402
    GRAPH_FILE,
    INT8_FILE,
    OnnxEmbedder,
    ensure_onnx_model,
)
from nexus.retrieval.tiers import models_dir  # noqa: E402

RESULTS = ROOT / "bench" / "results"
QUESTIONS = ROOT / "bench" / "questions" / "repos"


def _questions() -> list[str]:
    found: dict[str, None] = {}
    for file in sorted(QUESTIONS.glob("*.jsonl")):
        for line in file.read_text().splitlines():
            if line.strip():
                found.setdefault(json.loads(line)["query"], None)
    return list(found)


def _one_at_a_time(model, queries: list[str]) -> tuple[np.ndarray, list[float]]:
    model.encode(["warm up"])
    rows, times = [], []
    for query in queries:
        began = time.perf_counter()
        rows.append(model.encode([query])[0])
        times.append((time.perf_counter() - began) * 1000)
    return np.array(rows), times


def _figures(ms: list[float]) -> dict:
    return {"ms_p50": float(np.percentile(ms, 50)), "ms_p95": float(np.percentile(ms, 95))}


def _cosines(m: dict) -> str:
    if "cosine_min" not in m:
        return "1"
    return f"{m['cosine_min']:.4f} / {m['cosine_p1']:.4f} / {m['cosine_mean']:.4f}"


def main() -> None:
    queries = _questions()
    folder = ensure_onnx_model(models_dir(), say=print)
    reference = DualView(SentenceTransformerEmbedder(precision="float32"))
    torch, torch_ms = _one_at_a_time(reference, queries)
    report: dict = {"queries": len(queries), "load": "", "models": {}}
    for label, graph in (("float32", GRAPH_FILE), ("int8", INT8_FILE)):
        model = DualView(OnnxEmbedder(folder, graph=graph))
        vectors, ms = _one_at_a_time(model, queries)
        cosines = (vectors * torch).sum(axis=1)
        report["models"][label] = _figures(ms) | {
            "cosine_min": float(cosines.min()),
            "cosine_p1": float(np.percentile(cosines, 1)),
            "cosine_mean": float(cosines.mean()),
        }
    report["models"]["torch"] = _figures(torch_ms)
    report["load"] = load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "query_model.json").write_text(json.dumps(report, indent=1) + "\n")
    rows = "\n".join(
        f"| {label} | {_cosines(m)} | {m['ms_p50']:.1f} / {m['ms_p95']:.1f} |"
        for label, m in report["models"].items()
    )
    text = f"""# MiniLM query vectors: ONNX Runtime against torch (`bench/speed/query_model.py`)

{len(queries)} hand-written questions (every set in `bench/questions/repos/`), each embedded
alone as re-scoring does (as written and as words, averaged; one pass when the two are the
same text), one thread for ONNX Runtime, load {load} (2 shared cores: times are inflated).

| query model | cosine with torch float32: min / 1st pct / mean | ms per query p50 / p95 |
|---|---|---|
{rows}

float32: the exported graph with ONNX Runtime's BERT fusions; int8: its matrix products'
weights quantised per channel (dynamic quantisation; every operator quantised gave cosine
0.91-0.98 on five texts). torch: sentence-transformers, the reference.
"""
    (RESULTS / "query_model.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
