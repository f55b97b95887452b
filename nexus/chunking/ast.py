"""Recursive AST chunking under an exact token budget.

Step 1 lives here; steps 2-5 in ``packing``, the cuts no node boundary makes in
``cuts``, and the attaching of comments and decorators to their node in ``siblings``.

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
   are packed greedily while they fit, never parts of two units of which neither
   holds the other (each piece knows its owner: the tail of a split function does
   not join the next function's chunk).
3. **Merge small**: fragments under ``min_tokens`` join a neighbour when the result
   fits, forward when they open something (``class A {``), else backward; units
   under ``min_tokens`` group with adjacent small units, never with a large one
   (diluting a unit with another hurts retrieval: measured in bench/retrieval/retrieval.py);
   in Python they never group (``LanguageSpec.groups_small_units``).
4. **Check**: each chunk's exact count (its edge lines encoded, see ``TokenIndex``);
   one over the budget (a token or two of edge effect) is cut again, evenly. No
   chunk exceeds ``max_tokens``. A lone brace joins a neighbour.
5. **Align**: a cut inside a line moves to a line break when both sides still fit,
   so consecutive chunks do not share a line (``Chunk.starts_mid_line`` marks the rest).

Sizes during 1-3 come from one tokenization of the whole file (``TokenIndex``),
so the cost stays close to a single encode (bench/chunking/chunking.py: 1.44x parse + encode,
chunk records included).
"""

from __future__ import annotations

from bisect import bisect_left
from operator import attrgetter
from typing import NamedTuple

import tree_sitter

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.cuts import Span, Splitter
from nexus.chunking.languages import LANGUAGES
from nexus.chunking.packing import (
    Piece,
    absorb_trivial,
    align_to_lines,
    merge_small,
    pack,
    tidy,
)
from nexus.chunking.profiles import DECLARATION_KINDS, FUNCTION_KINDS, MEMBER_KINDS, Profile
from nexus.chunking.recovery import stretch
from nexus.chunking.siblings import Item, sibling_items
from nexus.types import Unit

#: Units whose head (signature) must not be left alone when their body is split.
CALLABLE_KINDS = FUNCTION_KINDS | MEMBER_KINDS


class AstLayout(NamedTuple):
    """One file's AST chunks as ranges, and the units the chunker met placing them."""

    spans: list[Span]
    units: list[Unit]  # in source order (start, then outer first)


def ast_spans(
    analysis: FileAnalysis, max_tokens: int, min_tokens: int, profile: Profile
) -> AstLayout:
    """``(start_byte, end_byte, exact tokens)`` of one file's AST chunks, in order,
    each within ``max_tokens``, and the units met on the way."""
    if not analysis.data.strip():
        return AstLayout([], [])
    splitter = Splitter(analysis, max_tokens)
    pieces, units = _expand(analysis, profile, splitter, min_tokens)
    groups = merge_small(pack(pieces, max_tokens, min_tokens), analysis, max_tokens, min_tokens)
    spans = align_to_lines(absorb_trivial(tidy(groups, analysis, splitter), splitter), splitter)
    return AstLayout(spans, stretch(units, analysis.data, analysis.error_ranges))


def _expand(
    analysis: FileAnalysis, profile: Profile, splitter: Splitter, min_tokens: int
) -> tuple[list[Piece], list[Unit]]:
    """Step 1: top-level nodes, oversized ones replaced by their children until all fit;
    and every unit met (placed whole or opened), in source order.

    Only visited nodes are classified (``FileAnalysis.unit_at``), top-down: the
    enclosing unit of a node is the last unit opened on the way down to it, and the
    owner of each piece (``packing.Piece``): the pieces of a unit's body, and its
    leading comment when placed apart, are that unit's own.

    A type declaration under ``min_tokens`` (``type Id = string``) is no boundary: like
    an import it joins its neighbours. Alone it was a small chunk that outranked real
    targets for generic queries (bench/retrieval/retrieval.py: mean doc MRR 0.518 -> 0.521, and
    chunks under 32 tokens 2.9% -> 1.2% in bench/chunking/chunking.py).
    """
    spec = LANGUAGES[analysis.language]
    tokens = analysis.tokens
    jsx_kinds = spec.jsx_kinds if profile.split_jsx else frozenset()
    pieces: list[Piece] = []
    met: dict[tuple[int, int], Unit] = {}  # by span: a node may be met twice
    stack = list(reversed(sibling_items(analysis.top_nodes, analysis, None, 0)))
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
            owner = (unit, True) if unit is not None else (enclosing, False)
            if unit is None and node is not None and node.type in spec.definition_blocks:
                held = _units_inside(node, analysis, enclosing)
                met.update(held)
                # A block that defines units packs like one of them (``if __name__``
                # holding a ``def``): never with a part of another unit.
                owner = (next(iter(held.values())), True) if held else owner
            pieces.append((start, end, is_unit, first, last, owner))
            continue
        if node is not None and start < node.start_byte:
            # Too big with its doc comment: place the comment and the node separately,
            # so a unit that fits alone is still one chunk. The comment is the unit's
            # own piece: it never packs with the chunk before (issue 41).
            stack.append((node.start_byte, end, node, enclosing, depth))
            stack.append((start, node.start_byte, None, unit or enclosing, depth))
            continue
        opens = unit is not None and unit.kind not in spec.transparent_kinds  # not a namespace
        inside = (unit, depth + 1) if opens else (enclosing, depth)
        children = sibling_items(node.children, analysis, *inside) if node is not None else []
        if not children:
            owner = (inside[0], False)
            pieces.extend(
                (a, b, False, position(a), position(b), owner)
                for a, b, _ in splitter.split(start, end)
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
    children: list[Item], analysis: FileAnalysis, min_tokens: int, first: int, max_tokens: int
) -> list[Item] | None:
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
        inner = sibling_items(node.children, analysis, enclosing, depth)
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
