"""Search while a build runs: one count per build on the page, whenever it is read."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from helpers import GatedEmbedder
from ui_helpers import shown

from nexus.runtime import builds
from nexus.runtime.build_manager import BuildManager
from nexus.runtime.builds import IndexBuild
from nexus.ui import cache, indexing


def test_the_progress_line_and_the_partial_box_show_the_same_count(
    page, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build moves on while the page draws (on sentry after a Resume the line said
    1,936 of 6,674 and the Partial box 464): every read of it here counts one more
    chunk, and the page must still show one number."""
    gated = GatedEmbedder()
    monkeypatch.setattr(indexing, "EMBEDDER_FACTORY", lambda: gated)
    monkeypatch.setattr(indexing, "BUILDS", BuildManager(batch=8, memory=cache.memory))
    at = page("search").run()
    (build,) = indexing.BUILDS.builds()
    gated.step()
    assert gated.waiting.acquire(timeout=30)  # one batch in, the second one held
    real = IndexBuild.progress
    reads = iter(range(1, 10_000))

    def moving(self: IndexBuild) -> builds.BuildProgress:
        return replace(real(self), done=real(self).done + next(reads))

    monkeypatch.setattr(IndexBuild, "progress", moving)
    at.text_input(key="query").input("copy object delete original").run()
    assert not at.exception
    line = shown(at.get("progress")[0].proto.text)
    partial = next(shown(w.value) for w in at.warning if "Partial:" in shown(w.value))
    counted = re.search(r"([\d,]+)/([\d,]+) chunks", line)
    boxed = re.search(r"Partial: ([\d,]+) of ([\d,]+) chunks", partial)
    assert counted and boxed and counted.groups() == boxed.groups(), (line, partial)
    monkeypatch.setattr(IndexBuild, "progress", real)
    build.cancel()
    gated.gate.release()
    build.join(30)
