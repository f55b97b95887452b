"""What the Evaluate page draws beyond a table or a chart: the query set made or uploaded,
the builds' progress until both indexes are in, the sweep's controls, its progress and
its answer. The answers themselves come from ``nexus.ui.evaluating`` and
``nexus.ui.sweeps``.
"""

from __future__ import annotations

import streamlit as st

from nexus.config import ChunkConfig
from nexus.evaluation.experiments import best, gains_over
from nexus.evaluation.generate import DEFAULT_CAP
from nexus.evaluation.query_sets import QuerySetError
from nexus.ingest.sources import Repository
from nexus.retrieval import tiers
from nexus.retrieval.embedding import ModelUnavailableError
from nexus.runtime.builds import IndexBuild
from nexus.runtime.progress import FAILED
from nexus.ui import evaluating, indexing, safe, settings, sweeps, views, widgets

#: What the budget columns and chart mean (shown under them).
BUDGET_HELP = (
    "R@1k / R@2k / R@4k: the share of the targets read when the ranked hits are read in "
    "order until 1,000 / 2,000 / 4,000 tokens are spent (the hit crossing the budget counts "
    "up to its last line read). Tokens to first hit: the median tokens read up to the first "
    "hit holding a target. lines@10 / tokens@10: what the whole top 10 costs to read."
)


def made_query_set(repo: Repository, repo_key: str) -> bytes:
    """A query set made from the repository's doc comments (what it measures, its cap and
    seed, its counts, a few examples, a download to edit); stops the page when none."""
    st.caption(
        "Each documented function or method becomes a target; its doc comment's summary "
        "(its own name removed) is the query, its name and what it calls two more. "
        "**What it measures:** finding a function from a description written like its doc "
        "comment, from its name, or from its calls, in a copy of the repository whose doc "
        "comments are blanked (lines kept), so the answer is not in the indexed text. "
        "**What it does not:** questions as users type them, questions about several files "
        "or the architecture, and what chunking does with doc comments."
    )
    c1, c2 = st.columns(2)
    cap = c1.number_input("At most (targets)", 10, 2000, DEFAULT_CAP, step=10, key="gen_cap")
    seed = c2.text_input("Sample seed (another sample of the same repository)", key="gen_seed")
    made = evaluating.generated_set(repo, repo_key, int(cap), seed)
    st.text("\n".join(made.counts_lines()))
    if not made.records:
        st.warning("No documented function or method makes a query in this repository.")
        st.stop()
    st.dataframe(evaluating.example_rows(made), hide_index=True)
    data = made.jsonl().encode("utf-8")
    st.download_button(
        "Download the set (JSONL: edit it and upload it back)",
        data,
        file_name=f"{repo.name}-queries.jsonl",
        mime="application/jsonl",
        key="gen_download",
    )
    return data


def uploaded_query_set() -> bytes:
    """The uploaded query set's bytes; stops the page, saying the format, until one is."""
    upload = st.file_uploader("Queries (JSONL)", type=["jsonl", "json"], key="queries_upload")
    if upload is None:
        st.info(
            'One JSON object a line: {"id", "query", "variant", "target": {"file", '
            '"start_line", "end_line"}} (the format of the sample repos\' queries.jsonl), '
            'or a question set: {"id", "query", "category", "targets": [{"file", '
            '"start_line", "end_line"}, ...]} (lines optional; scored by NDCG@10).'
        )
        st.stop()
    return upload.getvalue()


def read_or_stop(data: bytes) -> evaluating.QuerySet:
    """The query set in ``data``; what is wrong with it, record by record, and a stop."""
    try:
        return evaluating.read_query_set(data)
    except QuerySetError as exc:
        st.error(f"Could not read the query set: {safe.md(exc.summary)}")
        if exc.problems:
            st.code("\n".join(exc.problems), language=None)
        st.stop()


def open_builds(
    repo: Repository, config: ChunkConfig, docs_blanked: bool
) -> tuple[IndexBuild, IndexBuild | None]:
    """``evaluating.index_builds``; a missing model is said, and stops the page."""
    try:
        return evaluating.index_builds(repo, config, docs_blanked)
    except ModelUnavailableError as exc:
        st.error(f"The embedding model is not available: {safe.md(exc)}")
        st.stop()


@st.fragment(run_every=1.0)
def wait_for_indexes(repo: Repository, config: ChunkConfig, docs_blanked: bool) -> None:
    """The builds' progress, every second; the whole page once both indexes are in."""
    builds = evaluating.index_builds(repo, config, docs_blanked)
    st.info("The query set runs once both indexes are built (the same builds as Search).")
    for label, build in zip(("AST index", "Line-based index"), builds, strict=True):
        if build is None:
            st.caption(f"{label}: built when the AST index is done.")
            continue
        progress = build.progress()
        text = f"{label}: {safe.md(progress.summary())} · {indexing.build_origin(build)}"
        if progress.phase == FAILED:
            st.error(text)
        else:
            st.progress(progress.fraction, text=text)
    if evaluating.complete_builds(builds) is not None:
        st.rerun()


def sweep_controls() -> sweeps.SweepChoice:
    """The sweep's grid, Run button, embedder tier and files (kept in the session)."""
    ss = st.session_state
    ss.setdefault("sweep_max", list(widgets.SWEEP_MAX_DEFAULT))
    ss.setdefault("sweep_min", list(widgets.SWEEP_MIN_DEFAULT))
    c1, c2, c3 = st.columns([2, 2, 1])
    maxes = c1.multiselect("max_tokens values", widgets.SWEEP_MAX_OPTIONS, key="sweep_max")
    mins = c2.multiselect("min_tokens values", widgets.SWEEP_MIN_OPTIONS, key="sweep_min")
    run = c3.button("Run sweep", key="run_sweep", type="primary", disabled=not maxes or not mins)
    ss.setdefault("sweep_tier", tiers.QUALITY)
    ss.setdefault("sweep_choose_by", sweeps.DEFAULT_CHOICE)
    tier = st.radio(
        "Embedder for the sweep",
        tuple(sweeps.TIER_LABELS),
        format_func=sweeps.TIER_LABELS.get,
        key="sweep_tier",
        horizontal=True,
        help="The fast tier is a static model distilled from MiniLM, offline, as Search "
        "answers with it: each setting's best 30 hits per query are scored again by MiniLM "
        "(only those are embedded, once for the whole sweep). Its chunks embed at a "
        "fraction of MiniLM's time. Confirm the winner with the quality tier.",
    )
    if ss.get("sweep_distractors") not in sweeps.DISTRACTOR_CHOICES:
        ss["sweep_distractors"] = sweeps.EVERY_FILE
    files = st.selectbox(
        "Files in the sweep",
        sweeps.DISTRACTOR_CHOICES,
        format_func=sweeps.distractors_label,
        key="sweep_distractors",
        help="On a large repository most of a sweep's time goes to files no query targets. "
        "A fixed sample of them keeps the competition and cuts the time; scores run higher "
        "than over every file, the settings' order barely moves (scale corpus: Spearman 0.96).",
    )
    if tier == tiers.FAST and not sweeps.fast_tier_ready():
        st.caption(
            "The fast tier's model is distilled from the bundled MiniLM on its first use "
            "(3-5 minutes on two cores, once; kept in the cache folder)."
        )
    return sweeps.SweepChoice(tuple(maxes), tuple(mins), tier, files, run)


@st.fragment(run_every=1.0)
def sweep_progress() -> None:
    """The running sweep's bar, pace and time left, every second; Cancel beside it."""
    now = sweeps.session_job()
    if now is None or not now.running:
        st.rerun()
    now.touch()
    status = now.status
    bar, stop = st.columns([5, 1])
    bar.progress(status.fraction if status else 0.0, text=sweeps.progress_text(now))
    stop.button("Cancel", key="cancel_sweep", on_click=now.cancel, disabled=now.cancelling)
    if now.resumed:
        st.caption(f"Resumed: {now.resumed} setting(s) kept from the run before.")


def draw_sweep(
    job: sweeps.SweepJob, current: tuple[int, int], building: bool, repo_name: str
) -> None:
    """The sweep's answer: charts, table, quality by budget, Apply and download. While the
    indexes of a setting just applied build (``building``), the answer stays on screen."""
    ss = st.session_state
    results = job.rows()
    variants = sorted({g for r in results for g in r.report.metrics if "|" not in g})
    if ss.get("sweep_variant") not in variants:
        ss["sweep_variant"] = "doc" if "doc" in variants else variants[0]
    if ss.get("sweep_choose_by") not in sweeps.CHOICES:
        ss["sweep_choose_by"] = sweeps.DEFAULT_CHOICE
    pick_variant, pick_metric = st.columns(2)
    variant = pick_variant.selectbox(
        "Query variant scored",
        variants,
        key="sweep_variant",
        help="Which of the query set's variants the sweep's metrics are computed on "
        "(all = every query).",
    )
    choose_by = pick_metric.selectbox(
        "Best setting chosen by",
        sweeps.CHOICES,
        key="sweep_choose_by",
        help="R@1k: the share of the targets read within 1,000 tokens of the ranked hits "
        "(the hit crossing the budget counts up to its last line read). MRR@10 counts a "
        "300-line hit like a 15-line one, so it favours the fattest chunks.",
    )
    in_use = sweeps.reference(job, current)
    table = sweeps.sweep_table(results, in_use, variant, choose_by)
    shown = sweeps.charted(choose_by)
    charts = st.container(key="nx_stack_sweep_charts").columns(len(shown))
    for column, (metric, higher) in zip(charts, shown.items(), strict=True):
        fig = views.sweep_chart(table, metric, higher, variant)
        column.plotly_chart(fig, key=f"sweep_{metric}")
    st.plotly_chart(
        views.budget_chart(
            sweeps.budget_curves(table),
            f"Targets read within a budget, per setting ({safe.plot(variant)} queries)",
        ),
        key="sweep_budget_chart",
    )
    st.dataframe(table, hide_index=True)
    st.caption(
        "Δ columns: each row minus the setting in use (the ringed point and the dotted line). "
        f"*best*: the highest {safe.md(choose_by)} (rows within 0.005 are ties, won by fewer "
        "tokens in the top 10); the stars mark each chart's own best. R@1k: share of the "
        "targets read within 1,000 tokens; tokens to first hit: the median tokens read up to "
        f"the first hit. Embedder: {safe.md(sweeps.embedder_label(job))}; "
        f"files: {safe.md(sweeps.distractors_label(job.files))}."
    )
    top = best(results, variant, choose_by=choose_by)
    partial = not job.complete()
    if partial:
        st.warning(
            f"A partial sweep: {len(results)} of {len(job.grid)} settings done. The best "
            "setting is the best of those; Run sweep resumes the rest."
        )
    apply_best, download = st.columns(2)
    base = next(r for r in results if (r.config.max_tokens, r.config.min_tokens) == in_use)
    if gains_over(top, base, variant, choose_by=choose_by):
        apply_best.button(
            f"Apply the best setting (max {top.config.max_tokens}, min {top.config.min_tokens})"
            + (f" of {len(results)} of {len(job.grid)} done" if partial else ""),
            key="use_best",
            on_click=settings.set_budget,
            args=(top.config.max_tokens, top.config.min_tokens),
            disabled=building or current == (top.config.max_tokens, top.config.min_tokens),
            help="Moves the budget sliders (and the preset, when one matches) to this setting.",
        )
    else:
        apply_best.caption(
            f"Nothing to apply: no setting beats the one in use on {safe.md(choose_by)} "
            "by more than a tie (0.005; half a percent for a cost)."
        )
    download.download_button(
        "Download the sweep (CSV)",
        table.to_csv(index=False),
        file_name=f"{repo_name}-sweep.csv",
        mime="text/csv",
        key="sweep_csv",
    )
