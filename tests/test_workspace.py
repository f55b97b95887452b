"""The front door (``nexus.workspace``): open, build or reuse, search within a budget,
chunks, related, status, refresh; and the keyword answers of a running build going
through the same ranking stage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nexus.ingest.sources import IngestError, IngestSettings
from nexus.retrieval.budget import line_tokens
from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCancelled
from nexus.retrieval.embedding_cache import EmbeddingCache
from nexus.ui.fake_embedder import HashingEmbedder
from nexus.workspace import Settings, Workspace
from tests.helpers import make_chunk

SAMPLES = Path(__file__).resolve().parents[1] / "sample_repos"


@pytest.fixture
def repo(tmp_path) -> Path:
    copy = tmp_path / "ts-payments"
    shutil.copytree(SAMPLES / "ts-payments", copy)
    return copy


def _open(repo: Path, tmp_path: Path, **settings) -> Workspace:
    return Workspace.open(
        repo, Settings(cache_dir=tmp_path / "cache", **settings), HashingEmbedder()
    )


def test_search_builds_once_then_reuses_the_saved_index(repo, tmp_path):
    first = _open(repo, tmp_path)
    (built,) = first.index()
    answer = first.search("refund a payment", k=3)
    assert not built.reused and [h.rank for h in answer.hits] == [1, 2, 3]
    assert answer.hits[0].chunk.file == "src/services/refund.ts"
    assert answer.why(answer.hits[0]).startswith("dense")
    assert [r.tokens for r in answer.reads] == [
        sum(line_tokens(h.chunk.text)) for h in answer.hits
    ]  # no budget: every hit whole
    again = _open(repo, tmp_path)
    (opened,) = again.index()
    assert opened.reused and opened.folder == built.folder
    assert again.search("refund a payment", k=3).hits == answer.hits
    status = again.status()
    assert (status.files, status.chunks, status.embedded) == (15, len(opened.index), 1.0)
    assert status.strategies == ("ast",) and status.model == "fake-hashing-256"


def test_a_budget_reads_hits_in_rank_order_and_cuts_the_last(repo, tmp_path):
    workspace = _open(repo, tmp_path)
    whole = workspace.search("refund a payment", k=5)
    sizes = [r.tokens for r in whole.reads]
    budget = sizes[0] + sizes[1] // 2
    answer = workspace.search("refund a payment", k=5, budget_tokens=budget)
    assert answer.tokens_used <= budget and answer.budget == budget
    assert [r.rank for r in answer.reads] == [1, 2]
    assert not answer.reads[0].cut and answer.reads[1].cut
    assert sum(line_tokens(answer.reads[1].text)) <= answer.reads[1].tokens


def test_a_budget_reads_past_k_as_deep_as_it_lasts(repo, tmp_path):
    """With a budget the hits are the ones it reads, however many: two hits when k is 2,
    but a budget that lasts for five reads five, and only those come back."""
    workspace = _open(repo, tmp_path)
    whole = workspace.search("refund a payment", k=5)
    budget = sum(r.tokens for r in whole.reads)
    answer = workspace.search("refund a payment", k=2, budget_tokens=budget)
    assert [h.chunk.id for h in answer.hits] == [h.chunk.id for h in whole.hits]
    assert [r.rank for r in answer.reads] == [1, 2, 3, 4, 5] and not answer.reads[-1].cut
    assert len(answer.hits) == len(answer.reads) and answer.tokens_used == budget


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda w: w.search("  "), "non-empty"),
        (lambda w: w.search("refund", k=0), "k must be at least 1"),
        (lambda w: w.search("refund", budget_tokens=0), "at least 1 token"),
        (lambda w: w.search("refund", budget_tokens=2.5), "whole number"),
        (lambda w: w.search("refund", strategy="words"), "unknown strategy"),
        (lambda w: w.related("src/services/refund.ts", 10_000), "holds line 10000"),
    ],
)
def test_bad_input_is_a_clear_error(repo, tmp_path, call, message):
    with pytest.raises(ValueError, match=message):
        call(_open(repo, tmp_path))


def test_chunks_and_related(repo, tmp_path):
    workspace = _open(repo, tmp_path)
    chunks = workspace.chunks("src/services/refund.ts")
    assert chunks and all(c.file == "src/services/refund.ts" for c in chunks)
    assert [c.start_line for c in chunks] == sorted(c.start_line for c in chunks)
    assert workspace.chunks("src/nope.ts") == []
    at, related = workspace.related("src/services/refund.ts", chunks[-1].start_line, k=3)
    assert at == chunks[-1] and len(related) == 3 and [h.rank for h in related] == [1, 2, 3]
    assert all((h.chunk.file, h.chunk.start_line) != (at.file, at.start_line) for h in related)


def test_refresh_indexes_edited_added_and_deleted_files(repo, tmp_path):
    workspace = _open(repo, tmp_path)
    before = workspace.search("refund a payment", k=5)
    assert workspace.refresh().changed_files == 0
    assert workspace.search("refund a payment", k=5).hits == before.hits  # nothing changed
    refund = repo / "src" / "services" / "refund.ts"
    refund.write_text(refund.read_text() + "\nexport function settleLedgerDrift() {}\n")
    (repo / "src" / "ledger.ts").write_text("export function auditLedgerBook() {}\n")
    (repo / "src" / "utils" / "money.ts").unlink()
    fresh = workspace.refresh()
    assert fresh.changed_files == 3 and "3 changed file(s)" in fresh.describe()
    assert workspace.search("settleLedgerDrift", k=1).hits[0].chunk.symbol == "settleLedgerDrift"
    assert workspace.search("auditLedgerBook", k=1).hits[0].chunk.file == "src/ledger.ts"
    assert workspace.chunks("src/utils/money.ts") == []
    found = workspace.search("money amount currency", k=10).hits
    assert all(h.chunk.file != "src/utils/money.ts" for h in found)


def test_a_file_edited_in_place_is_read_again_without_a_new_scan(repo, tmp_path, monkeypatch):
    from nexus.workspace import refreshing as module

    workspace = _open(repo, tmp_path)
    workspace.search("refund", k=1)
    monkeypatch.setattr(module, "open_repository", lambda *a, **k: pytest.fail("scanned"))
    refund = repo / "src" / "services" / "refund.ts"
    with refund.open("a") as f:  # in place: the folder's stamp does not move
        f.write("\nexport function settleLedgerDrift() {}\n")
    assert workspace.refresh().changed_files == 1
    assert workspace.search("settleLedgerDrift", k=1).hits[0].chunk.symbol == "settleLedgerDrift"
    refund.touch()  # a new stamp, the same bytes: nothing to index again
    assert workspace.refresh().changed_files == 1


def test_progress_and_cancel(repo, tmp_path):
    seen: list[str] = []
    workspace = _open(repo, tmp_path)
    workspace.index(report=lambda stage, done, total: seen.append(stage))
    assert {"chunking", "embedding"} <= set(seen)
    other = _open(repo, tmp_path, config=Settings().config.with_(max_tokens=128))
    with pytest.raises(EmbeddingCancelled):
        other.index(cancel=lambda: True)
    assert not other.status().strategies  # nothing opened


def test_a_path_outside_the_allowed_roots_is_refused(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    files = IngestSettings(allowed_roots=(elsewhere,))
    with pytest.raises(IngestError, match="outside the allowed roots"):
        Workspace.open(repo, Settings(files=files), HashingEmbedder())


def test_the_cli_and_the_workspace_give_the_same_hits(repo, tmp_path, monkeypatch, capsys):
    from nexus.cli import indexes, main

    monkeypatch.setattr(indexes, "cached_embedder", lambda args, config: HashingEmbedder())
    cache = tmp_path / "cli-cache"
    assert (
        main(["search", str(repo), "refund a payment", "--json", "-k", "5", "--cache", str(cache)])
        == 0
    )
    cli = json.loads(capsys.readouterr().out)["AST"]
    answer = _open(repo, tmp_path).search("refund a payment", k=5)
    mine = [
        (h.chunk.file, h.chunk.start_line, h.chunk.end_line, round(h.score, 4)) for h in answer.hits
    ]
    assert [(h["file"], h["start_line"], h["end_line"], h["score"]) for h in cli] == mine


def test_keyword_hits_of_a_build_go_through_the_ranking_stage(tmp_path):
    """Before any vector, the chunk that defines the asked name wins, as it would once
    dense scores exist; BM25 alone puts the chunk that mentions it most first."""
    from nexus.retrieval.index import VectorIndex
    from nexus.retrieval.ranking import DEFAULT_RULES
    from nexus.runtime.builds import IndexBuild

    mentions = "parseCookie(a); parseCookie(b); parseCookie(c); parseCookie(d);"
    chunks = [
        make_chunk("caller", "src/handler.js", text=mentions, symbol="handle"),
        make_chunk(
            "def",
            "src/cookies.js",
            text="function parseCookie(header) { return header.split(';') }",
            symbol="parseCookie",
            symbol_kind="function",
        ),
    ]
    embedder = CachedEmbedder(HashingEmbedder(), EmbeddingCache(tmp_path / "c"))
    index = VectorIndex.build(chunks, np.eye(2, 256, dtype=np.float32), embedder.name)
    build = IndexBuild.opened(index, embedder)
    assert [h.chunk.id for h in build.keyword_hits("parseCookie", 2)] == ["caller", "def"]
    ranked = build.keyword_hits("parseCookie", 2, DEFAULT_RULES)
    assert [h.chunk.id for h in ranked] == ["def", "caller"]
    assert {p.name for p in ranked[0].parts} >= {"dense", "keyword"}
    assert sum(p.value for p in ranked[0].parts) == pytest.approx(ranked[0].score)
    # A sentence's keyword share is the one a dense search of this model's index gives
    # (``RankingRules.for_model``: 0.4 beside a contextual model's 0.6), so the "why"
    # does not change when the vectors come.
    sentence = build.keyword_hits("where is the cookie header parsed", 2, DEFAULT_RULES)
    share = 1 - DEFAULT_RULES.for_model(embedder.name).natural_dense
    assert share == pytest.approx(0.4)
    best = max(dict((p.name, p.value) for p in h.parts).get("keyword", 0) for h in sentence)
    assert best == pytest.approx(share)


def test_a_file_added_to_a_folder_of_folders_is_seen(repo, tmp_path):
    """A folder that holds only folders (hono's ``src/helper/``) is watched too: a file
    added there is indexed at the next refresh (issue 41: never seen)."""
    nested = repo / "src" / "helper" / "dates"
    nested.mkdir(parents=True)
    (nested / "format.ts").write_text("export function formatDate() {}\n")
    workspace = _open(repo, tmp_path)
    workspace.search("refund", k=1)
    workspace.refresh()  # the first one stats every file; from here the kernel's word counts
    assert workspace.refresh().changed_files == 0
    (repo / "src" / "helper" / "retry.ts").write_text("export function retryWithBackoff() {}\n")
    assert workspace.refresh().changed_files == 1
    assert workspace.search("retryWithBackoff", k=1).hits[0].chunk.file == "src/helper/retry.ts"


def test_with_no_event_from_the_kernel_no_file_is_stat_ed(repo, tmp_path, monkeypatch):
    from nexus.workspace import freshness

    workspace = _open(repo, tmp_path)
    workspace.search("refund", k=1)
    workspace.refresh()  # the first one stats every file
    calls = []
    with monkeypatch.context() as patched:
        patched.setattr(freshness, "_stamp", lambda path: calls.append(path))
        workspace.refresh()
    assert calls == []  # nothing moved: not one stat
    refund = repo / "src" / "services" / "refund.ts"
    with refund.open("a") as f:
        f.write("\nexport function settleLedgerDrift() {}\n")
    assert workspace.refresh().changed_files == 1


def test_a_reopen_after_an_edit_loads_the_saved_index_and_chunks_only_that_file(
    repo, tmp_path, monkeypatch
):
    """A restart (a new workspace) after one file changed opens the index saved before
    the edit and chunks only that file again; the answer holds the edit. The index of the
    files now is saved meanwhile: the next restart opens it."""
    from nexus.runtime import stream

    first = _open(repo, tmp_path)
    (built,) = first.index()
    refund = repo / "src" / "services" / "refund.ts"
    refund.write_text(refund.read_text() + "\nexport function settleLedgerDrift() {}\n")
    chunked: list[str] = []
    real = stream.chunk_ref

    def chunk_ref(ref, *args, **kwargs):
        chunked.append(ref.info.path)
        return real(ref, *args, **kwargs)

    monkeypatch.setattr(stream, "chunk_ref", chunk_ref)

    again = _open(repo, tmp_path)
    (opened,) = again.index(
        refresh_saved=True, chunker=lambda config, prepare: pytest.fail("chunked every file")
    )
    assert opened.reused and opened.folder == built.folder
    assert opened.stale == {"src/services/refund.ts"} and chunked == ["src/services/refund.ts"]
    assert again.search("settleLedgerDrift", k=1).hits[0].chunk.symbol == "settleLedgerDrift"
    assert again.status().fresh.changed_files == 1
    assert len(again.chunks("src/services/refund.ts")) > len(first.chunks("src/services/refund.ts"))

    # Meanwhile the index of the files as they are now was saved: the next open (a server
    # or ``nexus index``) finds it and chunks nothing, and it is what a build would make.
    again.wait_for_saves()
    chunked.clear()
    third = _open(repo, tmp_path)
    (merged,) = third.index(chunker=lambda config, prepare: pytest.fail("chunked every file"))
    assert merged.reused and not merged.stale and merged.folder != built.folder
    assert chunked == []
    (rebuilt,) = _open(repo, tmp_path).index(rebuild=True, folder=tmp_path / "fresh")
    assert [c.id for c in merged.index.chunks] == [c.id for c in rebuilt.index.chunks]
    np.testing.assert_allclose(merged.index.vectors, rebuilt.index.vectors, atol=1e-6)
    for query in ("settleLedgerDrift", "refund a payment"):
        np.testing.assert_allclose(
            merged.index.keyword_scores(query), rebuilt.index.keyword_scores(query)
        )
    assert third.search("settleLedgerDrift", k=1).hits[0].chunk.symbol == "settleLedgerDrift"


def test_a_reopen_after_too_many_edits_builds_afresh(repo, tmp_path):
    from nexus.workspace import building as module

    _open(repo, tmp_path).index()
    files = sorted((repo / "src").rglob("*.ts"))
    for path in files[: int(len(files) * module.STALE_SHARE) + 2]:
        path.write_text(path.read_text() + "\nexport const touched = 1;\n")
    (opened,) = _open(repo, tmp_path).index(refresh_saved=True)
    assert not opened.reused and not opened.stale


def test_settings_answer_with_the_fast_tier_unless_a_quality_model_is_named(tmp_path):
    assert Settings().tier == "fast"
    assert Settings(tier="quality", model_path=str(tmp_path)).model_path == str(tmp_path)
    with pytest.raises(ValueError, match="model_path names a quality-tier model"):
        Settings(model_path=str(tmp_path))
