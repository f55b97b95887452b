"""AppTest fixtures: every page runs with the fake embedder and a temporary embedding cache."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from nexus.runtime.build_manager import BuildManager
from nexus.ui import analyses, cache, indexing, sweeps

ROOT = Path(__file__).resolve().parents[2]
PAGES = {
    "home": "app.py",
    "chunks": "pages/1_Chunks_and_AST.py",
    "compare": "pages/2_Compare.py",
    "search": "pages/3_Search.py",
    "evaluate": "pages/4_Evaluate.py",
    "export": "pages/5_Export.py",
}


@pytest.fixture(autouse=True)
def fake_embedder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Hashing embedder instead of the model; the cache in a temporary folder."""
    monkeypatch.setenv("NEXUS_UI_EMBEDDER", "fake")
    monkeypatch.setenv("NEXUS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(ROOT)
    # A fresh set of builds per test; each finishes before the script run goes on.
    monkeypatch.setattr(indexing, "BUILDS", BuildManager(wait_s=60, memory=cache.memory))
    monkeypatch.setattr(analyses, "TARGETS_WAIT_S", 60)  # a sample's units: on the first run
    monkeypatch.setattr(sweeps, "WAIT_S", 60)  # a sweep's answer: on the run that started it


@pytest.fixture
def page() -> Callable[[str], AppTest]:
    """``page("chunks")``: an AppTest of that page, not yet run."""

    def make(name: str) -> AppTest:
        return AppTest.from_file(str(ROOT / PAGES[name]), default_timeout=60)

    return make
