"""Reading hits within a context budget: what a reader gets for B tokens.

A RAG prompt or an agent reads results in rank order until its budget of tokens is
spent, so a result is worth what it answers *per token*. ``read_within`` is that
reader: it takes hits in order, keeps each whole while it fits, cuts the hit that
crosses the budget at the last line boundary that fits, and stops. Search
(``nexus search --budget``, the Search page, MCP) returns exactly these reads, and the
budget metrics (``nexus.evaluation.budget``) score them, so what a team measures is what
its reader gets.

Tokens are counted per line (``line + "\\n"``, the line break included, with the
encoding of the index's chunking settings), so a cut always falls on a line boundary
and the tokens of a read are the sum of its lines: the sum never exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from nexus.chunking.tokens import count_tokens
from nexus.config import DEFAULT_ENCODING
from nexus.types import Chunk

#: Hits ranked for a budget: it is read as deep as it lasts, not only through the top k
#: (ten 15-line hits spend 1,500 tokens; a reader with 4,000 goes on to the eleventh), and
#: 50 of the smallest chunks (~190 tokens each) still outlast the largest default, 4,000.
READ_DEPTH = 50


@dataclass(frozen=True)
class Read:
    """The part of one hit a reader reads: lines ``start_line``..``end_line`` of ``file``
    (1-based, inclusive), ``tokens`` tokens; ``cut`` when the budget ended inside it."""

    rank: int
    file: str
    start_line: int
    end_line: int
    tokens: int
    text: str
    cut: bool = False

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1


#: Lines whose token counts are kept: an evaluation reads the same source lines in the
#: top hits of many queries and settings (4 budgets x 10 hits a query), so counting
#: each line once cut a sweep's budget scoring about fourfold.
LINE_MEMO = 200_000


@lru_cache(maxsize=LINE_MEMO)
def _count(line: str, encoding: str) -> int:
    return count_tokens(line, encoding)


def line_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> list[int]:
    """Tokens of each line of ``text``, its line break included (the last line's only
    if the text ends with one)."""
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
        return [_count(line + "\n", encoding) for line in lines]
    return [_count(line + "\n", encoding) for line in lines[:-1]] + [_count(lines[-1], encoding)]


def read_within(
    chunks: Sequence[Chunk], budget: int | None, encoding: str = DEFAULT_ENCODING
) -> list[Read]:
    """The reads of ``chunks`` (in rank order) within ``budget`` tokens.

    Whole hits while they fit; the hit that crosses the budget is cut after its last
    line that still fits (left out if not even its first line fits); nothing after it.
    ``budget=None`` reads every hit whole.
    """
    if budget is not None and budget < 0:
        raise ValueError(f"a token budget must be 0 or more, got {budget}")
    reads: list[Read] = []
    left = budget
    for rank, chunk in enumerate(chunks, start=1):
        counts = line_tokens(chunk.text, encoding)
        total = sum(counts)
        if left is None or total <= left:
            reads.append(_read(rank, chunk, len(counts), total, cut=False))
            if left is not None:
                left -= total
            continue
        kept, spent = 0, 0
        for count in counts:
            if spent + count > left:
                break
            kept, spent = kept + 1, spent + count
        if kept:
            reads.append(_read(rank, chunk, kept, spent, cut=True))
        break
    return reads


def _read(rank: int, chunk: Chunk, lines: int, tokens: int, cut: bool) -> Read:
    # A line of text per line of the range: a hit that ends its file keeps the file's
    # final line break in its text, which is no line of its own.
    text = chunk.text.removesuffix("\n")
    if cut:
        text = "\n".join(chunk.text.split("\n")[:lines])
    return Read(
        rank=rank,
        file=chunk.file,
        start_line=chunk.start_line,
        end_line=chunk.start_line + lines - 1,
        tokens=tokens,
        text=text,
        cut=cut,
    )


def tokens_used(reads: Sequence[Read]) -> int:
    return sum(read.tokens for read in reads)
