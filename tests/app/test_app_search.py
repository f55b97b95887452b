"""Search page: both result lists, the target's rank, links, and a missing model."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time

import pytest
from helpers import GatedEmbedder
from ui_helpers import shown

from nexus.config import ChunkConfig
from nexus.retrieval.embedding import ModelUnavailableError
from nexus.retrieval.tiers import QUALITY
from nexus.runtime.build_manager import BuildManager
from nexus.runtime.builds import LOADING
from nexus.ui import cache, indexing, repos
from nexus.ui.fake_embedder import HashingEmbedder

TARGET = "src/services/imageService.js:moveObject:555"


def previews(at) -> list[str]:
    """The HTML of each hit's preview."""
    return [e.proto.body for e in at.get("html") if 'class="nx-code"' in e.proto.body]


def hit_headers(at) -> list[str]:
    """Each hit's header line, the line-based list first, then the AST one."""
    return [m.value for m in at.markdown if re.match(r"\*\*\d+\.\*\*", m.value)]


def test_a_preview_shows_and_marks_the_lines_that_match_the_query(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input("thumbnail").run()
    assert not at.exception
    shown_previews = previews(at)
    assert len(shown_previews) == 2 * at.slider(key="k").value
    marked = [
        re.sub(r"<[^>]+>", "", row).lower()
        for html in shown_previews
        for row in re.findall(r'data-match="1">\d+</div><div[^>]*>(.*?)</div>', html)
    ]
    assert marked and all("thumbnail" in row for row in marked)


def test_the_selected_hit_travels_in_the_link(page) -> None:
    """Toggling a hit shows it whole and puts ``hit=FILE:LINE`` in the URL; a link with
    it selects the hit holding that line, whatever its rank in the new answer."""
    at = page("search").run()
    at.text_input(key="query").input("copy object delete original").run()
    k = at.slider(key="k").value
    # the AST list's first hit, with its neighbour (its first line is fourth ranked hybrid)
    header = hit_headers(at)[k]
    file, start = re.search(r"`([^`]+)` L(\d+)", header).groups()
    at.toggle(key="hit_ast_1").set_value(True).run()
    assert not at.exception
    link = {name: (v[0] if isinstance(v, list) else v) for name, v in at.query_params.items()}
    assert link["hit"] == f"{file}:{start}"
    assert [t.key for t in at.toggle if t.value and t.key.startswith("hit_ast")] == ["hit_ast_1"]
    # Shown whole, numbered from the chunk's first line in the file (not from 1).
    end = int(re.search(r"`[^`]+` L\d+–(\d+)", header).group(1))
    numbered = [
        [int(n) for n in re.findall(r'class="nx-ln"[^>]*>(\d+)</div>', html)]
        for html in previews(at)
    ]
    assert list(range(int(start), end + 1)) in numbered and int(start) > 1

    opened = page("search")
    opened.query_params.update({**link, "rank": "hybrid"})  # another ranking, other ranks
    opened.run()
    assert not opened.exception and not opened.warning
    on = [t.key for t in opened.toggle if t.value and t.key.startswith("hit_ast")]
    assert len(on) == 1
    rank = int(on[0].rsplit("_", 1)[1])
    assert rank != 1  # found by its line, not by its rank
    header = hit_headers(opened)[opened.slider(key="k").value + rank - 1]
    assert f"`{file}` L" in header
    lines = re.search(r"L(\d+)–(\d+)", header).groups()
    assert int(lines[0]) <= int(start) <= int(lines[1])

    opened.toggle(key=on[0]).set_value(False).run()  # unselected: gone from the link
    assert "hit" not in opened.query_params
    assert not [t for t in opened.toggle if t.value]


def test_each_hit_says_its_lines_and_tokens(page) -> None:
    """What a hit costs its reader is beside it, not only in a chart's hover."""
    at = page("search").run()
    at.text_input(key="query").input("copy object delete original").run()
    headers = hit_headers(at)
    assert len(headers) == 2 * at.slider(key="k").value
    for header in headers:
        first, last, lines, tokens = re.search(
            r"L(\d+)–(\d+) .* · ([\d,]+) lines, ([\d,]+) tokens", header
        ).groups()
        assert int(lines) == int(last) - int(first) + 1 and int(tokens) > 0


def test_a_bad_hit_in_a_link_is_reported(page) -> None:
    at = page("search")
    at.query_params.update({"q": "copy object", "hit": "src/app.js"})
    at.run()
    assert not at.exception
    assert "ignored hit='src/app.js'" in " ".join(shown(w.value) for w in at.warning)


def test_query_shows_both_result_lists_and_charts(page) -> None:
    at = page("search").run()
    assert not at.exception
    assert at.info, "asks for a query"
    at.text_input(key="query").input("copy object delete original").run()
    assert not at.exception
    hits = [m.value for m in at.markdown if m.value.startswith("**1.**")]
    assert len(hits) == 2
    charts = sorted(chart.key for chart in at.get("plotly_chart"))
    assert charts == ["parts_ast", "parts_lines", "scores_ast", "scores_lines"]
    assert len(previews(at)) == 2 * at.slider(key="k").value
    answered = [c.value for c in at.caption if c.value.startswith("Answered by the")]
    # The fast tier answers, as `nexus mcp` does (issue 41 item 8: the quality tier took hours).
    assert answered == ["Answered by the fast tier (`fake-hashing-256`)."] * 2


def test_each_hit_explains_its_score_and_the_parts_add_up(page) -> None:
    """The ranking stage's line under a hit: its parts sum to the score shown."""
    at = page("search").run()
    at.text_input(key="query").input("copy object delete original").run()
    assert not at.exception
    scores = [
        float(re.search(r"score \*\*([-0-9.]+)\*\*", m.value).group(1))
        for m in at.markdown
        if re.match(r"\*\*\d+\.\*\*", m.value)
    ]
    lines = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("dense ")]
    assert scores and len(lines) == len(scores)
    for score, line in zip(scores, lines, strict=True):
        terms, total = line.rsplit(" = ", 1)
        parts = re.findall(r"(^|[+-]) ?[a-z][a-z -]*? (\d+\.\d+)", terms)
        value = sum(float(v) * (-1 if sign == "-" else 1) for sign, v in parts)
        assert value == pytest.approx(float(total), abs=0.011)
        assert float(total) == pytest.approx(score, abs=0.006)


def test_target_rank_score_and_margin(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input("copy object to new key and delete the original").run()
    at.selectbox(key="target").set_value(TARGET).run()
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert labels.count("Target rank") == 2 and labels.count("Margin") == 2
    assert at.query_params["target"] == [TARGET] or at.query_params["target"] == TARGET


def test_target_rank_score_margin_and_chart_use_the_one_final_score(page) -> None:
    """The target's rank, score and margin, the hits' scores and the chart's marks agree:
    all are the ranking stage's final score (issue 29: rank 1 with a negative margin)."""
    at = page("search").run()
    at.text_input(key="query").input("copy object to new key and delete the original").run()
    at.selectbox(key="target").set_value(TARGET).run()
    assert not at.exception
    k = at.slider(key="k").value
    metrics = {}
    for m in at.metric:
        metrics.setdefault(m.label, []).append(m.value)
    headers = hit_headers(at)
    for side, (rank, score, margin) in enumerate(
        zip(metrics["Target rank"], metrics["Target score"], metrics["Margin"], strict=True)
    ):
        shown_scores = [
            float(re.search(r"score \*\*([-0-9.]+)\*\*", h).group(1))
            for h in headers[side * k : (side + 1) * k]
        ]
        if rank.isdigit():
            assert float(score) == pytest.approx(shown_scores[int(rank) - 1], abs=0.0011)
            assert (float(margin) >= 0) == (rank == "1")
        name = ("lines", "ast")[side]
        (chart,) = [c for c in at.get("plotly_chart") if c.key == f"scores_{name}"]
        marks = json.loads(chart.proto.spec)["data"][1]
        assert marks["text"] == [str(n) for n in range(1, k + 1)]  # numbered by rank
        assert marks["x"] == pytest.approx(shown_scores, abs=0.0011)


def test_link_reproduces_the_view(page) -> None:
    at = page("search")
    at.query_params.update(
        {"repo": "sample:ts-payments", "q": "refund a payment", "k": "3", "max_tokens": "512"}
    )
    at.run()
    assert not at.exception
    assert at.session_state["repo"].name == "ts-payments"
    assert at.text_input(key="query").value == "refund a payment"
    assert at.slider(key="k").value == 3
    assert at.slider(key="max_tokens").value == 512
    assert len(previews(at)) == 6


def test_bad_link_values_are_reported(page) -> None:
    at = page("search")
    at.query_params.update({"repo": "path:/etc", "k": "999"})
    at.run()
    assert not at.exception
    problems = " ".join(shown(w.value) for w in at.warning)
    assert "outside the allowed roots" in problems and "k=" in problems


def test_missing_model_is_a_message(page, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing():
        raise ModelUnavailableError("the default embedding model is not installed")

    monkeypatch.setattr(indexing, "EMBEDDER_FACTORY", missing)
    for name in ("search", "evaluate"):
        at = page(name).run()
        assert not at.exception
        assert "model is not available" in at.error[0].value


def test_keyword_weight_changes_the_scores_without_rebuilding(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input("copy object delete original").run()
    at.radio(key="ranking_mode").set_value("hybrid").run()
    at.slider(key="lexical_pct").set_value(0).run()
    dense = [m.value for m in at.markdown if m.value.startswith("**1.**")]
    built = indexing.BUILDS.builds()
    assert len(built) == 2
    at.slider(key="lexical_pct").set_value(50).run()
    assert not at.exception
    hybrid = [m.value for m in at.markdown if m.value.startswith("**1.**")]
    assert hybrid != dense  # scores now hold half the best keyword score on top
    assert indexing.BUILDS.builds() == built  # no rebuild
    assert at.query_params["lw"] in ("50", ["50"])


def test_saved_indexes_are_opened_not_rebuilt(page, monkeypatch: pytest.MonkeyPatch) -> None:
    first = page("search").run()
    assert not first.exception
    assert "opened the saved" not in " ".join(c.value for c in first.caption)
    # As after a server restart: nothing held in memory, no build known.
    cache.memory().clear()
    monkeypatch.setattr(indexing, "BUILDS", BuildManager(wait_s=60, memory=cache.memory))
    again = page("search").run()
    captions = " ".join(shown(c.value) for c in again.caption)
    assert "AST index: opened the saved index" in captions
    assert "Line-based index: opened the saved index" in captions
    assert "opened by this session" in captions and "started by" not in captions
    # A session that finds the same saved index already opened says so.
    other = page("search").run()
    captions = " ".join(shown(c.value) for c in other.caption)
    assert "opened earlier on this server, shared" in captions


def test_a_saved_index_answers_by_keywords_while_the_model_loads(
    page, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not page("search").run().exception  # builds and saves both indexes
    cache.memory().clear()  # a fresh server, whose model is still loading
    monkeypatch.setattr(indexing, "BUILDS", BuildManager(wait_s=60, memory=cache.memory))
    # The quality tier's MiniLM takes seconds to load (the fast tier's model, a second on
    # the first query: the page never waits for it).
    monkeypatch.setattr(indexing, "search_tier", lambda: QUALITY)
    monkeypatch.setattr(indexing, "model_loading", lambda words_view=True, tier=QUALITY: True)
    at = page("search")
    at.query_params.update({"repo": "sample:express-images", "q": "copy object delete original"})
    at.run()
    assert not at.exception
    assert sum("Loading the embedding model" in shown(i.value) for i in at.info) == 2
    hits = [m.value for m in at.markdown if m.value.startswith("**1.**")]
    assert len(hits) == 2 and not at.get("plotly_chart")  # keyword hits, no dense chart yet
    monkeypatch.setattr(indexing, "model_loading", lambda words_view=True, tier=QUALITY: False)
    at.run()
    charts = [chart.key for chart in at.get("plotly_chart") if chart.key.startswith("scores_")]
    assert len(charts) == 2  # the embedding answer once it is loaded


def test_a_changed_file_is_not_answered_from_the_saved_index(
    page, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(repos.SAMPLES_DIR / "ts-payments", repo)
    monkeypatch.setenv("NEXUS_ALLOWED_ROOTS", str(tmp_path))
    link = {"repo": f"path:{repo}", "q": "refund a payment"}

    def fresh_server_captions() -> str:
        cache.memory().clear()  # a fresh server: only the saved indexes are left
        monkeypatch.setattr(indexing, "BUILDS", BuildManager(wait_s=60, memory=cache.memory))
        at = page("search")
        at.query_params.update(link)
        at.run()
        assert not at.exception
        return " ".join(shown(c.value) for c in at.caption)

    assert "AST index: done" in fresh_server_captions()  # built and saved
    assert "AST index: opened the saved index" in fresh_server_captions()
    changed = next(p for p in sorted(repo.rglob("*.ts")) if p.stat().st_size > 100)
    changed.write_text(changed.read_text() + "\nexport const addedLater = 1;\n")
    captions = fresh_server_captions()
    assert "opened the saved" not in captions and "AST index: done" in captions


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> GatedEmbedder:
    """Builds that go on only when the test lets a batch through (8 chunks a batch)."""
    embedder = GatedEmbedder()
    monkeypatch.setattr(indexing, "EMBEDDER_FACTORY", lambda: embedder)
    monkeypatch.setattr(indexing, "BUILDS", BuildManager(batch=8, memory=cache.memory))
    return embedder


def finish(build, embedder: GatedEmbedder) -> None:
    """Let every remaining batch of ``build`` through."""
    while build.progress().running:
        if embedder.waiting.acquire(timeout=1):
            embedder.gate.release()
    build.join(30)


def test_a_slider_move_during_a_build_does_not_restart_it(page, gated) -> None:
    at = page("search").run()
    assert not at.exception
    (build,) = indexing.BUILDS.builds()
    gated.step()
    gated.step()
    at.radio(key="ranking_mode").set_value("hybrid").run()
    at.slider(key="lexical_pct").set_value(50).run()
    at.slider(key="k").set_value(3).run()
    assert not at.exception
    assert indexing.BUILDS.builds() == [build]  # the same build, going on
    finish(build, gated)
    assert build.progress().phase == "done"
    texts = {c.embedding_text for c in build.chunks}
    assert len(gated.embedded) == len(set(gated.embedded)) == len(texts)  # none twice


def test_search_answers_by_keywords_never_from_a_partial_index(page, gated) -> None:
    """While the build runs the answer is keyword hits over every chunk, said to be
    partial; the chunks embedded so far are never ranked as an answer (excalidraw: only
    `packages/common` embedded, scores up to 1.03, under "Answered by the quality tier")."""
    at = page("search").run()
    (build,) = indexing.BUILDS.builds()
    gated.step()
    assert gated.waiting.acquire(timeout=30)  # one batch in, the second one held
    at.text_input(key="query").input("copy object delete original").run()
    assert not at.exception
    partial = next(shown(w.value) for w in at.warning if "Partial: 8 of" in shown(w.value))
    assert "comes once every chunk is" in partial and "hits over all " in partial
    assert any("Keyword (BM25)" in m.value for m in at.markdown)
    assert not any("embedded so far" in m.value for m in at.markdown)
    assert not any(c.value.startswith("Answered by") for c in at.caption)
    assert not [c for c in at.get("plotly_chart") if c.key.startswith("scores_")]
    hits = [m.value for m in at.markdown if m.value.startswith("**1.**")]
    assert len(hits) == 1  # the keyword hits alone, in the AST column
    # The keyword hits went through the ranking stage too: every hit has its parts' line.
    why = [c.value for c in at.caption if c.value.startswith("dense ")]
    assert len(why) == len(hit_headers(at)) > 2
    progress = shown(at.get("progress")[0].proto.text)
    assert "8/" in progress and "chunks/s" in progress and "left" in progress
    at.button(key="cancel_ast").click().run()
    gated.gate.release()
    build.join(30)
    assert build.progress().phase == "cancelled"
    at.run()
    assert at.button(key="resume_ast")
    at.button(key="resume_ast").click().run()
    resumed = indexing.BUILDS.builds()[0]
    assert resumed is not build
    finish(resumed, gated)
    assert len(gated.embedded) == len(set(gated.embedded))  # the resume embedded none twice


def test_chart_hover_names_file_symbol_and_lines_and_no_emoji_marks(page) -> None:
    at = page("search").run()
    at.text_input(key="query").input("copy object to new key and delete the original").run()
    at.selectbox(key="target").set_value(TARGET).run()
    (chart,) = [c for c in at.get("plotly_chart") if c.key == "scores_ast"]
    spec = json.loads(chart.proto.spec)
    top, target = spec["data"][1], spec["data"][2]
    assert top["hovertemplate"].startswith("%{hovertext}")
    assert any("src/services/imageService.js · moveObject · L" in t for t in target["hovertext"])
    text = " ".join(m.value for m in at.markdown)
    assert "✅" not in text and ":green-badge[target]" in text


def test_a_settings_change_and_back_during_a_build_goes_on_with_the_same_build(page, gated) -> None:
    at = page("search").run()
    (build,) = indexing.BUILDS.builds()
    gated.step()
    gated.step()
    at.slider(key="max_tokens").set_value(384).run()  # other settings: their own build
    assert not at.exception
    other = [b for b in indexing.BUILDS.builds() if b is not build]
    assert len(other) == 1
    at.slider(key="max_tokens").set_value(ChunkConfig().max_tokens).run()  # back: the first build
    assert not at.exception
    assert indexing.BUILDS.builds()[0] is build and build.progress().done >= 8
    assert "started by this session" in shown(at.get("progress")[0].proto.text)
    other[0].cancel()
    finish(build, gated)
    other[0].join(30)
    progress = build.progress()
    assert progress.phase == "done" and progress.done == progress.total
    # The first build embedded none of its texts twice (the other, cancelled with a batch
    # in the model, may have embedded that batch's texts too: its cache had not seen them).
    first = gated.threads[0]  # the first two batches were the first build's
    mine = [text for text, who in zip(gated.embedded, gated.threads, strict=True) if who == first]
    assert len(mine) == len(set(mine)) == progress.embedded


class LoadingEmbedder(HashingEmbedder):
    """A model still loading (``dim`` waits) until ``loaded`` is set."""

    def __init__(self) -> None:
        self.loaded = threading.Event()
        super().__init__(dim=16)

    @property
    def dim(self) -> int:
        assert self.loaded.wait(30)
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = value


def test_the_model_load_is_announced_and_keywords_answer_meanwhile(page, monkeypatch) -> None:
    embedder = LoadingEmbedder()
    monkeypatch.setattr(indexing, "EMBEDDER_FACTORY", lambda: embedder)
    monkeypatch.setattr(indexing, "BUILDS", BuildManager(memory=cache.memory))
    at = page("search").run()
    (build,) = indexing.BUILDS.builds()
    # Every file chunked, the model still loading (it never loads until ``loaded`` is set):
    # waited for, as a loaded machine may not have started the build's thread by the rerun.
    deadline = time.monotonic() + 60
    while build.progress().phase != LOADING and time.monotonic() < deadline:
        time.sleep(0.05)
    at.text_input(key="query").input("copy object delete original").run()
    assert not at.exception
    progress = shown(at.get("progress")[0].proto.text)
    assert "loading the embedding model" in progress.lower()
    assert any("Partial: 0 of" in shown(w.value) for w in at.warning)
    assert any("Keyword (BM25)" in m.value for m in at.markdown)
    assert not any("chunks embedded so far" in m.value for m in at.markdown)
    embedder.loaded.set()
    assert indexing.BUILDS.builds() == [build]
    build.join(30)
    assert build.progress().phase == "done"


def test_evaluate_waits_for_the_shared_builds_and_reuses_them(page, gated) -> None:
    """Evaluate scores the quality tier's indexes (Search answers with the fast tier's):
    its builds are shared by every Evaluate page and left alone by Search."""
    search = page("search").run()
    (fast_build,) = indexing.BUILDS.builds()
    evaluate = page("evaluate").run()
    assert not evaluate.exception
    assert any("once both indexes are built" in i.value for i in evaluate.info)
    assert "AST index" in shown(evaluate.get("progress")[0].proto.text)
    (ast_build,) = [b for b in indexing.BUILDS.builds() if b is not fast_build]
    assert not page("evaluate").run().exception
    search.run()
    assert indexing.BUILDS.builds() == [fast_build, ast_build]  # none started again
    finish(ast_build, gated)
    evaluate.run()  # the line-based build starts once the AST one is done
    known = (fast_build, ast_build)
    lines_build = next(b for b in indexing.BUILDS.builds() if b not in known)
    finish(lines_build, gated)
    evaluate.run()
    assert not evaluate.exception
    assert evaluate.dataframe  # the metrics table
    assert len(indexing.BUILDS.builds()) == 3
    fast_build.cancel()
    finish(fast_build, gated)


def test_after_a_restart_the_build_resumes_from_the_cache_and_the_page_says_so(
    page, gated, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page("search").run()
    (build,) = indexing.BUILDS.builds()
    gated.step()
    gated.step()
    assert gated.waiting.acquire(timeout=30)  # two batches committed, the third in the model
    build.cancel()  # the server goes down
    gated.gate.release()
    build.join(30)
    committed = build.progress().done
    # A fresh server on the same cache folder: an open tab reconnects and asks again.
    cache.memory().clear()
    monkeypatch.setattr(indexing, "BUILDS", BuildManager(batch=8, memory=cache.memory))
    at = page("search").run()
    assert not at.exception
    (resumed,) = indexing.BUILDS.builds()
    assert gated.waiting.acquire(timeout=30)  # the cached batches are in, the next one held
    gated.waiting.release()
    at.run()
    progress = shown(at.get("progress")[0].proto.text)
    assert f"Resumed: {committed} of {resumed.progress().total} chunks were already embedded" in (
        progress
    )
    assert resumed.progress().done == committed  # answered from the cache at once
    finish(resumed, gated)
    assert len(gated.embedded) == len(set(gated.embedded))  # nothing embedded twice
