"""Tables for people: plain text for the command line, markdown for results files."""

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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(table: Table) -> str:
    """A GitHub-flavoured markdown table."""
    headers, rows = table
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |"]
    lines.append("|" + "---|" * len(headers))
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def render_text(table: Table, max_width: int = 60) -> str:
    """A plain-text table with aligned columns; cells longer than ``max_width`` are cut."""
    headers, rows = table

    def cut(text: str) -> str:
        text = text.replace("\n", " ")
        return text if len(text) <= max_width else text[: max_width - 1] + "…"

    lines = text_table([cut(c) for c in headers], [[cut(c) for c in row] for row in rows])
    return "\n".join(lines) + "\n"
