"""The code view as a small Streamlit component: clicks on a band come back to Python,
and the page can scroll the source to a line.

``st.html`` cannot do either (no script runs in it). The HTML itself comes from
``nexus.ui.render`` (escaped there); this module only mounts it, keeps the scroll
position across reruns, scrolls to ``scroll_to`` when that (or the window of lines
drawn) changes, and reports which chunk (``data-chunk``) was clicked. ``data-goto``
links scroll to a line without a rerun (the split units listed on Compare), or,
for a line outside the window drawn of a large file, ask the page to move it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import streamlit as st

from nexus.ui.linewindow import LineWindow

_JS = """
export default function(component) {
  const { data, setTriggerValue, parentElement } = component;
  let root = parentElement.querySelector('.nx-root');
  if (!root) {
    root = document.createElement('div');
    root.className = 'nx-root';
    parentElement.appendChild(root);
  }
  const oldBox = root.querySelector('.nx-code');
  const kept = oldBox ? oldBox.scrollTop : 0;
  if (root.dataset.html !== data.digest) {
    root.innerHTML = data.html;
    root.dataset.html = data.digest;
  }
  const box = root.querySelector('.nx-code');
  const scrollToLine = (line) => {
    if (!box) return;
    const rows = Array.from(root.querySelectorAll('[data-line]'));
    let row = null;
    for (const r of rows) {
      if (Number(r.dataset.line) <= line) row = r; else break;
    }
    if (!row) { box.scrollTop = 0; return; }
    const extra = (line - Number(row.dataset.line)) * (row.dataset.lh ? Number(row.dataset.lh) : 0);
    const top = row.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
    box.scrollTop = Math.max(0, top + extra - 24);
  };
  // Scroll when the target line or the window of lines drawn changed.
  const target = String(data.scroll_to || '');
  const place = target + '@' + String(data.first || 1);
  if (box && root.dataset.scrolled !== place) {
    if (target) scrollToLine(Number(target)); else box.scrollTop = 0;
  } else if (box) {
    box.scrollTop = kept;
  }
  root.dataset.scrolled = place;
  root.querySelectorAll('[data-chunk]').forEach((el) => {
    el.onclick = () => setTriggerValue('clicked', Number(el.dataset.chunk));
  });
  // A line outside the window drawn: ask the page to move the window there.
  root.querySelectorAll('[data-goto]').forEach((el) => {
    el.onclick = (event) => {
      event.preventDefault();
      const line = Number(el.dataset.goto);
      if (line < (data.first || 1) || (data.last && line > data.last)) {
        setTriggerValue('goto', line);
      } else {
        scrollToLine(line);
      }
    };
  });
}
"""

_COMPONENT = st.components.v2.component("nexus_code_view", js=_JS)


def code_view(
    html: str,
    *,
    key: str,
    scroll_to: int | None = None,
    window: LineWindow | None = None,
    on_click: Callable[[], None] | None = None,
    on_goto: Callable[[], None] | None = None,
) -> None:
    """Draw ``html`` (from ``render.code_view``); ``on_click`` runs after a band click,
    with the chunk index in ``clicked_chunk(key)``. ``window`` is the lines the HTML
    draws of a large file: moving it scrolls to ``scroll_to`` (or the top) again, and
    a ``data-goto`` link outside it runs ``on_goto`` with the line in
    ``goto_line(key)``."""
    data = {
        "html": html,
        "digest": hashlib.sha1(html.encode()).hexdigest(),
        "scroll_to": scroll_to or 0,
        "first": window.first if window else 1,
        "last": window.last if window else 0,
    }
    kwargs: dict[str, Any] = {"data": data, "key": key}
    if on_click is not None:
        kwargs["on_clicked_change"] = on_click
    if on_goto is not None:
        kwargs["on_goto_change"] = on_goto
    _COMPONENT(**kwargs)


def clicked_chunk(key: str) -> int | None:
    """The chunk index the last click on the view ``key`` reported, if any."""
    value = st.session_state.get(key)
    clicked = value.get("clicked") if hasattr(value, "get") else None
    return int(clicked) if isinstance(clicked, int | float) else None


def goto_line(key: str) -> int | None:
    """The line a ``data-goto`` link outside the window of the view ``key`` asked for."""
    value = st.session_state.get(key)
    line = value.get("goto") if hasattr(value, "get") else None
    return int(line) if isinstance(line, int | float) else None
