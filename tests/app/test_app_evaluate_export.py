"""Evaluate and Export pages."""

from __future__ import annotations

import json

from nexus.config import load_config


def test_evaluate_metrics_and_rank_table(page) -> None:
    at = page("evaluate").run()
    assert not at.exception
    metrics = at.dataframe[0].value
    assert set(metrics["index"]) == {"line-based", "AST"}
    ranks = at.dataframe[1].value
    assert len(ranks) == 31
    assert len(at.get("plotly_chart")) == 2


def test_sweep_marks_the_best_and_applies_it(page) -> None:
    at = page("evaluate").run()
    at.multiselect(key="sweep_max").set_value([128, 512])
    at.multiselect(key="sweep_min").set_value([0])
    at.button(key="run_sweep").click().run()
    assert not at.exception
    table = at.dataframe[-1].value
    assert len(table) == 2 and (table["best"] == "★").sum() == 1
    best = table[table["best"] == "★"].iloc[0]
    at.button(key="use_best").click().run()
    assert not at.exception
    assert at.slider(key="max_tokens").value == best["max_tokens"]
    assert at.slider(key="min_tokens").value == 0


def test_uploaded_query_set_and_a_bad_one(page) -> None:
    at = page("evaluate").run()
    at.radio(key="query_set").set_value("Upload a JSONL file").run()
    assert not at.exception
    record = {
        "id": "q1",
        "query": "resize the image",
        "variant": "doc",
        "target": {"file": "src/services/imageService.js", "start_line": 1, "end_line": 20},
    }
    good = (json.dumps(record) + "\n").encode()
    at.file_uploader(key="queries_upload").set_value(("q.jsonl", good, "application/json")).run()
    assert not at.exception
    assert len(at.dataframe[1].value) == 1
    bad = b'{"id": "q1"}\n'
    at.file_uploader(key="queries_upload").set_value(("q.jsonl", bad, "application/json")).run()
    assert not at.exception
    assert "line 1" in at.error[0].value


def test_export_settings_and_chunks(page, tmp_path) -> None:
    at = page("home").run()
    at.switch_page("pages/1_Chunks_and_AST.py").run()
    at.slider(key="max_tokens").set_value(512).run()
    at.switch_page("pages/5_Export.py").run()  # the setting survives the page switch
    assert not at.exception
    toml = at.code[0].value
    (tmp_path / "nexus.toml").write_text(toml)
    config = load_config(tmp_path / "nexus.toml")
    assert config.max_tokens == 512 and config.strategy == "ast"
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[0] == "Download nexus.toml" and "chunks (JSONL)" in labels[1]
    at.radio(key="export_strategy").set_value("lines").run()
    assert not at.exception
    assert json.loads(at.json[0].value)["strategy"] == "lines"
