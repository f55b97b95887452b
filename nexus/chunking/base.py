"""Turn byte ranges into ``Chunk`` records: exact text, tokens, symbols, embedding text.

Both chunkers produce ranges; this module gives every range the same metadata,
so line-based and AST chunks are compared like for like.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right

from nexus.chunking.analysis import FileAnalysis, UnitTable
from nexus.chunking.cuts import starts_mid_line
from nexus.chunking.languages import LANGUAGES
from nexus.chunking.profiles import TYPE_KINDS
from nexus.types import Chunk, Unit


def id_prefix(repo: str, path: str, strategy: str) -> bytes:
    """What every chunk id of one file and strategy starts from (see ``chunk_id``)."""
    return f"{repo}\0{path}\0{strategy}\0".encode()


def chunk_id(prefix: bytes, start: int, end: int, text: bytes) -> str:
    """Stable id: the same slice of the same content always gets the same id."""
    digest = hashlib.sha1(b"%s%d\0%d\0" % (prefix, start, end))
    digest.update(text)
    return digest.hexdigest()[:16]


def _main_unit(
    table: UnitTable, first: int, last: int, start: int, end: int, transparent: frozenset[str]
) -> Unit | None:
    """The unit the byte range ``[start, end)`` is about; ``units[first:last]`` are the
    units that start inside it.

    The main unit is the largest unit inside the range at the level of the range
    (a method in a piece of its class; not a closure in a piece of its function);
    a range with none such is a piece of the innermost unit that contains it.
    A range that cuts a function across one of its ends (a line window, or a
    closing ``});`` joined to the next statement) is about the unit it holds most of.
    A ``transparent`` unit (C# namespace) is no level: its units are at its own level.
    """
    units, enclosing_of = table.units, table.enclosing
    # Units the range overlaps without holding them whole: a piece of a long unit,
    # or a class header with its fields. Before the range, that is the innermost unit
    # still open at its start: earlier siblings of a closed unit are closed too.
    around = first - 1
    while around >= 0 and units[around].end_byte <= start:
        around = enclosing_of[around]
    # Most ranges cut no unit: the units open at the start go past its end (their
    # ancestors too) and the units starting inside end inside.
    cuts_none = (around < 0 or units[around].end_byte >= end) and all(
        unit.end_byte <= end for unit in units[first:last]
    )
    cut = None if cuts_none else _most_held(table, around, first, last, start, end)
    if cut is not None:
        return cut
    enclosing = units[around] if around >= 0 else None  # the smallest of them
    inside: list[Unit] = []
    for unit in units[first:last]:
        if unit.end_byte <= end:
            inside.append(unit)
        elif enclosing is None or _size(unit) < _size(enclosing):
            enclosing = unit
    if enclosing is not None and enclosing.kind not in TYPE_KINDS:
        return enclosing  # closures inside a piece of a function stay its own
    level = enclosing.qualname if enclosing is not None else None
    if enclosing is not None and enclosing.kind in transparent:
        level = enclosing.parent
    at_level = [u for u in inside if u.parent == level] or ([] if enclosing else inside)
    # A whole namespace is named after the largest unit it holds, not after itself.
    at_level = [u for u in at_level if u.kind not in transparent] or at_level
    if at_level:
        return max(at_level, key=_size)
    return enclosing


def _size(unit: Unit) -> int:
    return unit.end_byte - unit.start_byte


def _most_held(
    table: UnitTable, around: int, first: int, last: int, start: int, end: int
) -> Unit | None:
    """When the range cuts a function-like unit across an end of it, the unit with the
    most bytes in the range (a class around the whole range is the level, not a
    candidate); otherwise None. ``around`` is the innermost unit open at ``start``."""
    overlapping = list(table.units[first:last])
    while around >= 0:  # the units open at the start: the innermost and its ancestors
        overlapping.append(table.units[around])
        around = table.enclosing[around]

    def contains(unit: Unit) -> bool:
        return unit.start_byte <= start and unit.end_byte >= end

    def inside(unit: Unit) -> bool:
        return unit.start_byte >= start and unit.end_byte <= end

    if not any(u.kind not in TYPE_KINDS and not contains(u) and not inside(u) for u in overlapping):
        return None
    candidates = [u for u in overlapping if not (u.kind in TYPE_KINDS and contains(u))]
    return max(
        candidates,
        key=lambda u: (min(end, u.end_byte) - max(start, u.start_byte), _size(u)),
    )


def file_stem(path: str) -> str:
    """``src/services/payment.spec.ts`` -> ``payment``."""
    return path.rsplit("/", 1)[-1].split(".", 1)[0]


def context_line(stem: str, symbol: str | None) -> str:
    """The file's stem and the chunk's symbol path (``payment PaymentService.charge``).

    What a bare slice lacks, and on both benchmark sets the most useful thing to
    put first in the model window (bench/retrieval/retrieval.py).
    """
    return f"{stem} {symbol}" if symbol else stem


def build_chunks(
    analysis: FileAnalysis,
    spans: list[tuple[int, int, int]],
    units: UnitTable,
    *,
    repo: str,
    strategy: str,
    profile: str,
    context_header: bool,
) -> list[Chunk]:
    """Chunks for ``(start_byte, end_byte, exact tokens)`` ranges of one analysed file;
    their symbols come from ``units`` (all the file's, or those the chunker met)."""
    data = analysis.data
    path = analysis.source.info.path
    errors = analysis.error_ranges
    error_starts = [a for a, _ in errors]
    unit_starts, line_starts = units.starts, analysis.line_starts
    names = [name.decode("utf-8") for name in analysis.imported_names]
    use_offsets, use_names = analysis.import_uses
    stem = file_stem(path)
    prefix = id_prefix(repo, path, strategy)
    built = analysis.built
    transparent = LANGUAGES[analysis.language].transparent_kinds
    chunks = []
    for start, end, token_count in spans:
        first = bisect_left(unit_starts, start)
        last = bisect_left(unit_starts, end, first)
        main = _main_unit(units, first, last, start, end, transparent)
        symbols = units.units[first:last]
        # The units met depend on the budget: the same range may hold others.
        where = (main.start_byte, main.end_byte) if main else None
        key = (start, end, repo, strategy, profile, context_header, where, len(symbols))
        chunk = built.get(key)
        if chunk is None:
            raw = data[start:end]
            uses = use_names[bisect_left(use_offsets, start) : bisect_left(use_offsets, end)]
            # A MISSING node has no width: it belongs to the chunk it touches.
            has_error = bool(errors) and any(
                (a < end and b > start) or (a == b and start <= a <= end)
                for a, b in errors[: bisect_right(error_starts, end)]
            )
            symbol = main.qualname if main else None
            chunk = built[key] = Chunk(
                id=chunk_id(prefix, start, end, raw),
                repo=repo,
                file=path,
                language=analysis.language,
                strategy=strategy,
                start_line=bisect_right(line_starts, start),
                end_line=bisect_right(line_starts, max(start, end - 1)),
                start_byte=start,
                end_byte=end,
                token_count=token_count,
                text=raw.decode("utf-8"),
                context=context_line(stem, symbol) if context_header else "",
                symbol=symbol,
                symbol_kind=main.kind if main else None,
                parent=main.parent if main else None,
                symbols=tuple([u.qualname for u in symbols]),
                imports=tuple([names[i] for i in sorted(set(uses))]) if uses else (),
                exported=bool(main and main.exported),
                profile=profile,
                has_error=has_error,
                starts_mid_line=starts_mid_line(data, start),
            )
        chunks.append(chunk)
    return chunks
