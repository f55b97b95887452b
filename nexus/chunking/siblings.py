"""Sibling nodes as ranges to place: comments, decorators and overload signatures
ride with the node they precede; a comment on the line where a node ends rides with it."""

from __future__ import annotations

import tree_sitter

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.languages import LANGUAGES, LanguageSpec
from nexus.types import Unit

#: A byte range to place: ``(start, end, node, enclosing, depth)``, with the node it
#: came from (None for loose comments), the innermost unit around it and how many
#: units are around it. (A tuple: thousands are made per file.)
Item = tuple[int, int, "tree_sitter.Node | None", "Unit | None", int]


def declaration(node: tree_sitter.Node) -> tree_sitter.Node:
    """The declaration an ``export`` statement holds, or the node itself."""
    if node.type == "export_statement":
        return node.child_by_field_name("declaration") or node
    return node


def overload_indexes(children: list[tree_sitter.Node], spec: LanguageSpec) -> set[int]:
    """Indexes of overload signatures directly before the implementation of the same
    name: the group is one unit (an overload set alone had no symbol, and its
    implementation was a fragment of a few tokens)."""
    signatures, exports = spec.signature_kinds, spec.export_kinds
    declared = [  # the kind of each child, looking through `export`
        declaration(child).type if child.type in exports else child.type for child in children
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
        name_node = declaration(children[index]).child_by_field_name("name") if named else None
        name = name_node.text if name_node is not None else None
        if kind in signatures:
            if name is not None and name == following:
                found.add(index)
            else:
                following = None
        else:
            following = name if kind in implementations else None
    return found


def sibling_items(
    children: list[tree_sitter.Node], analysis: FileAnalysis, enclosing: Unit | None, depth: int
) -> list[Item]:
    """Sibling nodes as items; comments, decorators and overload signatures attached
    to the node they precede."""
    spec = LANGUAGES[analysis.language]
    data = analysis.data
    comments, riders = spec.comment_kinds, spec.rider_kinds
    overloads = overload_indexes(children, spec) if spec.signature_kinds else ()
    items: list[Item] = []
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
