"""Where chunk edges fall: the checks behind "a chunk is about one unit, from its start".

Three faults an edge can have, each counted per file (tests/chunking/test_chunk_edges.py
asserts none on the test repositories; bench/chunking/chunk_edges.py counts them on real ones):

- **foreign start**: the chunk's first non-blank byte lies inside a unit (strictly after
  the unit's first byte) that is neither the chunk's symbol nor nested with it (an
  ancestor or a descendant, by qualname). The tail of one function at the head of a
  chunk named after the next one is one.
- **stranded rider**: the chunk ends with own-line comments or decorators, the next
  chunk starts a definition, and before them the chunk holds code of a unit that does
  not hold them: a function's leading comment left in the previous function's chunk.
  (A class header or the imports before them are no fault: they hold, or are
  no unit.)
- **mid-line start**: the chunk starts after non-blank text of its first line, so it
  shares that line with the chunk before it. The chunker allows it only where no line
  break can take the cut (``Chunk.starts_mid_line`` says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import tree_sitter

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.cuts import starts_mid_line
from nexus.chunking.languages import LANGUAGES
from nexus.types import Chunk, Unit

#: Node kinds that ride with the definition below them in every grammar: the specs'
#: comments and decorators, and Python's decorator (inside its definition's span).
_PYTHON_DECORATOR = "decorator"


@dataclass
class EdgeReport:
    """The faulty edges of one file's chunks (or a sum over files), with examples."""

    chunks: int = 0
    foreign_starts: int = 0
    stranded_riders: int = 0
    mid_line_starts: int = 0
    examples: list[str] = field(default_factory=list)  # "path L12-40 symbol: fault"

    def add(self, other: EdgeReport, keep: int = 10) -> None:
        """Add another report's counts (and examples, up to ``keep``)."""
        self.chunks += other.chunks
        self.foreign_starts += other.foreign_starts
        self.stranded_riders += other.stranded_riders
        self.mid_line_starts += other.mid_line_starts
        self.examples.extend(other.examples[: max(0, keep - len(self.examples))])


def _nested(a: Unit, b: Unit) -> bool:
    """Whether one unit's span holds the other's (by span: a computed method name
    such as ``[Symbol.iterator]`` has no class in its qualname)."""
    if a.start_byte <= b.start_byte and b.end_byte <= a.end_byte:
        return True
    return b.start_byte <= a.start_byte and a.end_byte <= b.end_byte


def _first_byte(chunk: Chunk) -> int:
    """The byte of the chunk's first non-blank character."""
    stripped = chunk.text.lstrip()
    return chunk.start_byte + len(chunk.text[: len(chunk.text) - len(stripped)].encode())


def foreign_unit(chunk: Chunk, units: list[Unit]) -> Unit | None:
    """The unit, other than the chunk's own, whose body the chunk starts inside."""
    at = _first_byte(chunk)
    own = [unit for unit in units if unit.qualname == chunk.symbol]
    for unit in units:
        if unit.start_byte < at < unit.end_byte and not any(_nested(o, unit) for o in own):
            return unit
    return None


def _enclosing_of_kind(node: tree_sitter.Node, kinds: frozenset[str]) -> tree_sitter.Node | None:
    current: tree_sitter.Node | None = node
    while current is not None and current.type not in kinds:
        current = current.parent
    return current


def _starts_definition(analysis: FileAnalysis, at: int) -> bool:
    """Whether a definition (a unit's node, or the statement around one) starts at ``at``."""
    kinds = LANGUAGES[analysis.language].unit_kinds
    node: tree_sitter.Node | None = analysis.tree.root_node.descendant_for_byte_range(at, at + 1)
    while node is not None and node.start_byte == at:
        if node.type in kinds or any(u.start_byte == at for u in analysis.unit_table.units):
            return True
        node = node.parent
    return False


def stranded_rider(analysis: FileAnalysis, chunk: Chunk, after: Chunk) -> bool:
    """Whether ``chunk`` ends with own-line comments or decorators of the definition
    that starts ``after``, after code of a unit that does not hold them."""
    data = analysis.data
    riders = LANGUAGES[analysis.language].rider_kinds | {_PYTHON_DECORATOR}
    last = len(data[: chunk.end_byte].rstrip()) - 1
    if last < chunk.start_byte:
        return False
    leaf = analysis.tree.root_node.descendant_for_byte_range(last, last + 1)
    rider = _enclosing_of_kind(leaf, riders) if leaf is not None else None
    if rider is None or not _starts_definition(analysis, _first_byte(after)):
        return False
    line_start = data.rfind(b"\n", 0, rider.start_byte) + 1
    if data[line_start : rider.start_byte].strip():
        return False  # `foo(); // why` rides with foo()
    run = rider
    while run.prev_named_sibling is not None and run.prev_named_sibling.type in riders:
        run = run.prev_named_sibling
    before = (_first_byte(chunk), run.start_byte)
    return any(
        unit.start_byte < before[1]
        and unit.end_byte > before[0]
        and not unit.start_byte <= run.start_byte < unit.end_byte
        for unit in analysis.units
    )


def edge_report(analysis: FileAnalysis, chunks: list[Chunk]) -> EdgeReport:
    """The faulty edges of one file's chunks (in order)."""
    report = EdgeReport(chunks=len(chunks))
    units = analysis.units

    def note(chunk: Chunk, fault: str) -> None:
        where = f"{chunk.file} L{chunk.start_line}-{chunk.end_line} {chunk.symbol}"
        report.examples.append(f"{where}: {fault}")

    for index, chunk in enumerate(chunks):
        foreign = foreign_unit(chunk, units)
        if foreign is not None:
            report.foreign_starts += 1
            note(chunk, f"starts inside {foreign.qualname}")
        if index + 1 < len(chunks) and stranded_rider(analysis, chunk, chunks[index + 1]):
            report.stranded_riders += 1
            note(chunk, f"ends with the leading comment of {chunks[index + 1].symbol}")
        if starts_mid_line(analysis.data, chunk.start_byte):
            report.mid_line_starts += 1
            note(chunk, "starts mid-line")
    return report
