"""Embedding tiers: ``quality`` (all-MiniLM-L6-v2, the default) and ``fast`` (a static model).

The fast tier is a model2vec static model distilled from the bundled MiniLM folder: a
table of one vector per word piece, averaged, so it embeds thousands of texts a second
where MiniLM embeds tens. It is weaker on its own (``bench/tier_agreement.py``), but it
ranks chunking settings much as MiniLM does, which is what a sweep needs.

Nothing is downloaded: the first use distils the model offline (a few minutes on two
cores) into ``<cache folder>/models/``, atomically (a temporary folder renamed into
place) and under a file lock, so two processes never distil twice; later uses load it.
Its vectors are cached under their own embedder name, so they never mix with MiniLM's.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from tokenizers import Tokenizer

from nexus.retrieval import embedding
from nexus.retrieval.embedding import (
    DEFAULT_MODEL_NAME,
    DualView,
    Embedder,
    ModelUnavailableError,
    Progress,
    SentenceTransformerEmbedder,
)
from nexus.retrieval.embedding_cache import default_cache_dir, exclusive

if TYPE_CHECKING:
    from model2vec import StaticModel

QUALITY = "quality"
FAST = "fast"
TIERS = (QUALITY, FAST)
DEFAULT_TIER = QUALITY

#: model2vec's default output width: PCA from MiniLM's 384 dimensions to 256.
PCA_DIMS = 256
#: The distilled model's name; it names its folder and its vectors in the cache, so a
#: change to how it is distilled must change it.
STATIC_MODEL_NAME = f"{DEFAULT_MODEL_NAME}-static{PCA_DIMS}"
#: Word pieces a static model reads per text (model2vec's default); it has no other window.
STATIC_MAX_LENGTH = 512
#: Texts the word memo tokenizes word by word: lower-case words and digits, single spaces
#: apart (what ``code_as_words`` makes of ASCII code). A BERT tokenizer splits them at the
#: spaces and nowhere else, so each word's pieces are the same alone or in a text (tested).
_PLAIN_WORDS = re.compile(r"[a-z0-9]+(?: [a-z0-9]+)*")
#: Distinct words the memo keeps before it starts over (a few MB).
WORD_MEMO_SIZE = 200_000
MODEL2VEC_HINT = "pip install model2vec==0.10.0 skeletoken==0.6.1"

#: Called with a line of text saying what the distillation is doing.
Say = Callable[[str], None]


def models_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where distilled models live: ``models/`` inside the embedding cache folder."""
    return Path(cache_dir if cache_dir is not None else default_cache_dir()) / "models"


def distil_from_minilm(target: Path) -> None:
    """Distil the bundled all-MiniLM-L6-v2 into a static model saved in ``target``."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        from model2vec.distill import distill
    except ImportError as exc:
        raise ModelUnavailableError(f"the fast tier needs model2vec: {MODEL2VEC_HINT}") from exc
    source = SentenceTransformerEmbedder().model_path
    try:
        model = distill(str(source), pca_dims=PCA_DIMS, device="cpu")
    except Exception as exc:  # model2vec raises many kinds; all mean "no fast tier"
        raise ModelUnavailableError(
            f"distilling the fast tier from {source} failed: {exc}"
        ) from exc
    model.save_pretrained(str(target))


def ensure_static_model(
    folder: str | os.PathLike[str] | None = None,
    say: Say | None = None,
    distil: Callable[[Path], None] = distil_from_minilm,
) -> Path:
    """The static model's folder in ``folder`` (default ``models_dir()``), distilled first
    if it is not there yet.

    ``distil(path)`` writes a model into an empty temporary folder, renamed into place
    only when it is complete; a file lock makes a second process wait and then load
    the first one's model instead of distilling again.
    """
    root = Path(folder) if folder is not None else models_dir()
    target = root / STATIC_MODEL_NAME
    if target.is_dir():
        return target
    tell: Say = say or (lambda line: None)
    root.mkdir(parents=True, exist_ok=True)
    with exclusive(root / f"{STATIC_MODEL_NAME}.lock"):
        if target.is_dir():  # another process distilled it while we waited
            return target
        tell(
            f"distilling the fast tier ({STATIC_MODEL_NAME}) from the bundled model, "
            "once: a few minutes on two cores"
        )
        start = time.perf_counter()
        scratch = Path(tempfile.mkdtemp(prefix=f".{STATIC_MODEL_NAME}-", dir=root))
        try:
            distil(scratch)
            scratch.rename(target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        tell(f"fast tier ready in {time.perf_counter() - start:.0f} s: {target}")
    return target


class StaticEmbedder:
    """A model2vec static model from a local folder, loaded on first use."""

    def __init__(self, model_path: str | os.PathLike[str], *, name: str | None = None) -> None:
        self.model_path = Path(model_path)
        self.name: str = name or self.model_path.name
        self.max_seq_length: int = STATIC_MAX_LENGTH
        self._model: StaticModel | None = None
        self._float_table: np.ndarray | None = None
        self._counter: Tokenizer | None = None
        self._memo: dict[str, list[int]] = {}
        self._memo_lock = threading.Lock()
        self._lock = threading.Lock()

    def load(self) -> StaticModel:
        """Load the model (once; thread-safe) and return it."""
        with self._lock:
            if self._model is None:
                try:
                    from model2vec import StaticModel
                except ImportError as exc:
                    msg = f"the fast tier needs model2vec: {MODEL2VEC_HINT}"
                    raise ModelUnavailableError(msg) from exc
                try:
                    self._model = StaticModel.from_pretrained(str(self.model_path))
                except (OSError, ValueError) as exc:
                    raise ModelUnavailableError(
                        f"cannot load the static model from {self.model_path}: {exc}"
                    ) from exc
                # ``encode`` tokenizes itself: the same window model2vec's ``encode`` sets.
                self._model.tokenizer.enable_truncation(self.max_seq_length)
            return self._model

    @property
    def dim(self) -> int:
        return int(self.load().dim)

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Unit vectors equal to model2vec's ``encode`` (bit for bit, tested), computed as one
        sparse product (texts x word pieces) @ (word pieces x dims) per call instead of one
        mean per text length: the means were a third of a fast-tier build's time."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        from scipy.sparse import csr_matrix  # only when embedding: pages start without it

        model = self.load()
        cut = self.max_seq_length * model.median_token_length  # what model2vec cuts to
        unknown = model.unk_token_id
        ids = [[i for i in row if i != unknown] for row in self._word_pieces(texts, cut)]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        starts = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(starts[-1]))
        counts = csr_matrix(
            (np.ones(len(flat), dtype=np.float32), flat, starts),
            shape=(len(ids), self._table().shape[0]),
        )
        # model2vec rounds the mean and the unit vector to the table's float16: so do we.
        means = (counts @ self._table()) / np.maximum(lengths, 1)[:, None]
        means = means.astype(model.embedding.dtype).astype(np.float32)
        norms = np.linalg.norm(means, axis=1, keepdims=True)
        vectors = (means / (norms + 1e-32)).astype(model.embedding.dtype).astype(np.float32)
        if progress is not None:
            progress(len(texts), len(texts))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def _word_pieces(self, texts: Sequence[str], cut: int) -> list[list[int]]:
        """Each text's word pieces (its first ``cut`` characters, truncated to the window),
        as the tokenizer gives them. A text of lower-case words and digits (the words view,
        half of what the fast tier embeds) is looked up word by word in a memo: a codebase
        repeats a few thousand words, and tokenizing them once is 3x cheaper."""
        tokenizer = self.load().tokenizer
        texts = [text[:cut] for text in texts]
        pieces: list[list[int] | None] = [None] * len(texts)
        with self._memo_lock:
            memo = self._memo
            plain = {
                i: text.split() for i, text in enumerate(texts) if _PLAIN_WORDS.fullmatch(text)
            }
            new = {w for words in plain.values() for w in words if w not in memo}
            if len(memo) + len(new) > WORD_MEMO_SIZE:
                memo.clear()
                new = {w for words in plain.values() for w in words}
            fresh = list(new)
            for word, encoding in zip(
                fresh, tokenizer.encode_batch_fast(fresh, add_special_tokens=False), strict=True
            ):
                memo[word] = encoding.ids
            for i, words in plain.items():
                pieces[i] = list(chain.from_iterable(map(memo.__getitem__, words)))
        rest = [i for i, row in enumerate(pieces) if row is None]
        encodings = tokenizer.encode_batch_fast([texts[i] for i in rest], add_special_tokens=False)
        for i, encoding in zip(rest, encodings, strict=True):
            pieces[i] = encoding.ids
        return [row[: self.max_seq_length] for row in pieces if row is not None]

    def _table(self) -> np.ndarray:
        """The model's word-piece vectors as float32, made once."""
        if self._float_table is None:
            self._float_table = np.asarray(self.load().embedding, dtype=np.float32)
        return self._float_table

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        """Whole lengths, past the window: counted by an untruncated copy of the tokenizer
        (``encode`` truncates, so its own would never report a text as too long)."""
        if not texts:
            return []
        if self._counter is None:
            self._counter = Tokenizer.from_str(self.load().tokenizer.to_str())
            self._counter.no_truncation()
        encodings = self._counter.encode_batch_fast(list(texts), add_special_tokens=True)
        return [len(e.ids) for e in encodings]

    def __repr__(self) -> str:
        return f"StaticEmbedder(name={self.name!r}, path={str(self.model_path)!r})"


def tier_embedder(
    tier: str = DEFAULT_TIER,
    words_view: bool = True,
    model_path: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    say: Say | None = None,
) -> Embedder:
    """The embedder of a tier (``quality`` or ``fast``), with the words view unless told not.

    ``model_path`` (a local sentence-transformers folder) replaces the quality tier's
    model; the fast tier is always the static model distilled into ``cache_dir``.
    """
    if tier == QUALITY:  # looked up on the module: tests and tools replace it there
        return embedding.default_embedder(words_view=words_view, model_path=model_path)
    if tier != FAST:
        raise ValueError(f"unknown embedding tier {tier!r}: choose one of {', '.join(TIERS)}")
    if model_path is not None:
        raise ValueError("--model names a quality-tier model; the fast tier is distilled from it")
    embedder: Embedder = StaticEmbedder(ensure_static_model(models_dir(cache_dir), say))
    return DualView(embedder) if words_view else embedder
