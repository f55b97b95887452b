"""The ranking stage: query kinds, fusion, each boost and damping, explanations that add up."""

from __future__ import annotations

import numpy as np
import pytest

from nexus.retrieval.ranking import (
    BOOSTS,
    NATURAL,
    SYMBOL,
    RankingRules,
    files_first,
    only_reexports,
    query_kind,
    query_names,
    rank,
)
from nexus.types import Chunk
from tests import helpers


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("HTTPAdapter", SYMBOL),
        ("Router.add", SYMBOL),
        ("field_validator", SYMBOL),
        ("Producer::split_at", SYMBOL),
        ("getCookie()", SYMBOL),
        ("  getCookie  ", SYMBOL),
        ("where are cookies parsed", NATURAL),
        ("how does getCookie read the header", NATURAL),
        ("Router.add(path)", NATURAL),
        ("", NATURAL),
    ],
)
def test_query_kind(query: str, kind: str) -> None:
    assert query_kind(query) == kind


@pytest.mark.parametrize(
    ("query", "names", "is_symbol"),
    [
        ("Router.add", [("add", "Router")], True),
        ("Producer::split_at", [("split_at", "Producer")], True),
        ("HTTPAdapter", [("HTTPAdapter", "")], True),
        ("where is getCookie called", [("getCookie", "")], False),
        ("what does parse_header_links return", [("parse_header_links", "")], False),
        ("where are cookies parsed", [], False),
    ],
)
def test_query_names(query: str, names: list[tuple[str, str]], is_symbol: bool) -> None:
    found, symbol = query_names(query)
    assert [(n.name, n.qualifier) for n in found] == names
    assert symbol is is_symbol


def _rank(chunks, dense, keyword, query, rules=None, k=10):
    rules = rules or RankingRules()
    ranked = rank(chunks, np.array(dense, float), np.array(keyword, float), query, k, rules)
    return [chunks[r.key].id for r in ranked], ranked


def test_a_definition_beats_a_chunk_that_only_uses_the_name() -> None:
    chunks = [
        helpers.make_chunk("caller", "src/app.ts", symbol="App.start", parent="App"),
        helpers.make_chunk("getter", "src/session.ts", symbol="Session.cookies"),
        helpers.make_chunk("definition", "src/cookie.ts", symbol="getCookie"),
    ]
    ids, _ = _rank(chunks, [0.9, 0.5, 0.85], [5.0, 1.0, 4.0], "getCookie")
    assert ids[0] == "definition"
    ids, _ = _rank(
        chunks, [0.9, 0.5, 0.85], [5.0, 1.0, 4.0], "getCookie", RankingRules().without("definition")
    )
    assert ids[0] == "caller"


def test_a_class_beats_its_members_for_its_own_name() -> None:
    chunks = [
        helpers.make_chunk("member", "src/hono.ts", symbol="Hono.get", parent="Hono"),
        helpers.make_chunk("class", "src/hono.ts", 20, 40, symbol="Hono", symbol_kind="class"),
        helpers.make_chunk("other", "src/other.ts", symbol="other"),
    ]
    ids, _ = _rank(chunks, [0.8, 0.7, 0.4], [4.0, 3.0, 0.0], "Hono")
    assert ids[0] == "class"


def test_a_qualified_name_prefers_the_matching_owner() -> None:
    chunks = [
        helpers.make_chunk("fsm", "fsm.go", symbol="FSM.Apply"),
        helpers.make_chunk("raft", "api.go", symbol="Raft.Apply"),
        helpers.make_chunk("other", "log.go", symbol="other"),
    ]
    ids, ranked = _rank(chunks, [0.8, 0.7, 0.4], [3.0, 3.0, 0.0], "Raft.Apply")
    assert ids[0] == "raft"
    loose = dict((p.name, p.value) for p in ranked[1].parts)
    assert 0 < loose["defines"] < RankingRules().defines


def test_a_test_file_loses_to_its_source() -> None:
    chunks = [
        helpers.make_chunk("test", "tests/test_cookie.py", symbol="test_load"),
        helpers.make_chunk("source", "cookie.py", symbol="load"),
        helpers.make_chunk("other", "other.py", symbol="other"),
    ]
    ids, _ = _rank(chunks, [0.80, 0.78, 0.4], [2.0, 2.0, 0.0], "where are cookies parsed")
    assert ids[:2] == ["source", "test"]
    ids, _ = _rank(
        chunks,
        [0.80, 0.78, 0.4],
        [2.0, 2.0, 0.0],
        "where are cookies parsed",
        RankingRules().without("file priors"),
    )
    assert ids[0] == "test"


@pytest.mark.parametrize("symbol", ["tests.client_happy_eyeballs", "conn.test.handshake"])
def test_a_unit_in_a_test_module_of_a_source_file_loses_to_the_code(symbol: str) -> None:
    chunks = [
        helpers.make_chunk("test", "src/client/http.rs", 40, 60, symbol=symbol),
        helpers.make_chunk("source", "src/client/http.rs", 1, 30, symbol="HttpConnector.fallback"),
        helpers.make_chunk("other", "src/other.rs", symbol="other"),
    ]
    query = "race IPv6 and IPv4 connection attempts"
    ids, ranked = _rank(chunks, [0.80, 0.78, 0.4], [2.0, 2.0, 0.0], query)
    assert ids[:2] == ["source", "test"]
    assert "test module" in [p.name for p in ranked[1].parts]
    rules = RankingRules().without("file priors")
    assert _rank(chunks, [0.80, 0.78, 0.4], [2.0, 2.0, 0.0], query, rules)[0][0] == "test"


def test_a_method_named_test_is_not_test_code() -> None:
    chunks = [
        helpers.make_chunk("method", "src/regexp.js", symbol="RegExp.test"),
        helpers.make_chunk("other", "src/match.js", symbol="match"),
    ]
    ids, ranked = _rank(chunks, [0.80, 0.78], [2.0, 2.0], "check whether a pattern matches")
    assert ids[0] == "method" and "test module" not in [p.name for p in ranked[0].parts]


def test_a_type_asked_for_by_name_beats_its_impl_blocks() -> None:
    chunks = [
        helpers.make_chunk("impl", "src/body.rs", 20, 40, symbol="Body", symbol_kind="impl"),
        helpers.make_chunk("struct", "src/body.rs", 1, 10, symbol="Body", symbol_kind="struct"),
        helpers.make_chunk("other", "src/other.rs", symbol="other"),
    ]
    ids, ranked = _rank(chunks, [0.80, 0.78, 0.4], [2.2, 2.0, 0.0], "Body")
    assert ids[:2] == ["struct", "impl"]
    defines = {chunks[r.key].id: p.value for r in ranked for p in r.parts if p.name == "defines"}
    rules = RankingRules()
    assert defines == {"struct": rules.defines, "impl": rules.defines * rules.defines_loosely}


def test_path_words_lift_the_file_named_like_the_query() -> None:
    chunks = [
        helpers.make_chunk("other", "src/session.ts"),
        helpers.make_chunk("cookie", "src/helper/cookie/parse.ts"),
        helpers.make_chunk("far", "src/far.ts"),
    ]
    ids, _ = _rank(chunks, [0.80, 0.79, 0.4], [0.0, 0.0, 0.0], "where are cookies parsed")
    assert ids[0] == "cookie"


def test_the_top_k_holds_several_files() -> None:
    chunks = [helpers.make_chunk(f"a{i}", "src/a.ts", i * 10 + 1, i * 10 + 9) for i in range(4)]
    chunks.append(helpers.make_chunk("b", "src/b.ts"))
    chunks.append(helpers.make_chunk("far", "src/far.ts"))
    dense = [0.90, 0.89, 0.88, 0.87, 0.80, 0.40]
    damped = RankingRules(same_file=0.08)  # off by default: see bench/results/questions.md
    ids, _ = _rank(chunks, dense, [0] * 6, "how is a request retried", damped, k=3)
    assert "b" in ids
    ids, _ = _rank(
        chunks,
        dense,
        [0] * 6,
        "how is a request retried",
        damped.without("same-file damping"),
        k=3,
    )
    assert "b" not in ids


def _two_in_a() -> list[Chunk]:
    """Two chunks of ``src/a.ts`` apart, one of ``src/b.ts``, one far off."""
    return [
        helpers.make_chunk("a1", "src/a.ts", 1, 9),
        helpers.make_chunk("a2", "src/a.ts", 41, 49),
        helpers.make_chunk("b", "src/b.ts"),
        helpers.make_chunk("far", "src/far.ts"),
    ]


def test_a_files_later_hits_wait_behind_another_files_close_first_hit() -> None:
    ranked = [("a", 1.0), ("a", 0.99), ("b", 0.97), ("c", 0.5), ("a", 0.4)]

    def order(spread: float, hits=ranked) -> list[tuple[str, float]]:
        return files_first(hits, lambda h: h[1], lambda h: h[0], RankingRules(file_spread=spread))

    # b scores 98% of the waiting a: it goes first; c is far below, so a goes before it.
    assert order(0.95) == [("a", 1.0), ("b", 0.97), ("a", 0.99), ("c", 0.5), ("a", 0.4)]
    assert order(0.99) == ranked  # b is not within 99% of a's second hit
    assert order(0.0) == ranked  # off
    # A waiting hit whose score is not above 0 waits for nothing.
    low = [("a", 1.0), ("a", -0.1), ("b", -0.2)]
    assert order(0.95, low) == low


def test_rank_shows_another_files_close_hit_before_a_files_second() -> None:
    chunks = _two_in_a()
    dense, keyword = [0.9, 0.89, 0.885, 0.4], [0, 0, 0, 0]
    ids, ranked = _rank(chunks, dense, keyword, "how is a request retried")
    assert ids == ["a1", "b", "a2", "far"]
    assert ranked[1].score < ranked[2].score  # the order, not the score, says it
    ids, _ = _rank(chunks, dense, keyword, "how is a request retried",
                   RankingRules().without("other files first"))  # fmt: skip
    assert ids == ["a1", "a2", "b", "far"]
    # Further below, b waits its turn.
    ids, _ = _rank(chunks, [0.9, 0.89, 0.86, 0.4], keyword, "how is a request retried")
    assert ids == ["a1", "a2", "b", "far"]


def test_a_file_with_several_strong_chunks_is_promoted_once() -> None:
    chunks = _two_in_a()
    rules = RankingRules(file_coherence=0.04)  # off by default: see bench/results/questions.md
    _, ranked = _rank(chunks, [0.85, 0.85, 0.86, 0.4], [0, 0, 0, 0], "retry with backoff", rules, 3)
    promoted = [r for r in ranked if any(p.name == "file has several matches" for p in r.parts)]
    assert [chunks[r.key].id for r in promoted] == ["a1"]


def test_fusion_does_not_depend_on_score_scales() -> None:
    chunks = [helpers.make_chunk(f"c{i}", f"src/f{i}.ts") for i in range(3)]
    ids_small, _ = _rank(chunks, [0.3, 0.2, 0.1], [1.0, 2.0, 3.0], "open a stream")
    ids_large, _ = _rank(chunks, [0.9, 0.6, 0.3], [100.0, 200.0, 300.0], "open a stream")
    assert ids_small == ids_large


def test_each_explanation_adds_up_to_its_score() -> None:
    chunks = [
        helpers.make_chunk("a1", "src/cookie.ts", 1, 9, symbol="parseCookie"),
        helpers.make_chunk("a2", "src/cookie.ts", 11, 19),
        helpers.make_chunk("t", "test/cookie.test.ts", symbol="parseCookie"),
    ]
    _, ranked = _rank(chunks, [0.7, 0.69, 0.71], [3.0, 1.0, 3.0], "parseCookie")
    for r in ranked:
        assert sum(p.value for p in r.parts) == pytest.approx(r.score)
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_every_rule_can_be_switched_off() -> None:
    for rule, weights in BOOSTS.items():
        off = RankingRules().without(rule)
        assert all(getattr(off, w) == 0 for w in weights)
    with pytest.raises(ValueError, match="unknown rule"):
        RankingRules().without("magic")


@pytest.mark.parametrize(
    ("query", "weight"),
    [
        ("getCookie", RankingRules().defines),
        ("where is getCookie called", RankingRules().defines_in_sentence),
        ("where are cookies read", 0.0),
    ],
)
def test_a_name_inside_a_sentence_is_weaker_evidence(query: str, weight: float) -> None:
    chunks = [
        helpers.make_chunk("definition", "src/cookie.ts", symbol="getCookie"),
        helpers.make_chunk("other", "src/other.ts", symbol="other"),
    ]
    _, ranked = _rank(chunks, [0.5, 0.4], [1.0, 0.0], query)
    boost = {p.name: p.value for p in next(r for r in ranked if r.key == 0).parts}
    assert boost.get("defines", 0.0) == pytest.approx(weight)
    assert 0 < RankingRules().defines_in_sentence < RankingRules().defines


_BARRELS = {
    "src/index.ts": "export * from './cors'\nexport { logger, type Logger } from './logger'\n",
    "src/middleware/index.ts": (
        "import { cors } from './cors'\nexport {\n  cors,\n  cors as c,\n}\n"
    ),
    "pkg/__init__.py": (
        '"""The package."""\nfrom .client import Client\nfrom .retry import (\n'
        '    Retry,\n    backoff,\n)\n__all__ = [\n    "Client",\n    "Retry",\n]\n'
    ),
    "src/lib.rs": "//! The crate.\npub mod cookie;\nmod jar;\npub use cookie::Cookie;\n",
}
_NOT_BARRELS = {  # file name, text, symbol: implementations in barrel-named files
    "src/middleware/cors/index.ts": ("export const cors = (options) => {\n  return x\n}\n", "cors"),
    "pkg/__init__.py": ("def main():\n    run()\n", "main"),
    "src/index.ts": ("import { a } from './a'\nconst app = createApp(a)\napp.start()\n", None),
    "src/mod.rs": ("pub fn parse(input: &str) -> Cookie {\n    todo!()\n}\n", "parse"),
}


@pytest.mark.parametrize("file", sorted(_BARRELS))
def test_a_chunk_that_only_reexports_is_damped_as_reexports(file: str) -> None:
    chunk = helpers.make_chunk("barrel", file, text=_BARRELS[file], symbol=None)
    assert only_reexports(chunk)
    _, ranked = _rank([chunk], [0.5], [1.0], "where are cookies parsed")
    assert ("re-exports", -RankingRules().barrel_file) in [
        (p.name, p.value) for p in ranked[0].parts
    ]


@pytest.mark.parametrize("file", sorted(_NOT_BARRELS))
def test_an_implementation_in_an_index_file_is_not_called_reexports(file: str) -> None:
    text, symbol = _NOT_BARRELS[file]
    chunk = helpers.make_chunk("code", file, text=text, symbol=symbol)
    assert not only_reexports(chunk)
    _, ranked = _rank([chunk], [0.5], [1.0], "how is cors configured")
    assert "re-exports" not in [p.name for p in ranked[0].parts]


def test_an_index_file_implementation_beats_a_barrel_with_the_same_scores() -> None:
    chunks = [
        helpers.make_chunk("barrel", "src/index.ts", text=_BARRELS["src/index.ts"]),
        helpers.make_chunk(
            "cors", "src/cors/index.ts", text="export function cors() {}", symbol="cors"
        ),
    ]
    ids, _ = _rank(chunks, [0.8, 0.8], [1.0, 1.0], "cors")
    assert ids == ["cors", "barrel"]


@pytest.mark.parametrize(
    "file",
    [
        "perf-measures/type-check/generated/generate-app.ts",
        "bench/suite.py",
        "benchmarks/handle.go",
        "examples/basic/app.ts",
    ],
)
def test_benchmarks_and_perf_harnesses_are_damped_as_examples(file: str) -> None:
    chunks = [
        helpers.make_chunk("harness", file, symbol="setupApp"),
        helpers.make_chunk("source", "src/core.ts", symbol="handler"),
        helpers.make_chunk("far", "src/far.ts", symbol="far"),
    ]
    scores = ([0.80, 0.79, 0.3], [1.0, 1.0, 0.0], "where are routes registered")
    ids, ranked = _rank(chunks, *scores)
    assert ids[:2] == ["source", "harness"]
    ids, _ = _rank(chunks, *scores, RankingRules(example_file=0.0))
    assert ids[0] == "harness"
    assert "example" in [p.name for p in ranked[1].parts]


def test_a_sentence_gives_keywords_an_equal_share_of_the_fusion() -> None:
    chunks = [
        helpers.make_chunk("meaning", "src/a.ts"),  # nearest by meaning, no query word
        helpers.make_chunk("words", "src/b.ts"),  # every query word, farther in meaning
        helpers.make_chunk("far", "src/c.ts"),
    ]
    scores = ([1.0, 0.2, 0.0], [0.0, 1.0, 0.0], "open a stream")
    assert _rank(chunks, *scores)[0][0] == "words"
    assert _rank(chunks, *scores, RankingRules(natural_dense=0.6))[0][0] == "meaning"
