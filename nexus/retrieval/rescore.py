"""Re-scoring: the fast tier's best hits scored again with MiniLM's reading of the query.

The fast tier's static model averages word-piece vectors: it finds the right
neighbourhood over every chunk in milliseconds (with BM25 and the ranking stage), but
orders its best hits by generic words. MiniLM reads the question as a sentence. So the
fast tier's top ``RESCORE_DEPTH`` hits have their dense part replaced by MiniLM's cosine
(the chunk that ranked, as the quality tier's index would embed it; scaled 0-1 over
those hits, weighted by the share a MiniLM index gets for the query's kind:
``RankingRules.contextual_dense`` for a sentence, ``symbol_dense`` for a name) and are
ordered again; every other part of their scores stays. Only those hits are embedded,
through the embedding cache, so a chunk is embedded once for every later query and for
a later quality-tier build.

Chosen on the tuning half of the questions (fast tier, AST 320/48): the top 10 / 20 / 30 /
40 and shares 0.5-0.8 measured; held out, once: NDCG@10 0.615 -> 0.641, R@1k 0.585 ->
0.644, R@2k 0.670 -> 0.711, R@4k 0.772 -> 0.814 (``bench/retrieval/rescore.py``,
``bench/results/rescore.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from nexus.retrieval.lexical import terms
from nexus.retrieval.ranking import (
    RankingRules,
    ScorePart,
    files_first,
    query_kind,
    within_line_cap,
)
from nexus.retrieval.search import Hit
from nexus.retrieval.selection import matched_lines
from nexus.retrieval.windows import clip

#: Hits of the fast tier scored again (the rest keep their order, after them).
RESCORE_DEPTH = 30
#: ``SearchAnswer.rescore`` when the fast tier's best hits were scored again by MiniLM.
RESCORED = "re-scored"
#: ... and before MiniLM's vectors of the chunks exist: the fast tier's own order.
RESCORE_PENDING = "not re-scored yet"
#: The name of the dense part a re-scored hit carries instead of ``dense``.
RESCORED_DENSE = "dense (quality model)"


def rescore_texts(hits: Sequence[Hit], depth: int = RESCORE_DEPTH) -> list[str]:
    """What MiniLM embeds for the first ``depth`` hits: each one's ranked chunk (a window's
    best chunk, not the whole window) as an index embeds it, context line included."""
    return [(hit.head or hit.chunk).embedding_text for hit in hits[:depth]]


def rescore(
    hits: Sequence[Hit], cosines: Sequence[float], query: str, rules: RankingRules
) -> list[Hit]:
    """``hits`` (ranked, with the parts of their scores) with the first ``len(cosines)``
    scored again: their ``dense`` part replaced by ``RESCORED_DENSE``, the share of the
    query's kind x MiniLM's cosine scaled 0-1 over them, then ordered by the new totals
    (ties keep the old order), within the top 10's line cap again
    (``ranking.within_line_cap``: a hit moved up from past the 10th was never trimmed).
    Ranks are numbered again. Hits without parts (the ranking stage off) come back as
    they are."""
    n = min(len(cosines), len(hits))
    if n < 2 or any(not hit.parts for hit in hits[:n]):
        return list(hits)
    values = np.asarray(cosines[:n], dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    scaled = (values - low) / (high - low) if high - low > 1e-9 else np.ones(n)
    share = rules.symbol_dense if query_kind(query) == "symbol" else rules.contextual_dense
    rescored = []
    for hit, value in zip(hits[:n], scaled.tolist(), strict=True):
        parts = [p for p in hit.parts if p.name != "dense"]
        parts.insert(0, ScorePart(RESCORED_DENSE, share * value))
        rescored.append(replace(hit, parts=tuple(parts), score=sum(p.value for p in parts)))
    order = sorted(range(n), key=lambda i: -rescored[i].score)
    query_terms = frozenset(terms(query))
    ranked = files_first(
        [rescored[i] for i in order], lambda hit: hit.score, lambda hit: hit.chunk.file, rules
    ) + list(hits[n:])
    ranked = within_line_cap(
        ranked,
        lambda hit: hit.chunk.n_lines,
        lambda hit: _trimmed(hit, query_terms, rules.trim_lines),
        rules,
    )
    return [replace(hit, rank=position) for position, hit in enumerate(ranked, start=1)]


def _trimmed(hit: Hit, query_terms: frozenset[str], lines: int) -> Hit:
    """``hit`` showing only its ``lines`` lines that hold the most query words (the chunk
    that ranked stays its ``head``)."""
    shown = clip(hit.chunk, *matched_lines(hit.chunk, query_terms, lines))
    whole = hit.trimmed_from or (hit.chunk.start_line, hit.chunk.end_line)
    return replace(hit, chunk=shown, head=hit.head or hit.chunk, trimmed_from=whole)
