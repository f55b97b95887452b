"""Cutting a byte range that no node boundary can cut: at line starts, else at token
starts, into even pieces within the budget (the last resort of the AST chunker)."""

from __future__ import annotations

import re
from bisect import bisect_right

from nexus.chunking.analysis import FileAnalysis

Span = tuple[int, int, int]  # (start byte, end byte, exact tokens)
_WORD = re.compile(rb"\w+")


def starts_mid_line(data: bytes, start: int) -> bool:
    """Whether code precedes ``start`` on its line (the chunk before ends on it)."""
    line_start = data.rfind(b"\n", 0, start) + 1
    return bool(data[line_start:start].strip())


def one_word_at_most(data: bytes, start: int, end: int) -> bool:
    """True for ``}``, ``});``, ``export``: text no chunk should consist of."""
    first = _WORD.search(data, start, end)
    return first is None or _WORD.search(data, first.end(), end) is None


def char_boundary(data: bytes, offset: int) -> int:
    """Move ``offset`` back to the start of a UTF-8 character."""
    while 0 < offset < len(data) and (data[offset] & 0xC0) == 0x80:
        offset -= 1
    return offset


class Splitter:
    """Cuts ranges that no node boundary can cut: at line starts, else at token starts."""

    def __init__(self, analysis: FileAnalysis, max_tokens: int) -> None:
        self.analysis = analysis
        self.max_tokens = max_tokens

    def exact(self, start: int, end: int) -> int:
        return self.analysis.tokens.exact(self.analysis.data, start, end)

    def _cut(self, start: int, end: int) -> int:
        """A cut point in (start, end): the last line start that keeps the head within
        an even share of the range (no 500 + 12 split of a range just over budget)
        and does not leave a lone brace or keyword behind; else a token start.

        Candidates are found by bisection, not line by line: a head of ``n`` tokens
        or fewer ends at or before the start of token ``base + n``."""
        tokens = self.analysis.tokens
        line_starts = self.analysis.line_starts
        data = self.analysis.data
        base = tokens.position(start)
        total = tokens.position(end) - base
        share = -(-total // max(2, -(-total // self.max_tokens)))  # ceil(total / pieces)

        def last_line_within(count: int) -> int:
            """Index past the last line start in ``(start, end)`` whose head holds at
            most ``count`` tokens."""
            limit = end - 1
            if base + count < len(tokens.starts):
                limit = min(limit, tokens.starts[base + count])
            return bisect_right(line_starts, limit)

        # Line starts that keep the head within the budget and leave text before them.
        piece = data[start:end]
        first = bisect_right(line_starts, start + len(piece) - len(piece.lstrip()))
        fitting = line_starts[first : max(first, last_line_within(self.max_tokens))]
        balanced = max(0, last_line_within(share) - first)
        preferred = fitting[:balanced] or fitting
        for candidate in reversed(preferred):
            if not one_word_at_most(data, candidate, end):
                return candidate
        if preferred:
            return preferred[-1]
        points = tokens.split_points(start, end, max(1, self.max_tokens - 2))
        cut = char_boundary(data, points[0]) if points else start
        if cut <= start:
            cut = char_boundary(data, start + max(1, (end - start) // 2))
        return cut if cut > start else end

    def split(self, start: int, end: int) -> list[Span]:
        """Pieces ``(start, end, exact tokens)`` of ``[start, end)``, trailing blanks
        trimmed, each at most ``max_tokens`` when encoded alone."""
        pieces: list[Span] = []
        data = self.analysis.data
        work = [(start, end)]
        while work:
            a, b = work.pop()
            b = rstrip(data, a, b)
            if b <= a:
                continue
            if self.analysis.tokens.estimate(a, b) <= 2 * self.max_tokens:
                exact = self.exact(a, b)
                if exact <= self.max_tokens:
                    pieces.append((a, b, exact))
                    continue
            cut = self._cut(a, b)
            if cut >= b:  # one character over budget alone; cannot happen with UTF-8 BPE
                pieces.append((a, b, self.exact(a, b)))
                continue
            work.append((cut, b))
            work.append((a, cut))
        return pieces


def rstrip(data: bytes, start: int, end: int) -> int:
    while end > start and data[end - 1 : end].isspace():
        end -= 1
    return end
