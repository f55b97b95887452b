"""``nexus eval``: a query set against line-based and AST chunks, or a sweep."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from nexus.cli import indexes as index_verb
from nexus.cli.common import STRATEGY_LABELS, config_from_args, open_target, strategies
from nexus.config import ChunkConfig
from nexus.ingest.repository import Repository


def cmd_eval(args: argparse.Namespace) -> int:
    from nexus.evaluation.experiments import check_choice, default_choice
    from nexus.evaluation.query_sets import (
        load_queries,
        unreachable_summary,
        unreachable_table,
        unreachable_targets,
    )

    # Imported here: nexus.retrieval.index (usearch) must come after ray (--engine ray).
    from nexus.evaluation.questions import by_file, is_question_set, parse_questions
    from nexus.evaluation.runs import (
        compare,
        comparison_table,
        evaluate,
        metrics_table,
        save_report,
    )
    from nexus.retrieval.ranking import rules_for
    from nexus.tables import render_text

    config = config_from_args(args)
    budgets = parse_budgets(args.budgets)
    if args.sweep:
        check_choice(args.choose_by or default_choice(budgets), budgets)
    data = _read(args.queries)
    if is_question_set(data):
        questions = parse_questions(data)
        if args.by_file:
            questions = [by_file(q) for q in questions]
        return _eval_questions(args, config, questions, budgets)
    if args.by_file:
        raise ValueError("--by-file scores question sets (records with targets), not doc queries")
    queries = load_queries(args.queries)
    repo = open_target(args)
    if unreachable := unreachable_targets(queries, repo.files):
        print(unreachable_summary(unreachable, len(queries)))
        print(render_text(unreachable_table(unreachable)))
    if args.sweep:  # the files it samples alone are blanked and parsed
        queries = headline_queries(queries)
        repo = sweep_repository(repo, queries, parse_distractors(args.distractors))
    blank = args.blank_docs
    if blank is None:  # as the set asks: generated sets blank the doc comments
        from nexus.evaluation.generate import blanks_docs

        blank = blanks_docs(Path(args.queries).read_bytes())
    if blank:
        from nexus.evaluation.generate import blanked_repository

        print("doc comments blanked in what is indexed (lines kept)", file=sys.stderr)
        repo = blanked_repository(repo)
    if args.sweep:
        from nexus.chunking.pipeline import analyze_files
        from nexus.retrieval.embedding import CachedEmbedder

        embedder = index_verb.cached_embedder(args, config)
        if args.tier == "fast" and isinstance(embedder, CachedEmbedder):
            embedder = embedder.inner  # it embeds about as fast as the disk cache reads
        analyses = analyze_files(repo.source_files(), config.encoding)
        rescorer = index_verb.rescoring_embedder(args, config)
        return _sweep(args, config, repo.name, analyses, queries, embedder, budgets, rescorer)
    workspace = index_verb.open_workspace(args, config, repo)
    opened = index_verb.index_workspace(args, workspace, strategies(args))
    embedder, indexes = workspace.embedder, [one.index for one in opened]
    answered = _rescored_hits(workspace, strategies(args), [q.query for q in queries], args.k)
    if len(indexes) == 2:
        comparison = compare(
            queries,
            *indexes,
            embedder,
            k=args.k,
            lexical_weight=config.lexical_weight,
            ranking=rules_for(config),
            budgets=budgets,
            answered=(answered[0], answered[1]) if answered else None,
        )
        reports = [comparison.baseline, comparison.candidate]
    else:
        label = STRATEGY_LABELS[strategies(args)[0]]
        weight = config.lexical_weight
        rules = rules_for(config)
        reports = [
            evaluate(
                queries,
                indexes[0],
                embedder,
                args.k,
                label=label,
                lexical_weight=weight,
                ranking=rules,
                budgets=budgets,
                answered=answered[0] if answered else None,
            )
        ]
    print(render_text(metrics_table(*reports)))
    if len(indexes) == 2:
        print()
        print(render_text(comparison_table(comparison)))
    if args.json:
        out = Path(args.json)
        out.mkdir(parents=True, exist_ok=True)
        names = [f"{strategy}.json" for strategy in strategies(args)]
        for report, name in zip(reports, names, strict=True):
            save_report(report, out / name)
        print(f"\nreports written to {out}: {', '.join(names)}")
    return 0


def _rescored_hits(workspace, chosen: list[str], texts: list[str], k: int) -> list | None:  # noqa: ANN001
    """Each strategy's hits for ``texts`` as ``Workspace.search`` answers them, when it
    re-scores them (the fast tier, unless ``--fast-order``); None when what it answers is
    the index's own order, which ``evaluate`` scores with every detail (margins, ranks
    beyond the top k)."""
    if not any(workspace.wait_for_rescore(strategy) for strategy in chosen):
        return None
    return [
        [answer.hits for answer in _as_answered(workspace, strategy, texts, k)]
        for strategy in chosen
    ]


def _as_answered(workspace, strategy: str, texts: list[str], k: int = 0) -> list:  # noqa: ANN001
    """Each question's answer as ``Workspace.search`` gives it (what users get), read as
    deep as a budget reads (or ``k``); with re-scoring on (the fast tier), once MiniLM's
    vectors of the chunks are computed (``--fast-order``: the fast tier's own order)."""
    from nexus.evaluation.questions import K
    from nexus.retrieval.budget import READ_DEPTH
    from nexus.retrieval.rescore import RESCORED

    state = workspace.wait_for_rescore(strategy)
    if state and state != RESCORED:
        raise ValueError(f"{strategy}: {state}; --fast-order scores the fast tier's own order")
    answers = workspace.search_many(texts, max(K, READ_DEPTH, k), strategy=strategy)
    scored = f"re-scored by {answers[0].rescored_by}" if state else "the index's own order"
    print(f"nexus: scoring Workspace.search's answers ({scored})", file=sys.stderr)
    return answers


def parse_budgets(text: str) -> tuple[int, ...]:
    """``1000,2000,4000`` as token budgets; ValueError says what a budget must be."""
    try:
        budgets = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        budgets = ()
    if not budgets or budgets[0] < 1:
        raise ValueError(
            f"--budgets must list token budgets of 1 or more, like 1000,2000,4000; got {text!r}"
        )
    return budgets


def headline_queries(queries: list) -> list:
    """The queries a sweep scores: the headline variant's (a generated set's doc-comment
    summaries) when the set has them, else all. The table shows that variant only, so
    scoring the name and call variants too doubled a sweep's time for nothing shown."""
    from nexus.evaluation.experiments import HEADLINE_VARIANT

    return [q for q in queries if q.variant == HEADLINE_VARIANT] or queries


def sweep_repository(repo: Repository, queries: list, distractors: int | None) -> Repository:
    """``repo`` with only the chunkable files a sweep chunks (``experiments.sweep_paths``):
    on the scale corpus 1,254 of 6,405, so the rest are neither blanked nor parsed."""
    from nexus.evaluation.experiments import sweep_paths

    kept = sweep_paths([info.path for info in repo.chunkable_files()], queries, distractors)
    files = tuple(info for info in repo.files if not info.chunkable or info.path in kept)
    return replace(repo, files=files)


def parse_distractors(text: str) -> int | None:
    """``--distractors``: a number of files, or ``all`` (None: every file)."""
    if text.strip().lower() == "all":
        return None
    if not text.strip().isdigit():
        raise ValueError(f"--distractors takes a number of files or `all`, got {text!r}")
    return int(text)


def _sweep(
    args: argparse.Namespace,
    config: ChunkConfig,
    repo: str,
    analyses: list,
    queries: list,
    embedder: object,
    budgets: tuple[int, ...],
    rescorer: object,
) -> int:
    """The sweep's table (rank and budget metrics per setting) and its best setting;
    with a ``rescorer`` (the fast tier), each setting scored as search answers."""
    from nexus.evaluation.budget import budget_label
    from nexus.evaluation.experiments import (
        HEADLINE_VARIANT,
        RESCORE_TEXTS,
        best,
        default_choice,
        describe,
        sweep,
        sweep_grid,
    )
    from nexus.tables import render_text

    grid_max = [int(x) for x in args.sweep_max.split(",")]
    grid_min = [int(x) for x in args.sweep_min.split(",")]
    limit = None if args.rescore_any_size else RESCORE_TEXTS
    results = sweep(
        analyses, repo, config, queries, embedder, grid_max, grid_min,
        budgets=budgets, rescore_with=rescorer, rescore_limit=limit,
    )  # fmt: skip
    if results and all(r.rescored for r in results):
        print(
            "nexus: scored each setting as search answers: its best hits re-scored by "
            f"{rescorer.name} (embedded once, through the cache; --fast-order: the fast "  # type: ignore[attr-defined]
            "tier's own order, faster)",
            file=sys.stderr,
        )
    elif rescorer is not None:
        settings = len(sweep_grid(grid_max, grid_min))
        print(
            f"nexus: scored the fast tier's own order: re-scoring {len(queries)} queries x "
            f"{settings} settings would ask MiniLM for more than {RESCORE_TEXTS:,} texts its "
            "cache lacks (minutes cold); --rescore re-scores them anyway",
            file=sys.stderr,
        )
    variants = {g for r in results for g in r.report.metrics}
    variant = HEADLINE_VARIANT if HEADLINE_VARIANT in variants else "all"
    shown = [budget_label(b) for b in budgets] + ["tokens@10", "MRR@10", "R@5", "lines@5"]
    rows = [
        [describe(r.config), str(r.chunks)]
        + [f"{r.metric(name, variant):.3f}" for name in shown[: len(budgets)]]
        + [f"{r.metric('tokens@10', variant):.0f}"]
        + [f"{r.metric(name, variant):.3f}" for name in ("MRR@10", "R@5")]
        + [f"{r.metric('lines@5', variant):.1f}", str(r.over_window)]
        for r in results
    ]
    n = int(results[0].report.metrics[variant]["n"]) if results else 0
    print(
        f"{n} queries of variant {variant!r} scored "
        f"({'the doc-comment summaries' if variant == HEADLINE_VARIANT else 'every query'}); "
        f"embedder {embedder.name}"  # type: ignore[attr-defined]
    )
    print(render_text((["config", "chunks", *shown, "> window"], rows)))
    choose_by = args.choose_by or default_choice(budgets)
    top = best(results, variant, choose_by=choose_by)
    print(f"best: {describe(top.config)} (chosen by {choose_by}, ties by fewer tokens@10)")
    return 0


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the query set {path}: {exc.strerror or exc}") from None


def _eval_questions(
    args: argparse.Namespace, config: ChunkConfig, questions: list, budgets: tuple[int, ...]
) -> int:
    """A question set (several file/line targets, categories): NDCG@10, MRR@10, R@5 and
    the budget metrics per category, for each strategy."""
    from nexus.evaluation.questions import evaluate_questions, summarize, summary_table
    from nexus.evaluation.runs import no_nan
    from nexus.retrieval.ranking import rules_for
    from nexus.tables import render_text

    repo = open_target(args)
    present = {info.path for info in repo.files if info.chunkable}
    missing = sorted({p.file for q in questions for p in q.targets} - present)
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        print(f"{len(missing)} target file(s) are not chunked in {repo.name}: {shown}")
    workspace = index_verb.open_workspace(args, config, repo)
    opened = index_verb.index_workspace(args, workspace, strategies(args))
    summaries = {}
    rows_by_label = {}
    texts = [q.query for q in questions]
    for strategy, one in zip(strategies(args), opened, strict=True):
        label = STRATEGY_LABELS[strategy]
        answers = _as_answered(workspace, strategy, texts)
        rows = evaluate_questions(
            questions,
            one.index,
            workspace.embedder,
            config.lexical_weight,
            rules_for(config),
            budgets,
            answered=[[hit.chunk for hit in answer.hits] for answer in answers],
        )
        rows_by_label[label] = rows
        summaries[label] = summarize(rows, budgets)
    print(render_text(summary_table(summaries, budgets)))
    if args.json:
        out = Path(args.json)
        out.mkdir(parents=True, exist_ok=True)
        for strategy, (label, rows) in zip(strategies(args), rows_by_label.items(), strict=True):
            report = {
                "label": label,
                "budgets": list(budgets),
                "summary": summaries[label],
                "rows": [r.record() for r in rows],
            }
            (out / f"{strategy}.json").write_text(json.dumps(no_nan(report), indent=1) + "\n")
        print(f"\nreports written to {out}")
    return 0
