"""What the front door (``nexus.workspace``) hands back: answers, status, freshness.

Plain frozen data, so every face (the CLI, the MCP server, a page, a script) formats
the same answer its own way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from nexus.retrieval.budget import Read
from nexus.retrieval.ranking import explain
from nexus.retrieval.search import Hit


@dataclass(frozen=True)
class Freshness:
    """How current the answers are: when the files were last compared with the disk
    (``time.time()``; 0: not since the index was opened), how many files were indexed
    again since, and how long the last comparison took."""

    checked: float = 0.0
    changed_files: int = 0
    seconds: float = 0.0

    def describe(self) -> str:
        if not self.checked:
            return "as indexed (not checked against the disk since)"
        when = time.strftime("%H:%M:%S", time.localtime(self.checked))
        said = f"files checked at {when} ({self.seconds * 1000:.0f} ms)"
        if self.changed_files:
            said += f"; {self.changed_files} changed file(s) indexed again since opened"
        return said


@dataclass(frozen=True)
class SearchAnswer:
    """One query's answer: the ranked hits, what of them fits the token budget (every
    hit whole without one), and which tier and index answered."""

    query: str
    strategy: str
    hits: tuple[Hit, ...]
    reads: tuple[Read, ...]
    budget: int | None
    tier: str
    model: str
    fresh: Freshness
    #: The model that scored the fast tier's best hits again (``nexus.retrieval.rescore``;
    #: "" when none did).
    rescored_by: str = ""
    #: Whether they were (``nexus.retrieval.rescore``): ``RESCORED``, ``RESCORE_PENDING``
    #: while MiniLM's vectors of the chunks are computed in the background, "not
    #: re-scored: " and why, or "" when re-scoring is off (``--no-rescore``, the quality
    #: tier, no ranking stage).
    rescore: str = ""

    @property
    def tokens_used(self) -> int:
        return sum(read.tokens for read in self.reads)

    @staticmethod
    def why(hit: Hit) -> str:
        """The one-line reason a hit ranks where it does (empty without the ranking stage)."""
        return explain(hit.parts) if hit.parts else ""


@dataclass(frozen=True)
class Status:
    """What a workspace holds: files, chunks, the share embedded, which tier answers."""

    repo: str
    root: str
    files: int
    chunks: int
    embedded: float
    tier: str
    model: str
    strategies: tuple[str, ...]
    folders: tuple[str, ...]
    fresh: Freshness

    def to_dict(self) -> dict[str, object]:
        out = {k: v for k, v in vars(self).items() if k != "fresh"}
        return out | {"fresh": self.fresh.describe()}


def check_budget(budget: int | None) -> None:
    """A token budget is None (no budget) or a whole number of at least 1."""
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
        raise ValueError(f"a token budget must be a whole number, got {budget!r}")
    if budget is not None and budget < 1:
        raise ValueError(f"a token budget must be at least 1 token, got {budget}")
