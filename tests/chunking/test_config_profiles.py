"""Settings and hierarchy profiles: validation and round trips through their file formats."""

from __future__ import annotations

import json

import pytest

from nexus.chunking.pipeline import chunk_analysis
from nexus.chunking.profiles import (
    PROFILES,
    Profile,
    choose_profile,
    dump_profiles_toml,
    load_profiles,
    resolve_profile,
)
from nexus.config import ChunkConfig, dump_config_toml, load_config
from tests.helpers import analyze_text


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"strategy": "words"}, "strategy must be one of"),
        ({"max_tokens": 8}, "max_tokens must be at least 16"),
        ({"min_tokens": 600, "max_tokens": 512}, "min_tokens must lie between"),
        ({"line_overlap": 50}, "line_overlap must lie in"),
        ({"lexical_weight": -0.1}, "lexical_weight must lie in"),
    ],
)
def test_config_rejects_bad_settings_with_a_fix(changes, message):
    with pytest.raises(ValueError, match=message):
        ChunkConfig(**changes)


def test_config_round_trips_through_toml_and_json(tmp_path):
    config = ChunkConfig(
        max_tokens=384, min_tokens=24, profile="oop", context_header=False, lexical_weight=0.35
    )
    toml_file = tmp_path / "nexus.toml"
    toml_file.write_text(dump_config_toml(config))
    assert load_config(toml_file) == config
    json_file = tmp_path / "nexus.json"
    json_file.write_text(json.dumps(config.to_dict()))
    assert load_config(json_file) == config


def test_config_names_unknown_keys(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[chunking]\nmax_token = 3\n")
    with pytest.raises(ValueError, match="unknown chunking settings \\['max_token'\\]"):
        load_config(path)


def test_builtin_profiles_round_trip_through_toml(tmp_path):
    path = tmp_path / "profiles.toml"
    path.write_text(dump_profiles_toml(list(PROFILES.values())))
    assert load_profiles(path) == PROFILES


def test_custom_profile_from_a_config_file_changes_the_chunks(tmp_path):
    path = tmp_path / "team.toml"
    path.write_text(
        dump_config_toml(ChunkConfig(profile="classes_only", min_tokens=0))
        + '\n[profiles.classes_only]\ndescription = "only classes"\n'
        'boundary_kinds = ["class"]\nmax_depth = 0\n'
    )
    custom = load_profiles(path)
    config = load_config(path)
    text = (
        "class A {\n  m() { return 1; }\n}\n"
        "function f() { return 2; }\nfunction g() { return 3; }\n"
    )
    analysis = analyze_text(text, "a.js", "javascript")
    team = chunk_analysis(analysis, config, repo="t", custom_profiles=custom)
    functional = chunk_analysis(analysis, config.with_(profile="functional"), repo="t")
    assert {c.profile for c in team} == {"classes_only"}
    # f and g are not boundaries for this profile, so they pack into one chunk.
    assert len(team) < len(functional)


def test_profile_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="unknown unit kinds"):
        Profile("x", "", frozenset({"closure"}), 0)


def test_unknown_profile_name_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of"):
        resolve_profile("reactive")


@pytest.mark.parametrize(
    ("path", "language", "text", "expected"),
    [
        ("a.tsx", "tsx", "export const A = () => <div />;\n", "frontend"),
        ("a.ts", "typescript", "class A {\n  m() {}\n  n() {}\n}\n", "oop"),
        ("a.js", "javascript", "function a() {}\nconst b = () => 1;\n", "functional"),
    ],
)
def test_auto_picks_a_profile_per_file_and_says_why(path, language, text, expected):
    analysis = analyze_text(text, path, language)
    profile, reason = choose_profile(analysis.top_level, analysis.has_jsx)
    assert profile.name == expected
    assert reason


def test_functional_keeps_closures_inside_while_oop_splits_methods():
    methods = "\n".join(f"  m{i}(x) {{\n    return helper(x) + {i} * x;\n  }}" for i in range(12))
    analysis = analyze_text(f"class Big {{\n{methods}\n}}\n", "a.js", "javascript")
    oop = chunk_analysis(
        analysis, ChunkConfig(max_tokens=64, min_tokens=0, profile="oop"), repo="t"
    )
    assert all(c.symbol_kind == "method" for c in oop if c.symbol and "." in c.symbol)
    assert sum(1 for c in oop if c.symbol_kind == "method") >= 10
