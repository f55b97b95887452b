"""Chunks and AST on a large file: the code view draws a window of lines, not the file,
and the paging buttons, Go to line and the chunk list reach every line of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import large_typescript
from streamlit.testing.v1 import AppTest
from ui_helpers import code_views, metric

from nexus.ui import linewindow

BIG = "src/big.ts"


@pytest.fixture
def big_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose largest file has more lines than the view draws at once."""
    repo = tmp_path / "big-repo"
    (repo / "src").mkdir(parents=True)
    text = large_typescript(120_000)
    assert text.count("\n") > linewindow.WHOLE_FILE_LINES
    (repo / BIG).write_text(text)
    (repo / "src" / "small.ts").write_text("export const one = 1;\n")
    monkeypatch.setenv("NEXUS_ALLOWED_ROOTS", str(tmp_path))
    return repo


@pytest.fixture
def big_page(page, big_repo: Path) -> AppTest:
    at = page("chunks")
    at.query_params.update({"repo": f"path:{big_repo}", "file": BIG})
    return at.run()


def drawn_lines(at: AppTest) -> list[int]:
    """The line numbers the code view draws, in order."""
    html = code_views(at)[0]["html"]
    runs = re.findall(r'class="nx-ln nx-pre">([\d\n]+)</div>', html)
    return [int(n) for run in runs for n in run.split("\n")]


def total_lines(at: AppTest) -> int:
    return int(metric(at, "Lines"))


def test_a_large_file_shows_a_window_not_the_whole_file(big_page: AppTest) -> None:
    at = big_page
    assert not at.exception
    lines = drawn_lines(at)
    assert lines == list(range(1, linewindow.WINDOW_LINES + 1))
    total = total_lines(at)
    assert total > 2 * linewindow.WINDOW_LINES
    assert any(f"of {total:,}" in c.value for c in at.caption)
    assert at.button(key="code_previous").disabled and not at.button(key="code_next").disabled


def test_paging_reaches_the_end_of_the_file(big_page: AppTest) -> None:
    at = big_page
    total = total_lines(at)
    seen: set[int] = set(drawn_lines(at))
    for _ in range(total // linewindow.WINDOW_LINES + 3):
        if at.button(key="code_next").disabled:
            break
        at.button(key="code_next").click().run()
        assert not at.exception
        seen |= set(drawn_lines(at))
    assert at.button(key="code_next").disabled
    assert drawn_lines(at)[-1] == total
    assert seen == set(range(1, total + 1)), "pages overlap, they never skip a line"
    at.button(key="code_first").click().run()
    assert drawn_lines(at)[0] == 1
    at.button(key="code_last").click().run()
    assert drawn_lines(at)[-1] == total and len(drawn_lines(at)) == linewindow.WINDOW_LINES


def test_the_chunk_list_holds_the_chunks_of_the_lines_drawn(big_page: AppTest) -> None:
    at = big_page
    options = at.selectbox(key="chunk_pick").options
    starts = [int(re.search(r"L(\d+)–", o).group(1)) for o in options]
    assert len(options) > 1 and max(starts) <= linewindow.WINDOW_LINES
    at.button(key="code_last").click().run()
    later = at.selectbox(key="chunk_pick").options
    assert options[0] in later  # the selected chunk stays listed
    last_end = max(int(re.search(r"L\d+–(\d+)", o).group(1)) for o in later)
    assert last_end == total_lines(at)


def test_find_a_symbol_selects_it_and_moves_the_window_to_it(big_page: AppTest) -> None:
    at = big_page
    at.text_input(key="chunk_find").input("service150").run()
    assert not at.exception
    chosen = at.selectbox(key="chunk_pick").value
    assert "Service150" in chosen
    start = int(re.search(r"L(\d+)–", chosen).group(1))
    assert start > linewindow.WINDOW_LINES and start in drawn_lines(at)
    view = code_views(at)[0]
    assert view["scroll_to"] == start
    assert (view["first"], view["last"]) == (drawn_lines(at)[0], drawn_lines(at)[-1])
    index = int(chosen.split()[0][1:]) - 1
    assert f'data-chunk="{index}"' in view["html"]  # its band is there, clickable

    # A slider move keeps the reader's place: the selected chunk follows its line.
    at.slider(key="max_tokens").set_value(128).run()
    assert not at.exception
    assert start in drawn_lines(at)

    at.text_input(key="chunk_find").input("noSuchSymbol").run()
    assert "Service150" in at.selectbox(key="chunk_pick").value  # the selection stays
    assert any("noSuchSymbol" in c.value for c in at.caption)


def test_go_to_line_selects_the_chunk_holding_it(big_page: AppTest) -> None:
    at = big_page
    target = total_lines(at) - 10
    at.number_input(key="code_goto").set_value(target).run()
    assert not at.exception
    assert target in drawn_lines(at)
    chosen = at.selectbox(key="chunk_pick").value
    first, last = map(int, re.search(r"L(\d+)–(\d+)", chosen).groups())
    assert first <= target <= last
    assert at.number_input(key="code_goto").value is None  # ready for the next line


def test_a_chunk_begun_above_the_window_is_labelled_on_its_first_line(big_page) -> None:
    at = big_page
    at.button(key="code_next").click().run()
    html = code_views(at)[0]["html"]
    assert drawn_lines(at)[0] > 1
    # The first block of the window opens with a label, whatever line it starts on.
    before_first_line = html.split('class="nx-code"', 1)[1].split("data-line=", 1)[0]
    assert 'class="nx-label"' in before_first_line


def test_a_small_file_is_drawn_whole_without_paging(page) -> None:
    at = page("chunks").run()
    assert drawn_lines(at) == list(range(1, total_lines(at) + 1))
    assert not [b for b in at.button if b.key and b.key.startswith("code_")]


def test_the_unit_table_of_a_large_file_lists_the_misses_first(big_page: AppTest) -> None:
    at = big_page
    units = int(metric(at, "Units (AST)"))
    missed = int(metric(at, "Units the regex misses"))
    frame = at.dataframe[-1].value
    assert len(frame) == units > 0
    assert list(frame["regex_found"]) == [False] * missed + [True] * (units - missed)


def test_compare_draws_a_window_of_both_panes_and_pages_it(page, big_repo: Path) -> None:
    at = page("compare")
    at.query_params.update({"repo": f"path:{big_repo}", "file": BIG})
    at.run()
    assert not at.exception

    def rows() -> list[int]:
        html = code_views(at)[0]["html"]
        return [int(n) for n in re.findall(r'class="nx-ln" data-line="(\d+)"', html)]

    assert rows() == list(range(1, linewindow.WINDOW_LINES + 1))
    at.button(key="compare_last").click().run()
    total = rows()[-1]
    assert total == large_typescript(120_000).count("\n")  # it ends with a newline
    at.number_input(key="compare_goto").set_value(1000).run()
    assert 1000 in rows() and code_views(at)[0]["scroll_to"] == 1000
    assert not at.exception


@pytest.mark.parametrize("ending", ["\n", ""])
def test_both_pages_count_the_lines_as_an_editor_does(
    page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    """A final newline ends the last line; it does not add one (hono's 2,778-line
    ``src/types.ts`` was said to have 2,779)."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    text = large_typescript(120_000).rstrip("\n") + ending
    lines = len(text.rstrip("\n").split("\n"))
    (repo / BIG).write_text(text)
    monkeypatch.setenv("NEXUS_ALLOWED_ROOTS", str(tmp_path))
    link = {"repo": f"path:{repo}", "file": BIG}
    chunks = page("chunks")
    chunks.query_params.update(link)
    chunks.run()
    assert total_lines(chunks) == lines
    chunks.button(key="code_last").click().run()
    assert drawn_lines(chunks)[-1] == lines
    assert any(f"of {lines:,}" in c.value for c in chunks.caption)
    compare = page("compare")
    compare.query_params.update(link)
    compare.run()
    assert not compare.exception
    assert any(f"of {lines:,} " in c.value for c in compare.caption)
