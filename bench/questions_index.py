"""Build (once) the indexes the question benchmark searches: every repository of
``bench/questions``, chunked by AST (the defaults) and by 50-line windows, embedded with
all-MiniLM-L6-v2 through the embedding cache and saved, so that ranking experiments
(``bench/questions_eval.py``) load them in seconds instead of embedding again.

    .venv/bin/python bench/questions_index.py [--work /tmp/nexus-questions] [--repo NAME ...]

Lay the repositories out first: ``python bench/questions/layout.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nexus.chunking.pipeline import chunk_repository  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.ingest.sources import IngestSettings, open_repository  # noqa: E402
from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache, default_embedder  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402

QUESTIONS = ROOT / "bench" / "questions"
STRATEGIES = ("ast", "lines")


def repo_names() -> list[str]:
    """Every repository of the question set, in name order."""
    return sorted(json.loads(p.read_text())["name"] for p in (QUESTIONS / "repos").glob("*.json"))


def index_folder(indexes: Path, repo: str, strategy: str) -> Path:
    return indexes / f"{repo}-{strategy}"


def build(work: Path, indexes: Path, names: list[str], strategies: list[str]) -> None:
    embedder = CachedEmbedder(default_embedder(), EmbeddingCache(indexes / "cache"))
    settings = IngestSettings(allowed_roots=(work,))
    for name in names:
        repo = open_repository(work / name, name=name, settings=settings)
        for strategy in strategies:
            folder = index_folder(indexes, name, strategy)
            config = replace(ChunkConfig(), strategy=strategy)
            started = time.perf_counter()
            chunks = chunk_repository(repo, config)
            index = VectorIndex.from_chunks(chunks, embedder)
            index.save(folder)
            print(
                f"{name:22} {strategy:5} {len(chunks):6} chunks "
                f"{time.perf_counter() - started:7.1f} s",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/nexus-questions"))
    parser.add_argument("--indexes", type=Path, default=Path("/tmp/nexus-questions-indexes"))
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--strategy", action="append", choices=STRATEGIES, default=[])
    args = parser.parse_args()
    build(args.work, args.indexes, args.repo or repo_names(), args.strategy or list(STRATEGIES))


if __name__ == "__main__":
    main()
