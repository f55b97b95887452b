"""Helpers shared by the AppTests."""

from __future__ import annotations

import io
import json
import re
import zipfile
from html import unescape
from pathlib import Path

from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from nexus.ui.safe import WORD_JOINER

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_repos"


def zip_folder(folder: Path) -> bytes:
    """A zip of ``folder`` (entries relative to it), built in memory."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def metric(at: AppTest, label: str) -> str:
    """The value of the metric with this label."""
    return next(m.value for m in at.metric if m.label == label)


# --- untrusted text: what a page renders as markdown ----------------------------------

#: Element types whose text Streamlit shows as plain text (or sanitised HTML), not markdown.
_PLAIN = {"code", "text", "html", "json", "arrow_data_frame", "plotly_chart", "selectbox"}
#: Words that only the hostile fixtures put on a page (never in the pages' own bold text).
MARKERS = ("evil", "dunder", "bold")
_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
#: What GitHub-flavoured markdown links in plain text, escaped or not.
_BARE_LINK = re.compile(r"https?://|www\.|[-.\w+]@[-\w]+\.", re.IGNORECASE)


def markdown_texts(at: AppTest) -> list[tuple[str, str]]:
    """``(element type, text)`` for every string the page renders as markdown: bodies of
    markdown, captions, headings, alerts and metrics, labels and tooltips of widgets,
    expanders and tabs, radio options."""
    found = []
    for node in [*at.main, *at.sidebar]:
        kind, proto = getattr(node, "type", ""), getattr(node, "proto", None)
        if kind in _PLAIN or not hasattr(proto, "ListFields"):
            continue
        for field, value in proto.ListFields():
            if field.name in ("body", "label", "help") and isinstance(value, str):
                found.append((kind, value))
            elif field.name == "options" and kind == "radio":
                found.extend((kind, str(option)) for option in value)
    return found


def markdown_problems(text: str) -> list[str]:
    """What in ``text`` would not show as text: images, links, HTML, bold or italic
    hostile words, a bare link outside code (Streamlit links it even when escaped), or a
    hostile URL left unescaped."""
    problems = []
    inline = [t for block in _MARKDOWN.parse(text) for t in (block.children or [block])]
    emphasis = 0
    for token in inline:
        if token.type in ("image", "link_open", "html_inline", "html_block"):
            problems.append(f"{token.type} in {text!r}")
        emphasis += {"strong_open": 1, "em_open": 1, "strong_close": -1, "em_close": -1}.get(
            token.type, 0
        )
        if emphasis and token.type == "text" and any(m in token.content for m in MARKERS):
            problems.append(f"emphasised {token.content!r} in {text!r}")
        if token.type == "text" and _BARE_LINK.search(token.content):
            problems.append(f"bare link {token.content!r} in {text!r}")
    if "evil.invalid" in _CODE_SPAN.sub("", text):
        problems.append(f"unescaped URL in {text!r}")
    return problems


def plotly_problems(at: AppTest) -> list[str]:
    """Hostile strings that reach a Plotly figure with live tags (Plotly reads <a>, <b>)."""
    problems = []
    for node in [*at.main, *at.sidebar]:
        if getattr(node, "type", "") != "plotly_chart":
            continue
        stack = [json.loads(node.proto.spec)]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, str) and "<" in item and any(m in item for m in MARKERS):
                problems.append(f"plotly text {item!r}")
    return problems


def shown(markdown: str) -> str:
    """The text a reader sees for this markdown (tags dropped, escapes and entities read)."""
    html = _MARKDOWN.render(markdown)
    return unescape(re.sub(r"<[^>]*>", " ", html)).replace(WORD_JOINER, "")


def rendered_text(at: AppTest) -> str:
    """The text a reader sees in all of the page's markdown."""
    return " ".join(shown(text) for _, text in markdown_texts(at))


def page_problems(at: AppTest) -> list[str]:
    """Everything on the page that would render hostile text as markup."""
    found = [p for _, text in markdown_texts(at) for p in markdown_problems(text)]
    return found + plotly_problems(at)


def code_views(at: AppTest) -> list[dict]:
    """The data of each code view component on the page (``html``, ``scroll_to``)."""
    return [json.loads(e.proto.json) for e in at.get("bidi_component")]
