"""Embedding tiers: ``quality`` (all-MiniLM-L6-v2, the default) and ``fast`` (a static model).

The fast tier is a model2vec static model distilled from the bundled MiniLM folder: a
table of one vector per word piece, averaged, so it embeds thousands of texts a second
where MiniLM embeds tens. It is weaker on its own (``bench/retrieval/tier_agreement.py``), but it
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
    STATIC_MARK,
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
#: The tier ``Workspace``, the command line and ``nexus mcp`` answer with unless told: the
#: fast one, re-scored by MiniLM once its vectors exist, so no first answer waits for MiniLM.
DEFAULT_TIER = FAST

#: model2vec's default output width: PCA from MiniLM's 384 dimensions to 256.
PCA_DIMS = 256
#: The distilled model's name; it names its folder and its vectors in the cache, so a
#: change to how it is distilled must change it.
STATIC_MODEL_NAME = f"{DEFAULT_MODEL_NAME}{STATIC_MARK}{PCA_DIMS}"
#: Word pieces a static model reads per text (model2vec's default); it has no other window.
STATIC_MAX_LENGTH = 512
#: The words of a text as a BERT tokenizer's pre-tokenizer cuts them, at the characters where
#: it always cuts: runs of anything but ASCII spaces and punctuation, and each ASCII
#: punctuation mark alone. A run is tokenized alone, so whatever the tokenizer does inside
#: it (other whitespace, accents, control and CJK characters) it does as in the text, and a
#: text's word pieces are its words' pieces, each word tokenized once (``_word_pieces``).
_BERT_WORDS = re.compile(r"[^ \t\n\r!-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")
#: Distinct words the memo keeps before it starts over (a few MB).
WORD_MEMO_SIZE = 200_000
#: Words tokenized together in one text when the memo learns new words.
_WORDS_PER_TEXT = 1000
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
    if it is not there yet (``ensure_model_folder``)."""
    return ensure_model_folder(
        Path(folder) if folder is not None else models_dir(),
        STATIC_MODEL_NAME,
        distil,
        say,
        f"distilling the fast tier ({STATIC_MODEL_NAME}) from the bundled model, "
        "once: a few minutes on two cores",
    )


def ensure_model_folder(
    root: Path, name: str, make: Callable[[Path], None], say: Say | None, doing: str
) -> Path:
    """``root / name``, made first by ``make`` if it is not there yet (``doing`` is said).

    ``make(path)`` writes a model into an empty temporary folder, renamed into place
    only when it is complete; a file lock makes a second process wait and then load
    the first one's model instead of making it again.
    """
    target = root / name
    if target.is_dir():
        return target
    tell: Say = say or (lambda line: None)
    root.mkdir(parents=True, exist_ok=True)
    with exclusive(root / f"{name}.lock"):
        if target.is_dir():  # another process made it while we waited
            return target
        tell(doing)
        start = time.perf_counter()
        scratch = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
        try:
            make(scratch)
            scratch.rename(target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        tell(f"{name} ready in {time.perf_counter() - start:.0f} s: {target}")
    return target


class StaticEmbedder:
    """A model2vec static model from a local folder, loaded on first use."""

    #: Texts per batch committed to the embedding cache (``CachedEmbedder``): it embeds
    #: 256 texts in a few hundredths of a second, and committing every 256 was 3.4 s of
    #: the 40k-chunk scale corpus's build; 2,048 still commit within a second.
    texts_per_commit = 2048

    def __init__(self, model_path: str | os.PathLike[str], *, name: str | None = None) -> None:
        self.model_path = Path(model_path)
        self.name: str = name or self.model_path.name
        self.max_seq_length: int = STATIC_MAX_LENGTH
        self._model: StaticModel | None = None
        self._float_table: np.ndarray | None = None
        self._counter: Tokenizer | None = None
        self._continuing: list[bool] | None = None
        self._memo: dict[str, tuple[int, ...]] = {}
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
        as the tokenizer gives them. A BERT tokenizer's are looked up word by word in a
        memo: a codebase repeats a few tens of thousands of words, and tokenizing each once
        costs a quarter of the CPU of tokenizing every text (scale corpus: 9.7 s against
        37.6 s for 44,604 texts, identical pieces)."""
        tokenizer = self.load().tokenizer
        texts = [text[:cut] for text in texts]
        if not _splits_like_bert(tokenizer):
            return [e.ids for e in tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
        split = [_BERT_WORDS.findall(text) for text in texts]
        with self._memo_lock:
            memo = self._memo
            fresh = set().union(*split).difference(memo)
            if len(memo) + len(fresh) > WORD_MEMO_SIZE:
                memo.clear()
                fresh = set().union(*split)
            words = list(fresh)
            memo.update(zip(words, self._pieces_of_words(words), strict=True))
            pieces_of = memo.__getitem__
            window = self.max_seq_length
            return [list(chain.from_iterable(map(pieces_of, row)))[:window] for row in split]

    def _pieces_of_words(self, words: list[str]) -> list[tuple[int, ...]]:
        """Each word's pieces. Words of ASCII letters and digits (or one punctuation mark)
        are one BERT word each: they are tokenized joined by spaces, a thousand to a text,
        and cut apart where a piece does not continue a word (no ``##``); one encoding per
        word cost twice as much. Other words are tokenized one by one."""
        simple: list[str] = []
        other: list[str] = []
        for word in words:
            (simple if word.isascii() and word.isprintable() else other).append(word)
        pieces: dict[str, tuple[int, ...]] = {}
        if other:
            encodings = self.load().tokenizer.encode_batch_fast(other, add_special_tokens=False)
            pieces.update(zip(other, (tuple(e.ids) for e in encodings), strict=True))
        groups = [simple[i : i + _WORDS_PER_TEXT] for i in range(0, len(simple), _WORDS_PER_TEXT)]
        texts = [" ".join(group) for group in groups]
        continues = self._continues()
        encodings = self._untruncated().encode_batch_fast(texts, add_special_tokens=False)
        for group, encoding in zip(groups, encodings, strict=True):
            ids = encoding.ids
            starts = [i for i, piece in enumerate(ids) if not continues[piece]]
            if len(starts) != len(group):  # not one BERT word each after all: one by one
                one = self.load().tokenizer.encode_batch_fast(group, add_special_tokens=False)
                pieces.update(zip(group, (tuple(e.ids) for e in one), strict=True))
                continue
            ends = [*starts[1:], len(ids)]
            cut = (tuple(ids[a:b]) for a, b in zip(starts, ends, strict=True))
            pieces.update(zip(group, cut, strict=True))
        return [pieces[word] for word in words]

    def _continues(self) -> list[bool]:
        """Per piece id, whether it continues a word (``##...``)."""
        if self._continuing is None:
            vocab = self.load().tokenizer.get_vocab()
            table = [False] * (max(vocab.values()) + 1)
            for piece, index in vocab.items():
                table[index] = piece.startswith("##")
            self._continuing = table
        return self._continuing

    def _untruncated(self) -> Tokenizer:
        """A copy of the tokenizer that neither truncates nor adds special tokens' room."""
        if self._counter is None:
            self._counter = Tokenizer.from_str(self.load().tokenizer.to_str())
            self._counter.no_truncation()
            self._counter.no_padding()
        return self._counter

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
        encodings = self._untruncated().encode_batch_fast(list(texts), add_special_tokens=True)
        return [len(e.ids) for e in encodings]

    def __repr__(self) -> str:
        return f"StaticEmbedder(name={self.name!r}, path={str(self.model_path)!r})"


def _splits_like_bert(tokenizer: Tokenizer) -> bool:
    """Whether ``tokenizer`` cuts words as BERT does (``_BERT_WORDS``): MiniLM's does."""
    return (
        type(tokenizer.normalizer).__name__ == "BertNormalizer"
        and type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
    )


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
