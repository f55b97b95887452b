"""Units back from a file whose parse fails at the root.

When tree-sitter cannot fit a file into its grammar's top rule, the root is an ERROR
node, and after the first construct it cannot read (hono's ``src/types.ts``: call
signatures in an interface, written without semicolons) the rest of the file is
tokens, not declarations: 19 of its 53 top-level declarations were found, and every
chunk was flagged "parse error".

Top-level statements start at column 0, so the file is cut into blocks at the lines
that start there (a word, a comment, a decorator; not a closing bracket or an
operator) and ranges of blocks are parsed again on their own, in place
(``Parser.included_ranges``: the nodes keep the file's byte offsets). A range that
parses cleanly is kept; one that does not is halved, down to single blocks. Adjacent
failing blocks are then parsed together (a statement cut at a column-0 line, such as
a template literal's content, parses whole), and what still fails is the broken
region: its own parse gives its nodes and the only error ranges of the file.

A declaration that still fails (hono's three interfaces of call signatures, or one
whose errors leave the root a program) is read only in part: its unit ends where the
parser gave up, and the rest of it was module code. So a unit that opens a block
holding an error is stretched to the block's end (``stretch``): the chunks inside the
declaration are its pieces and carry its name.

Only a file whose root is ERROR pays for this; one that parses cleanly, or whose
errors sit inside statements, is not touched.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, replace
from itertools import accumulate

import tree_sitter

from nexus.chunking.grammar import error_ranges, get_language
from nexus.types import Unit

#: A line that may start a top-level statement: it opens at column 0 with a word, a
#: comment, a decorator or an attribute (``#[derive]``), not with a closing bracket,
#: an operator or a continuation.
_STATEMENT_START = re.compile(rb"^[A-Za-z_$@#/]", re.MULTILINE)


@dataclass(frozen=True)
class Recovery:
    """A failed file read again block by block.

    ``top_nodes``: the statements, in source order, each from the parse of its own
    range; ``roots``: the root of each range's parse (where units are looked for);
    ``error_ranges``: byte ranges of ERROR and MISSING nodes of the ranges that still
    fail; ``broken``: those ranges, as bytes.
    """

    top_nodes: list[tree_sitter.Node]
    roots: list[tree_sitter.Node]
    error_ranges: list[tuple[int, int]]
    broken: list[tuple[int, int]]


class _RangeParser:
    """Parses byte ranges of one file in place (nodes keep the file's offsets)."""

    def __init__(self, data: bytes, language: str) -> None:
        self.data = data
        self.parser = tree_sitter.Parser(get_language(language))

    def point(self, byte: int) -> tuple[int, int]:
        row = self.data.count(b"\n", 0, byte)
        return row, byte - (self.data.rfind(b"\n", 0, byte) + 1)

    def parse(self, start: int, end: int) -> tree_sitter.Tree:
        self.parser.included_ranges = [
            tree_sitter.Range(self.point(start), self.point(end), start, end)
        ]
        return self.parser.parse(self.data)


def recover(tree: tree_sitter.Tree, data: bytes, language: str) -> Recovery | None:
    """The file read again in blocks when its root is ERROR, else None (no cost)."""
    if not tree.root_node.is_error:
        return None
    starts = [0] + [m.start() for m in _STATEMENT_START.finditer(data) if m.start() > 0]
    bounds = [*starts, len(data)]
    parser = _RangeParser(data, language)
    parsed: list[tuple[int, int, tree_sitter.Tree | None]] = []  # (first, end block, tree)
    # Halve failing ranges of blocks (the whole file is known to fail), iteratively.
    work = [(0, len(starts), False)]
    while work:
        first, last, try_it = work.pop()
        if try_it:
            candidate = parser.parse(bounds[first], bounds[last])
            if not candidate.root_node.has_error:
                parsed.append((first, last, candidate))
                continue
        if last - first == 1:
            parsed.append((first, last, None))
            continue
        middle = (first + last) // 2
        work += [(middle, last, True), (first, middle, True)]
    parsed.sort(key=lambda item: item[0])
    return _assemble(_join_failures(parsed, parser, bounds))


def _join_failures(
    parsed: list[tuple[int, int, tree_sitter.Tree | None]],
    parser: _RangeParser,
    bounds: list[int],
) -> list[tuple[tree_sitter.Tree, bool]]:
    """Runs of adjacent failing blocks parsed together: ``(tree, still broken)``."""
    out: list[tuple[tree_sitter.Tree, bool]] = []
    run_start: int | None = None
    for index, (first, last, tree) in enumerate(parsed):
        if tree is None:
            run_start = first if run_start is None else run_start
            following = parsed[index + 1][2] if index + 1 < len(parsed) else True
            if following is None:
                continue
            joined = parser.parse(bounds[run_start], bounds[last])
            out.append((joined, joined.root_node.has_error))
            run_start = None
        else:
            out.append((tree, False))
    return out


def _assemble(trees: list[tuple[tree_sitter.Tree, bool]]) -> Recovery:
    top_nodes: list[tree_sitter.Node] = []
    roots: list[tree_sitter.Node] = []
    errors: list[tuple[int, int]] = []
    broken: list[tuple[int, int]] = []
    for tree, failed in trees:
        root = tree.root_node
        roots.append(root)
        top_nodes += root.children or [root]
        if failed:
            errors += error_ranges(tree)
            broken.append((root.start_byte, root.end_byte))
    return Recovery(top_nodes, roots, sorted(errors), broken)


def stretch(units: list[Unit], data: bytes, errors: list[tuple[int, int]]) -> list[Unit]:
    """``units`` with each one that opens a block holding an error ending where the
    block ends (its declaration, as far as column 0 tells: up to the next top-level
    statement, trailing blank lines left out), not where the parser gave up; the others
    unchanged. ``errors``: the file's error ranges, sorted; none costs nothing."""
    if not errors:
        return units
    starts = [0] + [m.start() for m in _STATEMENT_START.finditer(data) if m.start() > 0]
    error_starts = [a for a, _ in errors]
    reach = list(accumulate((b for _, b in errors), max))  # furthest error end so far
    ends = {}
    for start, end in zip(starts, [*starts[1:], len(data)], strict=True):
        before = bisect_left(error_starts, end)  # errors that start before the block ends
        if before and reach[before - 1] > start:
            ends[start] = start + len(data[start:end].rstrip())
    out, stretched = [], set()
    for unit in units:  # sorted by start, the outermost first
        end = ends.get(unit.start_byte)
        if end is not None and unit.end_byte < end and unit.start_byte not in stretched:
            stretched.add(unit.start_byte)  # only the outermost unit at the block's start
            unit = replace(
                unit,
                end_byte=end,
                end_line=unit.start_line + data.count(b"\n", unit.start_byte, end),
            )
        out.append(unit)
    return out
