"""Hit rules, ranks, margins and metrics on hand-made chunks with exact expected numbers."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from nexus.evaluation.metrics import full_rank, is_hit, margin, rank_of_target, target_mask
from nexus.evaluation.query_sets import (
    Query,
    QuerySetError,
    Target,
    load_queries,
    parse_queries,
    unreachable_summary,
    unreachable_table,
    unreachable_targets,
)
from nexus.evaluation.runs import compare, comparison_table, evaluate, metrics_table, write_run
from nexus.evaluation.side_by_side import SideBySide
from nexus.retrieval.index import VectorIndex
from nexus.retrieval.search import Hit, search
from nexus.tables import render_markdown, render_text
from nexus.types import Category, Chunk, FileInfo
from tests.helpers import make_chunk

SCORER = Path("/work/shared/eval/score.py")


# a.js: c1 1-10, c2 11-30, c3 31-40; b.js: c4 1-20. Chunk i has unit vector e_i.
CHUNKS = [
    make_chunk("c1", "a.js", 1, 10),
    make_chunk("c2", "a.js", 11, 30),
    make_chunk("c3", "a.js", 31, 40),
    make_chunk("c4", "b.js", 1, 20),
]
T_INSIDE_C2 = Target("a.js", 12, 20)  # 9 lines, inside c2
T_STRADDLE = Target("a.js", 8, 13)  # 6 lines: 3 in c1, 3 in c2 -> overlap50 both, contains none
T_TOO_BIG = Target("b.js", 5, 50)  # 46 lines: c4 covers 16 -> no hit
QUERY_VECS = {
    "q1": np.array([0.1, 0.9, 0.3, 0.2]),  # c2, c3, c4, c1
    "q2": np.array([0.2, 0.5, 0.1, 0.8]),  # c4, c2, c1, c3
    "q3": np.array([0.4, 0.3, 0.2, 0.1]),  # c1, c2, c3, c4
}
QUERIES = [
    Query("q1", "q1", T_INSIDE_C2, "t1", "doc"),
    Query("q2", "q2", T_STRADDLE, "t2", "doc"),
    Query("q3", "q3", T_TOO_BIG, "t3", "name"),
]


class TableEmbedder:
    """Maps each query text to a fixed vector, any other text to (1, 1, 1, 1)."""

    name = "table"
    dim = 4
    max_seq_length = 256

    def encode(self, texts: Sequence[str], progress=None) -> np.ndarray:
        vecs = np.array([QUERY_VECS.get(t, np.ones(4)) for t in texts])
        return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)

    def count_wordpieces(self, texts: Sequence[str]) -> list[int]:
        return [1 for _ in texts]


@pytest.fixture
def index() -> VectorIndex:
    return VectorIndex.build(CHUNKS, np.eye(4), model="table")


@pytest.mark.parametrize(
    ("chunk", "target", "overlap50", "contains"),
    [
        (CHUNKS[1], T_INSIDE_C2, True, True),
        (CHUNKS[0], T_STRADDLE, True, False),  # exactly half: 2*3 >= 6
        (CHUNKS[1], T_STRADDLE, True, False),
        (CHUNKS[3], T_TOO_BIG, False, False),
        (make_chunk("x", "a.js", 1, 2), T_STRADDLE, False, False),  # no overlap
        (make_chunk("x", "a.js", 10, 12), Target("a.js", 8, 12), True, False),  # 3 of 5
        (make_chunk("x", "a.js", 11, 12), Target("a.js", 8, 12), False, False),  # 2 of 5
        (make_chunk("x", "b.js", 1, 40), T_INSIDE_C2, False, False),  # other file
        (make_chunk("x", "a.js", 12, 20), T_INSIDE_C2, True, True),  # exact span
    ],
)
def test_hit_rules(chunk: Chunk, target: Target, overlap50: bool, contains: bool) -> None:
    assert is_hit(chunk, target, "overlap50") is overlap50
    assert is_hit(chunk, target, "contains") is contains


def test_unknown_rule() -> None:
    with pytest.raises(ValueError, match="unknown hit rule"):
        is_hit(CHUNKS[0], T_STRADDLE, "touches")


def test_rank_of_target() -> None:
    hits = [Hit(CHUNKS[3], 0.9, 1, 3), Hit(CHUNKS[1], 0.8, 2, 1), Hit(CHUNKS[0], 0.7, 3, 0)]
    assert rank_of_target(hits, T_STRADDLE, "overlap50") == 2
    assert rank_of_target(hits, T_STRADDLE, "contains") is None
    assert rank_of_target(hits, T_INSIDE_C2, "contains") == 2
    assert rank_of_target([], T_INSIDE_C2) is None


def test_margin_sign_and_full_rank() -> None:
    scores = np.array([0.2, 0.7, 0.5, 0.9], dtype=np.float32)
    mask = target_mask(CHUNKS, T_INSIDE_C2)  # only c2
    assert mask.tolist() == [False, True, False, False]
    assert margin(scores, mask) == pytest.approx(0.7 - 0.9)  # c4 outranks the target
    assert full_rank(scores, mask) == 2
    winning = np.array([0.2, 0.95, 0.5, 0.9], dtype=np.float32)
    assert margin(winning, mask) == pytest.approx(0.05)
    assert full_rank(winning, mask) == 1
    none = target_mask(CHUNKS, T_TOO_BIG)
    assert margin(scores, none) is None and full_rank(scores, none) is None


def test_evaluate_metrics_exact(index: VectorIndex) -> None:
    report = evaluate(QUERIES, index, TableEmbedder(), k=10, label="lines")
    assert [r.rank for r in report.rows] == [1, 2, None]
    assert [r.outcome.ranks["contains"] for r in report.rows] == [1, None, None]
    q1, q2, q3 = report.rows
    n1, n2 = np.linalg.norm(QUERY_VECS["q1"]), np.linalg.norm(QUERY_VECS["q2"])
    assert q1.score == pytest.approx(0.9 / n1, abs=1e-6)
    assert q1.margin == pytest.approx((0.9 - 0.3) / n1, abs=1e-6)
    # q2: best target chunk is c2 (0.5), c1 also a target; best non-target c4 (0.8).
    assert q2.score == pytest.approx(0.5 / n2, abs=1e-6)
    assert q2.margin == pytest.approx((0.5 - 0.8) / n2, abs=1e-6)
    assert q2.outcome.full_rank == 2
    assert q3.score is None and q3.margin is None

    doc = report.metrics["doc"]
    assert doc["n"] == 2
    assert doc["overlap50:R@1"] == pytest.approx(0.5)
    assert doc["overlap50:R@5"] == pytest.approx(1.0)
    assert doc["overlap50:MRR@10"] == pytest.approx(0.75)
    assert doc["contains:R@10"] == pytest.approx(0.5)
    assert doc["contains:MRR@10"] == pytest.approx(0.5)
    assert doc["lines@5"] == pytest.approx(60.0)  # all 4 chunks: 10+20+10+20
    allm = report.metrics["all"]
    assert allm["n"] == 3
    assert allm["overlap50:R@1"] == pytest.approx(1 / 3)
    assert allm["overlap50:MRR@10"] == pytest.approx(0.5)
    assert report.metric("name", "R@10") == 0.0


def test_top_k_limits_rank_and_lines(index: VectorIndex) -> None:
    report = evaluate(QUERIES, index, TableEmbedder(), k=1)
    assert [r.rank for r in report.rows] == [1, None, None]
    assert report.rows[1].outcome.full_rank == 2  # still known beyond k
    assert [r.lines_at(5) for r in report.rows] == [20, 20, 10]


def test_evaluate_refuses_other_model(index: VectorIndex) -> None:
    other = TableEmbedder()
    other.name = "other"
    with pytest.raises(ValueError, match="same embedder"):
        evaluate(QUERIES, index, other)


def test_compare_table(index: VectorIndex) -> None:
    # "AST" index: one chunk covering the straddling target entirely.
    ast_chunks = [make_chunk("a1", "a.js", 1, 13), *CHUNKS[1:]]
    ast = VectorIndex.build(ast_chunks, np.eye(4), model="table")
    comparison = compare(QUERIES, index, ast, TableEmbedder())
    headers, rows = comparison_table(comparison)
    assert headers[2:4] == ["line-based rank (score)", "AST rank (score)"]
    assert rows[1][0] == "q2"
    assert rows[1][2].startswith("2 (") and rows[1][3].startswith("2 (")  # c2 still above a1
    assert rows[2][2] == rows[2][3] == "no target chunk"
    assert comparison.candidate.rows[1].outcome.ranks["contains"] == 3  # a1 contains 8-13
    md = render_markdown(comparison_table(comparison, variant="doc"))
    assert md.count("\n") == 4 and md.startswith("| query | variant |")
    text = render_text(metrics_table(comparison.baseline, comparison.candidate))
    assert "line-based  doc" in text and "AST" in text


def test_side_by_side(index: VectorIndex) -> None:
    sbs = SideBySide.from_indexes(index, index, TableEmbedder())
    result = sbs.query("q2", k=3, target=T_STRADDLE)
    assert [h.chunk.id for h in result.lines.hits] == ["c4", "c2", "c1"]
    assert result.lines.rank == result.ast.rank == 2
    built = SideBySide(CHUNKS, CHUNKS[:2], TableEmbedder())
    assert len(built.lines_index) == 4 and len(built.ast_index) == 2


def test_load_queries(tmp_path) -> None:
    record = {
        "id": "dev-0001-doc",
        "target_id": "dev-0001",
        "set": "dev",
        "variant": "doc",
        "query": "lazily adds the base router",
        "target": {
            "package": "express",
            "file": "express/lib/application.js",
            "start_line": 144,
            "end_line": 154,
            "n_lines": 11,
            "name": "lazyrouter",
            "qualname": "app.lazyrouter",
            "kind": "function_expression",
        },
    }
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(record) + "\n\n")
    (query,) = load_queries(path)
    assert query.variant == "doc" and query.target.n_lines == 11
    assert query.target.file == "express/lib/application.js"
    assert query.target.package == "express"


@pytest.mark.skipif(not SCORER.exists(), reason="benchmark scorer not present")
def test_metrics_agree_with_benchmark_scorer(index: VectorIndex, tmp_path) -> None:
    spec = importlib.util.spec_from_file_location("bench_score", SCORER)
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    report = evaluate(QUERIES, index, TableEmbedder())
    write_run(report, tmp_path / "run.jsonl")
    lines = (tmp_path / "run.jsonl").read_text().splitlines()
    runs = {r["id"]: r["results"] for r in map(json.loads, lines)}
    qs = [
        {"id": q.id, "variant": q.variant, "target": {**q.target.__dict__, "package": "p"}}
        for q in QUERIES
    ]
    theirs = scorer.score(qs, runs)["metrics"]
    for variant in ("doc", "name"):
        for key, value in theirs[variant].items():
            assert report.metrics[variant][key] == pytest.approx(value, abs=1e-4), key


def test_evaluate_with_a_lexical_weight_ranks_by_the_query_words_too() -> None:
    chunks = [*CHUNKS[:1], make_chunk("c2", "a.js", 11, 30, text="function refundPayment() {}")]
    index = VectorIndex.build(chunks, np.ones((2, 4)), model="table")  # cosine ties everywhere
    query = Query("refund", "refund the payment", T_INSIDE_C2, "t", "doc")
    hybrid = evaluate([query], index, TableEmbedder(), lexical_weight=0.3).rows[0].outcome
    assert hybrid.rank == 1 and hybrid.score == pytest.approx(1.3)
    assert hybrid.margin == pytest.approx(0.3)
    dense = evaluate([query], index, TableEmbedder()).rows[0].outcome
    assert dense.score == pytest.approx(1.0) and dense.margin == pytest.approx(0.0)


# --- query sets: every bad record is a message naming its line ----------------------

GOOD = {
    "id": "q1",
    "query": "resize an image",
    "variant": "doc",
    "target": {"file": "src/a.js", "start_line": 3, "end_line": 9},
}
GOOD_LINE = json.dumps(GOOD)


def _with(**changes: object) -> str:
    record = json.loads(GOOD_LINE)
    for key, value in changes.items():
        if key in ("file", "start_line", "end_line"):
            record["target"][key] = value
        else:
            record[key] = value
    return json.dumps(record)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (_with(query=123), '"query" must be a non-empty string, got a number (123)'),
        (_with(query=["a", "b"]), '"query" must be a non-empty string, got a list'),
        (_with(query="  "), '"query" must be a non-empty string, got an empty string'),
        (_with(variant=["x"]), '"variant" must be a string, got a list'),
        (_with(id={"a": 1}), '"id" must be a non-empty string, got an object'),
        (_with(start_line=1e308), '"target.start_line" must be a whole line number'),
        (_with(start_line=1.5), "got a number (1.5)"),
        (
            _with(end_line="20"),
            '"target.end_line" must be a whole line number (1-based), got a string',
        ),
        (_with(start_line=True), "got a boolean (true)"),
        (_with(start_line=0), '"target.start_line" must be between 1 and 10,000,000, got 0'),
        (_with(end_line=10**30), "must be between 1 and 10,000,000"),
        (_with(start_line=9, end_line=3), '"start_line" 9 is after "end_line" 3; swap them'),
        (_with(file=None), '"file" must be a non-empty string, got missing'),
        (_with(target=[1]), '"target" must be an object'),
        (
            GOOD_LINE.replace('"start_line": 3', '"start_line": Infinity'),
            "Infinity is not a JSON number",
        ),
        (GOOD_LINE.replace('"start_line": 3', '"start_line": NaN'), "NaN is not a JSON number"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('[{"id": "q1"}]', "a record must be a JSON object, not a list"),
        ('"just a string"', "a record must be a JSON object, not a string"),
        (GOOD_LINE[:-1], "not valid JSON at character 122 of the record: Expecting ',' delimiter"),
        ('{"id": "q1" "query": "x"}', "not valid JSON at character 13 of the record"),
    ],
)
def test_a_bad_record_is_named_by_its_line_with_how_to_fix_it(line: str, message: str) -> None:
    data = f"{GOOD_LINE}\n\n{line}\n{GOOD_LINE}\n".encode()
    with pytest.raises(QuerySetError) as err:
        parse_queries(data)
    assert err.value.summary.startswith("1 of 3 records are not query records")
    (problem,) = err.value.problems
    assert problem.startswith("line 3: ")
    assert message in problem
    assert problem in str(err.value)


def test_every_bad_line_is_counted_and_the_first_ones_listed() -> None:
    data = "\n".join([GOOD_LINE] + [_with(query=n) for n in range(14)]).encode()
    with pytest.raises(QuerySetError) as err:
        parse_queries(data)
    assert len(err.value.problems) == 14
    assert err.value.problems[-1].startswith("line 15: ")
    assert str(err.value).endswith("... and 4 more")


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"", "holds no queries"), (b"\n  \n", "holds no queries"), (b"\xff\xfe{}", "not UTF-8")],
)
def test_empty_or_undecodable_query_sets(data: bytes, message: str) -> None:
    with pytest.raises(QuerySetError, match=message):
        parse_queries(data)


def test_records_split_on_newlines_only_and_ids_may_be_numbers() -> None:
    record = json.loads(_with(query="a\u2028b", id=7))
    text = "\ufeff" + json.dumps(record, ensure_ascii=False) + "\r\n"
    (query,) = parse_queries(text.encode())
    assert query.id == "7" and query.query == "a\u2028b"


def test_unreachable_targets_say_which_files_and_how_many() -> None:
    files = [
        FileInfo("src/a.js", 100, Category.SOURCE, "javascript", "javascript source"),
        FileInfo("lib/x.min.js", 100, Category.MINIFIED, "javascript", "minified"),
    ]
    lines = [
        GOOD_LINE,
        _with(id="q2", file="src/nope.js"),
        _with(id="q3", file="src/nope.js"),
        _with(id="q4", file="../../etc/passwd"),
        _with(id="q5", file="lib/x.min.js"),
    ]
    queries = parse_queries("\n".join(lines))
    found = unreachable_targets(queries, files)
    assert [(u.query.id, u.why) for u in found] == [
        ("q2", "not in the repository"),
        ("q3", "not in the repository"),
        ("q4", "not in the repository"),
        ("q5", "not chunked (minified)"),
    ]
    assert unreachable_summary(found, len(queries)).startswith(
        "4 of 5 queries name a target in 3 file(s) that no chunk comes from"
    )
    headers, rows = unreachable_table(found)
    assert headers == ["target file", "why", "queries", "ids"]
    assert rows[0] == ["src/nope.js", "not in the repository", "2", "q2, q3"]
    assert [row[0] for row in rows] == ["src/nope.js", "../../etc/passwd", "lib/x.min.js"]
    assert unreachable_targets(queries[:1], files) == []


def _lines_chunk(chunk_id: str, file: str, start: int, end: int) -> Chunk:
    text = "\n".join(f"line_{n} = {n}" for n in range(start, end + 1)) + "\n"
    return make_chunk(chunk_id, file, start, end, text=text)


def test_budget_metrics_per_query_and_in_the_metrics_table() -> None:
    from nexus.evaluation.budget import budget_label
    from nexus.retrieval.budget import line_tokens

    chunks = [_lines_chunk(c.id, c.file, c.start_line, c.end_line) for c in CHUNKS]
    index = VectorIndex.build(chunks, np.eye(4), model="table")
    cost = {c.id: sum(line_tokens(c.text)) for c in chunks}
    # q1 finds c2 first; q2 reads c4 (a miss) then c2 (holds 3 of T_STRADDLE's 6 lines).
    budgets = (cost["c2"], cost["c4"] + cost["c2"])
    report = evaluate(QUERIES[:2], index, TableEmbedder(), budgets=budgets)
    q1, q2 = (row.outcome.budget for row in report.rows)
    assert q1.recall == {budgets[0]: 1.0, budgets[1]: 1.0}
    assert q1.tokens_to_first_hit == cost["c2"]
    assert q2.recall == {budgets[0]: 0.0, budgets[1]: 1.0}
    assert q2.tokens_to_first_hit == cost["c4"] + cost["c2"]
    assert q1.lines_top_k == 10 + 20 + 10 + 20
    doc = report.metrics["doc"]
    assert doc["tokens to first hit"] == pytest.approx((cost["c2"] + budgets[1]) / 2)
    assert report.metric("doc", "lines@10") == 60
    headers, rows = metrics_table(report)
    costs = ["tokens to first hit", "lines@10", "tokens@10"]
    assert headers[3:8] == [*(budget_label(b) for b in budgets), *costs]  # budget metrics first
    assert headers[8:] == ["R@1", "R@5", "R@10", "MRR@10", "lines@5"]
    assert len(rows[0]) == len(headers)
    record = report.rows[1].to_dict()
    assert record["tokens to first hit"] == cost["c4"] + cost["c2"]


def test_score_margin_and_full_rank_are_the_final_ranked_scores() -> None:
    from nexus.evaluation.metrics import score_query
    from nexus.retrieval.ranking import DEFAULT_RULES

    index = VectorIndex.build(CHUNKS, np.eye(4), model="table")
    vec = TableEmbedder().encode(["q2"])[0]
    outcome = score_query(
        index, vec, T_STRADDLE, k=2, text="c2 straddle", ranking=DEFAULT_RULES, keep_ranked=True
    )
    plain = search(index, vec, "c2 straddle", 2, rules=DEFAULT_RULES, exact=True)
    assert [h.chunk.id for h in outcome.hits] == [h.chunk.id for h in plain]
    ranked = outcome.ranked
    targets = [h for h in ranked if is_hit(h.chunk, T_STRADDLE)]
    others = [h for h in ranked if not is_hit(h.chunk, T_STRADDLE)]
    assert outcome.score == pytest.approx(targets[0].score)
    assert outcome.margin == pytest.approx(targets[0].score - others[0].score)
    assert outcome.full_rank == targets[0].rank and outcome.scored == len(ranked)
    if outcome.rank is not None:
        assert outcome.hits[outcome.rank - 1].score == pytest.approx(outcome.score)


def test_the_hits_are_the_same_whether_the_target_is_located_or_not() -> None:
    """``score_query`` ranks every candidate to find the target's final score; its top k
    must be the plain search's top k (windows included) on a real repository."""
    from nexus.chunking.pipeline import chunk_repository
    from nexus.config import ChunkConfig
    from nexus.evaluation.metrics import score_query
    from nexus.ingest.sources import open_repository
    from nexus.retrieval.ranking import DEFAULT_RULES
    from nexus.ui.fake_embedder import HashingEmbedder

    root = Path(__file__).resolve().parents[2] / "sample_repos" / "express-images"
    embedder = HashingEmbedder()
    index = VectorIndex.from_chunks(
        chunk_repository(open_repository(root), ChunkConfig()), embedder
    )
    for query in load_queries(root / "queries.jsonl")[:12]:
        vec = embedder.encode([query.query])[0]
        located = score_query(index, vec, query.target, 5, text=query.query, ranking=DEFAULT_RULES)
        plain = search(index, vec, query.query, 5, rules=DEFAULT_RULES, exact=True)
        assert [(h.chunk.id, h.score) for h in located.hits] == [
            (h.chunk.id, h.score) for h in plain
        ]
        if located.rank is not None:
            assert located.full_rank == located.rank


def _outcome_record(outcome) -> tuple:  # noqa: ANN001
    hits = [(h.chunk.id, h.rank, h.key, h.score) for h in outcome.hits]
    return hits, outcome.ranks, outcome.budget, outcome.score, outcome.margin, outcome.full_rank


@pytest.mark.parametrize("model", ["fake-bow", "fake-bow-static"])  # -static: query feedback
@pytest.mark.parametrize("detail", [False, True])
def test_a_query_set_scored_in_one_matrix_product_ranks_as_one_query_at_a_time(
    monkeypatch, detail, model
):
    """``evaluate`` finds every query's dense shortlist in one queries x chunks product
    (two blocks here); each query's hits, ranks, budget figures and scores are exactly
    those ``score_query`` gives it alone, also when query feedback asks the index again
    with a moved vector."""
    from dataclasses import replace

    from nexus.chunking.pipeline import analyze_files, chunk_analyses
    from nexus.config import ChunkConfig
    from nexus.evaluation import metrics, runs
    from nexus.ingest.sources import open_repository
    from nexus.retrieval.ranking import DEFAULT_RULES
    from tests.retrieval.test_embedding import FakeEmbedder

    sample = Path(__file__).resolve().parents[2] / "sample_repos" / "mixed-shop"
    repo = open_repository(sample)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    chunks = chunk_analyses(analyses, ChunkConfig(max_tokens=64, min_tokens=0), repo=repo.name)
    embedder = FakeEmbedder()
    embedder.name = model
    index = VectorIndex.from_chunks(chunks, embedder)
    queries = load_queries(sample / "queries.jsonl")
    rules = replace(DEFAULT_RULES, candidates=5)  # a shortlist well short of the index
    assert len(index) > 4 * rules.candidates and len(queries) > 2
    vectors = embedder.encode([q.query for q in queries])
    monkeypatch.setattr(runs, "COSINE_BLOCK", len(index) * (len(queries) // 2))
    report = evaluate(queries, index, embedder, query_vectors=vectors, ranking=rules, detail=detail)
    alone = [
        metrics.score_query(index, vec, q.target, text=q.query, ranking=rules, detail=detail)
        for q, vec in zip(queries, vectors, strict=True)
    ]
    assert [_outcome_record(row.outcome) for row in report.rows] == [
        _outcome_record(outcome) for outcome in alone
    ]
    assert report.metrics == runs.aggregate(
        [runs.QueryRow(q, o) for q, o in zip(queries, alone, strict=True)]
    )


def test_dense_shortlists_are_the_keys_one_query_at_a_time_gives(monkeypatch):
    from nexus.evaluation import runs

    monkeypatch.setattr(runs, "COSINE_BLOCK", 3000 * 7)  # blocks of 7 queries
    rng = np.random.default_rng(7)
    chunks = [make_chunk(f"c{i}") for i in range(3000)]
    index = VectorIndex.build(chunks, rng.normal(size=(3000, 32)))
    queries = rng.normal(size=(20, 32))
    found = runs.dense_shortlists(index, queries, 100)
    assert len(found) == 20
    for keys, query in zip(found, queries, strict=True):
        assert sorted(keys) == sorted(index.best_cosine_keys(query, 100))
    assert [len(k) for k in runs.dense_shortlists(index, queries[:2], 5000)] == [3000, 3000]
