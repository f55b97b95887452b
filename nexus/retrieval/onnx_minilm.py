"""MiniLM for one query at a time: the bundled all-MiniLM-L6-v2 run by ONNX Runtime.

Re-scoring (``nexus.retrieval.rescore``) needs MiniLM's vector of each new query. torch
and sentence-transformers cost a process 1 GB or more and seconds to import; ONNX
Runtime runs the same graph in about 150 MB, imported in half a second. It is exported
from the bundled weights once, offline (``ensure_onnx_model``: ``nexus setup`` or the
background job that computes the chunks' MiniLM vectors calls it), in float32 with
ONNX Runtime's BERT fusions: its query vectors equal sentence-transformers' (cosine
1.0000 on all 360 hand-written questions, ``bench/results/query_model.md``). The export
also writes an int8 graph (the matrix products' weights quantised per channel): cosine
0.984 at worst and 0.9945 on average against float32, 40 MB less resident, and no faster
for a query of a few words on two loaded AVX2 cores; ``QUERY_GRAPH`` keeps float32.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nexus.retrieval.embedding import (
    DEFAULT_MODEL_NAME,
    ModelUnavailableError,
    Progress,
    SentenceTransformerEmbedder,
)
from nexus.retrieval.tiers import Say, ensure_model_folder, models_dir

if TYPE_CHECKING:
    from onnxruntime import InferenceSession

#: The exported graph's folder name under ``models/`` (its vectors are MiniLM's own).
ONNX_MODEL_NAME = f"{DEFAULT_MODEL_NAME}-onnx"
#: The float32 graph with ONNX Runtime's BERT fusions, and the same graph with its matrix
#: products' weights quantised to int8 per channel (``QUERY_GRAPH`` says which one answers).
GRAPH_FILE = "model.onnx"
INT8_FILE = "model-int8.onnx"
#: The graph that embeds queries (``bench/results/query_model.md``).
QUERY_GRAPH = GRAPH_FILE
TOKENIZER_FILE = "tokenizer.json"
#: MiniLM's window in word pieces (sentence-transformers' ``max_seq_length``).
MAX_LENGTH = 256
#: Threads one query runs on: a few words are too small a product to share out, and the
#: query path should leave the other core to the server's other work.
QUERY_THREADS = 1
ONNX_HINT = "pip install onnxruntime==1.30.0 onnx==1.23.1"


def export_minilm(target: Path, model_path: str | os.PathLike[str] | None = None) -> None:
    """Export MiniLM (default: the bundled one) into ``target``: the graph from word-piece
    ids to unit sentence vectors (mean pooling inside), with ONNX Runtime's BERT fusions,
    and the tokenizer beside it. Needs torch and onnx (only here, never to run it)."""
    try:
        import torch
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers import optimizer
    except ImportError as exc:
        raise ModelUnavailableError(f"exporting MiniLM needs torch and {ONNX_HINT}") from exc
    source = SentenceTransformerEmbedder(model_path, precision="float32")
    model = source.load()
    bert = model[0].auto_model.float().eval()

    class Sentence(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201
            out = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(out.dtype)
            mean = (out * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, dim=-1)

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = torch.ones(2, 8, dtype=torch.long)
    raw = target / "raw.onnx"
    with torch.no_grad():
        torch.onnx.export(
            Sentence(),
            (sample, sample, torch.zeros_like(sample)),
            str(raw),
            input_names=names,
            output_names=["vector"],
            dynamic_axes={**{n: {0: "texts", 1: "pieces"} for n in names}, "vector": {0: "texts"}},
            opset_version=17,
            dynamo=False,
        )
    hidden = int(bert.config.hidden_size)
    heads = int(bert.config.num_attention_heads)
    fused = optimizer.optimize_model(
        str(raw), model_type="bert", num_heads=heads, hidden_size=hidden
    )
    fused.save_model_to_file(str(target / GRAPH_FILE))
    quantize_dynamic(
        str(raw),
        str(target / INT8_FILE),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],  # all operators: cosine 0.91-0.98 to float32
    )
    raw.unlink()
    shutil.copy(source.model_path / TOKENIZER_FILE, target / TOKENIZER_FILE)


def ensure_onnx_model(folder: str | os.PathLike[str] | None = None, say: Say | None = None) -> Path:
    """The exported graph's folder in ``folder`` (default ``models_dir()``), exported
    first if it is not there yet (once, under a lock; about 20 s)."""
    return ensure_model_folder(
        Path(folder) if folder is not None else models_dir(),
        ONNX_MODEL_NAME,
        export_minilm,
        say,
        "exporting MiniLM to ONNX for query vectors, once: about 20 s",
    )


def onnx_model_at(cache_dir: str | os.PathLike[str] | None) -> Path | None:
    """The exported graph's folder under ``cache_dir``'s models, if it is there."""
    folder = models_dir(cache_dir) / ONNX_MODEL_NAME
    return folder if all((folder / f).is_file() for f in (GRAPH_FILE, INT8_FILE)) else None


class OnnxEmbedder:
    """MiniLM's sentence vectors from the exported graph (``Embedder``), loaded on first use."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        threads: int = QUERY_THREADS,
        graph: str = GRAPH_FILE,
    ) -> None:
        self.folder = Path(folder)
        self.graph = graph
        self.name: str = DEFAULT_MODEL_NAME
        self.dim: int = 384
        self.max_seq_length: int = MAX_LENGTH
        self.threads = threads
        self._session: InferenceSession | None = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def load(self) -> InferenceSession:
        """Open the graph and the tokenizer (once; thread-safe)."""
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise ModelUnavailableError(f"query vectors need {ONNX_HINT}") from exc
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                try:
                    session = ort.InferenceSession(
                        str(self.folder / self.graph), options, providers=["CPUExecutionProvider"]
                    )
                    tokenizer = Tokenizer.from_file(str(self.folder / TOKENIZER_FILE))
                except Exception as exc:  # ORT raises its own kinds: all mean "no model"
                    raise ModelUnavailableError(
                        f"cannot open the ONNX MiniLM in {self.folder}: {exc}"
                    ) from exc
                tokenizer.enable_truncation(MAX_LENGTH)
                tokenizer.enable_padding()
                self._tokenizer = tokenizer
                self._session = session
            return self._session

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self.load()
        assert self._tokenizer is not None
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        vectors = np.asarray(session.run(None, feed)[0], dtype=np.float32)
        if progress is not None:
            progress(len(texts), len(texts))
        return vectors

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text, special tokens included, up to the window (no padding)."""
        self.load()
        assert self._tokenizer is not None
        return [sum(e.attention_mask) for e in self._tokenizer.encode_batch(list(texts))]
