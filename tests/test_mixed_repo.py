"""A repository of several languages (mixed-shop: a Python API and a TSX frontend),
end to end through the CLI: scan, functions, chunk, eval."""

from __future__ import annotations

import json
from pathlib import Path

from nexus.cli import main
from tests.helpers import on_quality_tier

MIXED = Path(__file__).resolve().parents[1] / "sample_repos" / "mixed-shop"


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(on_quality_tier(argv))
    return code, capsys.readouterr().out


def test_scan_counts_each_language(capsys):
    code, out = run(capsys, "scan", str(MIXED), "--json")
    summary = json.loads(out)
    assert code == 0
    assert summary["by_language"]["python"] == 3
    assert summary["by_language"]["tsx"] == 1 and summary["by_language"]["typescript"] == 1


def test_functions_of_a_python_file_beside_the_python_regex(capsys):
    code, out = run(capsys, "functions", str(MIXED / "api" / "catalog.py"))
    assert code == 0
    assert "Cart.total_cents" in out and "method" in out
    assert "search_products" in out
    assert "the regex baseline finds 7" in out  # every def, none of the classes


def test_chunk_exports_every_language_with_its_own_symbols(capsys, tmp_path):
    out_file = tmp_path / "chunks.jsonl"
    code, _ = run(capsys, "chunk", str(MIXED), "--format", "jsonl", "-o", str(out_file))
    records = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert code == 0
    assert {r["language"] for r in records} == {"python", "tsx", "typescript"}
    symbols = {r["symbol"]: r for r in records}
    assert symbols["add_to_cart"]["text"].startswith('@post("/cart/{session}/items")')
    assert symbols["ProductSearch"]["language"] == "tsx"
    assert symbols["search_products"]["exported"] is True


def test_eval_searches_both_languages_in_one_index(capsys, monkeypatch):
    from nexus.cli import indexes
    from nexus.ui.fake_embedder import HashingEmbedder

    monkeypatch.setattr(indexes, "cached_embedder", lambda args, config: HashingEmbedder())
    code, out = run(capsys, "eval", str(MIXED), "--queries", str(MIXED / "queries.jsonl"))
    assert code == 0
    assert "R@1" in out and "AST" in out
    assert "no chunk comes from" not in out  # every target file was chunked
