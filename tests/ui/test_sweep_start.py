"""When the Evaluate page starts a sweep, and which session sweep it keeps on screen."""

from __future__ import annotations

from nexus.config import ChunkConfig
from nexus.ui import evaluating, sweeps

CURRENT = (512, 64)
DONE = object()  # a finished setting's result: only its presence matters here


def _choice(run: bool = False, maxes=(128, 256), mins=(0,)) -> sweeps.SweepChoice:
    return sweeps.SweepChoice(tuple(maxes), tuple(mins), "quality", "all", run)


def _job(key: str, finished: list[tuple[int, int]], current=CURRENT) -> sweeps.SweepJob:
    return sweeps.SweepJob(key, [256], [0], current, {pair: DONE for pair in finished})


def test_run_starts_the_controls_grid_whatever_the_session_has() -> None:
    done = _job("k", [(256, 0), CURRENT])
    start = sweeps.due(done, "k", CURRENT, _choice(run=True), linked=False)
    assert start == sweeps.SweepStart((128, 256), (0,), asked=True)


def test_a_link_starts_a_sweep_the_session_does_not_have() -> None:
    assert sweeps.due(None, "k", CURRENT, _choice(), linked=True).asked
    other = _job("other", [(256, 0), CURRENT])
    assert sweeps.due(other, "k", CURRENT, _choice(), linked=True).maxes == (128, 256)
    same = _job("k", [(256, 0), CURRENT])
    assert sweeps.due(same, "k", CURRENT, _choice(), linked=True) is None  # already there
    assert sweeps.due(None, "k", CURRENT, _choice(mins=()), linked=True) is None  # no grid


def test_moved_sliders_run_the_new_setting_alone_on_the_finished_grid() -> None:
    done = _job("k", [(256, 0), CURRENT])
    moved = (1024, 0)
    start = sweeps.due(done, "k", moved, _choice(maxes=(64,)), linked=False)
    assert start == sweeps.SweepStart((256,), (0,), asked=False)  # the job's grid, not the box's
    assert sweeps.due(done, "k", CURRENT, _choice(), linked=False) is None  # nothing moved
    partial = _job("k", [CURRENT])  # cancelled: Run resumes it, the sliders do not
    assert sweeps.due(partial, "k", moved, _choice(), linked=False) is None
    assert sweeps.due(done, "other", moved, _choice(), linked=False) is None


def test_a_kept_sweep_is_one_of_this_repository_and_query_set(monkeypatch) -> None:
    query_set = evaluating.read_query_set(
        b'{"id": "q", "query": "x", "variant": "doc", '
        b'"target": {"file": "a.js", "start_line": 1, "end_line": 2}}\n'
    )
    key = sweeps.sweep_key("repo", query_set, "model", "fast", "300", ChunkConfig())
    session: list[sweeps.SweepJob | None] = [None]
    monkeypatch.setattr(sweeps, "session_job", lambda: session[0])
    assert sweeps.kept_job("repo", query_set) is None
    session[0] = job = _job(key, [CURRENT])
    assert sweeps.kept_job("repo", query_set) is job  # whatever the tier, files, settings
    assert sweeps.kept_job("another repo", query_set) is None
    other_set = evaluating.read_query_set(
        b'{"id": "q2", "query": "y", "variant": "doc", '
        b'"target": {"file": "a.js", "start_line": 1, "end_line": 3}}\n'
    )
    assert sweeps.kept_job("repo", other_set) is None
    session[0] = _job(key, [(256, 0)])  # no answer for the setting it ran against
    assert sweeps.kept_job("repo", query_set) is None
