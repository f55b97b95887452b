"""Result windows: neighbouring chunks of one file shown as one hit.

An AST chunk is one unit (a function, a method), half the size of a 50-line window, so
an answer that spans two neighbouring methods takes two of the top 10 places, and a
question about how things fit together sees less of the file than a line-based index
shows. The ranking stage therefore gathers each hit's neighbouring candidates (chunks
next to it in the index, in the same file, that the query also retrieved) into one
window of at most a screenful of lines; the top k then holds k places, not k pieces.

A window is a ``Chunk`` like any other, so everything downstream (the metrics, the
dashboard, ``nexus search --json``) reads it unchanged; its text is exactly its file's
slice: chunks are only joined across a gap of blank lines or an overlap whose bytes
agree, never across text the index does not hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from nexus.types import Chunk


def joinable(first: Chunk, second: Chunk) -> bool:
    """Whether ``second`` directly follows ``first`` in its file with nothing between
    them but line breaks (or an overlap with the same bytes): their join is exact."""
    if first.file != second.file or second.start_byte < first.start_byte:
        return False
    head, tail = first.text.encode("utf-8"), second.text.encode("utf-8")
    if len(head) != first.end_byte - first.start_byte or len(tail) != (
        second.end_byte - second.start_byte
    ):
        return False
    if second.start_byte < first.end_byte:  # overlapping windows (line-based overlap)
        shared = first.end_byte - second.start_byte
        return second.end_byte > first.end_byte and head[-shared:] == tail[:shared]
    return second.start_byte - first.end_byte == _line_breaks_between(first, second)


def _line_breaks_between(first: Chunk, second: Chunk) -> int:
    return second.start_line - first.end_line - first.text.endswith("\n")


def join(first: Chunk, second: Chunk) -> Chunk:
    """One chunk over both (``joinable(first, second)`` must hold): its text is the file's
    slice, its symbol the first's, its units both chunks'."""
    if second.start_byte < first.end_byte:
        tail = second.text.encode("utf-8")[first.end_byte - second.start_byte :]
        text = first.text + tail.decode("utf-8")
    else:
        text = first.text + "\n" * _line_breaks_between(first, second) + second.text
    return replace(
        first,
        id=f"{first.id}+{second.id}",
        end_line=second.end_line,
        end_byte=second.end_byte,
        token_count=first.token_count + second.token_count,
        text=text,
        symbols=tuple(dict.fromkeys((*first.symbols, *second.symbols))),
        imports=tuple(sorted({*first.imports, *second.imports})),
        exported=first.exported or second.exported,
        has_error=first.has_error or second.has_error,
    )


def clip(chunk: Chunk, start_line: int, end_line: int) -> Chunk:
    """``chunk`` cut to its lines ``start_line``..``end_line`` (within its own): the file's
    slice of those lines, bytes and token count with them (tokens in proportion to bytes)."""
    start_line, end_line = max(start_line, chunk.start_line), min(end_line, chunk.end_line)
    if (start_line, end_line) == (chunk.start_line, chunk.end_line):
        return chunk
    lines = chunk.text.encode("utf-8").split(b"\n")
    skip, keep = start_line - chunk.start_line, end_line - start_line + 1
    before = sum(len(line) + 1 for line in lines[:skip])
    kept = b"\n".join(lines[skip : skip + keep])
    whole = max(chunk.end_byte - chunk.start_byte, 1)
    return replace(
        chunk,
        id=f"{chunk.id}:{start_line}-{end_line}",
        start_line=start_line,
        end_line=end_line,
        start_byte=chunk.start_byte + before,
        end_byte=chunk.start_byte + before + len(kept),
        token_count=max(1, round(chunk.token_count * len(kept) / whole)),
        text=kept.decode("utf-8"),
    )


def window_chunk(chunks: Sequence[Chunk], head: int, keys: Sequence[int]) -> Chunk:
    """The chunk a window of neighbouring ``keys`` shows; the ``head`` chunk (the best
    scored) lends it its symbol, kind and context, unless the head is module code and the
    window holds a unit: then the largest unit names it (a window over ``LineDecoder``
    and the module lines after it is ``LineDecoder``, not "module code")."""
    ordered = sorted(keys)
    window = chunks[ordered[0]]
    for key in ordered[1:]:
        window = join(window, chunks[key])
    best = chunks[head]
    if best.symbol is None:
        units = [chunks[key] for key in ordered if chunks[key].symbol is not None]
        if units:
            best = max(units, key=lambda c: c.end_line - c.start_line)
    return replace(
        window,
        id=best.id if len(ordered) == 1 else window.id,
        context=best.context,
        symbol=best.symbol,
        symbol_kind=best.symbol_kind,
        parent=best.parent,
    )
