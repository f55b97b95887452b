"""The dashboard's memory budget: pages keep working under a tiny budget by parsing
again, and a repository too large for it is refused with a message."""

from __future__ import annotations

import io
import zipfile

import pytest
from ui_helpers import metric, shown

from nexus.ui import analyses, cache, repos

#: The default sample's parsed files are estimated at ~2.5 MB: with up to 90% of
#: 3 MB for one repository it is allowed, but its parsed files, chunks, indexes and
#: the other pages' entries never fit at once.
TINY_MB = "3"


@pytest.fixture
def tiny_budget(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(cache.MEMORY_ENV, TINY_MB)
    monkeypatch.setattr(repos, "REPO_SHARE", 0.9)
    memory = cache.memory()
    memory.clear()
    return memory


def test_pages_work_within_a_tiny_budget_by_parsing_again(
    page, tiny_budget, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = []
    analyze = analyses.analyze
    monkeypatch.setattr(
        analyses, "analyze", lambda source, enc: parsed.append(1) or analyze(source, enc)
    )
    at = page("home").run()
    assert not at.exception
    visits = [
        ("pages/1_Chunks_and_AST.py", "Chunks"),
        ("pages/2_Compare.py", None),
        ("pages/3_Search.py", None),
        ("pages/5_Export.py", None),
        ("pages/1_Chunks_and_AST.py", "Chunks"),
        ("pages/2_Compare.py", None),
    ]
    for path, chunk_metric in visits:
        at.switch_page(path).run()
        assert not at.exception, path
        assert not at.error, (path, [e.value for e in at.error])
        assert tiny_budget.used <= tiny_budget.budget
        if chunk_metric:
            assert int(metric(at, chunk_metric)) > 0
    at.slider(key="max_tokens").set_value(256).run()  # new chunks for every page
    at.switch_page("pages/3_Search.py").run()
    at.text_input(key="query").input("resize an image").run()
    assert not at.exception
    assert [m for m in at.markdown if m.value.startswith("**1.**")], "search answered"
    stats = tiny_budget.stats()
    assert stats.evictions > 0, "the budget was small enough to drop entries"
    assert stats.used <= stats.budget
    # Parsed files were dropped and parsed again on demand.
    assert len(parsed) > len(repos.chunkable_paths(at.session_state["repo"]))


def _generated_zip(files: int, size: int) -> bytes:
    """``files`` plain-JS files of about ``size`` bytes each."""
    body = "".join(f"function f{i}(a) {{\n  return a + {i};\n}}\n" for i in range(size // 40))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(files):
            archive.writestr(f"big/src/m{n}.js", body.replace("function f", f"function m{n}_"))
    return buffer.getvalue()


def test_upload_too_large_for_the_budget_is_refused(page, tiny_budget) -> None:
    at = page("home").run()
    before = at.session_state["repo"]
    at.radio(key="source").set_value("Upload a zip").run()
    data = _generated_zip(files=4, size=100_000)  # ~18 MB parsed, 2.7 MB allowed
    at.file_uploader(key="upload").set_value(("big.zip", data, "application/zip")).run()
    assert not at.exception
    message = shown(at.error[0].value)  # escaped markdown: read it as displayed
    assert "too large for this dashboard" in message
    assert cache.MEMORY_ENV in message and "nexus chunk" in message
    assert at.session_state["repo"] is before  # the current repository is kept
    assert tiny_budget.used <= tiny_budget.budget
    kept = tiny_budget.oldest_first()
    assert [key for key in kept if key[0] == "refused"]  # the refusal is kept...
    assert not [key for key in kept if key[0] == "upload"]  # ...not the files
    assert not [key for key in kept if key[0] == "analysis" and key[1].endswith("m0.js")]
    at.run()  # the upload is still in its widget: refused again without unpacking
    assert "too large for this dashboard" in at.error[0].value


def test_bad_budget_setting_is_a_message(page, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.MEMORY_ENV, "lots")
    at = page("home").run()
    assert not at.exception
    assert cache.MEMORY_ENV in at.error[0].value
