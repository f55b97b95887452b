"""Evaluate's sweep: Cancel and resume, a link that carries it, and Export's download."""

from __future__ import annotations

import time

from nexus.config import ChunkConfig
from nexus.evaluation import experiments
from nexus.ui import sweeps


def _table(at):
    return at.dataframe[-1].value


def _bar(at) -> str:
    return " ".join(p.proto.text for p in at.get("progress"))


def _poll(at, done, tries: int = 100):
    """Rerun until ``done(at)`` (the sweep's thread finishes between script runs)."""
    for _ in range(tries):
        if done(at):
            return at
        time.sleep(0.05)
        at.run()
    raise AssertionError(f"the sweep did not get there: {_bar(at)!r} {[i.value for i in at.info]}")


def test_cancel_keeps_the_finished_settings_and_run_resumes_from_them(page, monkeypatch) -> None:
    real = experiments.sweep
    passed: list[set] = []

    def held_after_the_first_setting(*args, progress, cancel, finished, **kwargs):
        """The real sweep, held after its first setting (once the model's pace is known:
        the setting in use came from the cache) until Cancel is pressed."""
        passed.append(set(finished))

        def report(status):
            progress(status)
            deadline = time.monotonic() + 30
            held = status.settings_done >= 1 and status.eta_s is not None
            while held and not cancel() and time.monotonic() < deadline:
                time.sleep(0.01)

        return real(*args, progress=report, cancel=cancel, finished=finished, **kwargs)

    monkeypatch.setattr(experiments, "sweep", held_after_the_first_setting)
    monkeypatch.setattr(sweeps, "WAIT_S", 0.0)
    at = page("evaluate").run()
    at.multiselect(key="sweep_max").set_value([256, 1024])
    at.multiselect(key="sweep_min").set_value([0])
    at.button(key="run_sweep").click().run()
    at = _poll(at, lambda at: "1/3 settings done" in _bar(at) and "left" in _bar(at))
    assert not at.exception
    assert "texts/s" in _bar(at)  # the pace beside the time left
    at.button(key="cancel_sweep").click().run()
    at = _poll(at, lambda at: any("Cancelled" in i.value for i in at.info))
    assert "1 of 3 settings done" in " ".join(i.value for i in at.info)
    table = _table(at)
    assert list(table["row"]) == ["in use, best"]  # the setting in use runs first
    assert any("A partial sweep: 1 of 3 settings done" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key == "use_best"]  # the best is the one in use
    assert any("Nothing to apply" in c.value for c in at.caption)

    def recorded(*args, **kwargs):
        passed.append(set(kwargs["finished"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(experiments, "sweep", recorded)
    monkeypatch.setattr(sweeps, "WAIT_S", 60)
    at.button(key="run_sweep").click().run()
    assert not at.exception
    in_use = (ChunkConfig().max_tokens, ChunkConfig().min_tokens)
    assert passed[-1] == {in_use}  # resumed: the finished setting is not run again
    assert len(_table(at)) == 3


def test_a_link_carries_the_sweep_and_runs_it(page) -> None:
    at = page("evaluate")
    at.query_params.update({"sweep_max": "256,1024,999", "sweep_min": "0", "sweep_variant": "name"})
    at.run()
    assert not at.exception
    assert any("999" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.multiselect(key="sweep_max").value == [256, 1024]
    assert at.selectbox(key="sweep_variant").value == "name"
    assert len(_table(at)) == 3  # run on opening: the grid and the setting in use
    assert at.query_params["sweep_max"] in ("256,1024", ["256,1024"])  # shared on


def test_export_downloads_the_sweep(page) -> None:
    at = page("home").run()
    at.switch_page("pages/4_Evaluate.py").run()
    at.multiselect(key="sweep_max").set_value([384])
    at.multiselect(key="sweep_min").set_value([0, 32])
    at.button(key="run_sweep").click().run()
    assert at.query_params["sweep_min"] in ("0,32", ["0,32"])  # the link shares it at once
    at.switch_page("pages/5_Export.py").run()
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download the sweep's 3 settings (CSV)" in labels
    assert any("sweep (JSON" in label for label in labels)


def test_a_sweep_nobody_looks_at_stops_as_if_cancelled(monkeypatch) -> None:
    monkeypatch.setattr(sweeps, "IDLE_AFTER", 0.05)
    asked: list[bool] = []

    def work(progress, cancel, finished):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            asked.append(cancel())
            if asked[-1]:
                raise experiments.SweepCancelled(dict(finished))
            time.sleep(0.01)
        return []

    job = sweeps.SweepJob("key", [256], [0], (512, 64), {}).start(work)
    job.join(15)
    assert job.cancelled and asked[0] is False and asked[-1] is True


def test_the_fast_tier_runs_the_sweep_with_its_own_embedder(page, monkeypatch) -> None:
    from nexus.ui.fake_embedder import HashingEmbedder

    asked: list[bool] = []

    def fast(words_view: bool) -> HashingEmbedder:
        asked.append(words_view)
        return HashingEmbedder()

    monkeypatch.setattr(sweeps, "fast_embedder", fast)
    at = page("evaluate").run()
    at.multiselect(key="sweep_max").set_value([256])
    at.multiselect(key="sweep_min").set_value([0])
    at.button(key="run_sweep").click().run()
    assert not at.exception
    assert asked == []  # the quality tier: the page's own embedder
    quality = _table(at)
    at.radio(key="sweep_tier").set_value("fast").run()
    at.button(key="run_sweep").click().run()
    assert not at.exception
    assert len(asked) == 1  # the fast tier's embedder, built on the sweep's thread
    fast_rows = _table(at)
    assert len(fast_rows) == len(quality) == 2  # its own sweep, not the quality one resumed


def test_a_sweep_over_target_files_and_a_sample_chunks_fewer_files(page) -> None:
    at = page("evaluate").run()
    at.multiselect(key="sweep_max").set_value([256])
    at.multiselect(key="sweep_min").set_value([0])
    at.button(key="run_sweep").click().run()
    every = dict(zip(_table(at)["max_tokens"], _table(at)["chunks"], strict=True))
    at.selectbox(key="sweep_distractors").set_value("300").run()  # more than the sample has
    at.button(key="run_sweep").click().run()
    assert not at.exception
    assert dict(zip(_table(at)["max_tokens"], _table(at)["chunks"], strict=True)) == every
    at.selectbox(key="sweep_distractors").set_value("all").run()
    assert "every file" in at.selectbox(key="sweep_distractors").format_func("all")


def test_files_in_the_sweep_shows_its_default_not_a_placeholder(page) -> None:
    at = page("evaluate").run()
    box = at.selectbox(key="sweep_distractors")
    assert box.value == "all" and box.format_func(box.value) == "every file"


def test_the_link_and_the_export_carry_the_tier_and_the_files(page, monkeypatch) -> None:
    from nexus.ui.fake_embedder import HashingEmbedder

    monkeypatch.setattr(sweeps, "fast_embedder", lambda words_view: HashingEmbedder())
    at = page("home").run()
    at.switch_page("pages/4_Evaluate.py").run()
    at.multiselect(key="sweep_max").set_value([256])
    at.multiselect(key="sweep_min").set_value([0])
    at.radio(key="sweep_tier").set_value("fast")
    at.selectbox(key="sweep_distractors").set_value("300")
    at.button(key="run_sweep").click().run()
    assert not at.exception
    link = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert (link["sweep_tier"], link["sweep_files"], link["sweep_by"]) == ("fast", "300", "R@1k")

    opened = page("evaluate")  # a new session opened from the link: the same sweep
    opened.query_params.update(link)
    opened.run()
    assert not opened.exception
    assert opened.radio(key="sweep_tier").value == "fast"
    assert opened.selectbox(key="sweep_distractors").value == "300"
    assert len(_table(opened)) == 2

    at.switch_page("pages/5_Export.py").run()
    assert not at.exception
    caption = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "embedder fast (static" in caption and "300 others" in caption
    bad = page("evaluate")
    bad.query_params.update({**link, "sweep_tier": "turbo"})
    bad.run()
    warned = " ".join(w.value for w in bad.warning).replace("\\", "")
    assert "sweep_tier='turbo'" in warned, warned


def test_the_export_records_tier_files_and_the_applied_setting(monkeypatch) -> None:
    """Export's JSON says which embedder and files a sweep ran on, reads it against the
    setting applied since (its Δ columns too), and keeps min_tokens an integer."""
    import json
    from pathlib import Path

    from nexus.chunking.pipeline import analyze_files
    from nexus.config import ChunkConfig
    from nexus.evaluation.query_sets import load_queries
    from nexus.ingest.sources import open_repository
    from nexus.ui.fake_embedder import HashingEmbedder

    folder = Path(__file__).resolve().parents[2] / "sample_repos" / "ts-payments"
    repo = open_repository(folder)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    queries = load_queries(folder / "queries.jsonl")

    def work(**how):
        return experiments.sweep(
            analyses, repo.name, ChunkConfig(), queries, HashingEmbedder(), [256], [0],
            extra=[(512, 64)], **how,
        )  # fmt: skip

    state: dict = {}
    monkeypatch.setattr(sweeps.st, "session_state", state)
    job = sweeps.start("key", [256], [0], (512, 64), work, tier="fast", files="300")
    job.join(60)
    table, about = sweeps.export((256, 0))  # the best setting was applied since
    assert about["tier"] == "fast" and about["distractors"] == 300
    assert about["in_use"] == [256, 0] and about["complete"] and about["chosen_by"] == "R@1k"
    row = table[table["row"].str.contains("in use")].iloc[0]
    assert (row["max_tokens"], row["Δ R@1k"]) == (256, 0)
    record = json.loads(json.dumps({**about, "rows": table.to_dict(orient="records")}, default=int))
    assert all(isinstance(r["min_tokens"], int) for r in record["rows"])


def test_a_fast_sweep_that_starts_by_distilling_says_so(monkeypatch) -> None:
    job = sweeps.SweepJob("key", [256], [0], (512, 64), {}, tier="fast")
    monkeypatch.setattr(sweeps, "fast_tier_ready", lambda: False)
    assert "distilling (once)" in sweeps.progress_text(job)
    monkeypatch.setattr(sweeps, "fast_tier_ready", lambda: True)
    assert sweeps.progress_text(job) == "Sweeping: starting"
    quality = sweeps.SweepJob("key", [256], [0], (512, 64), {})
    monkeypatch.setattr(sweeps, "fast_tier_ready", lambda: False)
    assert sweeps.progress_text(quality) == "Sweeping: starting"


def test_the_page_names_the_order_a_fast_sweep_scored(monkeypatch, tmp_path) -> None:
    """A fast sweep scores what Search answers (re-scored) unless MiniLM's cache lacks
    more than ``RESCORE_TEXTS`` of its texts; the page names the order its rows were scored in."""
    from pathlib import Path

    from nexus.chunking.pipeline import analyze_files
    from nexus.evaluation.query_sets import load_queries
    from nexus.ingest.sources import open_repository
    from nexus.retrieval.embedding import CachedEmbedder
    from nexus.retrieval.embedding_cache import EmbeddingCache
    from nexus.ui.fake_embedder import HashingEmbedder

    folder = Path(__file__).resolve().parents[2] / "sample_repos" / "ts-payments"
    repo = open_repository(folder)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    queries = load_queries(folder / "queries.jsonl")
    minilm = CachedEmbedder(HashingEmbedder(dim=64), EmbeddingCache(tmp_path))

    def work(limit: int | None):
        def run(**how):
            return experiments.sweep(
                analyses, repo.name, ChunkConfig(), queries, HashingEmbedder(), [256], [0],
                extra=[(512, 64)], rescore_with=minilm, rescore_limit=limit, **how,
            )  # fmt: skip

        return run

    monkeypatch.setattr(sweeps.st, "session_state", {})
    cold = sweeps.start("cold", [256], [0], (512, 64), work(0), tier="fast")
    cold.join(60)
    assert cold.complete() and not cold.rescored
    assert sweeps.embedder_label(cold) == sweeps.FAST_ORDER_LABEL
    affordable = sweeps.start("warm", [256], [0], (512, 64), work(None), tier="fast")
    affordable.join(60)
    assert affordable.complete() and affordable.rescored
    assert "re-scored by MiniLM" in sweeps.embedder_label(affordable)
