"""A search hit's preview: the lines of its chunk that match the query, else the unit's head.

The first lines of a chunk are often its imports, which say nothing about why it was
found. So the preview is the window of lines that holds the most of the query's words
(the same words the keyword index counts: ``lexical.terms``), with those lines marked;
when no line shares a word with the query (a purely semantic hit), it is the head of
the chunk's unit (its signature line on), past any import block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nexus.chunking.languages import import_line
from nexus.retrieval.lexical import terms
from nexus.types import Chunk

#: Lines in a preview: enough for a signature and a few lines of body.
PREVIEW_LINES = 10
#: Lines shown above the first matching line, when the window has room.
CONTEXT_LINES = 2
_OPENERS, _CLOSERS = "({[", ")}]"


@dataclass(frozen=True)
class Preview:
    """Lines ``start_line``.. of a file (1-based), and which of them match the query."""

    start_line: int
    lines: tuple[str, ...]
    marked: tuple[int, ...]  # file line numbers that share a word with the query
    matched: bool  # False: no line matches, the preview is the unit's head

    @property
    def end_line(self) -> int:
        return self.start_line + len(self.lines) - 1


def hit_preview(chunk: Chunk, query: str, size: int = PREVIEW_LINES) -> Preview:
    """The ``size`` lines of ``chunk`` that best show why it answers ``query``."""
    lines = chunk.text.split("\n")
    wanted = set(terms(query))
    found = [wanted & set(terms(line)) if wanted else set() for line in lines]
    if any(found):
        first = _best_window(found, size)
        matched = True
    else:
        first = _head(lines, chunk.symbol)
        matched = False
    shown = lines[first : first + size]
    marked = tuple(chunk.start_line + i for i in range(first, first + len(shown)) if found[i])
    return Preview(chunk.start_line + first, tuple(shown), marked, matched)


def whole_chunk(chunk: Chunk, query: str) -> Preview:
    """Every line of ``chunk``, numbered as in its file, those that share a word with
    ``query`` marked (a hit shown whole)."""
    wanted = set(terms(query))
    lines = chunk.text.split("\n")
    marked = tuple(
        chunk.start_line + i for i, line in enumerate(lines) if wanted & set(terms(line))
    )
    return Preview(chunk.start_line, tuple(lines), marked, bool(marked))


def _best_window(found: list[set[str]], size: int) -> int:
    """The first line of the window holding the most distinct query words, then the
    most matching lines; of the earliest such window, moved down to start
    ``CONTEXT_LINES`` above its first match (moving down loses no match)."""
    best, best_key = 0, (-1, -1)
    for first in range(max(len(found) - size, 0) + 1):
        window = found[first : first + size]
        key = (len(set().union(*window)), sum(1 for words in window if words))
        if key > best_key:
            best, best_key = first, key
    first_match = next(i for i in range(best, len(found)) if found[i])
    return min(max(best, first_match - CONTEXT_LINES), max(len(found) - size, 0))


def _head(lines: list[str], symbol: str | None) -> int:
    """The line where the unit ``symbol`` is defined, else the first past the imports
    (``import_line``: each language's spec says what its import lines look like)."""
    if symbol:
        name = re.compile(rf"\b{re.escape(symbol.rsplit('.', 1)[-1])}\b")
        for index, line in enumerate(lines):
            if name.search(line):
                return index
    index, depth, imports = 0, 0, import_line()
    while index < len(lines):
        line = lines[index]
        if depth == 0 and line.strip() and not imports.match(line):
            break
        # An import that spans lines (``import {``, ``from x import (``, Go's ``import (``).
        depth = max(
            depth + sum(line.count(c) for c in _OPENERS) - sum(line.count(c) for c in _CLOSERS), 0
        )
        index += 1
    return index if index < len(lines) else 0
