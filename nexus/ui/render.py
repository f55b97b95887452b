"""HTML for the dashboard: source with chunk bands, the AST outline, small labels.

Everything here returns strings (no streamlit calls) so it is easy to test; pages
pass the strings to ``st.html``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

import tree_sitter
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from nexus.languages import lexer_name
from nexus.types import Chunk

BAND_COLOURS = ("rgba(59,130,246,0.10)", "rgba(234,179,8,0.13)")
SELECTED_COLOUR = "rgba(34,197,94,0.22)"

CSS = """
<style>
.nx-code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;
  line-height:1.45;border:1px solid #e5e7eb;border-radius:6px;overflow:auto;background:#fff}
.nx-grid{display:grid;min-width:100%;width:max-content}
.nx-ln{color:#9ca3af;text-align:right;padding:0 8px 0 6px;user-select:none;
  border-right:1px solid #e5e7eb;position:sticky;left:0;background:#fafafa;z-index:1}
.nx-src{white-space:pre;padding:0 10px;min-width:0}
.nx-band{display:grid;grid-template-columns:4.2em 1fr}
.nx-pre{white-space:pre}
.nx-pane-src{white-space:pre;padding:0 10px;overflow:hidden;text-overflow:ellipsis}
.nx-label{font-family:system-ui,sans-serif;font-size:11.5px;padding:3px 10px 1px;color:#374151;
  border-top:2px solid #94a3b8;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.nx-label b{color:#111827}
.nx-flag{color:#b91c1c;font-weight:600}
.nx-head{font-family:system-ui,sans-serif;font-size:12px;font-weight:600;padding:4px 10px;
  background:#f3f4f6;border-bottom:1px solid #e5e7eb;position:sticky;top:0;z-index:2}
.nx-ast{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;line-height:1.5;
  max-height:520px;overflow:auto;border:1px solid #e5e7eb;border-radius:6px;padding:6px 8px}
.nx-ast details{margin-left:14px}
.nx-ast summary{cursor:pointer;margin-left:-14px}
.nx-ast .leaf{margin-left:0}
.nx-ast .kind{color:#1d4ed8}
.nx-ast .rng{color:#6b7280;font-size:11px}
.nx-ast .txt{color:#047857}
.nx-note{font-family:system-ui,sans-serif;color:#6b7280;font-size:12px;margin-top:4px}
</style>
"""


def highlighted_lines(text: str, language: str) -> list[str]:
    """The file as HTML, one highlighted line per entry (Pygments closes spans per line)."""
    try:
        lexer = get_lexer_by_name(lexer_name(language), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return [html.escape(line) for line in text.split("\n")]
    out = highlight(text, lexer, HtmlFormatter(nowrap=True, noclasses=True, style="friendly"))
    lines = out.split("\n")
    expected = text.count("\n") + 1
    if len(lines) < expected:
        lines += [""] * (expected - len(lines))
    return lines[:expected]


def chunk_label(index: int, chunk: Chunk, wordpieces: int | None = None, window: int = 0) -> str:
    """``#3 function getImage · 212 tok · L10–40`` with a flag when over the model window."""
    name = chunk.symbol or "(module code)"
    kind = f"{chunk.symbol_kind} " if chunk.symbol_kind else ""
    text = (
        f"#{index + 1} {html.escape(kind)}<b>{html.escape(name)}</b> · {chunk.token_count} tok"
        f" · L{chunk.start_line}–{chunk.end_line}"
    )
    if chunk.has_error:
        text += ' · <span class="nx-flag">parse error</span>'
    if wordpieces is not None and window and wordpieces > window:
        text += f' · <span class="nx-flag">⚠ {wordpieces} word pieces &gt; {window}</span>'
    return text


@dataclass
class Pane:
    """One column of chunk bands over the same source lines."""

    title: str
    chunks: Sequence[Chunk]
    labels: list[str] = field(default_factory=list)  # HTML per chunk; chunk_label by default
    selected: int | None = None  # index of the chunk drawn in the selection colour


def _owners(chunks: Sequence[Chunk], n_lines: int) -> list[int | None]:
    """Index of the chunk drawn on each line (a line two chunks share goes to the later)."""
    owner: list[int | None] = [None] * (n_lines + 1)
    for i, chunk in enumerate(chunks):
        for line in range(max(chunk.start_line, 1), min(chunk.end_line, n_lines) + 1):
            if owner[line] is None or chunk.start_line == line:
                owner[line] = i
    return owner


def band_view(lines: list[str], pane: Pane, height: int = 640) -> str:
    """One pane of chunk bands, drawn as one block per run of lines with the same chunk.

    A few hundred elements instead of a few per line: moving a slider on a
    1,000-line file redraws in a fraction of the time (bench/ui_latency.py).
    """
    owners = _owners(pane.chunks, len(lines))
    labels = pane.labels or [chunk_label(i, c) for i, c in enumerate(pane.chunks)]
    starting: dict[int, list[int]] = {}
    for i, chunk in enumerate(pane.chunks):
        starting.setdefault(chunk.start_line, []).append(i)
    blocks: list[str] = []
    line = 1
    while line <= len(lines):
        owner = owners[line]
        end = line
        while end < len(lines) and owners[end + 1] == owner and (end + 1) not in starting:
            end += 1
        if owner is None:
            colour = "transparent"
        else:
            colour = SELECTED_COLOUR if owner == pane.selected else BAND_COLOURS[owner % 2]
        label = ""
        if line in starting:
            text = " ‖ ".join(labels[i] for i in starting[line])
            label = f'<div class="nx-label">{text}</div>'
        numbers = "\n".join(str(n) for n in range(line, end + 1))
        source = "\n".join(lines[line - 1 : end]) or " "
        blocks.append(
            f'<div style="background:{colour}">{label}<div class="nx-band">'
            f'<div class="nx-ln nx-pre">{numbers}</div><div class="nx-src">{source}</div>'
            "</div></div>"
        )
        line = end + 1
    return (
        f'{CSS}<div class="nx-code" style="max-height:{height}px">'
        f'<div style="width:max-content;min-width:100%">{"".join(blocks)}</div></div>'
    )


def code_view(lines: list[str], panes: Sequence[Pane], height: int = 640) -> str:
    """Source lines with numbered rows and one column of chunk bands per pane.

    A label row opens each chunk; when several panes are shown, a label row in one
    pane leaves an empty row in the others, so the panes stay aligned by line.
    """
    if len(panes) == 1:
        return band_view(lines, panes[0], height)
    n = len(lines)
    owners = [_owners(p.chunks, n) for p in panes]
    labels = [p.labels or [chunk_label(i, c) for i, c in enumerate(p.chunks)] for p in panes]
    several = len(panes) > 1
    src_class = "nx-pane-src" if several else "nx-src"
    columns = "auto " + " ".join(["minmax(0,1fr)"] * len(panes)) if several else "auto 1fr"
    cells: list[str] = []
    if several:
        cells.append('<div class="nx-head"></div>')
        cells += [f'<div class="nx-head">{html.escape(p.title)}</div>' for p in panes]

    def colour(pane: int, owner: int | None) -> str:
        if owner is None:
            return "transparent"
        if owner == panes[pane].selected:
            return SELECTED_COLOUR
        return BAND_COLOURS[owner % 2]

    starting: list[dict[int, list[int]]] = []  # per pane: line -> chunks starting there
    for pane in panes:
        at: dict[int, list[int]] = {}
        for i, chunk in enumerate(pane.chunks):
            at.setdefault(chunk.start_line, []).append(i)
        starting.append(at)

    for line in range(1, n + 1):
        if any(line in at for at in starting):
            cells.append('<div class="nx-ln" style="border-top:2px solid #94a3b8"></div>')
            for k, owner in enumerate(o[line] for o in owners):
                here = starting[k].get(line, [])
                text = " ‖ ".join(labels[k][i] for i in here)
                style = f"background:{colour(k, owner)}"
                if not here:
                    style += ";border-top:2px solid transparent"
                cells.append(f'<div class="nx-label" style="{style}">{text}</div>')
        cells.append(f'<div class="nx-ln">{line}</div>')
        for k, o in enumerate(owners):
            cells.append(
                f'<div class="{src_class}" style="background:{colour(k, o[line])}">'
                f"{lines[line - 1] or ' '}</div>"
            )
    grid = f'<div class="nx-grid" style="grid-template-columns:{columns}">{"".join(cells)}</div>'
    return f'{CSS}<div class="nx-code" style="max-height:{height}px">{grid}</div>'


# --- the AST outline -----------------------------------------------------------------


@dataclass(frozen=True)
class OutlineRow:
    """One named node of the outline: depth below the chunk, kind, 1-based lines, short text."""

    depth: int
    kind: str
    start_line: int
    end_line: int
    text: str = ""


def ast_outline(
    tree: tree_sitter.Tree,
    start_byte: int,
    end_byte: int,
    max_depth: int = 10,
    max_nodes: int = 400,
) -> tuple[list[OutlineRow], bool]:
    """Named nodes inside a byte range, pre-order, walked with an explicit stack.

    Ancestors that only partly lie in the range are skipped (their children are
    listed at the same depth). Returns the rows and whether a cap cut the walk short.
    """
    rows: list[OutlineRow] = []
    cut = False
    stack: list[tuple[tree_sitter.Node, int]] = [(tree.root_node, 0)]
    while stack:
        node, depth = stack.pop()
        if node.end_byte <= start_byte or node.start_byte >= end_byte:
            continue
        child_depth = depth
        if node.is_named and node.start_byte >= start_byte and node.end_byte <= end_byte:
            if len(rows) >= max_nodes:
                cut = True
                break
            text = ""
            if node.named_child_count == 0 and node.end_byte - node.start_byte <= 40:
                text = (node.text or b"").decode("utf-8", "replace").replace("\n", " ")
            rows.append(
                OutlineRow(depth, node.type, node.start_point[0] + 1, node.end_point[0] + 1, text)
            )
            child_depth = depth + 1
        if child_depth > max_depth:
            cut = cut or node.named_child_count > 0
            continue
        stack.extend((child, child_depth) for child in reversed(node.children))
    return rows, cut


def outline_html(rows: list[OutlineRow], open_depth: int = 2, cut: bool = False) -> str:
    """Nested ``<details>`` for the outline rows (built without recursion)."""

    def label(row: OutlineRow) -> str:
        span = (
            f"L{row.start_line}"
            if row.start_line == row.end_line
            else f"L{row.start_line}–{row.end_line}"
        )
        text = f' <span class="txt">{html.escape(row.text)}</span>' if row.text else ""
        kind = f'<span class="kind">{html.escape(row.kind)}</span>'
        return f'{kind}{text} <span class="rng">{span}</span>'

    parts: list[str] = []
    open_levels: list[int] = []
    for i, row in enumerate(rows):
        while open_levels and open_levels[-1] >= row.depth:
            open_levels.pop()
            parts.append("</details>")
        has_children = i + 1 < len(rows) and rows[i + 1].depth > row.depth
        if has_children:
            attr = " open" if row.depth < open_depth else ""
            parts.append(f"<details{attr}><summary>{label(row)}</summary>")
            open_levels.append(row.depth)
        else:
            parts.append(f'<div class="leaf">{label(row)}</div>')
    parts += ["</details>"] * len(open_levels)
    note = '<div class="nx-note">Outline cut short by the depth/size cap.</div>' if cut else ""
    return f'{CSS}<div class="nx-ast">{"".join(parts) or "(no named nodes)"}</div>{note}'
