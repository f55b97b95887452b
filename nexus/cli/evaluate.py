"""``nexus eval``: a query set against line-based and AST chunks, or a sweep."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nexus.cli import indexes as index_verb
from nexus.cli.common import STRATEGY_LABELS, config_from_args, open_target, strategies
from nexus.cli.indexes import saved_indexes
from nexus.config import ChunkConfig


def cmd_eval(args: argparse.Namespace) -> int:
    from nexus.evaluation.experiments import best, describe, sweep, sweep_files
    from nexus.evaluation.metrics import (
        compare,
        comparison_table,
        evaluate,
        load_queries,
        metrics_table,
        render_text,
        save_report,
        unreachable_summary,
        unreachable_table,
        unreachable_targets,
    )

    # Imported here: nexus.retrieval.index (usearch) must come after ray (--engine ray).
    from nexus.evaluation.questions import is_question_set, parse_questions
    from nexus.retrieval.ranking import rules_for

    config = config_from_args(args)
    data = _read(args.queries)
    if is_question_set(data):
        return _eval_questions(args, config, parse_questions(data))
    queries = load_queries(args.queries)
    repo = open_target(args)
    blank = args.blank_docs
    if blank is None:  # as the set asks: generated sets blank the doc comments
        from nexus.evaluation.generate import blanks_docs

        blank = blanks_docs(Path(args.queries).read_bytes())
    if blank:
        from nexus.evaluation.generate import blanked_repository

        print("doc comments blanked in what is indexed (lines kept)", file=sys.stderr)
        repo = blanked_repository(repo)
    if unreachable := unreachable_targets(queries, repo.files):
        print(unreachable_summary(unreachable, len(queries)))
        print(render_text(unreachable_table(unreachable)))
    if args.sweep:
        from nexus.chunking.pipeline import analyze_files

        embedder = index_verb.cached_embedder(args, config)
        analyses = sweep_files(
            analyze_files(repo.source_files(), config.encoding), queries, args.distractors
        )
        grid_max = [int(x) for x in args.sweep_max.split(",")]
        grid_min = [int(x) for x in args.sweep_min.split(",")]
        results = sweep(analyses, repo.name, config, queries, embedder, grid_max, grid_min)
        rows = [
            [
                describe(r.config),
                str(r.chunks),
                f"{r.metric('MRR@10'):.3f}",
                f"{r.metric('R@5'):.3f}",
                f"{r.metric('lines@5'):.1f}",
                str(r.over_window),
            ]
            for r in results
        ]
        print(render_text((["config", "chunks", "MRR@10", "R@5", "lines@5", "> window"], rows)))
        print(f"best: {describe(best(results).config)}")
        return 0
    embedder, opened = saved_indexes(args, config, strategies(args), repo)
    indexes = [one.index for one in opened]
    if len(indexes) == 2:
        comparison = compare(
            queries,
            *indexes,
            embedder,
            k=args.k,
            lexical_weight=config.lexical_weight,
            ranking=rules_for(config),
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


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the query set {path}: {exc.strerror or exc}") from None


def _eval_questions(args: argparse.Namespace, config: ChunkConfig, questions: list) -> int:
    """A question set (several file/line targets, categories): NDCG@10, MRR@10 and R@5 per
    category, for each strategy."""
    from nexus.evaluation.metrics import render_text
    from nexus.evaluation.questions import evaluate_questions, summarize, summary_table
    from nexus.retrieval.ranking import rules_for

    repo = open_target(args)
    present = {info.path for info in repo.files if info.chunkable}
    missing = sorted({p.file for q in questions for p in q.targets} - present)
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        print(f"{len(missing)} target file(s) are not chunked in {repo.name}: {shown}")
    embedder, opened = saved_indexes(args, config, strategies(args), repo)
    summaries = {}
    rows_by_label = {}
    for strategy, one in zip(strategies(args), opened, strict=True):
        label = STRATEGY_LABELS[strategy]
        rows = evaluate_questions(
            questions, one.index, embedder, config.lexical_weight, rules_for(config)
        )
        rows_by_label[label] = rows
        summaries[label] = summarize(rows)
    print(render_text(summary_table(summaries)))
    if args.json:
        out = Path(args.json)
        out.mkdir(parents=True, exist_ok=True)
        for strategy, (label, rows) in zip(strategies(args), rows_by_label.items(), strict=True):
            records = [
                {
                    "id": r.question.id,
                    "category": r.question.category,
                    **r.scores,
                    "top": [f"{c.file}:{c.start_line}-{c.end_line}" for c in r.top],
                }
                for r in rows
            ]
            report = {"label": label, "summary": summaries[label], "rows": records}
            (out / f"{strategy}.json").write_text(json.dumps(report, indent=1) + "\n")
        print(f"\nreports written to {out}")
    return 0
