"""The Search page's answers, through the front door (``nexus.workspace.Workspace``).

The page builds its indexes in the background (``indexing.index_build``, so that it
answers while they grow); each answer is then asked of a ``Workspace`` over the build's
index (``Workspace.adopt``): the hits, ranked by the ranking stage, and what of them
a token budget reads come from ``Workspace.search``, the call the CLI and the MCP
server make, so the three give the same hits for the same settings. Only a complete
index answers by embeddings: while a build runs, the answer is the keyword hits over
every chunk made so far, through the same ranking stage (``IndexBuild.keyword_hits``
with the rules a dense search uses), never a ranking of the chunks embedded so far.

No streamlit here: the page draws what these return.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from nexus.config import ChunkConfig
from nexus.evaluation.metrics import QueryOutcome, final_scores, score_query
from nexus.evaluation.query_sets import Target
from nexus.ingest.sources import Repository
from nexus.retrieval.budget import READ_DEPTH, read_within
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.ranking import rules_for
from nexus.runtime.builds import IndexBuild
from nexus.ui.scores import score_figure
from nexus.workspace import Freshness, SearchAnswer, Settings, Workspace


@dataclass(frozen=True)
class DenseAnswer:
    """One index's answer as the page draws it."""

    answer: SearchAnswer  # the hits and what of them the budget reads (Workspace.search)
    outcome: QueryOutcome  # the target's rank, score and margin, over the ranked candidates
    scores: np.ndarray  # every chunk's final score in key order (NaN: not ranked)
    figure: go.Figure  # the chart of those scores


def workspace_over(
    repo: Repository,
    config: ChunkConfig,
    strategy: str,
    index: VectorIndex,
    build: IndexBuild,
    tier: str,
) -> Workspace:
    """A workspace answering ``strategy`` from ``index`` (a finished build's) with the
    build's model and cache (``IndexBuild.query_embedder``) as ``tier``: with the fast
    tier, ``Workspace.search`` has its best hits scored again by MiniLM."""
    settings = Settings(config=config, tier=tier)
    workspace = Workspace(repo, settings, build.query_embedder)
    workspace.adopt(strategy, index)
    return workspace


def dense_answer(
    repo: Repository,
    config: ChunkConfig,
    strategy: str,
    build: IndexBuild,
    index: VectorIndex,
    query: str,
    k: int,
    budget: int | None,
    target: Target | None,
    tier: str,
) -> DenseAnswer:
    """``query``'s answer from ``index`` (``build``'s finished ``strategy`` index of
    ``tier``; ``budget`` None or 0: none), asked of a workspace over it, with the
    target's outcome and the chart of every chunk's final score."""
    workspace = workspace_over(repo, config, strategy, index, build, tier)
    answer = workspace.search(query, k, strategy=strategy, budget_tokens=budget or None)
    vector = workspace.query_vectors([query])[0]  # embedded once, by the search
    outcome = score_query(
        index,
        vector,
        target,
        k,
        text=query,
        lexical_weight=config.lexical_weight,
        ranking=rules_for(config),
        keep_ranked=True,
    )
    scores = final_scores(index, outcome, vector, query, config.lexical_weight)
    figure = score_figure(index, scores, outcome, target, k, config)
    return DenseAnswer(answer, outcome, scores, figure)


def keyword_answer(
    build: IndexBuild,
    config: ChunkConfig,
    strategy: str,
    query: str,
    k: int,
    budget: int | None,
    tier: str,
) -> SearchAnswer:
    """Keyword (BM25) hits over every chunk the build has made so far, through the
    ranking stage with no dense score yet (an answer before the vectors or the model)."""
    depth = max(k, READ_DEPTH) if budget else k  # a budget reads as deep as it lasts
    hits = tuple(build.keyword_hits(query, depth, rules_for(config)))
    reads = tuple(read_within([hit.chunk for hit in hits], budget or None, config.encoding))
    hits = hits[: len(reads)] if budget else hits
    model = build.embedder.name
    return SearchAnswer(query, strategy, hits, reads, budget or None, tier, model, Freshness())
