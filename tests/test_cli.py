"""The command line: each verb on a sample repo or a tiny fixture, errors as messages."""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path

import pytest

from nexus.cli import main
from tests.helpers import on_quality_tier

SAMPLES = Path(__file__).resolve().parents[1] / "sample_repos"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(on_quality_tier(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_scan_prints_categories_and_skipped_files_with_reasons(capsys):
    code, out, _ = run(capsys, "scan", str(SAMPLES / "express-images"))
    assert code == 0
    assert "public/vendor.min.js" in out and "minified" in out
    assert "src/generated/routes.gen.js" in out and "generated" in out


def test_scan_json_counts_match_the_files(capsys):
    code, out, _ = run(capsys, "scan", str(SAMPLES / "react-dashboard"), "--json")
    summary = json.loads(out)
    assert code == 0
    assert summary["by_language"]["tsx"] >= 5


def test_scan_of_a_zip_equals_scan_of_the_directory(capsys, tmp_path):
    root = SAMPLES / "ts-payments"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, f"ts-payments/{path.relative_to(root)}")
    zip_path = tmp_path / "ts-payments.zip"
    zip_path.write_bytes(buffer.getvalue())
    _, from_dir, _ = run(capsys, "scan", str(root), "--json")
    _, from_zip, _ = run(capsys, "scan", str(zip_path), "--json")
    assert json.loads(from_dir)["by_category"] == json.loads(from_zip)["by_category"]


def test_functions_lists_units_and_what_the_regex_misses(capsys):
    path = SAMPLES / "ts-payments" / "src" / "services" / "payment.ts"
    code, out, _ = run(capsys, "functions", str(path))
    assert code == 0
    assert "PaymentService.createSubscription" in out and "MISSED" in out
    assert "the regex baseline finds" in out


def test_chunk_jsonl_export_has_the_documented_fields(capsys, tmp_path):
    out_file = tmp_path / "chunks.jsonl"
    code, _, _ = run(
        capsys,
        "chunk",
        str(SAMPLES / "express-images"),
        "--format",
        "jsonl",
        "--max-tokens",
        "256",
        "-o",
        str(out_file),
    )
    assert code == 0
    records = [json.loads(line) for line in out_file.read_text().splitlines()]
    required = {
        "id",
        "file",
        "language",
        "start_line",
        "end_line",
        "start_byte",
        "end_byte",
        "token_count",
        "symbol",
        "symbol_kind",
        "parent",
        "text",
        "embedding_text",
    }
    assert records and all(required <= set(r) for r in records)
    assert max(r["token_count"] for r in records) <= 256
    source = (SAMPLES / "express-images" / records[0]["file"]).read_bytes()
    first = records[0]
    assert source[first["start_byte"] : first["end_byte"]].decode() == first["text"]


def test_chunk_reads_a_config_file(capsys, tmp_path):
    config = tmp_path / "nexus.toml"
    config.write_text('[chunking]\nstrategy = "lines"\nline_window = 10\n')
    code, out, _ = run(capsys, "chunk", str(SAMPLES / "ts-payments"), "--config", str(config))
    assert code == 0
    assert all(
        int(line.split()[1].split("-")[1]) - int(line.split()[1].split("-")[0]) < 10
        for line in out.splitlines()[2:]
        if line.startswith("src/")
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["scan", "/no/such/repo"], "does not exist"),
        (["chunk", "sample_repos/ts-payments", "--max-tokens", "4"], "max_tokens must be"),
        (["chunk", "sample_repos/ts-payments", "--profile", "nope"], "unknown profile"),
        (["functions", "README.md"], "is not chunked"),
    ],
)
def test_bad_input_is_a_message_not_a_traceback(capsys, monkeypatch, argv, message):
    monkeypatch.chdir(SAMPLES.parent)
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_symlink_loops_are_reported_by_scan_and_chunk(capsys, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.js").write_text("function a() { return 1; }\n")
    (root / "loop1.js").symlink_to("loop2.js")
    (root / "loop2.js").symlink_to("loop1.js")
    code, out, err = run(capsys, "scan", str(root))
    assert code == 0 and "Traceback" not in err
    assert "loop1.js" in out and "symlink loop" in out
    code, out, err = run(capsys, "chunk", str(root))
    assert code == 0 and "Traceback" not in err
    assert "a.js" in out and "loop1.js" not in out
    (tmp_path / "self").symlink_to("self")
    for verb in ("scan", "chunk"):
        code, _, err = run(capsys, verb, str(tmp_path / "self"))
        assert code == 2
        assert "is a symlink loop" in err and "Traceback" not in err


def _unreadable(path: Path, monkeypatch) -> None:
    """Make ``path`` unreadable, also for root (who ignores file modes)."""
    import os

    path.chmod(0)
    real_open = os.open

    def refuse(name, *args, **kwargs):
        if Path(name) == path:
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("locked.js", b"function f() {}\n", "(unsupported: could not read: Permission denied)"),
        ("noise.js", random.Random(7).randbytes(4000), "(binary: NUL"),
        ("bundle.js", b"var a=function(b){return b+1};" * 280_000, "(too_large: 8,400,000 bytes"),
    ],
)
def test_functions_classifies_its_file_like_scan(
    capsys, monkeypatch, tmp_path, name, content, message
):
    path = tmp_path / name
    path.write_bytes(content)
    if name == "locked.js":
        _unreadable(path, monkeypatch)
    code, out, err = run(capsys, "functions", str(path))
    assert code == 2 and not out
    assert f"{path} is not chunked {message}" in err and "Traceback" not in err
    _, scanned, _ = run(capsys, "scan", str(tmp_path), "--json")
    assert message.split(":")[0].strip("(") in json.dumps(json.loads(scanned)["by_category"])


EVAL_REPO = SAMPLES / "express-images"


def test_eval_names_each_bad_query_record_by_line_and_position(capsys, tmp_path):
    good = (EVAL_REPO / "queries.jsonl").read_text().splitlines()[0]
    record = json.loads(good)
    bad = [json.dumps({**record, "query": 123}), "[1, 2]", good[:-1], "[" * 100_000]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join([good, *bad]) + "\n")
    code, out, err = run(capsys, "eval", str(EVAL_REPO), "--queries", str(path))
    assert code == 2 and not out and "Traceback" not in err
    assert "4 of 5 records are not query records" in err
    assert 'line 2: "query" must be a non-empty string, got a number (123)' in err
    assert "line 3: a record must be a JSON object, not a list" in err
    assert f"line 4: not valid JSON at character {len(good)} of the record" in err
    assert "line 5: nested too deeply" in err


def test_eval_reports_targets_outside_the_repository(capsys, monkeypatch, tmp_path):
    from nexus.cli import indexes
    from nexus.ui.fake_embedder import HashingEmbedder

    monkeypatch.setattr(indexes, "cached_embedder", lambda args, config: HashingEmbedder())
    lines = (EVAL_REPO / "queries.jsonl").read_text().splitlines()[:3]
    for number, file in enumerate(["src/nope.js", "../../etc/passwd"]):
        record = json.loads(lines[0])
        record["id"], record["target"]["file"] = f"bad-{number}", file
        lines.append(json.dumps(record))
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, _ = run(capsys, "eval", str(EVAL_REPO), "--queries", str(path))
    assert code == 0
    assert "2 of 5 queries name a target in 2 file(s) that no chunk comes from" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if "bad-" in line}
    assert rows["src/nope.js"][-1] == "bad-0" and rows["../../etc/passwd"][-1] == "bad-1"
    assert "R@1" in out


def test_files_the_cli_writes_or_reads_may_be_symlink_loops(capsys, tmp_path):
    (tmp_path / "loop").symlink_to("loop")
    repo = str(SAMPLES / "ts-payments")
    for argv in (["chunk", repo, "-o", "loop"], ["chunk", repo, "--config", "loop"]):
        code, _, err = run(capsys, *[str(tmp_path / a) if a == "loop" else a for a in argv])
        assert code == 2
        assert "Too many levels of symbolic links" in err and "Traceback" not in err


def test_profiles_toml_is_loadable(capsys, tmp_path):
    from nexus.chunking.profiles import PROFILES, load_profiles

    _, out, _ = run(capsys, "profiles", "--toml")
    path = tmp_path / "p.toml"
    path.write_text(out)
    assert load_profiles(path) == PROFILES


def test_a_bad_zip_is_a_message(capsys, tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 this is not a zip")
    code, _, err = run(capsys, "scan", str(bad))
    assert code == 2 and "zip" in err


def test_preset_sets_the_budget_and_flags_override_it(capsys):
    from nexus.cli import build_parser
    from nexus.cli.common import config_from_args

    args = build_parser().parse_args(["chunk", "x", "--preset", "model-window"])
    assert (config_from_args(args).max_tokens, config_from_args(args).min_tokens) == (144, 32)
    args = build_parser().parse_args(["search", "x", "q", "--preset", "small-context"])
    assert (config_from_args(args).max_tokens, config_from_args(args).min_tokens) == (192, 32)
    args = build_parser().parse_args(["chunk", "x", "--preset", "large", "--min-tokens", "8"])
    assert (config_from_args(args).max_tokens, config_from_args(args).min_tokens) == (1024, 8)
    args = build_parser().parse_args(["eval", "x", "--queries", "q", "--lexical-weight", "0"])
    assert config_from_args(args).lexical_weight == 0
    code, _, err = run(capsys, "chunk", str(SAMPLES / "ts-payments"), "--preset", "tiny")
    assert code == 2 and "unknown preset" in err


class CountingEmbedder:
    """The hashing embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        from nexus.ui.fake_embedder import HashingEmbedder

        self.inner = HashingEmbedder()
        self.name, self.dim, self.max_seq_length = "counting", 256, 256
        self.texts = 0

    def encode(self, texts, progress=None):
        self.texts += len(texts)
        return self.inner.encode(texts, progress)

    def count_wordpieces(self, texts):
        return self.inner.count_wordpieces(texts)


@pytest.mark.parametrize("verb", ["search", "eval"])
def test_the_line_based_index_is_built_only_when_asked(capsys, monkeypatch, tmp_path, verb):
    from nexus.chunking.pipeline import chunk_repository
    from nexus.cli import indexes
    from nexus.config import ChunkConfig
    from nexus.evaluation.query_sets import load_queries
    from nexus.ingest.sources import open_repository

    extra = ["createImage"] if verb == "search" else ["--queries", str(EVAL_REPO / "queries.jsonl")]
    sizes = {}
    for strategy in ("lines", "ast"):
        config = ChunkConfig(strategy=strategy)
        sizes[strategy] = len(chunk_repository(open_repository(EVAL_REPO), config))
    for flag, shown, built in [
        ([], ["AST"], sizes["ast"]),
        (["--strategy", "lines"], ["line-based"], sizes["lines"]),
        (["--strategy", "both"], ["line-based", "AST"], sizes["ast"] + sizes["lines"]),
    ]:
        embedder = CountingEmbedder()
        monkeypatch.setattr(indexes, "cached_embedder", lambda args, config, e=embedder: e)
        cache = str(tmp_path / "-".join(["cache", *flag]))  # no saved index to reuse
        code, out, _ = run(capsys, verb, str(EVAL_REPO), *extra, *flag, "--cache", cache)
        assert code == 0
        queries = 1 if verb == "search" else len(load_queries(EVAL_REPO / "queries.jsonl"))
        assert embedder.texts == built + queries
        for label in ("line-based", "AST"):
            assert (label in out) == (label in shown), (flag, label)


def test_no_words_view_flag_turns_the_dual_view_off():
    from nexus.cli import build_parser
    from nexus.cli.common import config_from_args

    assert config_from_args(build_parser().parse_args(["index", "x"])).words_view
    args = build_parser().parse_args(["search", "x", "q", "--no-words-view"])
    assert not config_from_args(args).words_view


@pytest.mark.parametrize("verb", ["index", "search"])
def test_index_and_search_remember_the_scan(capsys, monkeypatch, tmp_path, verb):
    """A second run reads only the files that changed (none here), as the dashboard does."""
    import shutil

    from nexus.cli import cache as cache_verb
    from nexus.cli import indexes
    from nexus.ingest import repository, scan_cache
    from nexus.retrieval.embedding import CachedEmbedder
    from nexus.ui.fake_embedder import HashingEmbedder

    repo = tmp_path / "repo"
    shutil.copytree(SAMPLES / "ts-payments", repo)
    monkeypatch.setattr(scan_cache, "RACY_NS", 0)  # ctime is "now" in a fresh copy
    monkeypatch.setattr(
        indexes,
        "cached_embedder",
        lambda args, config: CachedEmbedder(HashingEmbedder(), cache_verb.open_cache(args)),
    )
    cache = str(tmp_path / "cache")
    extra = ["payment"] if verb == "search" else []
    assert run(capsys, verb, str(repo), *extra, "--cache", cache)[0] == 0
    assert list((tmp_path / "cache" / "scans").iterdir())
    read = []
    real = repository.read_path

    def counting(path, cap):  # noqa: ANN001, ANN202 - as repository.read_path
        read.append(path)
        return real(path, cap)

    monkeypatch.setattr(repository, "read_path", counting)
    assert run(capsys, verb, str(repo), *extra, "--cache", cache)[0] == 0
    assert [path.name for path in read] == [".gitignore"]  # ignore rules are always read


def _fake_model(monkeypatch, tmp_path) -> None:
    from nexus.cli import indexes
    from nexus.ui.fake_embedder import HashingEmbedder

    monkeypatch.setattr(indexes, "cached_embedder", lambda args, config: HashingEmbedder())
    monkeypatch.setenv("NEXUS_CACHE_DIR", str(tmp_path / "cache"))


def test_search_answers_a_file_of_queries_one_json_line_each(capsys, monkeypatch, tmp_path):
    _fake_model(monkeypatch, tmp_path)
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "refund a payment"}\n\nPaymentService\n')
    target = str(SAMPLES / "ts-payments")
    code, out, _ = run(capsys, "search", target, "--queries", str(queries), "-k", "3")
    assert code == 0
    first, second = (json.loads(line) for line in out.splitlines())
    assert (first["id"], second["id"], second["query"]) == ("a", "3", "PaymentService")
    hits = first["AST"]
    assert len(hits) == 3 and [h["rank"] for h in hits] == [1, 2, 3]
    for hit in hits:
        assert {"file", "start_line", "end_line", "symbol", "score", "parts"} <= set(hit)
        assert sum(hit["parts"].values()) == pytest.approx(hit["score"], abs=1e-4)
    # The ranking stage off: the old score, without parts.
    code, out, _ = run(
        capsys, "search", target, "--queries", str(queries), "--no-ranking", "--strategy", "ast"
    )
    assert code == 0 and all(h["parts"] == {} for h in json.loads(out.splitlines()[0])["AST"])


def test_search_needs_one_query_or_a_file(capsys, monkeypatch, tmp_path):
    _fake_model(monkeypatch, tmp_path)
    code, _, err = run(capsys, "search", str(SAMPLES / "ts-payments"))
    assert code == 2 and "--queries FILE" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n')
    code, _, err = run(capsys, "search", str(SAMPLES / "ts-payments"), "--queries", str(bad))
    assert code == 2 and 'line 1: a record needs a non-empty "query"' in err


def test_eval_scores_a_question_set_per_category(capsys, monkeypatch, tmp_path):
    _fake_model(monkeypatch, tmp_path)
    path = tmp_path / "questions.jsonl"
    records = [
        {"id": "s", "query": "PaymentService", "category": "symbol",
         "targets": [{"file": "src/services/payment.ts", "start_line": 1, "end_line": 400}]},
        {"id": "n", "query": "refund a payment", "category": "semantic",
         "targets": [{"file": "src/services/payment.ts"}, {"file": "src/nope.ts"}]},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    code, out, _ = run(
        capsys, "eval", str(SAMPLES / "ts-payments"), "--queries", str(path), "--json",
        str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 0
    assert "1 target file(s) are not chunked in ts-payments: src/nope.ts" in out
    groups = {line.split()[1] for line in out.splitlines()[2:] if line.strip()}
    assert {"all", "paraphrase", "symbol"} <= groups
    report = json.loads(next((tmp_path / "out").glob("*.json")).read_text())
    assert {row["id"] for row in report["rows"]} == {"s", "n"}


def test_eval_by_file_credits_a_hit_anywhere_in_a_target_file(capsys, monkeypatch, tmp_path):
    _fake_model(monkeypatch, tmp_path)
    repo = SAMPLES / "ts-payments"
    path = tmp_path / "questions.jsonl"
    # The imports of payment.ts: its class ranks first for its name, elsewhere in the file.
    target = {"file": "src/services/payment.ts", "start_line": 2, "end_line": 2}
    record = {"id": "s", "query": "PaymentService", "category": "symbol", "targets": [target]}
    path.write_text(json.dumps(record) + "\n")
    scores = {}
    for rule, flags in (("lines", []), ("file", ["--by-file"])):
        out_dir = tmp_path / rule
        argv = ["eval", str(repo), "--queries", str(path), "--strategy", "ast", "--json"]
        code, _, _ = run(capsys, *argv, str(out_dir), *flags)
        assert code == 0
        row = json.loads((out_dir / "ast.json").read_text())["rows"][0]
        assert row["top"][0].startswith("src/services/payment.ts:")
        scores[rule] = row["MRR@10"]
    assert scores["file"] == 1.0 and scores["lines"] < 1.0
    code, _, err = run(
        capsys, "eval", str(repo), "--queries", str(repo / "queries.jsonl"), "--by-file"
    )
    assert code == 2 and "--by-file scores question sets" in err


def test_eval_json_has_the_budget_metrics_for_doc_and_question_sets(capsys, monkeypatch, tmp_path):
    _fake_model(monkeypatch, tmp_path)
    repo = SAMPLES / "ts-payments"
    out_dir = tmp_path / "docs"
    argv = ["eval", str(repo), "--queries", str(repo / "queries.jsonl"), "--budgets", "500,1500"]
    code, out, _ = run(capsys, *argv, "--json", str(out_dir))
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("index"))
    assert "R@500" in header and "R@1.5k" in header and "tokens@10" in header
    report = json.loads((out_dir / "ast.json").read_text())
    assert report["budgets"] == [500, 1500]
    assert {"R@500", "R@1.5k", "tokens to first hit", "lines@10"} <= set(report["metrics"]["all"])
    row = report["rows"][0]
    assert 0 <= row["R@500"] <= row["R@1.5k"] <= 1 and row["tokens@10"] > 0

    questions = tmp_path / "questions.jsonl"
    targets = [{"file": "src/services/refund.ts"}, {"file": "src/index.ts"}]
    record = {"id": "q", "query": "refund a payment", "category": "semantic", "targets": targets}
    questions.write_text(json.dumps(record) + "\n")
    code, out, _ = run(
        capsys, "eval", str(repo), "--queries", str(questions), "--json", str(tmp_path / "q")
    )
    assert code == 0 and "R@1k" in out and "R@4k" in out
    report = json.loads((tmp_path / "q" / "ast.json").read_text())
    assert {"R@1k", "R@2k", "R@4k", "tokens@10"} <= set(report["summary"]["all"])
    assert report["rows"][0]["R@4k"] in (0.0, 0.5, 1.0)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--budgets", "0,x"], "--budgets must list token budgets"),
        (["--sweep", "--choose-by", "R@9k"], "cannot choose a sweep by 'R@9k'"),
        (["--sweep", "--distractors", "some"], "--distractors takes a number"),
    ],
)
def test_eval_refuses_bad_budgets_and_choices(capsys, monkeypatch, tmp_path, flags, message):
    _fake_model(monkeypatch, tmp_path)
    repo = SAMPLES / "ts-payments"
    code, _, err = run(capsys, "eval", str(repo), "--queries", str(repo / "queries.jsonl"), *flags)
    assert code == 2 and message in err


def test_eval_sweep_parses_only_the_files_it_samples(capsys, monkeypatch, tmp_path):
    """``--distractors 0``: the files without a target are neither blanked nor parsed."""
    from nexus.chunking import pipeline
    from nexus.evaluation.query_sets import load_queries

    _fake_model(monkeypatch, tmp_path)
    parsed: list[str] = []
    real = pipeline.analyze_files

    def recorded(files, encoding, progress=None):  # noqa: ANN001, ANN202
        files = list(files)
        parsed.extend(source.info.path for source in files)
        return real(files, encoding, progress)

    monkeypatch.setattr(pipeline, "analyze_files", recorded)
    repo = SAMPLES / "ts-payments"
    argv = ["eval", str(repo), "--queries", str(repo / "queries.jsonl"), "--sweep"]
    code, _, _ = run(capsys, *argv, "--sweep-max", "256", "--sweep-min", "0", "--distractors", "0")
    assert code == 0
    targets = {q.target.file for q in load_queries(repo / "queries.jsonl") if q.variant == "doc"}
    assert targets and set(parsed) == targets


def test_eval_sweep_says_which_queries_it_scores_and_chooses_by_a_budget(
    capsys, monkeypatch, tmp_path
):
    _fake_model(monkeypatch, tmp_path)
    repo = SAMPLES / "ts-payments"
    argv = ["eval", str(repo), "--queries", str(repo / "queries.jsonl"), "--sweep"]
    code, out, _ = run(capsys, *argv, "--sweep-max", "128,256", "--sweep-min", "0")
    assert code == 0
    assert "queries of variant 'doc' scored" in out
    assert "R@1k" in out and "tokens@10" in out
    assert "(chosen by R@1k" in out
    argv += ["--sweep-max", "128", "--sweep-min", "0", "--choose-by", "MRR@10"]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "(chosen by MRR@10" in out


def test_index_estimates_chunks_over_the_window_from_a_sample(capsys, monkeypatch, tmp_path):
    """Counting every chunk's word pieces cost 15 s on a large repository: past
    ``OVER_WINDOW_SAMPLE`` chunks the line says "about" and counts a sample."""
    import re

    from nexus.cli import indexes
    from nexus.retrieval import embedding

    class EverythingIsLong(CountingEmbedder):
        last_hits = last_misses = 0

        def count_wordpieces(self, texts):
            self.counted = len(texts)
            return [self.max_seq_length + 1] * len(texts)

    for sample, says in [(10_000, ""), (2, "about ")]:
        embedder = EverythingIsLong()
        monkeypatch.setattr(indexes, "cached_embedder", lambda args, config, e=embedder: e)
        monkeypatch.setattr(embedding, "OVER_WINDOW_SAMPLE", sample)
        cache = str(tmp_path / f"cache-{sample}")
        code, out, _ = run(capsys, "index", str(EVAL_REPO), "--cache", cache)
        chunks = int(re.search(r"indexed (\d+) ast chunks", out).group(1))
        assert code == 0 and chunks > 4
        assert f"; {says}{chunks} chunks (100%) are longer than the model's 256" in out
        assert embedder.counted == (chunks if not says else len(range(0, chunks, chunks // 2)))
