"""Everything computed once per file and reused by every re-chunk: tree, units, tokens.

Moving a min/max slider re-runs only the packing in ``ast.py`` over this cached
analysis, which is what makes a re-chunk cheap.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import tree_sitter

from nexus.extract import Import, extract_imports, extract_units
from nexus.languages import LANGUAGES, capture_nodes, parse
from nexus.tokens import TokenIndex
from nexus.types import Chunk, SourceFile, Unit

#: Bytes that continue a JS identifier (non-ASCII ones count: UTF-8 letters).
IDENTIFIER_BYTES = frozenset(b"$_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
IDENTIFIER_BYTES |= frozenset(range(0x80, 0x100))


@dataclass
class FileAnalysis:
    """A parsed file: its source, tree, units, imports, error ranges, token positions."""

    source: SourceFile
    language: str
    tree: tree_sitter.Tree
    units: list[Unit]
    imports: list[Import]
    error_ranges: list[tuple[int, int]]  # byte ranges of ERROR / MISSING nodes
    has_jsx: bool
    has_signatures: bool  # TS overload or interface method signatures: worth a look
    tokens: TokenIndex
    line_starts: list[int]  # byte offset of each line's first byte
    # Chunks already built from this file, by range and settings: after a slider move
    # most chunks (whole units) are the same and are not built again.
    built: dict[tuple, Chunk] = field(default_factory=dict, repr=False, compare=False)

    @property
    def data(self) -> bytes:
        return self.source.data

    def line_of(self, byte: int) -> int:
        """1-based line number holding ``byte``."""
        return bisect_right(self.line_starts, byte)

    @cached_property
    def unit_starts(self) -> list[int]:
        """Start byte of each unit (``units`` are sorted by start), for bisection."""
        return [unit.start_byte for unit in self.units]

    @cached_property
    def enclosing_units(self) -> list[int]:
        """For each unit, the index of the innermost unit around it, or -1."""
        enclosing, open_units = [], []
        for index, unit in enumerate(self.units):
            while open_units and self.units[open_units[-1]].end_byte < unit.end_byte:
                open_units.pop()
            enclosing.append(open_units[-1] if open_units else -1)
            open_units.append(index)
        return enclosing

    @cached_property
    def imported_names(self) -> tuple[bytes, ...]:
        """Local names bound by the file's imports (UTF-8), first binding first."""
        return tuple(dict.fromkeys(i.local.encode("utf-8") for i in self.imports))

    @cached_property
    def import_uses(self) -> tuple[list[int], list[int]]:
        """Where the imported names occur as whole identifiers: sorted byte offsets and,
        aligned, each one's index in ``imported_names``. Found once per file with
        ``bytes.find``; a chunk's imports are then a slice, whatever the settings."""
        data, size = self.data, len(self.data)
        found = []
        for index, name in enumerate(self.imported_names):
            at = data.find(name)
            while at != -1:
                end = at + len(name)
                if (at == 0 or data[at - 1] not in IDENTIFIER_BYTES) and (
                    end == size or data[end] not in IDENTIFIER_BYTES
                ):
                    found.append((at, index))
                at = data.find(name, end)
        found.sort()
        return [at for at, _ in found], [index for _, index in found]

    @cached_property
    def unit_depths(self) -> list[int]:
        """How many units enclose each unit (aligned with ``units``)."""
        by_qualname = {unit.qualname: unit for unit in self.units}
        depths = []
        for unit in self.units:
            depth, parent = 0, unit.parent
            while parent is not None and parent in by_qualname and depth < 10_000:
                depth += 1
                parent = by_qualname[parent].parent
            depths.append(depth)
        return depths


def analyze(source: SourceFile, encoding: str) -> FileAnalysis:
    """Parse and index one file (the expensive step; cache its result)."""
    language = source.info.language
    if language not in LANGUAGES:
        raise ValueError(f"{source.info.path}: language {language!r} is not chunkable")
    tree = parse(source.data, language)
    captures = capture_nodes(tree, language)
    errors = sorted((node.start_byte, node.end_byte) for node in captures.get("error", []))
    newlines = np.flatnonzero(np.frombuffer(source.data, dtype=np.uint8) == 0x0A)
    line_starts = [0, *(newlines + 1).tolist()]
    return FileAnalysis(
        source=source,
        language=language,
        tree=tree,
        units=extract_units(tree, source.data, language, captures.get("unit", [])),
        imports=extract_imports(tree),
        error_ranges=errors,
        has_jsx=bool(captures.get("jsx")),
        has_signatures=bool(captures.get("signature")),
        tokens=TokenIndex(source.data, encoding),
        line_starts=line_starts,
    )
