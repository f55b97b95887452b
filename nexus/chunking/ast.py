"""Recursive AST chunking under an exact token budget.

One module past 400 lines on purpose: the four steps below share the ``_Splitter``
(sizes and cuts) and the piece and group tuples, and read in order as one algorithm.

The algorithm (after cAST, without its recursion and its dropped leaves):

1. **Expand**: walk the top-level nodes; a node whose estimated size is over the
   budget is replaced by its children (class -> members -> blocks -> statements),
   with an explicit stack, so 5,000-deep nesting is fine. A node without children
   that is still too big (a long string, a comment block) is cut at line starts
   into even pieces, and a single line over the budget at token starts. Comments,
   decorators and TypeScript overload signatures ride with the node they precede;
   a comment on the same line as the end of a node rides with that node. Each
   visited node is classified on the way down (``FileAnalysis.unit_at``); nodes
   inside a piece that fits are never looked at.
2. **Pack**: pieces that are units of the profile start their own chunk; the rest
   are packed greedily while they fit.
3. **Merge small**: fragments under ``min_tokens`` join a neighbour when the result
   fits, forward when they open something (``class A {``), else backward; units
   under ``min_tokens`` group with adjacent small units, never with a large one
   (diluting a unit with another hurts retrieval: measured in bench/retrieval.py);
   in Python they never group (``LanguageSpec.groups_small_units``).
4. **Check**: each chunk's exact count (its edge lines encoded, see ``TokenIndex``);
   one over the budget (a token or two of edge effect) is cut again, evenly. No
   chunk exceeds ``max_tokens``.

Sizes during 1-3 come from one tokenization of the whole file (``TokenIndex``),
so the cost stays close to a single encode (bench/chunking.py: 1.44x parse + encode,
chunk records included).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

import tree_sitter

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.languages import LANGUAGES, LanguageSpec
from nexus.chunking.profiles import DECLARATION_KINDS, FUNCTION_KINDS, MEMBER_KINDS, Profile
from nexus.chunking.recovery import stretch
from nexus.types import Unit

Span = tuple[int, int, int]  # (start byte, end byte, exact tokens)
_WORD = re.compile(rb"\w+")


def _one_word_at_most(data: bytes, start: int, end: int) -> bool:
    """True for ``}``, ``});``, ``export``: text no chunk should consist of."""
    first = _WORD.search(data, start, end)
    return first is None or _WORD.search(data, first.end(), end) is None


#: Units whose head (signature) must not be left alone when their body is split.
CALLABLE_KINDS = FUNCTION_KINDS | MEMBER_KINDS

#: A byte range to place: ``(start, end, node, enclosing, depth)``, with the node it
#: came from (None for loose comments), the innermost unit around it and how many
#: units are around it. (A tuple: thousands are made per file.)
_Item = tuple[int, int, "tree_sitter.Node | None", "Unit | None", int]


class AstLayout(NamedTuple):
    """One file's AST chunks as ranges, and the units the chunker met placing them."""

    spans: list[Span]
    units: list[Unit]  # in source order (start, then outer first)


#: A byte range that fits the budget: ``(start, end, unit, first, last)``, where
#: ``unit`` says it is a boundary unit and ``first``/``last`` are the token positions
#: (``TokenIndex.position``) of its ends, so sizes of merges are differences.
_Piece = tuple[int, int, bool, int, int]


@dataclass(slots=True)
class _Group:
    """A chunk being built: byte range, token positions, whether it is a unit of its own."""

    start: int
    end: int
    first: int
    last: int
    unit: bool  # holds a boundary unit: nothing is packed into it, units never dilute units

    @property
    def tokens(self) -> int:
        return self.last - self.first


def _declaration(node: tree_sitter.Node) -> tree_sitter.Node:
    """The declaration an ``export`` statement holds, or the node itself."""
    if node.type == "export_statement":
        return node.child_by_field_name("declaration") or node
    return node


def _overloads(children: list[tree_sitter.Node], spec: LanguageSpec) -> set[int]:
    """Indexes of overload signatures directly before the implementation of the same
    name: the group is one unit (an overload set alone had no symbol, and its
    implementation was a fragment of a few tokens)."""
    signatures, exports = spec.signature_kinds, spec.export_kinds
    declared = [  # the kind of each child, looking through `export`
        _declaration(child).type if child.type in exports else child.type for child in children
    ]
    if not any(kind in signatures for kind in declared):
        return set()
    implementations = spec.function_kinds | spec.method_kinds
    riders = spec.comment_kinds | spec.decorator_kinds
    found: set[int] = set()
    following: bytes | None = None  # name of the implementation below, if any
    for index in range(len(children) - 1, -1, -1):
        kind = declared[index]
        if kind in riders:
            continue
        named = kind in signatures or kind in implementations
        name_node = _declaration(children[index]).child_by_field_name("name") if named else None
        name = name_node.text if name_node is not None else None
        if kind in signatures:
            if name is not None and name == following:
                found.add(index)
            else:
                following = None
        else:
            following = name if kind in implementations else None
    return found


def _items(
    children: list[tree_sitter.Node], analysis: FileAnalysis, enclosing: Unit | None, depth: int
) -> list[_Item]:
    """Sibling nodes as items; comments, decorators and overload signatures attached
    to the node they precede."""
    spec = LANGUAGES[analysis.language]
    data = analysis.data
    comments, riders = spec.comment_kinds, spec.rider_kinds
    overloads = _overloads(children, spec) if spec.signature_kinds else ()
    items: list[_Item] = []
    lead: int | None = None
    last_end = -1  # end of the previous sibling
    for index, child in enumerate(children):
        kind, end = child.type, child.end_byte
        if kind in riders:
            if lead is None:
                trailing = items and kind in comments
                if trailing and data.find(b"\n", last_end, child.start_byte) == -1:
                    previous = items[-1]  # `foo(); // why` stays with foo()
                    items[-1] = (previous[0], end, previous[2], enclosing, depth)
                else:
                    lead = child.start_byte
        elif index in overloads:
            lead = child.start_byte if lead is None else lead
        else:
            start = child.start_byte if lead is None else lead
            items.append((start, end, child, enclosing, depth))
            lead = None
        last_end = end
    if lead is not None:
        items.append((lead, children[-1].end_byte, None, enclosing, depth))
    return items


def _char_boundary(data: bytes, offset: int) -> int:
    """Move ``offset`` back to the start of a UTF-8 character."""
    while 0 < offset < len(data) and (data[offset] & 0xC0) == 0x80:
        offset -= 1
    return offset


class _Splitter:
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
            if not _one_word_at_most(data, candidate, end):
                return candidate
        if preferred:
            return preferred[-1]
        points = tokens.split_points(start, end, max(1, self.max_tokens - 2))
        cut = _char_boundary(data, points[0]) if points else start
        if cut <= start:
            cut = _char_boundary(data, start + max(1, (end - start) // 2))
        return cut if cut > start else end

    def split(self, start: int, end: int) -> list[Span]:
        """Pieces ``(start, end, exact tokens)`` of ``[start, end)``, trailing blanks
        trimmed, each at most ``max_tokens`` when encoded alone."""
        pieces: list[Span] = []
        data = self.analysis.data
        work = [(start, end)]
        while work:
            a, b = work.pop()
            b = _rstrip(data, a, b)
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


def ast_spans(
    analysis: FileAnalysis, max_tokens: int, min_tokens: int, profile: Profile
) -> AstLayout:
    """``(start_byte, end_byte, exact tokens)`` of one file's AST chunks, in order,
    each within ``max_tokens``, and the units met on the way."""
    if not analysis.data.strip():
        return AstLayout([], [])
    splitter = _Splitter(analysis, max_tokens)
    pieces, units = _expand(analysis, profile, splitter, min_tokens)
    groups = _merge_small(_pack(pieces, max_tokens, min_tokens), analysis, max_tokens, min_tokens)
    spans = _absorb_trivial(_tidy(groups, analysis, splitter), splitter)
    return AstLayout(spans, stretch(units, analysis.data, analysis.error_ranges))


def _expand(
    analysis: FileAnalysis, profile: Profile, splitter: _Splitter, min_tokens: int
) -> tuple[list[_Piece], list[Unit]]:
    """Step 1: top-level nodes, oversized ones replaced by their children until all fit;
    and every unit met (placed whole or opened), in source order.

    Only visited nodes are classified (``FileAnalysis.unit_at``), top-down: the
    enclosing unit of a node is the last unit opened on the way down to it.

    A type declaration under ``min_tokens`` (``type Id = string``) is no boundary: like
    an import it joins its neighbours. Alone it was a small chunk that outranked real
    targets for generic queries (bench/retrieval.py: mean doc MRR 0.518 -> 0.521, and
    chunks under 32 tokens 2.9% -> 1.2% in bench/chunking.py).
    """
    spec = LANGUAGES[analysis.language]
    tokens = analysis.tokens
    jsx_kinds = spec.jsx_kinds if profile.split_jsx else frozenset()
    pieces: list[_Piece] = []
    met: dict[tuple[int, int], Unit] = {}  # by span: a node may be met twice
    stack = list(reversed(_items(analysis.top_nodes, analysis, None, 0)))
    if not stack:
        stack = [(0, len(analysis.data), None, None, 0)]
    position, starts, max_tokens = tokens.position, tokens.starts, splitter.max_tokens
    unit_at = analysis.unit_at
    while stack:
        start, end, node, enclosing, depth = stack.pop()
        unit = found = unit_at(node, enclosing) if node is not None else None
        if unit is not None:
            span = (unit.start_byte, unit.end_byte)
            if enclosing is not None and span == (enclosing.start_byte, enclosing.end_byte):
                unit = None  # `a = f` without `;`: the expression of the unit just opened
            else:
                met[span] = unit
        first, last = bisect_left(starts, start), bisect_left(starts, end)
        if last - first <= max_tokens:
            if unit is not None:
                is_unit = profile.is_boundary(unit, depth) and not (
                    unit.kind in DECLARATION_KINDS
                    and tokens.estimate(unit.start_byte, unit.end_byte) < min_tokens
                )
            else:
                is_unit = bool(jsx_kinds) and node is not None and node.type in jsx_kinds
            pieces.append((start, end, is_unit, first, last))
            if unit is None and node is not None and node.type in spec.definition_blocks:
                met.update(_units_inside(node, analysis, enclosing))
            continue
        if node is not None and start < node.start_byte:
            # Too big with its doc comment: place the comment and the node separately,
            # so a unit that fits alone is still one chunk.
            stack.append((node.start_byte, end, node, enclosing, depth))
            stack.append((start, node.start_byte, None, enclosing, depth))
            continue
        opens = unit is not None and unit.kind not in spec.transparent_kinds  # not a namespace
        inside = (unit, depth + 1) if opens else (enclosing, depth)
        children = _items(node.children, analysis, *inside) if node is not None else []
        if not children:
            pieces.extend(
                (a, b, False, position(a), position(b)) for a, b, _ in splitter.split(start, end)
            )
            continue
        # The children take the range's own ends (doc comment and trailing comment).
        children[0] = (start, *children[0][1:])
        children[-1] = (children[-1][0], end, *children[-1][2:])
        # The unit this node declares, also when it is the declaration inside the unit
        # just opened (``export function f``: the function; ``@d def f``: the def).
        declares = found
        if (
            declares is None
            and enclosing is not None
            and node.end_byte == enclosing.end_byte
            and node.type in spec.unit_kinds
        ):
            declares = enclosing
        if declares is not None and declares.kind in CALLABLE_KINDS:
            children = _open_body(children, analysis, min_tokens, first, max_tokens) or children
        stack.extend(reversed(children))
    # Met top-down in source order: sorting by start keeps outer units first.
    units = sorted(met.values(), key=attrgetter("start_byte"))
    return pieces, units


def _units_inside(
    block: tree_sitter.Node, analysis: FileAnalysis, enclosing: Unit | None
) -> dict[tuple[int, int], Unit]:
    """The outermost units inside a statement placed whole (``try:`` around a ``def``),
    by span, so the chunk holding it carries their names (iterative walk)."""
    found: dict[tuple[int, int], Unit] = {}
    stack = list(reversed(block.children))
    while stack:
        node = stack.pop()
        unit = analysis.unit_at(node, enclosing)
        if unit is not None:
            found[(unit.start_byte, unit.end_byte)] = unit
        else:
            stack.extend(reversed(node.children))
    return found


def _open_body(
    children: list[_Item], analysis: FileAnalysis, min_tokens: int, first: int, max_tokens: int
) -> list[_Item] | None:
    """A function's children with its body opened, when a small head (``def f(...):``,
    ``func f() {``) and a body that fits alone do not fit together: the head then joins
    the body's first statements instead of standing alone as a fragment (bench/
    language_speed.py: Python fragments 5 of 719 chunks, each a signature). The body is
    opened as deep as it takes (Go: block, then its statement list). None when there is
    nothing to open."""
    position = analysis.tokens.position
    items = list(children)
    index = len(items) - 1  # the body
    while index > 0:
        start, end, node, enclosing, depth = items[index]
        if (
            node is None
            or position(start) - first >= min_tokens  # the head is no fragment
            or position(end) - position(start) > max_tokens  # opened anyway
            or analysis.unit_at(node, enclosing) is not None
        ):
            break
        inner = _items(node.children, analysis, enclosing, depth)
        if not inner:
            break
        inner[0] = (start, *inner[0][1:])
        inner[-1] = (inner[-1][0], end, *inner[-1][2:])
        items[index : index + 1] = inner
        # Next: the item the head and what precedes it cannot take in.
        overflowing = (
            i for i in range(index, len(items)) if position(items[i][1]) - first > max_tokens
        )
        index = next(overflowing, 0)
    return items if len(items) > len(children) else None


def _pack(pieces: list[_Piece], max_tokens: int, min_tokens: int) -> list[_Group]:
    """Step 2: boundary units alone, the other pieces packed greedily while they fit.

    Where a run of pieces overflows into a group under ``min_tokens``, pieces move
    back into it from the group before, so a split function ends in a real chunk,
    not in a leftover ``return x`` (the head of a split function joins its first
    statements: ``_open_body``; without this its tail was the fragment instead)."""
    groups: list[_Group] = []
    members: list[list[_Piece]] = []  # the pieces of each group
    for piece in pieces:
        start, end, is_unit, first, last = piece
        if not is_unit and groups:
            previous = groups[-1]
            if not previous.unit and last - previous.first <= max_tokens:
                previous.end, previous.last = end, last
                members[-1].append(piece)
                continue
        groups.append(_Group(start, end, first, last, is_unit))
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


def _merge_small(
    groups: list[_Group], analysis: FileAnalysis, max_tokens: int, min_tokens: int
) -> list[_Group]:
    """Step 3: chunks under ``min_tokens`` join a neighbour when the result fits."""
    data = analysis.data
    spec = LANGUAGES[analysis.language]

    def opens(group: _Group) -> bool:
        tail = data[group.start : group.end].rstrip()
        head = data[group.start : group.end].lstrip()
        return tail.endswith(spec.opener_tails) or head.startswith(spec.opener_heads)

    def small(group: _Group) -> bool:
        if group.tokens < min_tokens:
            return True
        # A lone brace or keyword is never a chunk, whatever min_tokens says.
        return not group.unit and _one_word_at_most(data, group.start, group.end)

    def should_join(prev: _Group, group: _Group) -> bool:
        prev_small, this_small = small(prev), small(group)
        if prev.unit and group.unit:  # tiny units group together, never into a big one
            return spec.groups_small_units and prev_small and this_small
        if not prev.unit and prev_small:
            return True  # a header, import block or comment joins what follows
        return not group.unit and this_small and not opens(group)  # `}` joins what precedes

    merged: list[_Group] = []
    for group in groups:
        if merged:
            prev = merged[-1]
            if group.last - prev.first <= max_tokens and should_join(prev, group):
                merged[-1] = _Group(
                    prev.start, group.end, prev.first, group.last, prev.unit or group.unit
                )
                continue
        merged.append(group)
    return merged


def _tidy(groups: list[_Group], analysis: FileAnalysis, splitter: _Splitter) -> list[Span]:
    """Step 4: indentation in, trailing blanks out, exact sizes checked (and cut again)."""
    data = analysis.data
    spans: list[Span] = []
    previous_end = 0
    for group in groups:
        start, end = group.start, group.end
        line_start = analysis.line_starts[analysis.line_of(start) - 1]
        if line_start >= previous_end and not data[line_start:start].strip():
            start = line_start
        end = _rstrip(data, start, end)
        if end <= start:
            continue
        exact = splitter.exact(start, end)
        if exact <= splitter.max_tokens:
            spans.append((start, end, exact))
        else:
            spans.extend(splitter.split(start, end))
        previous_end = spans[-1][1] if spans else previous_end
    return spans


def _absorb_trivial(spans: list[Span], splitter: _Splitter) -> list[Span]:
    """The last guard against lone braces: a chunk of at most one word (``}``, ``});``,
    ``export``) joins the chunk before it, else the one after it, when the exact count
    of the result fits; failing both, the chunk before it is cut again together with it
    (the splitter never leaves a one-word tail)."""
    data = splitter.analysis.data
    out = list(spans)
    index = 0
    while index < len(out):
        start, end, _ = out[index]
        if not _one_word_at_most(data, start, end):
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


def _rstrip(data: bytes, start: int, end: int) -> int:
    while end > start and data[end - 1 : end].isspace():
        end -= 1
    return end
