"""Evaluate and Export pages."""

from __future__ import annotations

import json

import pytest

from nexus.config import PRESETS, load_config


def test_evaluate_metrics_and_rank_table(page) -> None:
    at = page("evaluate").run()
    assert not at.exception
    metrics = at.dataframe[0].value
    assert set(metrics["index"]) == {"line-based", "AST"}
    assert {"R@1k", "R@2k", "R@4k", "tokens to first hit", "lines@10", "tokens@10"} <= set(
        metrics.columns
    )
    ranks = at.dataframe[1].value
    assert len(ranks) == 31
    charts = {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    assert set(charts) == {"metric_bars", "lines_bars", "budget_chart"}
    lines = {t["name"]: t for t in charts["budget_chart"]["data"]}
    assert set(lines) == {"line-based", "AST"}  # one line per strategy
    assert all(list(t["x"]) == [1000, 2000, 4000] for t in lines.values())
    r1k = metrics[(metrics["index"] == "AST") & (metrics["variant"] == "all")]["R@1k"].iloc[0]
    assert lines["AST"]["y"][0] == pytest.approx(float(r1k), abs=0.001)


def test_sweep_marks_the_best_and_applies_it(page) -> None:
    at = page("evaluate").run()
    at.selectbox(key="preset").set_value("model-window").run()  # 144/32 in use
    at.multiselect(key="sweep_max").set_value([320, 1024])
    at.multiselect(key="sweep_min").set_value([48])
    at.button(key="run_sweep").click().run()
    assert not at.exception
    assert at.selectbox(key="sweep_choose_by").value == "R@1k"  # a budget metric by default
    # Chosen by R@1k, the smallest chunks win; by MRR@10 the fattest (here: another row).
    at.selectbox(key="sweep_choose_by").set_value("MRR@10").run()
    table = at.dataframe[-1].value
    assert len(table) == 3  # the grid, and the setting in use as a row
    in_use = table[table["row"].str.contains("in use")].iloc[0]
    assert (in_use["max_tokens"], in_use["min_tokens"]) == (144, 32)
    assert (in_use[["Δ R@1k", "Δ tokens@10", "Δ MRR@10", "Δ R@5", "Δ lines@5"]] == 0).all()
    assert table["row"].str.contains("best").sum() == 1
    best = table[table["row"].str.contains("best")].iloc[0]
    assert best["max_tokens"] != 144, table
    at.button(key="use_best").click().run()
    assert not at.exception
    assert at.slider(key="max_tokens").value == best["max_tokens"]
    assert at.slider(key="min_tokens").value == int(best["min_tokens"])
    defaults = (PRESETS["retrieval"].max_tokens, PRESETS["retrieval"].min_tokens)
    expected = "retrieval" if (best["max_tokens"], best["min_tokens"]) == defaults else ""
    assert at.selectbox(key="preset").value == expected  # the selector follows the sliders
    table = at.dataframe[-1].value  # the applied setting is now the row in use
    assert table[table["row"].str.contains("in use")].iloc[0]["max_tokens"] == best["max_tokens"]
    at.selectbox(key="preset").set_value("retrieval").run()  # choosing it again works
    assert at.slider(key="max_tokens").value == PRESETS["retrieval"].max_tokens == 256


def test_apply_keeps_the_sweep_on_screen_while_the_new_setting_builds(page, monkeypatch) -> None:
    from helpers import GatedEmbedder

    from nexus.runtime.build_manager import BuildManager
    from nexus.ui import cache, indexing

    at = page("evaluate").run()
    at.multiselect(key="sweep_max").set_value([192])
    at.multiselect(key="sweep_min").set_value([0])
    at.button(key="run_sweep").click().run()
    # a choice where 192/0 beats the setting in use (1,356 tokens@10 against 1,662), so
    # Apply is offered
    at.selectbox(key="sweep_choose_by").set_value("tokens@10").run()
    before = at.dataframe[-1].value
    gated = GatedEmbedder()  # the applied setting's indexes build until the test lets them
    monkeypatch.setattr(indexing, "EMBEDDER_FACTORY", lambda: gated)
    builds = BuildManager(batch=8, memory=cache.memory)
    monkeypatch.setattr(indexing, "BUILDS", builds)
    at.button(key="use_best").click().run()
    assert not at.exception
    assert any("while the indexes of these settings build" in c.value for c in at.caption)
    kept = at.dataframe[-1].value
    assert list(kept["setting"]) == list(before["setting"])  # the sweep's answer, still shown
    assert (
        kept[kept["row"].str.contains("in use")].iloc[0]["max_tokens"]
        == at.slider(key="max_tokens").value
    )  # read against the applied setting
    assert not [b for b in at.button if b.key == "use_best"]  # it is the one in use now
    for build in builds.builds():
        while build.progress().running:
            if gated.waiting.acquire(timeout=1):
                gated.gate.release()
        build.join(30)


def test_apply_is_offered_only_when_the_best_gains_over_the_setting_in_use(page) -> None:
    """A best that only ties the setting in use on the metric chosen (and wins the tie
    on tokens) is not offered: moving would gain nothing on it."""
    at = page("evaluate").run()
    at.multiselect(key="sweep_max").set_value([256])
    at.multiselect(key="sweep_min").set_value([0])
    at.button(key="run_sweep").click().run()
    for choose_by in ("R@1k", "R@2k", "MRR@10", "R@5"):
        at.selectbox(key="sweep_choose_by").set_value(choose_by).run()
        table = at.dataframe[-1].value
        best = table[table["row"].str.contains("best")].iloc[0]
        gain = float(best[f"Δ {choose_by}"])
        offered = [b for b in at.button if b.key == "use_best"]
        assert bool(offered) == (gain > 0.005), (choose_by, gain)
        if not offered:
            assert any("Nothing to apply" in c.value for c in at.caption)


def test_each_chart_stars_its_own_best_and_variants_are_a_choice(page) -> None:
    at = page("evaluate").run()
    at.multiselect(key="sweep_max").set_value([64, 256])
    at.multiselect(key="sweep_min").set_value([0])
    at.button(key="run_sweep").click().run()
    table = at.dataframe[-1].value
    charts = {c.proto.spec: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    stars = {
        trace["name"]: trace["y"][0]
        for spec in charts.values()
        for trace in spec["data"]
        if trace["name"].startswith("best ")
    }
    assert stars == {
        "best R@1k": table["R@1k"].max(),
        "best MRR@10": table["MRR@10"].max(),
        "best tokens@10": table["tokens@10"].min(),
    }
    in_use = table[table["row"].str.contains("in use")].iloc[0]
    rings = {
        spec["layout"]["title"]["text"].split(" ")[0]: trace["y"][0]
        for spec in charts.values()
        for trace in spec["data"]
        if trace["name"].startswith("in use")
    }
    assert rings == {m: in_use[m] for m in ("R@1k", "MRR@10", "tokens@10")}  # the reference row
    (budget,) = [c for c in at.get("plotly_chart") if c.key == "sweep_budget_chart"]
    lines = json.loads(budget.proto.spec)["data"]
    assert sorted(t["name"] for t in lines) == sorted(table["setting"])  # a line per setting
    variants = at.selectbox(key="sweep_variant")
    assert variants.value == "doc" and {"name", "all"} <= set(variants.options)
    at.selectbox(key="sweep_variant").set_value("name").run()
    assert not at.exception
    assert "(name queries;" in " ".join(charts_titles(at))


def charts_titles(at) -> list[str]:
    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def test_a_revisit_with_nothing_changed_reads_the_scores_back(page, monkeypatch) -> None:
    import nexus.evaluation.runs

    at = page("home").run()
    at.switch_page("pages/4_Evaluate.py").run()
    calls = []
    monkeypatch.setattr(nexus.evaluation.runs, "compare", lambda *a, **k: calls.append(1))
    at.switch_page("pages/5_Export.py").run()
    at.switch_page("pages/4_Evaluate.py").run()
    assert not at.exception and calls == []
    assert "Δ margin" in " ".join(c.value for c in at.caption)


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
    assert "1 of 1 records are not query records" in at.error[0].value
    assert at.code[0].value.startswith('line 1: "target" must be an object')


def _upload(page, lines: list[str]):
    at = page("evaluate").run()
    at.radio(key="query_set").set_value("Upload a JSONL file").run()
    data = ("\n".join(lines) + "\n").encode()
    return at.file_uploader(key="queries_upload").set_value(("q.jsonl", data, "text/plain")).run()


GOOD = {
    "id": "q1",
    "query": "resize the image",
    "variant": "doc",
    "target": {"file": "src/services/imageService.js", "start_line": 1, "end_line": 20},
}


def test_each_bad_record_is_listed_not_a_traceback(page) -> None:
    good = json.dumps(GOOD)
    bad = [
        json.dumps({**GOOD, "query": 123}),
        json.dumps({**GOOD, "query": ["a"]}),
        json.dumps({**GOOD, "variant": ["x"]}),
        good.replace('"start_line": 1', '"start_line": 1e308'),
        good.replace('"start_line": 1', '"start_line": Infinity'),
        "[" * 100_000 + "]" * 100_000,
        "[1, 2]",
        good[:-1],
    ]
    at = _upload(page, [good, *bad])
    assert not at.exception
    assert "8 of 9 records are not query records" in at.error[0].value
    problems = at.code[0].value.splitlines()
    assert [p.split(":")[0] for p in problems] == [f"line {n}" for n in range(2, 10)]
    assert f"character {len(good)} of the record" in problems[-1]


def test_targets_outside_the_repository_are_reported(page) -> None:
    lines = [json.dumps(GOOD)]
    for number, file in enumerate(["src/nope.js", "../../etc/passwd", "public/vendor.min.js"]):
        lines.append(
            json.dumps({**GOOD, "id": f"bad-{number}", "target": {**GOOD["target"], "file": file}})
        )
    at = _upload(page, lines)
    assert not at.exception
    assert "3 of 4 queries name a target in 3 file(s)" in at.warning[0].value
    table = at.dataframe[0].value
    assert list(table["target file"]) == ["src/nope.js", "../../etc/passwd", "public/vendor.min.js"]
    assert list(table["why"]) == ["not in the repository"] * 2 + ["not chunked (minified)"]
    assert len(at.dataframe[-1].value) == 4  # still scored, as misses


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


def test_evaluate_scores_an_uploaded_question_set_by_category(page) -> None:
    at = page("evaluate").run()
    records = [
        {"id": "s", "query": "moveObject", "category": "symbol",
         "targets": [{"file": "src/services/imageService.js", "start_line": 555, "end_line": 580}]},
        {"id": "n", "query": "resize an image", "category": "semantic",
         "targets": [{"file": "src/services/imageService.js"}, {"file": "src/missing.js"}]},
    ]  # fmt: skip
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    at.radio(key="query_set").set_value("Upload a JSONL file").run()
    at.file_uploader(key="queries_upload").set_value(("q.jsonl", data, "application/jsonl")).run()
    assert not at.exception
    assert any("src/missing.js" in w.value for w in at.warning)
    summary = at.dataframe[0].value
    assert set(summary["run"]) == {"line-based", "AST"}
    assert {"R@1k", "R@2k", "R@4k", "tokens to first hit", "tokens@10"} <= set(summary.columns)
    (chart,) = [c for c in at.get("plotly_chart") if c.key == "budget_chart"]
    assert {t["name"] for t in json.loads(chart.proto.spec)["data"]} == {"line-based", "AST"}
    assert {"all", "paraphrase", "symbol"} <= set(summary["group"])
    assert list(at.dataframe[1].value["category"]) == ["symbol", "semantic"]


def test_evaluate_scores_question_targets_as_whole_files_when_asked(page) -> None:
    at = page("evaluate").run()
    # The file's first line, far from where ``moveObject`` is defined and ranks.
    target = {"file": "src/services/imageService.js", "start_line": 1, "end_line": 1}
    record = {"id": "f", "query": "moveObject", "category": "symbol", "targets": [target]}
    data = (json.dumps(record) + "\n").encode()
    at.radio(key="query_set").set_value("Upload a JSONL file").run()
    at.file_uploader(key="queries_upload").set_value(("q.jsonl", data, "application/jsonl")).run()
    assert not at.exception and at.toggle(key="questions_by_file").value is False

    def ast_mrr() -> float:
        summary = at.dataframe[0].value
        row = summary[(summary["run"] == "AST") & (summary["group"] == "all")]
        return float(row["MRR@10"].iloc[0])

    by_lines = ast_mrr()
    at.toggle(key="questions_by_file").set_value(True).run()
    assert not at.exception
    assert by_lines < 1.0 and ast_mrr() == 1.0
