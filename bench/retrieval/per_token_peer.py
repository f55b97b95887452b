"""Score the peer's run files (``bench/retrieval/peer_semble.py``) the way Nexus scores itself.

Semble 0.7.0 ran in its own virtualenv with Nexus's fast-tier static model; this script
(Nexus's venv) reads its ranked hits back as lightweight ``Chunk`` records and scores
them with Nexus's own functions, so the figures sit beside Nexus's without a second rule:

* question sets: NDCG@10, MRR@10, R@5 (``nexus.evaluation.questions.question_scores``)
  and recall within 1k/2k/4k tokens, tokens to the first hit, lines and tokens of the
  top 10 (``nexus.evaluation.budget``, rule ``any_line``), per split and category, and
  per style with ``mean of styles`` as ``bench/retrieval/answers.py`` reports Nexus;
* the doc-comment dev set, if its run file is there: R@1/5/10, MRR@10 and lines@5 under
  overlap50 (``nexus.evaluation.runs.aggregate``) and the budget metrics under
  ``half_the_lines``, per query variant.

    .venv/bin/python bench/retrieval/per_token_peer.py [--run LABEL=DIR ...] [--repos DIR ...]

``--run`` names a folder of run files (default ``semble=/tmp/nexus-peer-runs``); give it
again for a variant, e.g. ``--run "semble, BM25 only=/tmp/nexus-peer-runs-bm25"``.
``--files`` also scores each run with every target's whole file as the target
(``nexus.evaluation.questions.by_file``), rows labelled ``..., file targets``.

Writes ``bench/results/per_token_peer.{md,json}``. Also checks the hits: each one's
lines must be the lines of its file under the indexed root (files relative to the root,
as the targets are); a mismatch is counted and printed, never silently scored.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from nexus.evaluation.budget import (  # noqa: E402
    DEFAULT_BUDGETS,
    BudgetOutcome,
    any_line,
    budget_label,
    budget_outcome,
    half_the_lines,
    summarize_budgets,
)
from nexus.evaluation.metrics import (  # noqa: E402  (Hit: whichever module defines it)
    PRIMARY_RULE,
    RULES,
    Hit,
    QueryOutcome,
    rank_of_target,
)
from nexus.evaluation.query_sets import Query, Target, load_queries  # noqa: E402
from nexus.evaluation.questions import (  # noqa: E402
    CATEGORIES,
    METRICS,
    STYLE_COLUMNS,
    STYLES,
    Place,
    Question,
    by_file,
    parse_questions,
    question_scores,
    style_of,
)
from nexus.evaluation.runs import QueryRow, aggregate  # noqa: E402
from nexus.retrieval.budget import Read  # noqa: E402
from nexus.tables import render_markdown, render_text  # noqa: E402
from nexus.types import Chunk  # noqa: E402

REPOS = ROOT / "bench" / "questions" / "repos"
RESULTS = ROOT / "bench" / "results"
DEFAULT_RUNS = Path(os.environ.get("NEXUS_PEER_RUNS", "/tmp/nexus-peer-runs"))
#: The shared eval folder, as ``bench/retrieval/eval_sets.py`` finds it.
EVAL_DIR = Path(os.environ.get("NEXUS_EVAL_DIR", ROOT.parent / "shared" / "eval"))
DOC_QUERIES = EVAL_DIR / "dev" / "queries.jsonl"
SPLITS = ("tune", "heldout", "fresh")
#: The splits ``both`` sums: the two halves (``fresh``, a set written apart, is shown alone).
BOTH = ("tune", "heldout")
BUDGET_COLUMNS = [*(budget_label(b) for b in DEFAULT_BUDGETS), "tokens to first hit"]
BUDGET_COLUMNS += ["lines@10", "tokens@10"]

Table = tuple[list[str], list[list[str]]]
MEAN = "mean of styles"


def hit_chunks(name: str, hits: Iterable[dict]) -> tuple[Chunk, ...]:
    """The run file's hits as ``Chunk`` records: what the scorers read (file, lines, text)."""
    return tuple(
        Chunk(
            id=f"{name}:{rank}",
            repo=name,
            file=hit["file"],
            language="",
            strategy="semble",
            start_line=hit["start_line"],
            end_line=hit["end_line"],
            start_byte=0,
            end_byte=0,
            token_count=0,
            text=hit["text"],
        )
        for rank, hit in enumerate(hits, start=1)
    )


def read_run(path: Path) -> dict[str, tuple[Chunk, ...]]:
    """Ranked hits per query id."""
    name = path.stem
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["id"]: hit_chunks(name, r["results"]) for r in records}


def mismatched_hits(root: Path, runs: dict[str, tuple[Chunk, ...]]) -> list[str]:
    """Hits whose text is not exactly the lines they claim of their file under ``root``
    (a partial first or last line counts as a match: semble cuts at characters)."""
    lines: dict[str, list[str]] = {}
    bad = []
    for hits in runs.values():
        for chunk in hits:
            if chunk.file not in lines:
                path = root / chunk.file
                lines[chunk.file] = path.read_text().split("\n") if path.is_file() else []
            source = "\n".join(lines[chunk.file][chunk.start_line - 1 : chunk.end_line])
            if chunk.text.rstrip("\n") not in source or chunk.text.count("\n") > chunk.n_lines:
                bad.append(f"{chunk.file}:{chunk.start_line}-{chunk.end_line}")
    return bad


# --- question sets ---------------------------------------------------------------------


@dataclass(frozen=True)
class Scored:
    """One question: its split, Nexus's NDCG/MRR/R@5 and its budget outcome."""

    split: str
    question: Question
    scores: dict[str, float]
    budget: BudgetOutcome


def covers_place(place: Place, read: Read) -> bool:
    return any_line(place.file, place.start_line, place.end_line, read)


def score_repo(
    split: str, questions: Sequence[Question], hits: dict[str, tuple[Chunk, ...]], files: set[str]
) -> list[Scored]:
    """Score every question of one repository (a question without a run line has no hits)."""
    out = []
    for q in questions:
        deep = hits.get(q.id, ())  # the budgets read past the top 10, as Nexus's do
        budget = budget_outcome(deep, q.targets, covers_place)
        out.append(Scored(split, q, question_scores(q, deep[:10], files), budget))
    return out


def summarize_scored(rows: Sequence[Scored]) -> dict[str, float]:
    """Means of NDCG@10, MRR@10, R@5 and the budget summary, with ``n``."""
    summary: dict[str, float] = {"n": len(rows)}
    for name in METRICS:
        summary[name] = sum(r.scores[name] for r in rows) / len(rows)
    summary.update(summarize_budgets((r.budget for r in rows), DEFAULT_BUDGETS))
    return summary


def groups(rows: Sequence[Scored]) -> dict[str, dict[str, dict[str, float]]]:
    """Summaries per split (``tune``, ``heldout``, ``both``), then per group (``all`` and
    each category)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for split in (*SPLITS, "both"):
        chosen = [r for r in rows if r.split == split or (split == "both" and r.split in BOTH)]
        if not chosen:
            continue
        out[split] = {"all": summarize_scored(chosen)}
        for category in CATEGORIES:
            members = [r for r in chosen if r.question.category == category]
            if members:
                out[split][category] = summarize_scored(members)
    return out


def style_groups(rows: Sequence[Scored]) -> dict[str, dict[str, dict[str, float]]]:
    """Summaries per split, then per question style (``STYLES``) and ``mean of styles``
    (each style weighs the same), as ``bench/retrieval/answers.py`` reports Nexus."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for split in (*SPLITS, "both"):
        chosen = [r for r in rows if r.split == split or (split == "both" and r.split in BOTH)]
        by_style = {
            style: [r for r in chosen if style_of(r.question.category) == style] for style in STYLES
        }
        summaries = {style: summarize_scored(rs) for style, rs in by_style.items() if rs}
        if not summaries:
            continue
        summaries[MEAN] = {"n": sum(m["n"] for m in summaries.values())} | {
            c: sum(m[c] for m in summaries.values()) / len(summaries) for c in STYLE_COLUMNS
        }
        out[split] = summaries
    return out


def style_table(summaries: dict[str, dict[str, dict[str, float]]]) -> Table:
    """Rows ``split | style | n | R@1k | R@2k | lines@10 | NDCG@10 | MRR@10``."""
    headers = ["split", "style", "n", *STYLE_COLUMNS]
    rows = []
    for split, by_style in summaries.items():
        for style, m in by_style.items():
            rows.append([split, style] + [cell(n, m[n]) for n in headers[2:]])
    return headers, rows


def cell(name: str, value: float) -> str:
    if name == "n":
        return str(int(value))
    if name in ("tokens to first hit", "lines@10", "tokens@10", "lines@5"):
        return f"{value:.0f}"
    return f"{value:.3f}"


def split_table(summaries: dict[str, dict[str, dict[str, float]]]) -> Table:
    """Rows ``split | group | n | NDCG@10 | MRR@10 | R@5 | R@1k | ... | tokens@10``."""
    headers = ["split", "group", "n", *METRICS, *BUDGET_COLUMNS]
    rows = []
    for split, by_group in summaries.items():
        for group, m in by_group.items():
            rows.append([split, group] + [cell(n, m[n]) for n in headers[2:]])
    return headers, rows


def repo_table(index: dict[str, dict], per_repo: dict[str, dict[str, float]]) -> Table:
    """Rows ``repo | split | language | files | chunks | index s | NDCG@10 | R@1k | lines@10``."""
    headers = ["repo", "split", "language", "files", "chunks", "index s", "NDCG@10", "R@1k"]
    headers.append("lines@10")
    rows = []
    for name, m in per_repo.items():
        entry = index[name]
        rows.append(
            [name, entry["split"], entry["language"], str(entry["files"]), str(entry["chunks"])]
            + [f"{entry['index_seconds']:.1f}", cell("NDCG@10", m["NDCG@10"])]
            + [cell("R@1k", m["R@1k"]), cell("lines@10", m["lines@10"])]
        )
    return headers, rows


def question_manifests(folders: Sequence[Path]) -> dict[str, tuple[dict, Path]]:
    """Manifest and questions file per repository name (later folders win)."""
    found: dict[str, tuple[dict, Path]] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            if path.with_suffix(".jsonl").exists():
                manifest = json.loads(path.read_text())
                found[manifest["name"]] = (manifest, path.with_suffix(".jsonl"))
    return found


def score_questions(
    runs: Path, index: dict[str, dict], folders: Sequence[Path], files: bool = False
) -> tuple[list[Scored], dict[str, dict[str, float]], dict[str, int]]:
    """Every question of every repository with a run file: the scored rows, a summary per
    repository, and the count of mismatched hits per repository; with ``files``, each
    target's whole file is the target (``by_file``)."""
    rows: list[Scored] = []
    per_repo, mismatches = {}, {}
    for name, (manifest, path) in sorted(question_manifests(folders).items()):
        run = runs / f"{name}.jsonl"
        if name not in index or not run.exists():
            print(
                f"(no peer run for {name}: run bench/retrieval/peer_semble.py questions)",
                file=sys.stderr,
            )
            continue
        hits = read_run(run)
        bad = mismatched_hits(Path(index[name]["root"]), hits)
        mismatches[name] = len(bad)
        if bad:
            print(f"{name}: {len(bad)} hits do not match their file: {bad[:3]}", file=sys.stderr)
        questions = parse_questions(path.read_bytes())
        if files:
            questions = [by_file(q) for q in questions]
        indexed = set(index[name]["indexed_files"])
        scored = score_repo(manifest["split"], questions, hits, indexed)
        per_repo[name] = summarize_scored(scored)
        rows.extend(scored)
    return rows, per_repo, mismatches


# --- the doc-comment set ---------------------------------------------------------------


def doc_row(query: Query, top: tuple[Chunk, ...]) -> QueryRow:
    """A metrics row from the peer's hits: ranks per rule (no scores or margins: the peer
    does not expose them over the whole index)."""
    hits = tuple(Hit(chunk, 0.0, rank, rank) for rank, chunk in enumerate(top, start=1))
    ranks = {rule: rank_of_target(hits, query.target, rule) for rule in RULES}
    outcome = QueryOutcome(hits, ranks[PRIMARY_RULE], None, None, None, None, ranks)
    return QueryRow(query, outcome)


def covers_half(target: Target, read: Read) -> bool:
    return half_the_lines(target.file, target.start_line, target.end_line, read)


def score_docs(run: Path, queries: Path) -> dict[str, dict[str, float]]:
    """Per variant (and ``all``): overlap50 R@1/5/10, MRR@10, lines@5 and the budget summary."""
    hits = read_run(run)
    rows, budgets = [], defaultdict(list)
    for query in load_queries(queries):
        deep = hits.get(query.id, ())
        rows.append(doc_row(query, deep[:10]))
        outcome = budget_outcome(deep, [query.target], covers_half)
        for group in ("all", query.variant):
            budgets[group].append(outcome)
    metrics = aggregate(rows)
    out = {}
    for group in ("doc", "name", "calls", "all"):
        if group in metrics:
            m = metrics[group]
            out[group] = {"n": m["n"], "lines@5": m["lines@5"]}
            rule = f"{PRIMARY_RULE}:"
            out[group].update({k.removeprefix(rule): v for k, v in m.items() if k.startswith(rule)})
            out[group].update(summarize_budgets(budgets[group], DEFAULT_BUDGETS))
    return out


def doc_table(summary: dict[str, dict[str, float]]) -> Table:
    headers = ["variant", "n", "R@1", "R@5", "R@10", "MRR@10", "lines@5", *BUDGET_COLUMNS]
    rows = []
    for group, m in summary.items():
        rows.append([group] + [cell(n, m[n]) for n in headers[1:]])
    return headers, rows


# --- report ----------------------------------------------------------------------------


def without_files(entry: dict) -> dict:
    """A run's index entry without its list of indexed files (long, and only for scoring)."""
    return {k: v for k, v in entry.items() if k != "indexed_files"}


@dataclass(frozen=True)
class PeerRun:
    """One labelled folder of ``peer_semble.py`` output, scored."""

    label: str
    meta: dict
    report: dict
    questions: dict[str, dict[str, dict[str, float]]]
    styles: dict[str, dict[str, dict[str, float]]]
    per_repo: dict[str, dict[str, float]]
    docs: dict[str, dict[str, float]] | None


def score_run(
    label: str, runs: Path, folders: Sequence[Path], doc_queries: Path, files: bool = False
) -> PeerRun:
    """Every question set and, when its run file is there, the doc-comment dev set (with
    ``files``: the question sets only, each target's whole file the target)."""
    meta = json.loads((runs / "index.json").read_text())
    index = meta["runs"]
    rows, per_repo, mismatches = score_questions(runs, index, folders, files)
    summaries, styles = groups(rows), style_groups(rows)
    report = {
        "runs": str(runs),
        "alpha": meta.get("alpha"),
        "questions": summaries,
        "styles": styles,
        "repos": {name: {**without_files(index[name]), **m} for name, m in per_repo.items()},
        "mismatched_hits": mismatches,
    }
    docs = None
    if not files and (runs / "doc-dev.jsonl").exists() and doc_queries.exists():
        docs = score_docs(runs / "doc-dev.jsonl", doc_queries)
        report["doc_dev"] = {**docs, "index": without_files(index.get("doc-dev", {}))}
    return PeerRun(label, meta, report, summaries, styles, per_repo, docs)


def labelled(text: str) -> tuple[str, Path]:
    """``LABEL=DIR`` from the command line."""
    label, sep, folder = text.partition("=")
    if not sep or not label or not folder:
        raise argparse.ArgumentTypeError(f"expected LABEL=DIR, got {text!r}")
    return label, Path(folder)


def with_run(label: str, table: Table) -> Table:
    headers, rows = table
    return ["run", *headers], [[label, *row] for row in rows]


def joined(tables: Sequence[Table]) -> Table:
    return tables[0][0], [row for _, rows in tables for row in rows]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--run",
        type=labelled,
        action="append",
        help=f"LABEL=DIR of peer_semble.py output, repeatable (default semble={DEFAULT_RUNS}); "
        "the first one's index times are shown per repository",
    )
    parser.add_argument("--repos", type=Path, action="append", help="folder of repos/*.json")
    parser.add_argument("--doc-queries", type=Path, default=DOC_QUERIES)
    parser.add_argument(
        "--files", action="store_true", help="also score each target's whole file (by_file)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    folders = args.repos or [REPOS]
    runs = args.run or [("semble", DEFAULT_RUNS)]
    scored = [score_run(label, folder, folders, args.doc_queries) for label, folder in runs]
    if args.files:
        scored += [
            score_run(f"{label}, file targets", folder, folders, args.doc_queries, files=True)
            for label, folder in runs
        ]
    main_run = scored[0]
    questions = joined([with_run(r.label, split_table(r.questions)) for r in scored])
    styles = joined([with_run(r.label, style_table(r.styles)) for r in scored])
    repos = repo_table(main_run.meta["runs"], main_run.per_repo)
    text = [
        "## Questions, per split and style (budget metrics first)\n",
        "Paraphrase = semantic + architecture; `mean of styles`: each style weighs the same.\n",
        render_markdown(styles),
    ]
    text += ["\n## Questions, per split and category\n", render_markdown(questions)]
    text += [f"\n## Per repository ({main_run.label})\n", render_markdown(repos)]
    print(render_text(styles))
    print(render_text(questions))
    print(render_text(repos))
    with_docs = [r for r in scored if r.docs]
    if with_docs:
        docs = joined([with_run(r.label, doc_table(r.docs or {})) for r in with_docs])
        text += [
            "\n## Doc-comment dev set (overlap50, budgets with `half_the_lines`)\n",
            render_markdown(docs),
        ]
        print(render_text(docs))
    if args.no_write:
        return
    meta = main_run.meta
    report = {
        "date": date.today().isoformat(),
        "peer": f"semble {meta['semble']}",
        "model": meta["model"],
        "top_k": meta["top_k"],
        "machine": machine(),
        "question_folders": [str(folder) for folder in folders],
        "runs": {r.label: r.report for r in scored},
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "per_token_peer.json").write_text(json.dumps(report, indent=1) + "\n")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    alphas = "; ".join(
        f"{r.label}: {'auto' if r.report['alpha'] is None else r.report['alpha']}" for r in scored
    )
    (RESULTS / "per_token_peer.md").write_text(
        "# The peer on our questions: semble 0.7.0, same static model\n\n"
        f"`bench/retrieval/peer_semble.py` (semble {meta['semble']} in its own venv, "
        f"`SembleIndex.from_path(root, model_path=...)`, top {meta['top_k']}, defaults "
        f"otherwise; dense weight alpha per run: {alphas}; auto = semble's choice per query) then "
        f"`bench/retrieval/per_token_peer.py`, {report['date']}. Model: Nexus's fast tier, "
        f"`{Path(meta['model']).name}`. Scored with Nexus's functions: NDCG@10/MRR@10/R@5 "
        "as `nexus eval` scores question sets, R@Bk = share of targets covered within B "
        "cl100k tokens (the crossing hit cut at a line), tokens to first hit (median), "
        "lines and tokens of the top 10 (means); runs `..., file targets`: each target's "
        "whole file is the target (`--files`). Index seconds are cold builds on "
        f"{os.cpu_count()} shared CPUs (load average {load} when scored): not timings to quote.\n\n"
        + "\n".join(text)
        + "\n"
    )


if __name__ == "__main__":
    main()
