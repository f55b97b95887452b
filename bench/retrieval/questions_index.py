"""Build (once) the indexes the question benchmark searches: every repository of
``bench/questions``, chunked by AST (the defaults) and by 50-line windows, embedded with
all-MiniLM-L6-v2 through the embedding cache and saved, so that ranking experiments
(``bench/retrieval/questions_eval.py``) load them in seconds instead of embedding again.

    .venv/bin/python bench/retrieval/questions_index.py [--work /tmp/nexus-questions]
        [--repo NAME ...] [--tier fast] [--sizes 192-32]

Lay the repositories out first: ``python bench/questions/layout.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from nexus.chunking.pipeline import chunk_repository  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.ingest.sources import IngestSettings, open_repository  # noqa: E402
from nexus.retrieval.embedding import (  # noqa: E402
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    Wrapper,
)
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.retrieval.textview import code_as_words  # noqa: E402
from nexus.retrieval.tiers import FAST, QUALITY, TIERS, tier_embedder  # noqa: E402

QUESTIONS = ROOT / "bench" / "questions"
STRATEGIES = ("ast", "lines")
NO_HEADER = "no-header"
#: Indexes embedded through one view of the text instead of both (``DualView``): the text
#: as written, or its words (``code_as_words``) only.
AS_WRITTEN = "as-written"
WORDS_ONLY = "words-only"
#: Where each tier's indexes go (``$NEXUS_QUESTIONS_INDEXES`` moves the quality tier's).
INDEXES = {
    QUALITY: Path(os.environ.get("NEXUS_QUESTIONS_INDEXES", "/tmp/nexus-questions-indexes")),
    FAST: Path("/tmp/nexus-questions-indexes-fast"),
}


def repo_names() -> list[str]:
    """Every repository of the question set, in name order."""
    return sorted(json.loads(p.read_text())["name"] for p in (QUESTIONS / "repos").glob("*.json"))


def index_folder(indexes: Path, repo: str, strategy: str, sizes: str = "") -> Path:
    """A repository's saved index; ``sizes`` (``192-32``) names chunk budgets other than the
    defaults. An AST index at the defaults is named by them too, so a saved index is never
    read as the defaults' after they change."""
    if strategy == "ast" and not sizes:
        sizes = f"{ChunkConfig().max_tokens}-{ChunkConfig().min_tokens}"
    return indexes / f"{repo}-{strategy}{'-' + sizes if sizes else ''}"


def chunk_config(strategy: str, sizes: str = "") -> ChunkConfig:
    """The settings of an index: the defaults, AST budgets ``MAX-MIN`` (``192-32``), or
    ``no-header`` (chunks embedded without their context line)."""
    config = replace(ChunkConfig(), strategy=strategy)
    if sizes == NO_HEADER:
        return replace(config, context_header=False)
    if sizes in (AS_WRITTEN, WORDS_ONLY):
        return config
    if sizes:
        high, low = (int(x) for x in sizes.split("-"))
        config = replace(config, max_tokens=high, min_tokens=low)
    return config


class WordsOnly(Wrapper):
    """Embeds the words view (``code_as_words``) of every text, and nothing else."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.name = f"{inner.name}+words"

    def encode(self, texts, progress=None):  # noqa: ANN001, ANN201 - as Embedder.encode
        return self.inner.encode([code_as_words(t) for t in texts], progress)


def tier_cache(tier: str, sizes: str = "") -> Embedder:
    """The tier's embedder through the shared embedding cache (one view for ``AS_WRITTEN``
    and ``WORDS_ONLY``)."""
    cache = os.environ.get("NEXUS_CACHE_DIR")
    folder = Path(cache) if cache else INDEXES[QUALITY] / "cache"
    embedder = tier_embedder(
        tier, words_view=sizes not in (AS_WRITTEN, WORDS_ONLY), cache_dir=cache
    )
    if sizes == WORDS_ONLY:
        embedder = WordsOnly(embedder)
    return CachedEmbedder(embedder, EmbeddingCache(folder))


def build(
    work: Path,
    indexes: Path,
    names: list[str],
    strategies: list[str],
    embedder: Embedder,
    sizes: str = "",
) -> None:
    """Chunk, embed and save each repository's index per strategy (skipping saved ones)."""
    settings = IngestSettings(allowed_roots=(work,))
    for name in names:
        repo = open_repository(work / name, name=name, settings=settings)
        for strategy in strategies:
            folder = index_folder(indexes, name, strategy, sizes if strategy == "ast" else "")
            if VectorIndex.read_manifest(folder) is not None:
                continue
            started = time.perf_counter()
            chunks = chunk_repository(repo, chunk_config(strategy, sizes))
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
    parser.add_argument("--tier", default=QUALITY, choices=TIERS)
    parser.add_argument("--indexes", type=Path, help="default: the tier's folder (INDEXES)")
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--strategy", action="append", choices=STRATEGIES, default=[])
    parser.add_argument(
        "--sizes",
        default="",
        help="AST budgets MAX-MIN (default: 512-64), no-header, as-written or words-only",
    )
    args = parser.parse_args()
    build(
        args.work,
        args.indexes or INDEXES[args.tier],
        args.repo or repo_names(),
        args.strategy or list(STRATEGIES),
        tier_cache(args.tier, args.sizes),
        args.sizes,
    )


if __name__ == "__main__":
    main()
