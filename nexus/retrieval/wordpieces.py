"""Count the word pieces the embedding model will read, without loading the model.

The "over the model window" flag must not depend on whether some page has already
loaded torch: the model folder's ``tokenizer.json`` (read with ``tokenizers``, a
fraction of a second) gives the same counts as the model's own tokenizer, special
tokens included, and ``sentence_bert_config.json`` gives the window.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexus.retrieval.embedding import ModelUnavailableError, SentenceTransformerEmbedder

DEFAULT_WINDOW = 256


@dataclass
class WordPieceCounter:
    """``count(texts)`` word pieces per text; ``window`` the model's max sequence length."""

    tokenizer: Any
    window: int

    @classmethod
    def for_model(cls, model_path: str | Path | None = None) -> WordPieceCounter:
        """The counter of a local sentence-transformers folder (default: the bundled
        model). Raises ``ModelUnavailableError`` when there is no tokenizer to read."""
        from tokenizers import Tokenizer

        folder = SentenceTransformerEmbedder(model_path).model_path
        tokenizer_file = folder / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise ModelUnavailableError(f"no tokenizer.json in {folder}")
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        window = DEFAULT_WINDOW
        config = folder / "sentence_bert_config.json"
        if config.is_file():
            window = int(json.loads(config.read_text()).get("max_seq_length", window))
        return cls(tokenizer, window)

    def count(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]
