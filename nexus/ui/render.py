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

from nexus.chunking.languages import lexer_name
from nexus.retrieval.preview import Preview
from nexus.types import Chunk, Unit
from nexus.ui import safe
from nexus.ui.linewindow import LineWindow

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
.nx-pane-src{white-space:pre-wrap;overflow-wrap:anywhere;padding:0 10px;min-width:0}
.nx-cut{color:#b91c1c;font-weight:600}
.nx-units{font-family:system-ui,sans-serif;font-size:12px;margin:0 0 6px;line-height:1.9;
  max-height:7.6em;overflow-y:auto}
.nx-units a{display:inline-block;padding:0 7px;margin:0 4px 2px 0;border-radius:10px;
  background:#fee2e2;color:#7f1d1d;text-decoration:none;cursor:pointer;white-space:nowrap}
.nx-units a:hover{background:#fecaca}
[data-chunk]{cursor:pointer}
.nx-label{font-family:system-ui,sans-serif;font-size:11.5px;padding:3px 10px 1px;color:#374151;
  border-top:2px solid #94a3b8;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.nx-label b{color:#111827}
.nx-grid .nx-label{white-space:normal}
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


#: Page-wide rules for narrow windows (900 px with the sidebar open leaves ~450 px):
#: columns inside a ``st.container(key="nx_stack_...")`` stack, and metrics inside a
#: ``st.container(key="nx_metrics_...")`` wrap to three a row, so no value is cut.
RESPONSIVE_CSS = """
<style>
@media (max-width: 1200px) {
  [class*="st-key-nx_stack"] [data-testid="stHorizontalBlock"] {flex-wrap: wrap}
  [class*="st-key-nx_stack"] [data-testid="stColumn"] {min-width: 100%; flex: 1 1 100%}
  [class*="st-key-nx_metrics"] [data-testid="stHorizontalBlock"] {flex-wrap: wrap; row-gap: 0.5rem}
  [class*="st-key-nx_metrics"] [data-testid="stColumn"] {min-width: 30%; flex: 1 1 30%}
}
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


#: Height of one source line in the code view (12.5 px font x 1.45), for scrolling to a line.
LINE_HEIGHT_PX = 18.125


def chunk_label(
    index: int,
    chunk: Chunk,
    wordpieces: int | None = None,
    window: int = 0,
    piece: tuple[int, int] | None = None,
    cuts: Sequence[Unit] = (),
) -> str:
    """``#3 function getImage 2/3 · 212 tok · L10–40``: ``piece`` numbers the pieces of a
    split unit, ``cuts`` are the units this chunk's first line cuts, flags for parse
    errors and for more word pieces than the model window."""
    name = chunk.symbol or "(module code)"
    kind = f"{chunk.symbol_kind} " if chunk.symbol_kind else ""
    part = f" {piece[0]}/{piece[1]}" if piece else ""
    text = (
        f"#{index + 1} {html.escape(kind)}<b>{html.escape(name)}</b>{part}"
        f" · {chunk.token_count} tok · L{chunk.start_line}–{chunk.end_line}"
    )
    for unit in cuts:
        text += (
            f' · <span class="nx-cut">cuts {html.escape(unit.qualname)}'
            f" L{unit.start_line}–{unit.end_line}</span>"
        )
    if chunk.has_error:
        text += ' · <span class="nx-flag">parse error</span>'
    if wordpieces is not None and window and wordpieces > window:
        text += f' · <span class="nx-flag">! {wordpieces} word pieces &gt; {window}</span>'
    return text


def chunk_hover(chunk: Chunk) -> str:
    """A chart point's hover text: file, symbol and lines (escaped: Plotly reads a little
    HTML; one line, so no tag of ours sits beside the names)."""
    name = chunk.symbol or "(module code)"
    return (
        f"{safe.plot(chunk.file)} · {safe.plot(name)} · "
        f"L{chunk.start_line}–{chunk.end_line} · {chunk.token_count} tok"
    )


def unit_links(title: str, units: Sequence[Unit]) -> str:
    """A row of unit names that scroll the code view to each unit (``data-goto``)."""
    if not units:
        return f'<div class="nx-units"><b>{html.escape(title)}:</b> none</div>'
    links = "".join(
        f'<a href="#" data-goto="{u.start_line}" title="L{u.start_line}–{u.end_line}">'
        f"{html.escape(u.qualname)} L{u.start_line}–{u.end_line}</a>"
        for u in units
    )
    return f'<div class="nx-units"><b>{html.escape(title)} ({len(units)}):</b> {links}</div>'


@dataclass
class Pane:
    """One column of chunk bands over the same source lines."""

    title: str
    chunks: Sequence[Chunk]
    labels: list[str] = field(default_factory=list)  # HTML per chunk; chunk_label by default
    selected: int | None = None  # index of the chunk drawn in the selection colour
    clickable: bool = False  # bands carry ``data-chunk`` (the code view reports clicks)


def _owners(
    chunks: Sequence[Chunk], n_lines: int, first: int = 1, last: int | None = None
) -> list[int | None]:
    """Index of the chunk drawn on each line (a line two chunks share goes to the later);
    only lines ``first``..``last`` are filled (the window drawn of a large file)."""
    last = n_lines if last is None else min(last, n_lines)
    owner: list[int | None] = [None] * (n_lines + 1)
    for i, chunk in enumerate(chunks):
        for line in range(max(chunk.start_line, first, 1), min(chunk.end_line, last) + 1):
            if owner[line] is None or chunk.start_line == line:
                owner[line] = i
    return owner


def band_view(
    lines: list[str], pane: Pane, height: int = 640, window: LineWindow | None = None
) -> str:
    """One pane of chunk bands, drawn as one block per run of lines with the same chunk.

    A few hundred elements instead of a few per line: moving a slider on a
    1,000-line file redraws in a fraction of the time (bench/dashboard/ui_latency.py). Only
    the lines of ``window`` are drawn (all by default); a chunk that began above
    the window is labelled on its first line.
    """
    first, last = (1, len(lines)) if window is None else (window.first, window.last)
    last = min(last, len(lines))
    owners = _owners(pane.chunks, len(lines), first, last)
    labels = pane.labels or [chunk_label(i, c) for i, c in enumerate(pane.chunks)]
    starting: dict[int, list[int]] = {}
    for i, chunk in enumerate(pane.chunks):
        starting.setdefault(chunk.start_line, []).append(i)
    if first <= last and (owner := owners[first]) is not None and first not in starting:
        starting[first] = [owner]
    blocks: list[str] = []
    line = first
    while line <= last:
        owner = owners[line]
        end = line
        while end < last and owners[end + 1] == owner and (end + 1) not in starting:
            end += 1
        if owner is None:
            colour = "transparent"
        else:
            colour = SELECTED_COLOUR if owner == pane.selected else BAND_COLOURS[owner % 2]
        label = ""
        if line in starting:
            text = " | ".join(labels[i] for i in starting[line])
            label = f'<div class="nx-label">{text}</div>'
        numbers = "\n".join(str(n) for n in range(line, end + 1))
        source = "\n".join(lines[line - 1 : end]) or " "
        click = f' data-chunk="{owner}"' if pane.clickable and owner is not None else ""
        blocks.append(
            f'<div style="background:{colour}"{click}>{label}'
            f'<div class="nx-band" data-line="{line}" data-lh="{LINE_HEIGHT_PX}">'
            f'<div class="nx-ln nx-pre">{numbers}</div><div class="nx-src">{source}</div>'
            "</div></div>"
        )
        line = end + 1
    return (
        f'{CSS}<div class="nx-code" style="max-height:{height}px">'
        f'<div style="width:max-content;min-width:100%">{"".join(blocks)}</div></div>'
    )


def code_view(
    lines: list[str],
    panes: Sequence[Pane],
    height: int = 640,
    head: str = "",
    window: LineWindow | None = None,
) -> str:
    """Source lines with numbered rows and one column of chunk bands per pane.

    A label row opens each chunk; when several panes are shown, a label row in one
    pane leaves an empty row in the others, so the panes stay aligned by line (one
    grid, so they scroll together), and the grid is as wide as its container: long
    lines wrap inside their pane instead of pushing the last pane off screen.
    ``head`` is HTML drawn above the code (``unit_links``); only the lines of
    ``window`` are drawn (all by default).
    """
    if len(panes) == 1:
        return head + band_view(lines, panes[0], height, window)
    n = len(lines)
    first, last = (1, n) if window is None else (window.first, min(window.last, n))
    owners = [_owners(p.chunks, n, first, last) for p in panes]
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
    for k, at in enumerate(starting):  # a chunk that began above the window
        if first <= last and (owner := owners[k][first]) is not None and first not in at:
            at[first] = [owner]

    for line in range(first, last + 1):
        if any(line in at for at in starting):
            cells.append('<div class="nx-ln" style="border-top:2px solid #94a3b8"></div>')
            for k, owner in enumerate(o[line] for o in owners):
                here = starting[k].get(line, [])
                text = " | ".join(labels[k][i] for i in here)
                style = f"background:{colour(k, owner)}"
                if not here:
                    style += ";border-top:2px solid transparent"
                cells.append(f'<div class="nx-label" style="{style}">{text}</div>')
        cells.append(f'<div class="nx-ln" data-line="{line}">{line}</div>')
        for k, o in enumerate(owners):
            cells.append(
                f'<div class="{src_class}" style="background:{colour(k, o[line])}">'
                f"{lines[line - 1] or ' '}</div>"
            )
    style = f"grid-template-columns:{columns};width:100%"
    grid = f'<div class="nx-grid" style="{style}">{"".join(cells)}</div>'
    return f'{CSS}{head}<div class="nx-code" style="max-height:{height}px">{grid}</div>'


# --- the AST outline -----------------------------------------------------------------


#: Caps on the outline: deep enough that a chunk of the sample repos is never cut
#: (rows below the second level start folded), small enough to draw at once.
MAX_OUTLINE_DEPTH = 40
MAX_OUTLINE_NODES = 1500


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
    max_depth: int = MAX_OUTLINE_DEPTH,
    max_nodes: int = MAX_OUTLINE_NODES,
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
    note = (
        f'<div class="nx-note">Outline cut short: it shows at most {MAX_OUTLINE_NODES:,} nodes '
        f"and {MAX_OUTLINE_DEPTH} levels.</div>"
        if cut
        else ""
    )
    return f'{CSS}<div class="nx-ast">{"".join(parts) or "(no named nodes)"}</div>{note}'


# --- search hits ---------------------------------------------------------------------


def preview_html(preview: Preview, chunk: Chunk) -> str:
    """A hit's preview: numbered, highlighted lines, those that match the query marked.
    The whole chunk is highlighted, so a window that starts inside a comment or a string
    is coloured as one, not as code with error tokens."""
    first = preview.start_line - chunk.start_line
    lines = highlighted_lines(chunk.text, chunk.language)[first : first + len(preview.lines)]
    cells = []
    for number, source in enumerate(lines, start=preview.start_line):
        colour = SELECTED_COLOUR if number in preview.marked else "transparent"
        mark = ' data-match="1"' if number in preview.marked else ""
        cells.append(
            f'<div class="nx-ln"{mark}>{number}</div>'
            f'<div class="nx-src" style="background:{colour}">{source or " "}</div>'
        )
    grid = f'<div class="nx-grid" style="grid-template-columns:auto 1fr">{"".join(cells)}</div>'
    return f'{CSS}<div class="nx-code">{grid}</div>'
