"""Steps 2-5 of the AST chunker (``nexus.chunking.ast``): pack pieces into chunks,
merge small ones into a neighbour, check each chunk's exact size, align cuts to lines.

Packing and merging stay inside units: a chunk never holds parts of two units of which
neither holds the other (``Group.admits``). Without that rule the small tail of a split
function joined the next function's chunk and was named after it (issue 41: flask's
``Config.from_file`` began with the loop that ends ``from_object``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.cuts import Span, Splitter, one_word_at_most, rstrip, starts_mid_line
from nexus.chunking.languages import LANGUAGES, LanguageSpec
from nexus.types import Unit

_WORDY = re.compile(rb"\w")

#: Whose code a piece is: ``(unit, whole)``, the whole of ``unit``, or a part of it
#: (a statement of its body, its ``}``, its leading comment placed apart); a part of
#: the top level has no unit.
Owner = tuple[Unit | None, bool]

#: A byte range that fits the budget: ``(start, end, unit, first, last, owner)``, where
#: ``unit`` says it is a boundary unit, ``first``/``last`` are the token positions
#: (``TokenIndex.position``) of its ends, so sizes of merges are differences, and
#: ``owner`` says whose code it is.
Piece = tuple[int, int, bool, int, int, Owner]


def _compatible(a: Owner, b: Owner) -> bool:
    """Whether two pieces may share a chunk: two whole units may (small units group),
    else one's unit must hold the other's (the top level holds every unit). So the
    tail of a split function never shares a chunk with the function after it."""
    (first, whole_first), (second, whole_second) = a, b
    if (whole_first and whole_second) or first is None or second is None:
        return True
    if first.start_byte <= second.start_byte and second.end_byte <= first.end_byte:
        return True
    return second.start_byte <= first.start_byte and first.end_byte <= second.end_byte


@dataclass(slots=True)
class Group:
    """A chunk being built: byte range, token positions, whether it is a unit of its own."""

    start: int
    end: int
    first: int
    last: int
    unit: bool  # holds a boundary unit: nothing is packed into it, units never dilute units
    owners: list[Owner]  # the owners of its pieces, each once

    @property
    def tokens(self) -> int:
        return self.last - self.first

    def admits(self, owners: list[Owner]) -> bool:
        """Whether pieces of ``owners`` may join: each is compatible with each of ours
        (a method's tail with its class's ``}``: yes; with the next method: no)."""
        return all(_compatible(a, b) for a in self.owners for b in owners)

    def take(self, owners: list[Owner]) -> None:
        self.owners.extend(owner for owner in owners if owner not in self.owners)


def _opens(data: bytes, start: int, end: int, spec: LanguageSpec) -> bool:
    """Whether the range opens what follows (``class A {``, a comment, a decorator)."""
    text = data[start:end]
    return text.rstrip().endswith(spec.opener_tails) or text.lstrip().startswith(spec.opener_heads)


def pack(pieces: list[Piece], max_tokens: int, min_tokens: int) -> list[Group]:
    """Step 2: boundary units alone, the other pieces packed greedily while they fit.

    Where a run of pieces overflows into a group under ``min_tokens``, pieces move
    back into it from the group before, so a split function ends in a real chunk,
    not in a leftover ``return x`` (the head of a split function joins its first
    statements: ``_open_body``; without this its tail was the fragment instead)."""
    groups: list[Group] = []
    members: list[list[Piece]] = []  # the pieces of each group
    for piece in pieces:
        start, end, is_unit, first, last, owner = piece
        if not is_unit and groups:
            previous = groups[-1]
            fits = last - previous.first <= max_tokens
            if not previous.unit and fits and previous.admits([owner]):
                previous.end, previous.last = end, last
                previous.take([owner])
                members[-1].append(piece)
                continue
        groups.append(Group(start, end, first, last, is_unit, [owner]))
        members.append([piece])
    for index in range(1, len(groups)):
        before, group = groups[index - 1], groups[index]
        if before.unit or group.unit:
            continue
        moved = members[index - 1]
        # Move whole pieces while the tail is small, the head stays big enough, the
        # tail still fits and the piece may join it.
        while (
            group.tokens < min_tokens
            and len(moved) > 1
            and moved[-1][3] - before.first >= min_tokens
            and group.last - moved[-1][3] <= max_tokens
            and group.admits([moved[-1][5]])
        ):
            piece = moved.pop()
            members[index].insert(0, piece)
            group.start, group.first = piece[0], piece[3]
            group.take([piece[5]])
            before.end, before.last = moved[-1][1], moved[-1][4]
            before.owners = []
            before.take([p[5] for p in moved])
    return groups


def merge_small(
    groups: list[Group], analysis: FileAnalysis, max_tokens: int, min_tokens: int
) -> list[Group]:
    """Step 3: chunks under ``min_tokens`` join a neighbour when the result fits."""
    data = analysis.data
    spec = LANGUAGES[analysis.language]

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
        # `}` joins what precedes
        return not group.unit and this_small and not _opens(data, group.start, group.end, spec)

    merged: list[Group] = []
    for group in groups:
        if merged:
            prev = merged[-1]
            fits = group.last - prev.first <= max_tokens
            if fits and prev.admits(group.owners) and should_join(prev, group):
                prev.end, prev.last, prev.unit = group.end, group.last, prev.unit or group.unit
                prev.take(group.owners)
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
    """The last guard against lone braces: a chunk of at most one word joins a neighbour
    when the exact count of the result fits. One that opens something (``{``, a banner
    comment of one word) joins the chunk after it; the comment never joins the chunk
    before (it would be a leading comment left behind) and else stays alone. Another
    (``}``, ``});``, ``return``) joins the chunk before it, else, if it holds a word,
    the one after it: a closer never does, as it would start the next unit's chunk with
    the end of this one.
    Failing both, the chunk before it is cut again together with it (the splitter
    never leaves a one-word tail)."""
    data = splitter.analysis.data
    spec = LANGUAGES[splitter.analysis.language]
    out = list(spans)
    index = 0
    while index < len(out):
        start, end, _ = out[index]
        if not one_word_at_most(data, start, end):
            index += 1
            continue
        after = out[index + 1][1] if index + 1 < len(out) else None
        forward = after is not None and splitter.exact(start, after) <= splitter.max_tokens
        before = out[index - 1][0] if index > 0 else None
        backward = before is not None and splitter.exact(before, end) <= splitter.max_tokens
        opens, word = _opens(data, start, end, spec), bool(_WORDY.search(data, start, end))
        if opens and word:  # a one-word comment: the leading comment of what follows
            backward = False
        elif not opens:
            forward = forward and word and not backward
        if forward:
            out[index : index + 2] = [(start, after, splitter.exact(start, after))]
        elif backward:
            out[index - 1 : index + 1] = [(before, end, splitter.exact(before, end))]
        elif before is not None and not (opens and word):
            pieces = splitter.split(before, end)
            out[index - 1 : index + 1] = pieces
            index = index - 1 + len(pieces)  # past the re-cut pieces: never loops
        else:
            index += 1
    return out


def align_to_lines(spans: list[Span], splitter: Splitter) -> list[Span]:
    """Step 5: a cut inside a line moves to the line's start or end, so that chunks
    do not share a line (issue 41: L6477-6512 then L6512-6524).

    The line goes with the chunk after the cut (``def f`` | ``(``, ``}`` | ``else {``,
    an opening quote | docstring), unless all that follows the cut on the line is punctuation
    (``,``, ``);``): that joins the chunk before. Either way both chunks must stay
    within the budget and hold more than one word; a cut no move can take stays
    inside its line, and its chunk says so (``Chunk.starts_mid_line``)."""
    data = splitter.analysis.data
    out = list(spans)
    for index in range(1, len(out)):
        start, end = out[index - 1][0], out[index][1]
        cut = out[index][0]
        if not starts_mid_line(data, cut):
            continue
        line_start = data.rfind(b"\n", 0, cut) + 1
        line_end = data.find(b"\n", cut)
        line_end = len(data) if line_end == -1 else line_end
        back = (rstrip(data, start, line_start), line_start)
        after = len(data) - len(data[line_end:].lstrip())  # the next code after the line
        forward = (rstrip(data, start, line_end), data.rfind(b"\n", 0, after) + 1)
        tail_is_punctuation = not _WORDY.search(data, cut, line_end)
        for head_end, tail_start in (forward, back) if tail_is_punctuation else (back, forward):
            head, tail = (start, head_end), (tail_start, end)
            if head_end <= start or tail_start >= end:
                continue
            if one_word_at_most(data, *head) or one_word_at_most(data, *tail):
                continue
            head_tokens, tail_tokens = splitter.exact(*head), splitter.exact(*tail)
            if max(head_tokens, tail_tokens) <= splitter.max_tokens:
                out[index - 1] = (*head, head_tokens)
                out[index] = (*tail, tail_tokens)
                break
    return out
