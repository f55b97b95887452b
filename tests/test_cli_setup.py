"""``nexus setup``, and where the cache lies by default: what a first answer must not
wait for is done once, in one folder per user."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nexus.cli import build_parser, default_tier, main
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
    assert "Default: fast" in " ".join(mcp.format_help().split())
    assert "Default: fast" in " ".join(search.format_help().split())
    assert "here: /somewhere/nexus-cache" in " ".join(mcp.format_help().split())
    assert "nexus setup" in mcp.format_help()


@pytest.mark.parametrize(
    "verb", [["index", "x"], ["search", "x", "q"], ["eval", "x", "--queries", "q"], ["mcp"]]
)
def test_a_verb_that_embeds_answers_with_the_fast_tier_unless_a_quality_model_is_named(
    verb, tmp_path
):
    def tier(*flags: str) -> str:
        args = build_parser().parse_args([*verb, *flags])
        return args.tier or default_tier(args)

    assert tier() == "fast"
    assert tier("--tier", "quality") == "quality"
    assert tier("--model", str(tmp_path)) == "quality"  # --model names a quality-tier model
    settings = tmp_path / "nexus.toml"
    settings.write_text(f'[embedding]\nmodel = "{tmp_path}"\n')
    assert tier("--config", str(settings)) == "quality"
    if verb[0] == "index":
        assert tier("--engine", "ray") == "quality"  # Ray embeds with MiniLM


def test_search_says_under_its_table_which_tier_answered_and_whether_it_was_re_scored(
    capsys, static_model_dir, tmp_path
):
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    (cache / "models" / static_model_dir.name).symlink_to(static_model_dir)
    target = str(Path(__file__).resolve().parents[1] / "sample_repos" / "ts-payments")
    assert main(["search", target, "refund a payment", "-k", "3", "--cache", str(cache)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith(f"answered by the fast tier ({static_model_dir.name}")
    assert "not re-scored yet: MiniLM's vectors of the chunks are computed" in last
    assert last.endswith(f"`nexus index {target}` waits for them")
