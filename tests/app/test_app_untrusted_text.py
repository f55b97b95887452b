"""Issue 13: hostile file names, symbols, query sets and link parameters show as text on
every page, and the local-path box says nothing about paths outside the allowed roots."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from ui_helpers import markdown_problems, page_problems, rendered_text

from tests.helpers import HOSTILE_FILE, HOSTILE_KEYS, hostile_files

PAGE_FILES = [
    "pages/1_Chunks_and_AST.py",
    "pages/2_Compare.py",
    "pages/3_Search.py",
    "pages/4_Evaluate.py",
    "pages/5_Export.py",
]


@pytest.fixture
def hostile_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The payload repository, in a folder the dashboard is allowed to open."""
    repo = tmp_path / "**bold** `![r](http:evil.invalid)`"
    for name, data in hostile_files().items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    monkeypatch.setenv("NEXUS_ALLOWED_ROOTS", str(tmp_path))
    return repo


def test_the_checker_sees_raw_payloads() -> None:
    """The test below is only as good as this: raw payloads are caught."""
    assert markdown_problems(f"`{HOSTILE_FILE}`")
    assert all(markdown_problems(f"**1.** {key}") for key in HOSTILE_KEYS)
    assert markdown_problems("x __dunder_name__ y")
    assert markdown_problems("see https://evil.invalid/x")
    assert markdown_problems(r"see https\:\/\/evil\.invalid\/x")  # linked even so
    assert not markdown_problems("**Repository:** `express-images` · score **0.412**")


def test_every_page_shows_hostile_contents_as_text(page, hostile_repo: Path) -> None:
    at = page("home").run()
    at.radio(key="source").set_value("Local path").run()
    at.text_input(key="local_path").input(str(hostile_repo)).run()
    assert not at.exception
    assert at.session_state["repo"].name == hostile_repo.name
    assert page_problems(at) == []
    # Small chunks, all of them listed: every hostile symbol names a search result.
    at.session_state["k"] = 20
    at.session_state["max_tokens"] = 64
    at.session_state["min_tokens"] = 0
    for file in PAGE_FILES:
        at.switch_page(file).run()
        if file.endswith("Search.py"):
            at.text_input(key="query").input("handler dunder bold").run()
        assert not at.exception, file
        assert page_problems(at) == [], file
        if file.endswith("Chunks_and_AST.py"):
            assert at.selectbox(key="file").value == HOSTILE_FILE
        if file.endswith("Search.py"):  # the results name each file and symbol, as text
            shown = rendered_text(at)
            assert HOSTILE_FILE in shown
            assert all(f'"{key}"' in shown for key in HOSTILE_KEYS)
            assert "handlers.__dunder_name__" in shown
        if file.endswith("Evaluate.py"):
            assert at.dataframe, "the query set was scored"


def test_hostile_link_parameters_show_as_text(page) -> None:
    at = page("search")
    at.query_params.update(
        {
            "k": "![x](http://evil.invalid/k.png)",
            "repo": "path:[Click here to sign in again](https://evil.invalid/login)",
            "profile": "**bold**",
            "q": "![q](https://evil.invalid/q.png)",
            "target": "<img src=https://evil.invalid/t.png>",
        }
    )
    at.run()
    assert not at.exception
    assert page_problems(at) == []
    shown = rendered_text(at)  # each refused parameter is named, as the text it was
    assert "ignored k='![x](http://evil.invalid/k.png)'" in shown
    assert "'path:[Click here to sign in again](https://evil.invalid/login)'" in shown
    assert "ignored profile='**bold**'" in shown


def _messages(at: AppTest) -> list[str]:
    return [e.value for e in at.error] + [w.value for w in at.warning]


@pytest.mark.parametrize("route", ["box", "link"])
def test_outside_the_roots_one_answer_whether_it_exists_or_not(
    page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "shadow").write_text("x")
    monkeypatch.setenv("NEXUS_ALLOWED_ROOTS", str(allowed))
    answers = []
    for target in (secret / "shadow", secret / "nonexistent"):
        if route == "box":
            at = page("home").run()
            at.radio(key="source").set_value("Local path").run()
            at.text_input(key="local_path").input(str(target)).run()
        else:
            at = page("search")
            at.query_params["repo"] = f"path:{target}"
            at.run()
        assert not at.exception
        shown = [m for m in _messages(at) if target.name in m]
        assert len(shown) == 1, _messages(at)
        answers.append(shown[0].replace(target.name, "NAME"))
    assert "outside the allowed roots" in answers[0]
    assert answers[0] == answers[1]
