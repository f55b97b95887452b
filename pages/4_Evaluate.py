"""Evaluate: a query set on both indexes, and a sweep over the AST token budgets."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from nexus.evaluation.experiments import ConfigResult, best, sweep, sweep_files
from nexus.evaluation.generate import DEFAULT_CAP, blanked_repository, blanks_docs, generate
from nexus.evaluation.metrics import compare, comparison_table, metrics_table
from nexus.evaluation.query_sets import (
    QuerySetError,
    parse_queries,
    unreachable_summary,
    unreachable_table,
    unreachable_targets,
)
from nexus.evaluation.questions import (
    evaluate_questions,
    is_question_set,
    parse_questions,
    question_table,
    summarize,
    summary_table,
)
from nexus.retrieval import tiers
from nexus.retrieval.embedding import CachedEmbedder, ModelUnavailableError
from nexus.retrieval.ranking import rules_for
from nexus.runtime.progress import FAILED
from nexus.ui import (
    analyses,
    cache,
    indexing,
    links,
    repos,
    safe,
    settings,
    state,
    sweeps,
    views,
    widgets,
)

#: What the budget columns and chart mean (shown under them).
BUDGET_HELP = (
    "R@1k / R@2k / R@4k: the share of the targets read when the ranked hits are read in "
    "order until 1,000 / 2,000 / 4,000 tokens are spent (the hit crossing the budget counts "
    "up to its last line read). Tokens to first hit: the median tokens read up to the first "
    "hit holding a target. lines@10 / tokens@10: what the whole top 10 costs to read."
)

state.page_setup("Evaluate")
config = settings.settings_sidebar()
repo = repos.current_repo()
st.title("Evaluate")
if not repos.chunkable_paths(repo):
    st.warning(f"{safe.code(repo.name)} has no chunkable files (the Repository page says why).")
    st.stop()

own = repo.contents.get("queries.jsonl")
MAKE, UPLOAD = "Make a query set from this repository", "Upload a JSONL file"
sources = (["Repository's queries.jsonl"] if own else []) + [MAKE, UPLOAD]
picked = st.radio("Query set", sources, key="query_set", horizontal=True)
data = own if picked == sources[0] and own else None
if picked == MAKE:
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
    made = cache.cached(
        ("generated_queries", repos.repo_key(), int(cap), seed),
        lambda: generate(repo, cap=int(cap), seed=seed),
        lambda result: 1_000 * len(result.records) + 1_000,
    )
    st.text("\n".join(made.counts_lines()))
    if not made.records:
        st.warning("No documented function or method makes a query in this repository.")
        st.stop()
    examples = [
        {"query": r["query"], "file": r["target"]["file"], "line": r["target"]["start_line"],
         "target": r["target"]["qualname"]}
        for r in made.examples()
    ]  # fmt: skip
    st.dataframe(pd.DataFrame(examples), hide_index=True)
    data = made.jsonl().encode("utf-8")
    st.download_button(
        "Download the set (JSONL: edit it and upload it back)",
        data,
        file_name=f"{repo.name}-queries.jsonl",
        mime="application/jsonl",
        key="gen_download",
    )
if data is None:
    upload = st.file_uploader("Queries (JSONL)", type=["jsonl", "json"], key="queries_upload")
    if upload is None:
        st.info(
            'One JSON object a line: {"id", "query", "variant", "target": {"file", '
            '"start_line", "end_line"}} (the format of the sample repos\' queries.jsonl), '
            'or a question set: {"id", "query", "category", "targets": [{"file", '
            '"start_line", "end_line"}, ...]} (lines optional; scored by NDCG@10).'
        )
        st.stop()
    data = upload.getvalue()
questions_format = is_question_set(data)
digest = hashlib.sha256(data).hexdigest()
try:
    queries = [] if questions_format else parse_queries(data)
    questions = parse_questions(data) if questions_format else []
except QuerySetError as exc:
    st.error(f"Could not read the query set: {safe.md(exc.summary)}")
    if exc.problems:
        st.code("\n".join(exc.problems), language=None)
    st.stop()
# A generated set (or an edited one) asks for the doc comments blanked in what is indexed.
docs_blanked = blanks_docs(data)
if docs_blanked:
    repo = cache.cached(
        ("docs_blanked", repos.repo_key()),
        lambda: blanked_repository(repo),
        lambda blanked: sum(len(v) for v in blanked.contents.values()),
    )
    st.caption("Doc comments are blanked in the indexes this set runs on (lines kept).")
if questions_format:
    chunked = {info.path for info in repo.files if info.chunkable}
    missing = sorted({p.file for q in questions for p in q.targets} - chunked)
    st.caption(
        f"A question set: {len(questions)} questions with file or line targets, scored by "
        "NDCG@10 (each target found once, at its first covering chunk), MRR@10 and R@5."
    )
    if missing:
        st.warning(
            f"{len(missing)} target file(s) are not chunked here and count as misses: "
            + ", ".join(safe.code(f) for f in missing[:5])
            + (" …" if len(missing) > 5 else "")
        )
unreachable = unreachable_targets(queries, repo.files)
if unreachable:
    st.warning(unreachable_summary(unreachable, len(queries)))
    headers, rows = unreachable_table(unreachable)
    st.dataframe(pd.DataFrame(rows, columns=headers), hide_index=True)


def draw_sweep(job: sweeps.SweepJob, current: tuple[int, int], building: bool) -> None:
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
        f"the first hit. Embedder: {safe.md(sweeps.TIER_LABELS.get(job.tier, job.tier))}; "
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
    apply_best.button(
        f"Apply the best setting (max {top.config.max_tokens}, min {top.config.min_tokens})"
        + (f" of {len(results)} of {len(job.grid)} done" if partial else ""),
        key="use_best",
        on_click=settings.set_budget,
        args=(top.config.max_tokens, top.config.min_tokens),
        disabled=building or current == (top.config.max_tokens, top.config.min_tokens),
        help="Moves the budget sliders (and the preset, when one matches) to this setting.",
    )
    download.download_button(
        "Download the sweep (CSV)",
        table.to_csv(index=False),
        file_name=f"{repo.name}-sweep.csv",
        mime="text/csv",
        key="sweep_csv",
    )


def kept_sweep() -> sweeps.SweepJob | None:
    """The session's sweep of this repository and query set, if it has an answer."""
    job = sweeps.session_job()
    if job is None or job.running or job.current not in job.results:
        return None
    return job if job.key[:3] == (repos.repo_key(), docs_blanked, digest) else None


try:
    # The indexes Search builds, shared by every session: opened from a saved index, or
    # built in the background (AST first, then line-based), resumed if cancelled.
    ast_build = indexing.index_build(repo, config, "ast", resume=True, docs_blanked=docs_blanked)
    lines_build = (
        indexing.index_build(repo, config, "lines", resume=True, docs_blanked=docs_blanked)
        if ast_build.progress().complete
        else None
    )
except ModelUnavailableError as exc:
    st.error(f"The embedding model is not available: {safe.md(exc)}")
    st.stop()


@st.fragment(run_every=1.0)
def wait_for_indexes() -> None:
    """The builds' progress, every second; the whole page once both indexes are in."""
    ast_now = indexing.index_build(repo, config, "ast", resume=True, docs_blanked=docs_blanked)
    lines_now = (
        indexing.index_build(repo, config, "lines", resume=True, docs_blanked=docs_blanked)
        if ast_now.progress().complete
        else None
    )
    st.info("The query set runs once both indexes are built (the same builds as Search).")
    for label, build in (("AST index", ast_now), ("Line-based index", lines_now)):
        if build is None:
            st.caption(f"{label}: built when the AST index is done.")
            continue
        progress = build.progress()
        text = f"{label}: {safe.md(progress.summary())} · {indexing.build_origin(build)}"
        if progress.phase == FAILED:
            st.error(text)
        else:
            st.progress(progress.fraction, text=text)
    if lines_now is not None and lines_now.progress().complete:
        st.rerun()


if lines_build is None or not lines_build.progress().complete:
    wait_for_indexes()
    kept = kept_sweep()
    if kept is not None:  # e.g. the best setting just applied: its indexes build meanwhile
        st.subheader("Sweep the AST token budgets")
        st.caption(
            f"The last sweep's answer, read against max {config.max_tokens} / min "
            f"{config.min_tokens}, while the indexes of these settings build."
        )
        draw_sweep(kept, (config.max_tokens, config.min_tokens), building=True)
    st.stop()
lines_index, ast_index = lines_build.index(), ast_build.index()
embedder = indexing.get_embedder(config.words_view)
index_key = indexing.index_key(repo, config, docs_blanked)
rules = rules_for(config)
if questions_format:
    answers = cache.cached(
        ("questions", index_key, digest, config.lexical_weight, config.ranking),
        lambda: {
            label: evaluate_questions(
                questions, index, ast_build.embedder, config.lexical_weight, rules
            )
            for label, index in (("line-based", lines_index), ("AST", ast_index))
        },
        lambda _: 4_000 * len(questions),
    )
    st.subheader("Metrics per strategy and question category")
    summaries = {k: summarize(v) for k, v in answers.items()}
    st.dataframe(views.table(*summary_table(summaries)), hide_index=True)
    st.plotly_chart(
        views.budget_chart(
            views.budget_curves({k: v["all"] for k, v in summaries.items()}),
            "Targets read within a budget (all questions; higher is better)",
        ),
        key="budget_chart",
    )
    st.caption(BUDGET_HELP)
    st.subheader("Per question")
    st.dataframe(views.table(*question_table(answers)), hide_index=True)
    st.stop()
comparison = cache.cached(  # a revisit with nothing changed reads it back
    ("comparison", index_key, digest, config.lexical_weight, config.ranking),
    lambda: compare(
        queries,
        lines_index,
        ast_index,
        ast_build.embedder,
        k=10,
        lexical_weight=config.lexical_weight,
        ranking=rules,
    ),
    lambda _: 2_000 * len(queries),  # a few numbers and labels per query
)
st.caption(
    f"{len(queries)} queries · line windows of {config.line_window} vs AST "
    f"max {config.max_tokens} / min {config.min_tokens} · "
    f"embedder {safe.code(embedder.name)} · "
    "a hit is a chunk holding at least half of the target's lines."
)

eval_key = (index_key, digest, config.lexical_weight, config.ranking)
st.subheader("Metrics per strategy and query variant")
st.dataframe(
    cache.shared_table(
        "eval_metrics",
        eval_key,
        lambda: views.table(*metrics_table(comparison.baseline, comparison.candidate)),
    ),
    hide_index=True,
)
quality, cost = st.container(key="nx_stack_eval_charts").columns([2, 1])
bars = cache.shared("eval_bars", eval_key, lambda: views.metric_bars(comparison))
with quality:
    fig = cache.shared("eval_quality", eval_key, lambda: views.quality_chart(bars))
    st.plotly_chart(fig, key="metric_bars")
with cost:
    fig = cache.shared("eval_cost", eval_key, lambda: views.cost_chart(bars))
    st.plotly_chart(fig, key="lines_bars")
fig = cache.shared(
    "eval_budget",
    eval_key,
    lambda: views.budget_chart(
        views.budget_curves(
            {r.label: r.metrics["all"] for r in (comparison.baseline, comparison.candidate)}
        ),
        "Targets read within a budget (all queries; higher is better)",
    ),
)
st.plotly_chart(fig, key="budget_chart")
st.caption(BUDGET_HELP)

st.subheader("Per query")
st.dataframe(
    cache.shared_table(
        "eval_queries", eval_key, lambda: views.table(*comparison_table(comparison))
    ),
    hide_index=True,
)
st.caption(
    "`>10 (37)`: not in the top 10; 37 is the target's rank over the whole index. "
    "**Δ margin** = the AST margin minus the line-based margin for that query, where a "
    "margin is the target's best score minus the best score of any other chunk (negative: "
    "a wrong chunk wins). A positive Δ margin means the AST chunks set the target further "
    "apart from the rest."
)

st.subheader("Sweep the AST token budgets")
ss = st.session_state
ss.setdefault("sweep_max", list(widgets.SWEEP_MAX_DEFAULT))
ss.setdefault("sweep_min", list(widgets.SWEEP_MIN_DEFAULT))
c1, c2, c3 = st.columns([2, 2, 1])
maxes = c1.multiselect("max_tokens values", widgets.SWEEP_MAX_OPTIONS, key="sweep_max")
mins = c2.multiselect("min_tokens values", widgets.SWEEP_MIN_OPTIONS, key="sweep_min")
run = c3.button("Run sweep", key="run_sweep", type="primary", disabled=not maxes or not mins)
ss.setdefault("sweep_tier", tiers.DEFAULT_TIER)
ss.setdefault("sweep_choose_by", sweeps.DEFAULT_CHOICE)
tier = st.radio(
    "Embedder for the sweep",
    tuple(sweeps.TIER_LABELS),
    format_func=sweeps.TIER_LABELS.get,
    key="sweep_tier",
    horizontal=True,
    help="The fast tier is a static model distilled from MiniLM, offline: it ranks the "
    "settings in nearly the same order (Spearman of doc MRR@10 0.89-1.00 on three "
    "package sets) at a fraction of the time, with lower scores. Confirm the winner "
    "with the quality tier.",
)
if ss.get("sweep_distractors") not in sweeps.DISTRACTOR_CHOICES:
    ss["sweep_distractors"] = sweeps.EVERY_FILE
files_choice = st.selectbox(
    "Files in the sweep",
    sweeps.DISTRACTOR_CHOICES,
    format_func=sweeps.distractors_label,
    key="sweep_distractors",
    help="On a large repository most of a sweep's time goes to files no query targets. "
    "A fixed sample of them keeps the competition and cuts the time; scores run higher "
    "than over every file, the settings' order barely moves (scale corpus: Spearman 0.96).",
)
distractors = sweeps.distractors_of(files_choice)
if tier == tiers.FAST and not sweeps.fast_tier_ready():
    st.caption(
        "The fast tier's model is distilled from the bundled MiniLM on its first use "
        "(3-5 minutes on two cores, once; kept in the cache folder)."
    )
sweep_key = (
    repos.repo_key(),
    docs_blanked,
    digest,
    embedder.name,
    tier,
    files_choice,
    config.profile,
    config.lexical_weight,
    config.ranking,
    config.line_window,
)
current = (config.max_tokens, config.min_tokens)


def sweep_work(grid_max: list[int], grid_min: list[int]) -> sweeps.Work:
    """The sweep over this page's repository, query set and the tier's embedder (run on
    the job's thread, where the fast tier is distilled if it is not yet)."""
    files = sweep_files(analyses.repo_analyses(repo), queries, distractors)

    def work(**how: object) -> list[ConfigResult]:
        chosen = (
            sweeps.fast_embedder(config.words_view)  # no disk cache: it would cost as much
            if tier == tiers.FAST
            else CachedEmbedder(embedder, cache.embedding_cache())
        )
        return sweep(
            files, repo.name, config, queries, chosen, grid_max, grid_min, extra=[current], **how
        )

    return work


job = sweeps.session_job()
linked = ss.pop(links.LINK_SWEEP, False) and maxes and mins
if run or (linked and (job is None or job.key != sweep_key)):
    job = sweeps.start(sweep_key, maxes, mins, current, sweep_work(maxes, mins), tier, files_choice)
    ss[links.SWEEP_RUN] = True  # links carry the sweep from now on, this one too
    links.write_url_params({})
elif (
    job is not None and job.key == sweep_key and job.complete() and current not in job.results
):  # only the sliders moved since the sweep: the setting in use alone runs (the rest is kept)
    job = sweeps.start(
        sweep_key, job.maxes, job.mins, current, sweep_work(job.maxes, job.mins), tier,
        files_choice,
    )  # fmt: skip


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


if job is not None and job.key == sweep_key and job.running:
    sweep_progress()
    st.stop()
if job is None or job.key != sweep_key:
    st.caption(
        "Pick the values and run the sweep: each setting is chunked, embedded and scored; "
        "the setting in use is always one of the rows. A chunk text is embedded once for "
        "the whole sweep, and the embedding cache keeps it for the next one."
    )
    st.stop()
if job.error:
    st.error(f"The sweep failed: {safe.md(job.error)}")
if job.cancelled:
    st.info(
        f"Cancelled with {len(job.rows())} of {len(job.grid)} settings done (shown below). "
        "Run sweep again to resume: the finished settings are kept."
    )
if current not in job.results:
    st.stop()
draw_sweep(job, current, building=False)
