"""Plain-text tables for the command line."""

from __future__ import annotations

#: A table as data: its header and its rows of cells.
Table = tuple[list[str], list[list[str]]]


def text_table(
    header: list[str], rows: list[list[str]], right: frozenset[int] = frozenset()
) -> list[str]:
    """Lines of a table, columns separated by two spaces; ``right`` columns right-aligned."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return "  ".join(padded).rstrip()

    return [line(header), "  ".join("-" * w for w in widths), *(line(row) for row in rows)]
