"""The quality tier's arithmetic: MiniLM in float32 against bfloat16, on this machine.

    .venv/bin/python bench/speed/model_precision.py [--texts 512] [--repeat 3]

Embeds the same chunk texts (Nexus's own source and the sample repositories, AST chunks
at the defaults) through both views, as ``nexus index`` does (``DualView``), with the
model loaded once per precision; the repeats alternate the two so machine load hits both
alike. Prints and writes chunks per second, the cosine between each chunk's two vectors,
and the CPU flags ``resolve_precision`` reads. Retrieval with each precision is measured
by ``bench/retrieval/per_token.py`` (rows ``quality tier, bfloat16``). Results:
``bench/results/model_precision.{json,md}``.

Retrieval in each precision: ``bench/retrieval/per_token.py --tier quality`` with
``NEXUS_MODEL_PRECISION`` set, and ``bench/retrieval/per_token_docs.py --tier quality --sizes
320/48``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from nexus.chunking.pipeline import chunk_repository  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.ingest.sources import IngestSettings, open_repository  # noqa: E402
from nexus.retrieval.embedding import (  # noqa: E402
    NATIVE_BF16_FLAGS,
    DualView,
    SentenceTransformerEmbedder,
    cpu_flags,
    resolve_precision,
)

RESULTS = ROOT / "bench" / "results"
SOURCES = (ROOT / "nexus", *sorted((ROOT / "sample_repos").iterdir()))


def chunk_texts(limit: int) -> list[str]:
    """Up to ``limit`` chunk texts, an even sample over every source's chunks."""
    texts: list[str] = []
    for folder in SOURCES:
        repo = open_repository(folder, settings=IngestSettings(allowed_roots=(ROOT,)))
        texts += [c.text for c in chunk_repository(repo, ChunkConfig())]
    return texts[:: max(1, len(texts) // limit)][:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    texts = chunk_texts(args.texts)
    embedders = {
        p: DualView(SentenceTransformerEmbedder(precision=p)) for p in ("float32", "bfloat16")
    }
    for embedder in embedders.values():
        embedder.encode(texts[:32])  # load and warm up
    seconds: dict[str, list[float]] = {p: [] for p in embedders}
    vectors: dict[str, np.ndarray] = {}
    for repeat in range(args.repeat):
        for precision, embedder in embedders.items():
            start = time.perf_counter()
            vectors[precision] = embedder.encode(texts)
            seconds[precision].append(time.perf_counter() - start)
            print(f"repeat {repeat + 1} {precision:8s} {seconds[precision][-1]:6.1f} s", flush=True)
    cosines = np.sum(vectors["float32"] * vectors["bfloat16"], axis=1)
    flags = cpu_flags()
    report = {
        "date": str(date.today()),
        "machine": machine(),
        "load": os.getloadavg(),
        "native_bf16_flags": sorted(NATIVE_BF16_FLAGS & flags),
        "auto_chooses": resolve_precision("auto"),
        "chunks": len(texts),
        "chunks_per_s": {p: len(texts) / min(s) for p, s in seconds.items()},
        "seconds": seconds,
        "cosine_min": float(cosines.min()),
        "cosine_mean": float(cosines.mean()),
    }
    (RESULTS / "model_precision.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "model_precision.md").write_text(markdown(report))
    print(markdown(report))


def markdown(report: dict) -> str:
    speed = report["chunks_per_s"]
    m = report["machine"]
    return "\n".join(
        [
            "# The quality tier in float32 and in bfloat16",
            "",
            f"`bench/speed/model_precision.py`, {report['date']}: {report['chunks']} AST chunks "
            "(Nexus's "
            "own source and the sample repositories, defaults), both views (`DualView`), "
            f"best of the repeats. {m['nproc']} CPUs, {m['cpu']}; load "
            f"{' '.join(f'{x:.1f}' for x in report['load'])}. Native bfloat16 flags: "
            f"{', '.join(report['native_bf16_flags']) or 'none'}; `auto` chooses "
            f"**{report['auto_chooses']}** here.",
            "",
            "| precision | chunks/s | speed-up |",
            "|---|---|---|",
            f"| float32 | {speed['float32']:.1f} | 1.00 |",
            f"| bfloat16 | {speed['bfloat16']:.1f} | {speed['bfloat16'] / speed['float32']:.2f} |",
            "",
            "Cosine between a chunk's float32 and bfloat16 vectors: "
            f"min {report['cosine_min']:.4f}, mean {report['cosine_mean']:.4f}.",
            "",
        ]
    )


if __name__ == "__main__":
    main()
