"""Steps 2-4 of the AST chunker (``nexus.chunking.ast``): pack pieces into chunks,
merge small ones into a neighbour, then check each chunk's exact size."""

from __future__ import annotations

from dataclasses import dataclass

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.cuts import Span, Splitter, one_word_at_most, rstrip
from nexus.chunking.languages import LANGUAGES

#: A byte range that fits the budget: ``(start, end, unit, first, last)``, where
#: ``unit`` says it is a boundary unit and ``first``/``last`` are the token positions
#: (``TokenIndex.position``) of its ends, so sizes of merges are differences.
Piece = tuple[int, int, bool, int, int]


@dataclass(slots=True)
class Group:
    """A chunk being built: byte range, token positions, whether it is a unit of its own."""

    start: int
    end: int
    first: int
    last: int
    unit: bool  # holds a boundary unit: nothing is packed into it, units never dilute units

    @property
    def tokens(self) -> int:
        return self.last - self.first


def pack(pieces: list[Piece], max_tokens: int, min_tokens: int) -> list[Group]:
    """Step 2: boundary units alone, the other pieces packed greedily while they fit.

    Where a run of pieces overflows into a group under ``min_tokens``, pieces move
    back into it from the group before, so a split function ends in a real chunk,
    not in a leftover ``return x`` (the head of a split function joins its first
    statements: ``_open_body``; without this its tail was the fragment instead)."""
    groups: list[Group] = []
    members: list[list[Piece]] = []  # the pieces of each group
    for piece in pieces:
        start, end, is_unit, first, last = piece
        if not is_unit and groups:
            previous = groups[-1]
            if not previous.unit and last - previous.first <= max_tokens:
                previous.end, previous.last = end, last
                members[-1].append(piece)
                continue
        groups.append(Group(start, end, first, last, is_unit))
        members.append([piece])
    for index in range(1, len(groups)):
        before, group = groups[index - 1], groups[index]
        if before.unit or group.unit:
            continue
        moved = members[index - 1]
        # Move whole pieces while the tail is small, the head stays big enough and the
        # tail still fits.
        while (
            group.tokens < min_tokens
            and len(moved) > 1
            and moved[-1][3] - before.first >= min_tokens
            and group.last - moved[-1][3] <= max_tokens
        ):
            piece = moved.pop()
            members[index].insert(0, piece)
            group.start, group.first = piece[0], piece[3]
            before.end, before.last = moved[-1][1], moved[-1][4]
    return groups


def merge_small(
    groups: list[Group], analysis: FileAnalysis, max_tokens: int, min_tokens: int
) -> list[Group]:
    """Step 3: chunks under ``min_tokens`` join a neighbour when the result fits."""
    data = analysis.data
    spec = LANGUAGES[analysis.language]

    def opens(group: Group) -> bool:
        tail = data[group.start : group.end].rstrip()
        head = data[group.start : group.end].lstrip()
        return tail.endswith(spec.opener_tails) or head.startswith(spec.opener_heads)

    def small(group: Group) -> bool:
        if group.tokens < min_tokens:
            return True
        # A lone brace or keyword is never a chunk, whatever min_tokens says.
        return not group.unit and one_word_at_most(data, group.start, group.end)

    def should_join(prev: Group, group: Group) -> bool:
        prev_small, this_small = small(prev), small(group)
        if prev.unit and group.unit:  # tiny units group together, never into a big one
            return spec.groups_small_units and prev_small and this_small
        if not prev.unit and prev_small:
            return True  # a header, import block or comment joins what follows
        return not group.unit and this_small and not opens(group)  # `}` joins what precedes

    merged: list[Group] = []
    for group in groups:
        if merged:
            prev = merged[-1]
            if group.last - prev.first <= max_tokens and should_join(prev, group):
                merged[-1] = Group(
                    prev.start, group.end, prev.first, group.last, prev.unit or group.unit
                )
                continue
        merged.append(group)
    return merged


def tidy(groups: list[Group], analysis: FileAnalysis, splitter: Splitter) -> list[Span]:
    """Step 4: indentation in, trailing blanks out, exact sizes checked (and cut again)."""
    data = analysis.data
    spans: list[Span] = []
    previous_end = 0
    for group in groups:
        start, end = group.start, group.end
        line_start = analysis.line_starts[analysis.line_of(start) - 1]
        if line_start >= previous_end and not data[line_start:start].strip():
            start = line_start
        end = rstrip(data, start, end)
        if end <= start:
            continue
        exact = splitter.exact(start, end)
        if exact <= splitter.max_tokens:
            spans.append((start, end, exact))
        else:
            spans.extend(splitter.split(start, end))
        previous_end = spans[-1][1] if spans else previous_end
    return spans


def absorb_trivial(spans: list[Span], splitter: Splitter) -> list[Span]:
    """The last guard against lone braces: a chunk of at most one word (``}``, ``});``,
    ``export``) joins the chunk before it, else the one after it, when the exact count
    of the result fits; failing both, the chunk before it is cut again together with it
    (the splitter never leaves a one-word tail)."""
    data = splitter.analysis.data
    out = list(spans)
    index = 0
    while index < len(out):
        start, end, _ = out[index]
        if not one_word_at_most(data, start, end):
            index += 1
            continue
        if index > 0 and splitter.exact(out[index - 1][0], end) <= splitter.max_tokens:
            out[index - 1 : index + 1] = [
                (out[index - 1][0], end, splitter.exact(out[index - 1][0], end))
            ]
        elif (
            index + 1 < len(out) and splitter.exact(start, out[index + 1][1]) <= splitter.max_tokens
        ):
            out[index : index + 2] = [
                (start, out[index + 1][1], splitter.exact(start, out[index + 1][1]))
            ]
        elif index > 0:
            pieces = splitter.split(out[index - 1][0], end)
            out[index - 1 : index + 1] = pieces
            index = index - 1 + len(pieces)  # past the re-cut pieces: never loops
        else:
            index += 1
    return out
