"""Everything computed once per file and reused by every re-chunk: tree, tokens, units.

Moving a min/max slider re-runs only the packing in ``ast.py`` over this cached
analysis, which is what makes a re-chunk cheap.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import tree_sitter

from nexus.chunking.extract import (
    METHOD_OWNERS,
    definition_below,
    extract_units,
    span_kinds,
    unit_at,
)
from nexus.chunking.grammar import contains_jsx, error_ranges, parse
from nexus.chunking.imports import declared_exports, imported_names
from nexus.chunking.languages import LANGUAGES
from nexus.chunking.profiles import FUNCTION_KINDS, MEMBER_KINDS, TopLevel
from nexus.chunking.recovery import Recovery, recover, stretch
from nexus.chunking.tokens import TokenIndex
from nexus.types import Chunk, SourceFile, Unit

#: Bytes that continue a JS identifier (non-ASCII ones count: UTF-8 letters).
IDENTIFIER_BYTES = frozenset(b"$_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
IDENTIFIER_BYTES |= frozenset(range(0x80, 0x100))


@dataclass
class FileAnalysis:
    """A parsed file: its source, tree, error ranges, token positions; its units and
    imports on demand.

    The chunker classifies only the nodes it visits (``extract.unit_at``), so the
    full unit list, a walk of every node, is built only for what needs it: line
    chunks, the fragmentation analysis, ``nexus functions``.
    """

    source: SourceFile
    language: str
    tree: tree_sitter.Tree
    error_ranges: list[tuple[int, int]]  # byte ranges of ERROR / MISSING nodes
    has_jsx: bool
    tokens: TokenIndex
    line_starts: array[int]  # byte offset of each line's first byte
    # Chunks already built from this file, by range and settings: after a slider move
    # most chunks (whole units) are the same and are not built again.
    built: dict[tuple, Chunk] = field(default_factory=dict, repr=False, compare=False)
    # What ``unit_at`` said of each node the chunker visited, by (start, end, kind).
    units_at: dict[tuple[int, int, str], Unit | None] = field(
        default_factory=dict, repr=False, compare=False
    )
    # A file whose root is ERROR, read again block by block (``recovery.py``): its
    # statements and units come from there.
    recovery: Recovery | None = field(default=None, repr=False, compare=False)

    @property
    def data(self) -> bytes:
        return self.source.data

    def line_of(self, byte: int) -> int:
        """1-based line number holding ``byte``."""
        return bisect_right(self.line_starts, byte)

    @cached_property
    def _span_kinds(self) -> frozenset[str]:
        return span_kinds(LANGUAGES[self.language])

    def unit_at(self, node: tree_sitter.Node, enclosing: Unit | None) -> Unit | None:
        """The unit whose span is ``node`` (remembered: re-chunks ask again)."""
        kind = node.type
        if kind not in self._span_kinds:
            return None
        key = (node.start_byte, node.end_byte, kind)
        if key not in self.units_at:
            self.units_at[key] = unit_at(node, self.language, enclosing, self.declared)
        return self.units_at[key]

    @cached_property
    def declared(self) -> frozenset[str] | None:
        """The module's declared exports (Python ``__all__``), if any."""
        return declared_exports(self.tree, self.language)

    @cached_property
    def top_nodes(self) -> list[tree_sitter.Node]:
        """The root's children (each ``tree.root_node`` is a new node that builds its
        children list again); for a recovered file, the statements of its blocks."""
        if self.recovery is not None:
            return self.recovery.top_nodes
        return self.tree.root_node.children

    @cached_property
    def top_level(self) -> TopLevel:
        """Members of top-level classes (impls, traits; Go's methods) and top-level
        functions (for ``auto``); the
        classification of the top-level nodes is remembered for the chunker."""
        spec = LANGUAGES[self.language]
        callables = spec.method_kinds | (spec.function_kinds if spec.methods_in_classes else set())
        members = functions = 0
        span_kinds = self._span_kinds  # tested here first: Go files are half comments
        statements = list(self.top_nodes)
        for statement in statements:  # grows: what a namespace holds is top-level too
            unit = self.unit_at(statement, None) if statement.type in span_kinds else None
            if unit is None:
                continue
            if unit.kind in spec.transparent_kinds:
                definition = definition_below(statement, spec)
                body = definition.child_by_field_name("body") if definition else None
                statements += body.named_children if body else []
                continue
            if unit.kind in FUNCTION_KINDS:
                functions += 1
            elif unit.kind in MEMBER_KINDS:  # Go methods are top-level declarations
                members += 1
            elif unit.kind in METHOD_OWNERS:
                definition = definition_below(statement, spec)
                body = definition.child_by_field_name("body") if definition else None
                members += sum(
                    1
                    for member in (body.named_children if body else [])
                    if (below := definition_below(member, spec)) is not None
                    and below.type in callables
                )
        return TopLevel(members, functions)

    @cached_property
    def units(self) -> list[Unit]:
        """Every unit of the file, nested ones too, in source order."""
        roots = self.recovery.roots if self.recovery is not None else None
        units = extract_units(self.tree, self.language, roots)
        return stretch(units, self.data, self.error_ranges)

    @cached_property
    def unit_table(self) -> UnitTable:
        """``units`` indexed for chunk metadata (line chunks use every unit)."""
        return UnitTable(self.units)

    @cached_property
    def imported_names(self) -> tuple[bytes, ...]:
        """Local names bound by the file's imports (UTF-8), first binding first."""
        return tuple(dict.fromkeys(imported_names(self.tree, self.language)))

    @cached_property
    def import_uses(self) -> tuple[list[int], list[int]]:
        """Where the imported names occur as whole identifiers: sorted byte offsets and,
        aligned, each one's index in ``imported_names``. Found once per file; a chunk's
        imports are then a slice, whatever the settings."""
        return identifier_uses(self.data, self.imported_names)


#: ``IDENTIFIER_BYTES`` as ``bytes``, and as a ``bytes.translate`` table to 1 / 0.
_IDENTIFIER_STRING = bytes(sorted(IDENTIFIER_BYTES))
_IDENTIFIER_FLAGS = bytes(byte in IDENTIFIER_BYTES for byte in range(256))
#: File bytes x names up to which one ``bytes.find`` scan per name (~0.6 ns a byte)
#: beats the numpy pass over identifier runs (~15 us, then ~1.5 ns a byte): chosen on
#: the bench corpora, within 6% of taking the faster way file by file.
_FIND_SCANS_UP_TO = 40_000


def identifier_uses(data: bytes, names: tuple[bytes, ...]) -> tuple[list[int], list[int]]:
    """Sorted offsets of the whole-identifier occurrences of ``names`` (distinct) in
    ``data`` and, aligned, the index of the name found at each.

    A name made of identifier bytes occurs whole exactly where a maximal run of
    identifier bytes equals it; in a large file with many names the runs are found
    once with numpy and looked up among the names, instead of one scan of the file
    per name (more_itertools' more.py, 175 KB and 67 names: 15 ms that way, a third
    of it for ``e``, found inside 13,842 longer words; 0.5 ms now). Small files keep
    the scans; other names (none seen so far) are found with ``bytes.find``.
    """
    many = len(data) * len(names) > _FIND_SCANS_UP_TO
    runs = {
        name: index
        for index, name in enumerate(names)
        if many and name and not name.translate(None, _IDENTIFIER_STRING)
    }
    found = [
        (at, index)
        for index, name in enumerate(names)
        if name and name not in runs
        for at in _whole_finds(data, name)
    ]
    offsets, indexes = _run_matches(data, runs) if runs else ([], [])
    if not found:
        return offsets, indexes
    found = sorted(found + list(zip(offsets, indexes, strict=True)))
    return [at for at, _ in found], [index for _, index in found]


def _whole_finds(data: bytes, name: bytes) -> list[int]:
    """Offsets where ``name`` occurs with no identifier byte right before or after it."""
    found, at = [], data.find(name)
    while at != -1:
        end = at + len(name)
        if (at == 0 or data[at - 1] not in IDENTIFIER_BYTES) and (
            end == len(data) or data[end] not in IDENTIFIER_BYTES
        ):
            found.append(at)
        at = data.find(name, end)
    return found


def _run_matches(data: bytes, names: dict[bytes, int]) -> tuple[list[int], list[int]]:
    """Offsets of the maximal runs of identifier bytes that equal one of ``names``
    (identifier bytes only), and that name's value in ``names``, in file order."""
    width = max(map(len, names))
    padded = data + bytes(width)  # zeros: no identifier byte, and room for the windows
    inside = np.frombuffer(b"\0" + padded.translate(_IDENTIFIER_FLAGS), dtype=bool)
    edges = np.flatnonzero(inside[1:] != inside[:-1])
    starts, ends = edges[0::2], edges[1::2]
    # Runs whose length, first and last byte hash like some name's: a few, cheaply.
    codes = np.frombuffer(padded, dtype=np.uint8)
    lengths = ends - starts
    hashes = np.zeros(_RUN_HASHES, dtype=bool)
    hashes[[_run_hash(len(name), name[0], name[-1]) for name in names]] = True
    heads = codes[starts].astype(np.intp)
    picked = np.flatnonzero(hashes[_run_hash(lengths, heads, codes[ends - 1])])
    starts, lengths = starts.take(picked), lengths.take(picked)
    # Each candidate as a zero-padded fixed-width string (names hold no zero byte):
    # rows of a strided view of the bytes, one row per offset.
    windows = np.ndarray((len(data) + 1, width), np.uint8, padded, 0, (1, 1))[starts]
    windows *= np.arange(width) < lengths[:, None]
    words = windows.view(f"S{width}").ravel()
    table = np.array(sorted(names), dtype=f"S{width}")
    position = table.searchsorted(words).clip(max=len(table) - 1)
    hit = (table[position] == words) & (lengths <= width)  # a longer run: a cut window
    values = np.array([names[name] for name in sorted(names)])
    return starts[hit].tolist(), values[position[hit]].tolist()


#: Buckets of ``_run_hash``: a table small enough to build per file.
_RUN_HASHES = 1 << 16


def _run_hash(
    length: int | np.ndarray, head: int | np.ndarray, tail: int | np.ndarray
) -> int | np.ndarray:
    """A run's bucket from its length, first and last byte (mixed, not unique: runs in a
    name's bucket are candidates, compared whole), so that few runs share a name's.
    Ints, or numpy arrays (then ``head`` of a type wider than bytes)."""
    return ((head << 8 | tail) ^ length << 11) & (_RUN_HASHES - 1)


class UnitTable:
    """Units sorted by start, with what chunk metadata asks of them: where each
    starts (for bisection) and which unit encloses it."""

    def __init__(self, units: list[Unit]) -> None:
        self.units = units
        self.starts = [unit.start_byte for unit in units]
        self.enclosing: list[int] = []  # index of the innermost unit around each, or -1
        open_units: list[int] = []
        for index, unit in enumerate(units):
            while open_units and units[open_units[-1]].end_byte < unit.end_byte:
                open_units.pop()
            self.enclosing.append(open_units[-1] if open_units else -1)
            open_units.append(index)


def analyze(source: SourceFile, encoding: str) -> FileAnalysis:
    """Parse and index one file (the expensive step; cache its result)."""
    language = source.info.language
    if language not in LANGUAGES:
        raise ValueError(f"{source.info.path}: language {language!r} is not chunkable")
    tree = parse(source.data, language)
    recovery = recover(tree, source.data, language)  # None unless the root is ERROR
    newlines = np.flatnonzero(np.frombuffer(source.data, dtype=np.uint8) == 0x0A)
    line_starts = array("q", [0])
    line_starts.frombytes((newlines + 1).view(np.uint8))
    return FileAnalysis(
        source=source,
        language=language,
        tree=tree,
        error_ranges=recovery.error_ranges if recovery is not None else error_ranges(tree),
        has_jsx=contains_jsx(tree, source.data, language),
        tokens=TokenIndex(source.data, encoding, source.text),
        line_starts=line_starts,
        recovery=recovery,
    )
