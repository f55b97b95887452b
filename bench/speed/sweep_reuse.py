"""A budget sweep as the Evaluate page runs it: texts embedded per setting, time, ETA.

Run: ``.venv/bin/python bench/speed/sweep_reuse.py REPO [--embedder fake|model]`` (``--help``).

The query set is made from REPO (``nexus.evaluation.generate``, doc comments blanked in
what is indexed, as on the page); the grid is the page's default (max 128, 256, 512 x
min 0, 48) plus the default setting in use (512/64). The embedding cache is a fresh
folder, so every text the sweep needs is embedded by the model once (cold).

Printed and written to ``bench/results/sweep_reuse.{json,md}`` (``--out``), per setting in the
order the sweep runs them: chunks, distinct chunk texts, texts the model embedded for
it (the rest were shared with a setting before), seconds; then the totals, the time
to the first finished setting, the ETA the sweep gave after 10% of the texts, and how
many texts the old order (smallest budget first) embedded before its first setting
finished. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from nexus.chunking.pipeline import analyze_files, chunk_analyses  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.evaluation.experiments import SweepStatus, describe, sweep  # noqa: E402
from nexus.evaluation.generate import blanked_repository, generate  # noqa: E402
from nexus.evaluation.query_sets import parse_queries  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.embedding import (  # noqa: E402
    CachedEmbedder,
    Embedder,
    Wrapper,
    default_embedder,
)
from nexus.retrieval.embedding_cache import EmbeddingCache  # noqa: E402
from nexus.ui.fake_embedder import HashingEmbedder  # noqa: E402

RESULTS = ROOT / "bench" / "results"
MAXES, MINS, IN_USE = (128, 256, 512), (0, 48), (512, 64)


class Counting(Wrapper):
    """Counts the texts the model is asked to embed (what the cache and memo did not have)."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.texts = 0

    def encode(self, texts: Sequence[str], progress: object = None) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.encode(texts)

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_wordpieces(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", help="a repository folder")
    parser.add_argument("--embedder", choices=("fake", "model"), default="fake")
    parser.add_argument("--cap", type=int, default=300, help="query targets (generate's cap)")
    parser.add_argument("--out", default="sweep_reuse", help="results file name, no suffix")
    args = parser.parse_args()

    load = os.getloadavg()[0]
    repo = open_repository(args.repo)
    made = generate(repo, cap=args.cap)
    queries = parse_queries(made.jsonl().encode("utf-8"))
    blanked = blanked_repository(repo)
    base = ChunkConfig()
    analyses = analyze_files(blanked.source_files(), base.encoding)
    inner: Embedder = HashingEmbedder() if args.embedder == "fake" else default_embedder()
    _ = inner.dim  # the model loads before the clock starts
    counting = Counting(inner)
    rows: list[dict[str, object]] = []
    statuses: list[tuple[float, SweepStatus]] = []
    with tempfile.TemporaryDirectory() as folder:
        embedder = CachedEmbedder(counting, EmbeddingCache(Path(folder) / "cache.sqlite"))
        began = time.perf_counter()
        mark = {"texts": 0, "at": began}

        def progress(status: SweepStatus) -> None:
            now = time.perf_counter()
            statuses.append((now - began, status))
            if status.settings_done > len(rows):
                rows.append({"texts_embedded": counting.texts - mark["texts"],
                             "seconds": round(now - mark["at"], 2)})  # fmt: skip
                mark.update(texts=counting.texts, at=now)

        results = sweep(analyses, blanked.name, base, queries, embedder, MAXES, MINS,
                        progress=progress, extra=[IN_USE])  # fmt: skip
        total_s = time.perf_counter() - began
    order = [IN_USE] + sorted({(hi, lo) for hi in MAXES for lo in MINS} - {IN_USE}, reverse=True)
    by_pair = {(r.config.max_tokens, r.config.min_tokens): r for r in results}
    seen: set[str] = set()
    for row, pair in zip(rows, order, strict=False):
        chunks = chunk_analyses(analyses, base.with_(max_tokens=pair[0], min_tokens=pair[1]),
                                repo=blanked.name)  # fmt: skip
        texts = {c.embedding_text for c in chunks}
        row.update(setting=describe(by_pair[pair].config), chunks=len(chunks),
                   distinct=len(texts), new=len(texts - seen),
                   mrr10=round(by_pair[pair].metric("MRR@10"), 3))  # fmt: skip
        seen |= texts
    smallest_first = chunk_analyses(analyses, base.with_(max_tokens=128, min_tokens=0),
                                    repo=blanked.name)  # fmt: skip
    early = next(((t, s) for t, s in statuses if s.texts and s.texts_done >= s.texts / 10), None)
    summary = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "repo": repo.name, "embedder": counting.name, "queries": len(queries),
        "load_1min_at_start": round(load, 2), "load_1min_at_end": round(os.getloadavg()[0], 2),
        "settings": len(results), "chunks_all_settings": sum(int(r["chunks"]) for r in rows),
        "distinct_texts": len(seen), "texts_embedded": counting.texts,
        "seconds": round(total_s, 1),
        "first_setting_s": rows[0]["seconds"] if rows else None,
        "eta_at_10pct_s": round(early[1].eta_s or 0, 1) if early else None,
        "eta_taken_at_s": round(early[0], 1) if early else None,
        "old_order_first_setting_texts": len({c.embedding_text for c in smallest_first}),
        "machine": machine(),
    }  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps({**summary, "rows": rows}, indent=1))
    lines = [
        f"# Sweep reuse: {repo.name}, {counting.name}, {len(queries)} queries",
        "",
        f"Run {summary['date']}; load average {summary['load_1min_at_start']} at the start, "
        f"{summary['load_1min_at_end']} at the end ({machine()['nproc']} cores).",
        "",
        "| setting (run order) | chunks | distinct texts | not in an earlier setting "
        "| embedded for it | seconds | MRR@10 |",
        "|---|---|---|---|---|---|---|",
        *(f"| {r['setting']} | {r['chunks']} | {r['distinct']} | {r['new']} | "
          f"{r['texts_embedded']} | {r['seconds']} | {r['mrr10']} |" for r in rows),
        "",
        "The first setting's texts embedded include the queries'.",
        "",
        *(f"- {k}: {v}" for k, v in summary.items() if k not in ("machine", "date")),
    ]  # fmt: skip
    (RESULTS / f"{args.out}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
