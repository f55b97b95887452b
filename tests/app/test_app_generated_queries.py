"""Evaluate: a query set made from the repository, scored on its doc-blanked copy."""

from __future__ import annotations

import json


def test_make_a_query_set_from_this_repository(page) -> None:
    at = page("evaluate").run()
    at.radio(key="query_set").set_value("Make a query set from this repository").run()
    assert not at.exception
    counts = at.text[0].value
    assert "documented units found" in counts and "targets" in counts
    examples = at.dataframe[0].value
    assert {"query", "file", "line", "target"} <= set(examples.columns) and len(examples) >= 1
    assert "Doc comments are blanked" in " ".join(c.value for c in at.caption)
    assert "What it does not" in " ".join(c.value for c in at.caption)
    metrics = at.dataframe[1].value
    assert set(metrics["index"]) == {"line-based", "AST"}
    assert {"doc", "name"} <= set(metrics["variant"])


def test_the_cap_and_the_seed_change_the_set(page) -> None:
    at = page("evaluate").run()
    at.radio(key="query_set").set_value("Make a query set from this repository").run()
    at.number_input(key="gen_cap").set_value(10).run()
    assert not at.exception
    assert at.text[0].value.splitlines()[1].startswith("10 targets")
    first = at.dataframe[0].value["target"].tolist()
    at.text_input(key="gen_seed").set_value("another").run()
    assert not at.exception
    assert at.dataframe[0].value["target"].tolist() != first


def test_an_uploaded_generated_set_is_scored_on_the_blanked_copy(page) -> None:
    from nexus.evaluation.generate import generate
    from nexus.ingest.sources import open_repository
    from nexus.ui.repos import DEFAULT_SAMPLE

    at = page("evaluate").run()
    records = generate(open_repository(f"sample_repos/{DEFAULT_SAMPLE}"), cap=5).records
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    at.radio(key="query_set").set_value("Upload a JSONL file").run()
    at.file_uploader(key="queries_upload").set_value(("q.jsonl", data, "application/jsonl")).run()
    assert not at.exception
    assert "Doc comments are blanked" in " ".join(c.value for c in at.caption)
