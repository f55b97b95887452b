"""Turn byte ranges into ``Chunk`` records: exact text, tokens, symbols, embedding text.

Both chunkers produce ranges; this module gives every range the same metadata,
so line-based and AST chunks are compared like for like.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left, bisect_right
from pathlib import PurePosixPath

from nexus.chunking.analysis import FileAnalysis
from nexus.chunking.profiles import TYPE_KINDS
from nexus.types import Chunk, Unit


def chunk_id(repo: str, path: str, strategy: str, start: int, end: int, text: str) -> str:
    """Stable id: the same slice of the same content always gets the same id."""
    digest = hashlib.sha1(f"{repo}\0{path}\0{strategy}\0{start}\0{end}\0{text}".encode())
    return digest.hexdigest()[:16]


def _enclosing_indexes(units: list[Unit]) -> list[int]:
    """For each unit (sorted by start), the index of the innermost unit around it, or -1."""
    enclosing, open_units = [], []
    for index, unit in enumerate(units):
        while open_units and units[open_units[-1]].end_byte < unit.end_byte:
            open_units.pop()
        enclosing.append(open_units[-1] if open_units else -1)
        open_units.append(index)
    return enclosing


def _main_unit(
    units: list[Unit], starts: list[int], enclosing_of: list[int], start: int, end: int
) -> Unit | None:
    """The unit a byte range is about (``units`` sorted by start, ``starts`` their starts,
    ``enclosing_of`` from ``_enclosing_indexes``).

    The main unit is the largest unit inside the range at the level of the range
    (a method in a piece of its class; not a closure in a piece of its function);
    a range with none such is a piece of the innermost unit that contains it.
    """
    first, last = bisect_left(starts, start), bisect_left(starts, end)
    inside = [u for u in units[first:last] if u.end_byte <= end]
    # Units the range overlaps without holding them whole: a piece of a long unit,
    # or a class header with its fields. Before the range, that is the innermost unit
    # still open at its start: earlier siblings of a closed unit are closed too.
    around = first - 1
    while around >= 0 and units[around].end_byte <= start:
        around = enclosing_of[around]
    containing = [units[around]] if around >= 0 else []
    containing += [u for u in units[first:last] if u.end_byte > end]
    enclosing = min(containing, key=lambda u: u.end_byte - u.start_byte) if containing else None
    if enclosing is not None and enclosing.kind not in TYPE_KINDS:
        return enclosing  # closures inside a piece of a function stay its own
    level = enclosing.qualname if enclosing is not None else None
    at_level = [u for u in inside if u.parent == level] or ([] if enclosing else inside)
    if at_level:
        return max(at_level, key=lambda u: u.end_byte - u.start_byte)
    return enclosing


_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def file_stem(path: str) -> str:
    """``src/services/payment.spec.ts`` -> ``payment``."""
    return PurePosixPath(path).name.split(".", 1)[0]


def context_line(stem: str, symbol: str | None) -> str:
    """The file's stem and the chunk's symbol path (``payment PaymentService.charge``).

    What a bare slice lacks, and on both benchmark sets the most useful thing to
    put first in the model window (bench/retrieval.py).
    """
    return f"{stem} {symbol}" if symbol else stem


def build_chunks(
    analysis: FileAnalysis,
    spans: list[tuple[int, int, int]],
    *,
    repo: str,
    strategy: str,
    profile: str,
    context_header: bool,
) -> list[Chunk]:
    """Chunks for ``(start_byte, end_byte, exact tokens)`` ranges of one analysed file."""
    source = analysis.source
    data = analysis.data
    path = source.info.path
    error_starts = [a for a, _ in analysis.error_ranges]
    units = analysis.units  # sorted by start byte (extract_units)
    unit_starts = [u.start_byte for u in units]
    enclosing_of = _enclosing_indexes(units)
    imported = list(dict.fromkeys(i.local for i in analysis.imports))
    stem = file_stem(path)
    chunks = []
    for start, end, token_count in spans:
        key = (start, end, repo, strategy, profile, context_header)
        if key in analysis.built:
            chunks.append(analysis.built[key])
            continue
        text = data[start:end].decode("utf-8")
        main = _main_unit(units, unit_starts, enclosing_of, start, end)
        maybe = [name for name in imported if name in text]  # substring test first: cheap
        used = set(_IDENTIFIER.findall(text)) if maybe else ()
        imports = tuple(name for name in maybe if name in used)
        # A MISSING node has no width: it belongs to the chunk it touches.
        candidates = analysis.error_ranges[: bisect_right(error_starts, end)]
        has_error = any(
            (a < end and b > start) or (a == b and start <= a <= end) for a, b in candidates
        )
        chunks.append(
            Chunk(
                id=chunk_id(repo, path, strategy, start, end, text),
                repo=repo,
                file=path,
                language=analysis.language,
                strategy=strategy,
                start_line=analysis.line_of(start),
                end_line=analysis.line_of(max(start, end - 1)),
                start_byte=start,
                end_byte=end,
                token_count=token_count,
                text=text,
                context=context_line(stem, main.qualname if main else None)
                if context_header
                else "",
                symbol=main.qualname if main else None,
                symbol_kind=main.kind if main else None,
                parent=main.parent if main else None,
                symbols=tuple(
                    u.qualname
                    for u in units[bisect_left(unit_starts, start) : bisect_left(unit_starts, end)]
                ),
                imports=imports,
                exported=bool(main and main.exported),
                profile=profile,
                has_error=has_error,
            )
        )
        analysis.built[key] = chunks[-1]
    return chunks
