"""Query sets: the records a retrieval evaluation reads, and the targets no chunk can reach.

A query set is JSONL, one query a line: ``{"id", "query", "variant"?, "target": {"file",
"start_line", "end_line", ...}}`` (the benchmark's format, ``shared/eval/README.md``).
Bad records are named all at once (``QuerySetError``) rather than failing on the first;
targets in files no chunk comes from are reported (``unreachable_targets``), not hidden
in lower scores. Scoring them is ``nexus.evaluation.metrics`` (one query) and ``runs`` (a set).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from nexus.tables import Table
from nexus.types import FileInfo

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """The definition a query should find (lines 1-based, inclusive)."""

    file: str  # relative to the corpus root, as a chunk's ``file``
    start_line: int
    end_line: int
    name: str = ""
    qualname: str = ""
    kind: str = ""
    package: str = ""

    @property
    def n_lines(self) -> int:
        return self.end_line - self.start_line + 1


@dataclass(frozen=True)
class Query:
    id: str
    query: str
    target: Target
    target_id: str = ""
    variant: str = ""


#: Line numbers past this are typos (and 1e308 would overflow the arithmetic on lines).
MAX_LINE = 10_000_000
#: How many bad records an error lists before it says "and N more".
SHOWN_PROBLEMS = 10
_EXAMPLE = (
    '{"id": "q1", "query": "what to search for", "variant": "doc", '
    '"target": {"file": "src/a.js", "start_line": 10, "end_line": 20}}'
)


class QuerySetError(ValueError):
    """A query set that cannot be used: ``problems`` holds one line per bad record."""

    def __init__(self, summary: str, problems: Sequence[str] = ()) -> None:
        shown = list(problems[:SHOWN_PROBLEMS])
        if len(problems) > SHOWN_PROBLEMS:
            shown.append(f"... and {len(problems) - SHOWN_PROBLEMS} more")
        super().__init__("\n".join([summary, *shown]))
        self.summary = summary
        self.problems = tuple(problems)


def load_queries(path: str | os.PathLike[str]) -> list[Query]:
    """Read a query JSONL file (the benchmark format; extra fields are ignored)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise QuerySetError(f"cannot read the query set {path}: {exc.strerror or exc}") from None
    return parse_queries(data)


def parse_queries(data: bytes | str) -> list[Query]:
    """Queries from JSONL, one record a line; raises QuerySetError naming every bad line.

    Records are split on newlines only (a JSON string may hold U+2028); each one is
    checked by ``query_from_dict``, so nothing malformed reaches the scoring.
    """
    return parse_records(data, query_from_dict, "query", _EXAMPLE)


_PLURALS = {"query": "queries"}


def parse_records(
    data: bytes | str, from_dict: Callable[[object], T], kind: str, example: str
) -> list[T]:
    """Records of a JSONL set, each made by ``from_dict``; QuerySetError names every bad
    line (``kind`` and ``example`` go into the messages)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise QuerySetError(
                f"the {kind} set is not UTF-8 text (bad byte at offset {exc.start}); "
                "save it as UTF-8 JSONL"
            ) from None
    records: list[T] = []
    problems: list[str] = []
    for number, line in enumerate(data.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append(from_dict(json_record(line)))
        except ValueError as exc:
            problems.append(f"line {number}: {exc}")
    if problems:
        total = len(records) + len(problems)
        raise QuerySetError(
            f"{len(problems)} of {total} records are not {kind} records; each line must be "
            f"one JSON object like {example}",
            problems,
        )
    if not records:
        raise QuerySetError(
            f"the {kind} set holds no {_PLURALS.get(kind, kind + 's')}; write one JSON "
            f"object a line: {example}"
        )
    return records


def json_record(line: str) -> object:
    def no_constant(name: str) -> object:
        raise ValueError(f"{name} is not a JSON number; write a plain number")

    try:
        return json.loads(line, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"not valid JSON at character {exc.pos + 1} of the record: {exc.msg}"
        ) from None
    except RecursionError:
        raise ValueError(
            'nested too deeply: a query record is one object with a "target" object inside'
        ) from None


def query_from_dict(record: object) -> Query:
    """A ``Query`` from one parsed record; ValueError says which field is wrong and how."""
    if not isinstance(record, dict):
        raise ValueError(f"a record must be a JSON object, not {kind_of(record)}")
    target = record.get("target")
    if not isinstance(target, dict):
        raise ValueError(
            '"target" must be an object {"file", "start_line", "end_line"}, '
            f"not {kind_of(target)}"
        )
    start, end = _line(target, "start_line"), _line(target, "end_line")
    if start > end:
        raise ValueError(f'"start_line" {start} is after "end_line" {end}; swap them')
    return Query(
        id=text_field(record, "id", required=True, numbers=True),
        query=text_field(record, "query", required=True),
        target=Target(
            file=text_field(target, "file", required=True),
            start_line=start,
            end_line=end,
            name=text_field(target, "name"),
            qualname=text_field(target, "qualname"),
            kind=text_field(target, "kind"),
            package=text_field(target, "package"),
        ),
        target_id=text_field(record, "target_id", numbers=True),
        variant=text_field(record, "variant"),
    )


def text_field(
    record: dict[str, Any], key: str, required: bool = False, numbers: bool = False
) -> str:
    """A string field ("" when optional and absent); ids may also be whole numbers."""
    value = record.get(key)
    if value is None and not required:
        return ""
    if numbers and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or (required and not value.strip()):
        what = "missing" if value is None else f"{kind_of(value)}"
        need = "a non-empty string" if required else "a string"
        raise ValueError(f'"{key}" must be {need}, got {what}')
    return value


def _line(target: dict[str, Any], key: str) -> int:
    value = target.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        got = "missing" if value is None else kind_of(value)
        raise ValueError(f'"target.{key}" must be a whole line number (1-based), got {got}')
    if not 1 <= value <= MAX_LINE:
        raise ValueError(f'"target.{key}" must be between 1 and {MAX_LINE:,}, got {value}')
    return value


def kind_of(value: object) -> str:
    """What a JSON value is, for a message: ``a number (123)``, ``a list``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        shown = repr(value) if len(repr(value)) <= 24 else f"{repr(value)[:20]}..."
        return f"a number ({shown})"
    if isinstance(value, str):
        return "an empty string" if not value.strip() else "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


@dataclass(frozen=True)
class UnreachableTarget:
    """A query whose target no chunk can hit, and why (its file is absent or not chunked)."""

    query: Query
    why: str


def unreachable_targets(
    queries: Sequence[Query], files: Iterable[FileInfo]
) -> list[UnreachableTarget]:
    """Queries whose target file is not among the repository's chunked files.

    They still count as misses (the query set is scored as given), but a typo or a
    set meant for another repository must be said, not hidden in lower scores.
    """
    by_path = {info.path: info for info in files}
    found = []
    for query in queries:
        info = by_path.get(query.target.file)
        if info is None:
            found.append(UnreachableTarget(query, "not in the repository"))
        elif not info.chunkable:
            found.append(UnreachableTarget(query, f"not chunked ({info.category})"))
    return found


def unreachable_summary(found: Sequence[UnreachableTarget], total: int) -> str:
    """One sentence: how many queries and files, and what it means for the scores."""
    files = len({u.query.target.file for u in found})
    return (
        f"{len(found)} of {total} queries name a target in {files} file(s) that no chunk "
        "comes from; they count as misses. Check the paths (relative to the repository "
        "root) or use the query set of this repository."
    )


def unreachable_table(found: Sequence[UnreachableTarget], shown_ids: int = 3) -> Table:
    """Rows ``target file | why | queries | ids`` (the first few ids), one per file."""
    by_file: dict[tuple[str, str], list[str]] = defaultdict(list)
    for u in found:
        by_file[(u.query.target.file, u.why)].append(u.query.id)
    rows = [
        [
            file,
            why,
            str(len(ids)),
            ", ".join(ids[:shown_ids]) + (", ..." if len(ids) > shown_ids else ""),
        ]
        for (file, why), ids in by_file.items()
    ]
    return ["target file", "why", "queries", "ids"], rows
