"""Search page: both result lists, the target's rank, links, and a missing model."""

from __future__ import annotations

import json

import pytest
from ui_helpers import shown

from nexus.embedding import ModelUnavailableError
from nexus.ui import state

TARGET = "src/services/imageService.js:moveObject:555"


def test_query_shows_both_result_lists_and_charts(page) -> None:
    at = page("search").run()
    assert not at.exception
    assert at.info, "asks for a query"
    at.text_input(key="query").input("copy object delete original").run()
    assert not at.exception
    hits = [m.value for m in at.markdown if m.value.startswith("**1.**")]
    assert len(hits) == 2
    assert len(at.get("plotly_chart")) == 2
    assert len(at.code) == 2 * at.slider(key="k").value


def test_target_rank_score_and_margin(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input("copy object to new key and delete the original").run()
    at.selectbox(key="target").set_value(TARGET).run()
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert labels.count("Target rank") == 2 and labels.count("Margin") == 2
    assert at.query_params["target"] == [TARGET] or at.query_params["target"] == TARGET


def test_link_reproduces_the_view(page) -> None:
    at = page("search")
    at.query_params.update(
        {"repo": "sample:ts-payments", "q": "refund a payment", "k": "3", "max_tokens": "512"}
    )
    at.run()
    assert not at.exception
    assert at.session_state["repo"].name == "ts-payments"
    assert at.text_input(key="query").value == "refund a payment"
    assert at.slider(key="k").value == 3
    assert at.slider(key="max_tokens").value == 512
    assert len(at.code) == 6


def test_bad_link_values_are_reported(page) -> None:
    at = page("search")
    at.query_params.update({"repo": "path:/etc", "k": "999"})
    at.run()
    assert not at.exception
    problems = " ".join(shown(w.value) for w in at.warning)
    assert "outside the allowed roots" in problems and "k=" in problems


def test_missing_model_is_a_message(page, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing():
        raise ModelUnavailableError("the default embedding model is not installed")

    monkeypatch.setattr(state, "EMBEDDER_FACTORY", missing)
    for name in ("search", "evaluate"):
        at = page(name).run()
        assert not at.exception
        assert "model is not available" in at.error[0].value


def test_keyword_weight_changes_the_scores_without_rebuilding(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input("copy object delete original").run()
    at.slider(key="lexical_pct").set_value(0).run()
    dense = [m.value for m in at.markdown if m.value.startswith("**1.**")]
    built = [key for key in state.memory().oldest_first() if key[0] == "index"]
    assert built
    at.slider(key="lexical_pct").set_value(50).run()
    assert not at.exception
    hybrid = [m.value for m in at.markdown if m.value.startswith("**1.**")]
    assert hybrid != dense  # scores now hold half the best keyword score on top
    assert [
        key for key in state.memory().oldest_first() if key[0] == "index"
    ] == built  # no rebuild
    assert at.query_params["lw"] in ("50", ["50"])


def test_saved_indexes_are_opened_not_rebuilt(page) -> None:
    first = page("search").run()
    assert not first.exception
    assert "opened the saved" not in " ".join(c.value for c in first.caption)
    state.memory().clear()  # as after a server restart: nothing held in memory
    again = page("search").run()
    captions = " ".join(c.value for c in again.caption)
    assert "opened the saved lines index; opened the saved ast index" in captions


def test_chart_hover_names_file_symbol_and_lines_and_no_emoji_marks(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input("copy object to new key and delete the original").run()
    at.selectbox(key="target").set_value(TARGET).run()
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)
    top, target = spec["data"][1], spec["data"][2]
    assert top["hovertemplate"].startswith("%{text}")
    assert any("src/services/imageService.js · moveObject · L" in t for t in target["text"])
    text = " ".join(m.value for m in at.markdown)
    assert "✅" not in text and ":green-badge[target]" in text
