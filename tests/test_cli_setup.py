"""``nexus setup``, and where the cache lies by default: what a first answer must not
wait for is done once, in one folder per user."""

from __future__ import annotations

import shutil

from nexus.cli import build_parser, main
from nexus.retrieval import onnx_minilm, tiers
from nexus.retrieval.embedding_cache import default_cache_dir


def test_setup_distils_the_fast_tier_once(tmp_path, monkeypatch, capsys, static_model_dir):
    distilled = []

    def distil(target):
        distilled.append(target)
        shutil.copytree(static_model_dir, target, dirs_exist_ok=True)

    def export(graph, **_):
        exported.append(graph)
        (graph / "model.onnx").write_bytes(b"")

    exported = []
    monkeypatch.setattr(tiers, "distil_from_minilm", distil)
    monkeypatch.setattr(onnx_minilm, "export_minilm", export)
    cache = tmp_path / "cache"
    assert main(["setup", "--cache", str(cache)]) == 0
    assert main(["setup", "--cache", str(cache)]) == 0
    said = capsys.readouterr().out
    assert len(distilled) == 1 and len(exported) == 1
    assert f"query model for re-scoring is ready: {cache / 'models'}" in said
    assert (cache / "models" / tiers.STATIC_MODEL_NAME / "config.json").is_file()
    assert f"the fast tier's model is ready: {cache / 'models'}" in said
    assert f"cache folder: {cache}" in said


def test_the_default_cache_is_the_users_not_the_working_folders(tmp_path, monkeypatch):
    monkeypatch.delenv("NEXUS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "nexus"
    monkeypatch.setenv("NEXUS_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"


def test_mcp_help_states_the_tier_it_answers_with_and_the_cache_folder(monkeypatch):
    monkeypatch.setenv("NEXUS_CACHE_DIR", "/somewhere/nexus-cache")
    parser = build_parser()
    mcp = parser._subparsers._group_actions[0].choices["mcp"]
    search = parser._subparsers._group_actions[0].choices["search"]
    assert parser.parse_args(["mcp"]).tier == "fast"
    assert "default: fast" in " ".join(mcp.format_help().split())
    assert parser.parse_args(["search", "x", "q"]).tier == "quality"
    assert "default: quality" in " ".join(search.format_help().split())
    assert "here: /somewhere/nexus-cache" in " ".join(mcp.format_help().split())
    assert "nexus setup" in mcp.format_help()
