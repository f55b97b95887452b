"""Answering questions from a workspace's open indexes, and re-scoring the fast tier's.

A search embeds its queries once per workspace, asks the open index (saved index plus
overlay), scores the fast tier's best hits again with MiniLM's vectors when they are computed
(``nexus.retrieval.rescore``, ``nexus.runtime.rescorer``), and reads the hits within a
token budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from nexus.retrieval.budget import READ_DEPTH, read_within
from nexus.retrieval.embedding import CachedEmbedder, ModelUnavailableError
from nexus.retrieval.ranking import RankingRules, rules_for
from nexus.retrieval.rescore import RESCORE_DEPTH, RESCORE_PENDING, RESCORED, rescore
from nexus.retrieval.search import Hit
from nexus.runtime.rescorer import Rescorer
from nexus.types import Chunk
from nexus.workspace.answers import SearchAnswer, Status, check_budget
from nexus.workspace.building import Building
from nexus.workspace.overlay import LiveIndex
from nexus.workspace.settings import is_static

#: Query vectors a workspace keeps (a few hundred KB).
QUERY_VECTORS_KEPT = 512


class Answering(Building):
    """The answers of a ``Workspace`` (whose ``__init__`` sets this state)."""

    _queries: dict[str, np.ndarray]  # query -> vector, oldest first
    _rescorers: dict[str, Rescorer]  # strategy -> its MiniLM vectors

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        strategy: str | None = None,
        budget_tokens: int | None = None,
        explain: bool = True,
    ) -> SearchAnswer:
        """The ``k`` best hits for ``query``, read within ``budget_tokens`` if given
        (hits in rank order, the crossing one cut at a line boundary); ``explain=False``
        drops the parts of each score."""
        return self.search_many(
            [query], k, strategy=strategy, budgets=[budget_tokens], explain=explain
        )[0]

    def search_many(
        self,
        queries: Sequence[str],
        k: int = 10,
        *,
        strategy: str | None = None,
        budgets: Sequence[int | None] | None = None,
        explain: bool = True,
    ) -> list[SearchAnswer]:
        """``search`` for several queries, embedded in one call (the model loads once)."""
        budgets = list(budgets) if budgets is not None else [None] * len(queries)
        if len(budgets) != len(queries):
            raise ValueError(f"{len(queries)} queries but {len(budgets)} budgets")
        if any(not isinstance(q, str) or not q.strip() for q in queries):
            raise ValueError("a query must be a non-empty string")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        for budget in budgets:
            check_budget(budget)
        with self._answer():
            strategy, live = self._index_of(strategy)
            vectors = self.query_vectors(queries)
            rules = rules_for(self.config)
            answers = []
            rescorer = self._rescorer(strategy, live) if rules is not None else None
            rescore_state = rescorer.state() if rescorer is not None else ""
            if rescorer is not None and rescore_state == RESCORED:
                rescorer.prefetch(queries)  # embedded while the fast tier ranks
            for query, vector, budget in zip(queries, vectors, budgets, strict=True):
                # A budget is read as deep as it lasts: its hits are the ones it reads.
                depth = k if budget is None else max(k, READ_DEPTH)
                asked = max(depth, RESCORE_DEPTH) if rescorer is not None else depth
                hits = live.search(vector, query, asked, self.config.lexical_weight, rules)
                rescored_by, state = "", rescore_state
                if rescorer is not None and rules is not None and state == RESCORED:
                    hits, rescored_by, state = self._rescored(rescorer, live, hits, query, rules)
                hits = hits[:depth]
                if not explain:
                    hits = [replace(hit, parts=()) for hit in hits]
                reads = read_within([hit.chunk for hit in hits], budget, self.config.encoding)
                hits = hits[: len(reads)] if budget is not None else hits
                answers.append(
                    SearchAnswer(
                        query,
                        strategy,
                        tuple(hits),
                        tuple(reads),
                        budget,
                        self.settings.tier,
                        self.embedder.name,
                        self._fresh,
                        rescored_by,
                        state,
                    )
                )
            return answers

    def _rescorer(self, strategy: str, live: LiveIndex) -> Rescorer | None:
        """What scores the fast tier's best hits again for ``strategy`` (its background job
        started on first use); None when this workspace answers with another model or is
        told not to."""
        folder = self._folders[strategy]
        if not (self.settings.rescore and is_static(self.embedder)) or not folder.name:
            return None  # (an index adopted without a folder has no place for the vectors)
        if strategy not in self._rescorers:
            self._rescorers[strategy] = Rescorer(
                folder,
                len(live.base),
                self.settings.cache_folder,
                self.settings.cache_max_bytes,
                self.config.words_view,
            )
        return self._rescorers[strategy]

    def wait_for_rescore(self, strategy: str | None = None) -> str:
        """Wait until MiniLM's vectors of ``strategy``'s index are computed (once, in the
        background job), for a caller that wants the re-scored order rather than the first
        answer soon (``nexus eval``, ``nexus index``); the state later answers will have
        (``SearchAnswer.rescore``), "" when re-scoring is off."""
        strategy, live = self._index_of(strategy)
        rescorer = self._rescorer(strategy, live) if rules_for(self.config) else None
        if rescorer is None:
            return ""
        self.wait_for_saves()  # the job reads the saved index
        return rescorer.wait()

    def _rescored(
        self, rescorer: Rescorer, live: LiveIndex, hits: list[Hit], query: str, rules: RankingRules
    ) -> tuple[list[Hit], str, str]:
        """``hits`` with the best ``RESCORE_DEPTH`` scored again (``rescore``), the model
        that did it and ``RESCORED``; as they were, "" and why not when a hit has no
        MiniLM vector yet (an edited file's) or the query model cannot be loaded."""
        try:
            cosines = rescorer.cosines(query, hits[:RESCORE_DEPTH], frozenset(live.changed))
        except ModelUnavailableError as exc:
            return hits, "", f"not re-scored: {exc}"
        if not cosines:
            return hits, "", RESCORE_PENDING
        return rescore(hits, cosines, query, rules), rescorer.name, RESCORED

    def query_vectors(self, queries: Sequence[str]) -> list[np.ndarray]:
        """The queries' vectors, embedded once per workspace (a query asked of both
        strategies, or asked again by an agent, is not embedded twice)."""
        missing = list(dict.fromkeys(q for q in queries if q not in self._queries))
        if missing:
            # The fast tier embeds a query in well under a millisecond: cheaper than the
            # cache's write (tens of ms), so its queries skip the cache (whichever face
            # asks: the cache's float16 would move the scores in the fourth decimal).
            fast = isinstance(self.embedder, CachedEmbedder) and is_static(self.embedder.inner)
            embedder = self.embedder.inner if fast else self.embedder
            self._queries.update(zip(missing, embedder.encode(missing), strict=True))
            while len(self._queries) > QUERY_VECTORS_KEPT:
                del self._queries[next(iter(self._queries))]
        return [self._queries[q] for q in queries]

    def chunks(self, file: str, *, strategy: str | None = None) -> list[Chunk]:
        """The chunks of one file, in line order (KeyError-free: [] for a file without)."""
        with self._answer():
            return self._index_of(strategy)[1].chunks_of(file)

    def related(
        self, file: str, line: int, k: int = 5, *, strategy: str | None = None
    ) -> tuple[Chunk, list[Hit]]:
        """The chunk at ``file``:``line`` and the ``k`` chunks most like it (by cosine)."""
        with self._answer():
            live = self._index_of(strategy)[1]
            chunk = live.chunk_at(file, line)
            if chunk is None:
                raise ValueError(f"no chunk of {file!r} holds line {line}")
            return chunk, live.nearest(chunk, k)

    def status(self) -> Status:
        """Files, chunks, the share embedded (1.0 once an index is open), which tier."""
        strategies = tuple(self._live)
        chunks = sum(len(live) for live in self._live.values())
        return Status(
            repo=self.repo.name,
            root=str(self.root or ""),
            files=len(self.repo.chunkable_files()),
            chunks=chunks,
            embedded=1.0 if strategies else 0.0,
            tier=self.settings.tier,
            model=self.embedder.name,
            strategies=strategies,
            folders=tuple(str(self._folders[s]) for s in strategies),
            fresh=self._fresh,
        )
