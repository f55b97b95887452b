"""``nexus search``: one query against the line-based and AST indexes, or a file of
queries answered in one process (the model loads once); ``--budget`` reads the hits
in rank order within that many tokens."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from nexus.cli.common import STRATEGY_LABELS, config_from_args, open_target, strategies
from nexus.cli.indexes import index_workspace, open_workspace


@dataclass(frozen=True)
class BatchQuery:
    """One line of a ``--queries`` file: an id (its line number when absent) and a
    token budget (None: the ``--budget`` flag's)."""

    id: str
    query: str
    budget: int | None = None


def read_batch(data: str) -> list[BatchQuery]:
    """Queries from JSONL (``{"id", "query", "budget"?}``; other fields are ignored) or
    plain text (one query a line). ValueError names every bad line at once."""
    queries, problems = [], []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        if not line.lstrip().startswith("{"):
            queries.append(BatchQuery(str(number), line.strip()))
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not valid JSON ({exc.msg})")
            continue
        text = record.get("query") if isinstance(record, dict) else None
        if not isinstance(text, str) or not text.strip():
            problems.append(f'line {number}: a record needs a non-empty "query" string')
            continue
        budget = record.get("budget")
        if budget is not None and (
            isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
        ):
            problems.append(f'line {number}: "budget" must be a whole number of tokens, 1 or more')
            continue
        queries.append(BatchQuery(str(record.get("id", number)), text, budget))
    if problems:
        lines = "\n".join(problems)
        raise ValueError(f"{len(problems)} bad record(s) in the query file:\n{lines}")
    if not queries:
        raise ValueError("the query file holds no queries (one JSON object or text a line)")
    return queries


def cmd_search(args: argparse.Namespace) -> int:
    from nexus.workspace import check_budget

    if (args.query is None) == (args.queries is None):
        raise ValueError("give one query, or a file of them with --queries FILE")
    try:
        check_budget(args.budget)
    except ValueError as exc:
        raise ValueError(f"--budget: {exc}") from None
    if args.queries is not None:
        try:
            batch = read_batch(Path(args.queries).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read {args.queries}: {exc.strerror or exc}") from None
    else:
        batch = [BatchQuery("1", args.query)]
    config = config_from_args(args)
    chosen = strategies(args)
    workspace = open_workspace(args, config, open_target(args))
    index_workspace(args, workspace, chosen)
    texts = [q.query for q in batch]
    budgets = [q.budget if q.budget is not None else args.budget for q in batch]
    answers = {
        STRATEGY_LABELS[s]: workspace.search_many(texts, args.k, strategy=s, budgets=budgets)
        for s in chosen
    }
    for number, query in enumerate(batch):
        one = {label: found[number] for label, found in answers.items()}
        budget = budgets[number]
        if args.queries is not None:  # one JSON line a query, for scripts and benchmarks
            record = {"id": query.id, "query": query.query}
            record |= {label: _records(a, budget, text=False) for label, a in one.items()}
            sys.stdout.write(json.dumps(record | _spent(one, budget) | _answered_by(one)) + "\n")
        elif args.json:
            record = {label: _records(a, budget, text=True) for label, a in one.items()}
            print(json.dumps(record | _spent(one, budget) | _answered_by(one), indent=2))
        else:
            for label, answer in one.items():
                _print_table(label, answer, args)
            print(answered_line(next(iter(one.values())), args.target))
    return 0


def _records(answer, budget: int | None, text: bool) -> list[dict[str, object]]:
    """The hits as JSON; with a budget only those read, the last one cut if it crossed."""
    from nexus.retrieval.search import hit_record

    out = []
    shown = answer.reads if budget is not None else [None] * len(answer.hits)
    for hit, read in zip(answer.hits, shown, strict=False):
        record = hit_record(hit)
        if text:
            record = {"rank": hit.rank, "score": round(hit.score, 4), **hit.chunk.to_dict()}
            record["parts"] = {p.name: round(p.value, 4) for p in hit.parts}
        if read is not None:
            record |= {"end_line": read.end_line, "tokens": read.tokens, "cut": read.cut}
            if text:
                record["text"] = read.text
        out.append(record)
    return out


def _spent(answers: dict, budget: int | None) -> dict[str, object]:
    """``budget`` and the tokens each index's hits used within it (nothing without one)."""
    if budget is None:
        return {}
    return {"budget": budget, "tokens_used": {k: a.tokens_used for k, a in answers.items()}}


def _answered_by(answers: dict) -> dict[str, object]:
    """Which tier and model answered (every index of one workspace has the same), and
    whether the fast tier's best hits were scored again (``SearchAnswer.rescore``)."""
    answer = next(iter(answers.values()))
    return {
        "tier": answer.tier,
        "model": answer.model,
        "rescored_by": answer.rescored_by or None,
        "rescore": answer.rescore or None,
    }


def answered_line(answer, target: str) -> str:  # noqa: ANN001 - a SearchAnswer
    """Under the tables: which tier and model answered, and whether MiniLM re-scored it
    (the JSON's ``tier``, ``model`` and ``rescore``), with how to get it re-scored."""
    from nexus.retrieval.rescore import RESCORE_PENDING

    line = f"answered by the {answer.tier} tier ({answer.model})"
    if answer.rescored_by:
        return f"{line}, re-scored by {answer.rescored_by}"
    if answer.rescore == RESCORE_PENDING:
        return (
            f"{line}, {RESCORE_PENDING}: MiniLM's vectors of the chunks are computed in the "
            f"background; `nexus index {target}` waits for them"
        )
    return f"{line}, {answer.rescore}" if answer.rescore else line


def _tokens(hit, read, budget: int | None) -> int:
    """A hit's tokens: as read within the budget, else the chunk's own count."""
    return read.tokens if budget is not None and read is not None else hit.chunk.token_count


def _print_table(label: str, answer, args: argparse.Namespace) -> None:
    from nexus.tables import render_text

    reads = {read.rank: read for read in answer.reads}
    rows = []
    for hit in answer.hits:
        read = reads.get(hit.rank)
        if answer.budget is not None and read is None:
            break
        end = read.end_line if read is not None else hit.chunk.end_line
        cut = " (cut)" if read is not None and read.cut else ""
        rows.append(
            [
                str(hit.rank),
                f"{hit.score:.3f}",
                f"{hit.chunk.file}:{hit.chunk.start_line}-{end}{cut}",
                hit.chunk.symbol or "",
                answer.why(hit) if args.why else str(_tokens(hit, read, answer.budget)),
            ]
        )
    last = "why" if args.why else "tokens"
    spent = f", {answer.tokens_used} of {answer.budget} tokens" if answer.budget else ""
    print(f"\n{label} top {args.k} for {answer.query!r}{spent}")
    print(render_text((["rank", "score", "where", "symbol", last], rows), 90))
