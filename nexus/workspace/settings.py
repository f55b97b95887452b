"""How a workspace chunks, embeds and caches (``Settings``), and the embedders it opens.

The fast tier's static model can sit under wrappers (the words view, the cache);
``static_model`` finds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nexus.chunking.profiles import Profile
from nexus.config import ChunkConfig
from nexus.ingest.sources import IngestSettings
from nexus.retrieval.embedding import CachedEmbedder, Embedder
from nexus.retrieval.embedding_cache import EmbeddingCache, default_cache_dir
from nexus.retrieval.tiers import DEFAULT_TIER, QUALITY, TIERS, StaticEmbedder, tier_embedder


@dataclass(frozen=True)
class Settings:
    """How a workspace chunks, embeds and caches.

    ``config``: the chunk and search settings; ``tier``: ``quality`` or ``fast``
    (``nexus.retrieval.tiers``); ``cache_dir``: embedding cache, saved indexes and scans
    (default ``$NEXUS_CACHE_DIR``); ``files``: which files are read (selection, allowed
    roots); ``workers``: chunking processes (default: all cores for a large repository);
    ``rescore``: the fast tier's best hits scored again by the quality tier's model.
    """

    config: ChunkConfig = field(default_factory=ChunkConfig)
    tier: str = DEFAULT_TIER
    cache_dir: Path | None = None
    cache_max_bytes: int | None = None
    model_path: str | None = None
    files: IngestSettings = field(default_factory=IngestSettings)
    custom_profiles: Mapping[str, Profile] | None = None
    workers: int | None = None
    #: With the fast tier and the ranking stage: its best hits scored again by MiniLM
    #: (``nexus.retrieval.rescore``) once MiniLM's vectors of the chunks are computed in
    #: the background (``nexus.runtime.rescore_vectors``); the fast tier's order until then.
    rescore: bool = True

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise ValueError(f"unknown tier {self.tier!r}: choose one of {', '.join(TIERS)}")
        if self.model_path is not None and self.tier != QUALITY:
            raise ValueError(
                "model_path names a quality-tier model (the fast tier is distilled from the "
                "bundled one): give tier='quality' with it"
            )
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")

    @property
    def cache_folder(self) -> Path:
        return Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()


def open_embedder(settings: Settings, say: Callable[[str], None] | None = None) -> CachedEmbedder:
    """The tier's embedder behind the on-disk cache (the model loads on first use)."""
    cache = EmbeddingCache(settings.cache_dir, max_bytes=settings.cache_max_bytes)
    inner = tier_embedder(
        settings.tier,
        words_view=settings.config.words_view,
        model_path=settings.model_path,
        cache_dir=cache.folder,
        say=say,
    )
    return CachedEmbedder(inner, cache)


def is_static(embedder: Embedder) -> bool:
    """Whether ``embedder`` is the fast tier's static model, however wrapped (the words
    view wraps it)."""
    return static_model(embedder) is not None


def static_model(embedder: Embedder) -> StaticEmbedder | None:
    """The fast tier's static model inside ``embedder``'s wrappers (None: another model)."""
    while not isinstance(embedder, StaticEmbedder):
        inner = getattr(embedder, "inner", None)
        if inner is None:
            return None
        embedder = inner
    return embedder
