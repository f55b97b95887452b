"""A query set made from a repository's own documented code.

Each documented function or method gives a ``doc`` query (its doc comment's summary,
its own name removed where it is written as code: ``doc_summary``) with the definition
as target, and where they single it out a ``name`` query (its name) and a ``calls``
query (what it calls, by its language's ``CallSyntax``). The set is scored on a copy of
the repository with every doc comment blanked (``blanked_repository``), so the answer
is not in the indexed text. The rules are the benchmark sets' (see ``doc_comments``);
``bench/retrieval/generated_queries.py`` measures that they agree.

What such a set measures: finding a function from a description written like its doc
comment (terse API prose), from its name, or from what it calls. What it does not:
questions users type, questions about architecture or several files, and what a
chunker does with doc comments (they are blanked).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import tree_sitter

from nexus.chunking.extract import extract_units
from nexus.chunking.grammar import parse
from nexus.chunking.languages import LANGUAGES
from nexus.chunking.profiles import FUNCTION_KINDS, MEMBER_KINDS
from nexus.evaluation.doc_comments import blank, find_docs, supported
from nexus.evaluation.doc_summary import marked_summary, plain, remove_name, words
from nexus.ingest.sources import Repository
from nexus.types import SourceFile, Unit

DEFAULT_CAP = 300
MIN_WORDS = 4  # a shorter summary says too little to be a query
MAX_CALLS = 8
TARGET_KINDS = FUNCTION_KINDS | MEMBER_KINDS
ACCESSORS = ("getter", "setter")
VARIANTS = ("doc", "name", "calls")


SKIPS = {  # reason -> what the count line says
    "not_function": "classes and types (targets are functions and methods)",
    "short_summary": "summary under 4 words",
    "short_after_name": "under 4 words once the name is removed",
    "one_line_accessor": "getter or setter of one statement",
    "single_line": "definition on a single line",
    "duplicate_code": "same code as another definition",
    "duplicate_query": "same query as another definition",
    "over_cap": "over the cap (sampled across folders and files)",
}


@dataclass(frozen=True)
class Candidate:
    """A function-like unit, what its doc comment says and what it calls."""

    file: str
    language: str
    unit: Unit
    doc: str | None  # the doc comment's text, None if undocumented
    calls: tuple[str, ...]
    code_key: str  # hash of its whitespace-normalized code in the blanked copy
    accessor_statements: int = 0  # body statements, for getters and setters


@dataclass
class QuerySetResult:
    """A generated set: its JSONL records, the counts behind it, a few examples."""

    records: list[dict]
    units: int = 0  # function-like units seen
    documented: int = 0  # documented units (every kind)
    targets: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason -> units
    files: int = 0

    def jsonl(self) -> str:
        return "".join(
            json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in self.records
        )

    def counts_lines(self) -> list[str]:
        """The counts, one line each, for the CLI and the page."""
        lines = [
            f"{self.files} files, {self.units} functions and methods, "
            f"{self.documented} documented units found",
            f"{self.targets} targets, {len(self.records)} queries ("
            + ", ".join(f"{n} {v}" for v, n in self.by_variant().items())
            + ")",
        ]
        lines += [f"skipped {n}: {SKIPS[reason]}" for reason, n in self.skipped.items() if n]
        return lines

    def by_variant(self) -> dict[str, int]:
        counts = Counter(r["variant"] for r in self.records)
        return {v: counts[v] for v in VARIANTS if counts[v]}

    def examples(self, n: int = 5) -> list[dict]:
        """``n`` doc queries spread over the set."""
        docs = [r for r in self.records if r["variant"] == "doc"]
        step = max(1, len(docs) // n)
        return docs[::step][:n]


def blank_file(data: bytes, language: str) -> bytes:
    """The file's bytes with every doc comment blanked (line numbers unchanged)."""
    if not supported(language):
        return data
    return blank(data, find_docs(parse(data, language), language).blanks, language)


def blanked_repository(repo: Repository) -> Repository:
    """The repository with every doc comment of its chunkable files blanked, in memory:
    what a generated set is scored on (same paths, same line numbers)."""
    contents = {
        info.path: blank_file(repo.read(info.path).data, info.language)
        if info.chunkable and info.language
        else repo.contents[info.path]
        for info in repo.files
        if info.path in repo.contents
    }
    return Repository(
        name=f"{repo.name} (doc comments blanked)",
        files=repo.files,
        notes=repo.notes,
        contents=contents,
    )


def blanks_docs(data: bytes | str) -> bool:
    """Whether a query set's records ask for doc comments blanked (``nexus queries``
    sets do: ``"blank_docs": true``). Unreadable lines are the query reader's to report."""
    for line in (data.decode("utf-8", "replace") if isinstance(data, bytes) else data).split("\n"):
        try:
            record = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("blank_docs") is True:
            return True
    return False


def file_candidates(source: SourceFile) -> tuple[list[Candidate], int]:
    """The function-like units of one file and how many units of any kind have a doc."""
    language = source.info.language
    if not supported(language):
        return [], 0
    tree = parse(source.data, language)
    found = find_docs(tree, language)
    docs = {(d.owner_start, d.owner_end): d for d in found.docs}
    stripped = blank(source.data, found.blanks, language).split(b"\n")
    out, documented = [], 0
    for unit in extract_units(tree, language):
        doc = docs.get((unit.start_byte, unit.end_byte))
        if doc is None and LANGUAGES[language].signature_kinds:
            first = _first_overload(_node(tree, unit), unit.name, language)
            doc = docs.get((first.start_byte, first.end_byte)) if first is not None else None
        documented += doc is not None
        if unit.kind not in TARGET_KINDS:
            if doc is not None:  # counted among the skipped: not a function
                text = source.data[doc.start : doc.end].decode("utf-8", "replace")
                out.append(Candidate(source.info.path, language, unit, text, (), ""))
            continue
        node = _node(tree, unit)
        code = b" ".join(stripped[unit.start_line - 1 : unit.end_line])
        out.append(
            Candidate(
                file=source.info.path,
                language=language,
                unit=unit,
                doc=source.data[doc.start : doc.end].decode("utf-8", "replace") if doc else None,
                calls=tuple(called(node, language, {unit.name, "constructor"})),
                code_key=hashlib.sha1(b" ".join(code.split())).hexdigest(),
                accessor_statements=_statements(node) if unit.kind in ACCESSORS else 0,
            )
        )
    return out, documented


def _node(tree: tree_sitter.Tree, unit: Unit) -> tree_sitter.Node:
    """The outermost node whose span is the unit's."""
    node = tree.root_node.descendant_for_byte_range(unit.start_byte, unit.end_byte)
    if node is None:
        return tree.root_node
    while node.parent is not None and (node.parent.start_byte, node.parent.end_byte) == (
        unit.start_byte,
        unit.end_byte,
    ):
        node = node.parent
    return node


def _first_overload(node: tree_sitter.Node, name: str, language: str) -> tree_sitter.Node | None:
    """The first of the TS overload signatures right before ``node`` (their doc comment
    documents the implementation), or None."""
    spec, first = LANGUAGES[language], None
    previous = node.prev_named_sibling
    while previous is not None:
        inner = previous
        if previous.type == "export_statement":
            inner = previous.child_by_field_name("declaration") or previous
        if inner.type in spec.signature_kinds and inner.child_by_field_name("name") is not None:
            if inner.child_by_field_name("name").text.decode() != name:
                break
            first = previous
        elif previous.type not in spec.rider_kinds:
            break
        previous = previous.prev_named_sibling
    return first


def _statements(node: tree_sitter.Node) -> int:
    body = next((n for n in _walk(node) if n.child_by_field_name("body")), node)
    body = body.child_by_field_name("body") or body
    return sum(1 for c in body.named_children if "comment" not in c.type)


def _walk(node: tree_sitter.Node):
    stack = [node]
    while stack:  # iterative: deep code must not hit the recursion limit
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def called(node: tree_sitter.Node, language: str, own: set[str]) -> list[str]:
    """Identifiers called under ``node``, first call first, built-ins and ``own`` left
    out, at most ``MAX_CALLS``: ``f()`` -> f; ``x.m()`` -> x m (``x`` a plain name)."""
    spec = LANGUAGES[language]
    syntax, stoplist = spec.calls, spec.call_stoplist
    kinds, members, receiver, name = syntax.kinds, syntax.members, syntax.receiver, syntax.name
    found: list[str] = []

    def add(text: str) -> None:
        fresh = text not in own and text not in stoplist and text not in found
        if fresh and len(text) > 1 and re.fullmatch(r"#?[A-Za-z_$][\w$]*", text):
            found.append(text)

    for current in _walk(node):
        callee_field = kinds.get(current.type)
        callee = current.child_by_field_name(callee_field) if callee_field else None
        if callee is None:
            continue
        if current.type == "method_invocation":  # Java: object.name(...)
            target = current.child_by_field_name("object")
            if target is not None and target.type == "identifier":
                add(target.text.decode())
        if callee.type in ("identifier", "type_identifier"):
            add(callee.text.decode())
        elif callee.type in members:
            operand = callee.child_by_field_name(receiver) or callee.child_by_field_name("path")
            if operand is not None and operand.type == "identifier":
                add(operand.text.decode())
            member = callee.child_by_field_name(name) or callee.child_by_field_name("name")
            if member is not None:
                add(member.text.decode())
        if len(found) >= MAX_CALLS:
            break
    return found[:MAX_CALLS]


def collect(sources: Iterable[SourceFile]) -> tuple[list[Candidate], int, int]:
    """Every file's candidates, the documented units of any kind, and the files read."""
    candidates: list[Candidate] = []
    documented = files = 0
    for source in sources:
        found, docs = file_candidates(source)
        candidates += found
        documented += docs
        files += 1
    return candidates, documented, files


def _norm(query: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", query.lower()))


def select(candidates: list[Candidate]) -> tuple[list[tuple[Candidate, str, str]], Counter]:
    """The documented candidates that make targets, with (summary, query), and the
    reasons the others were skipped (the benchmark's filters, in its order)."""
    skipped: Counter = Counter({reason: 0 for reason in SKIPS})
    code_count = Counter(c.code_key for c in candidates if c.code_key)
    kept = []
    for c in candidates:
        if c.doc is None:
            continue
        if c.unit.kind not in TARGET_KINDS:
            skipped["not_function"] += 1
            continue
        marked = marked_summary(c.doc, c.language)
        text, query = plain(marked), remove_name(marked, [c.unit.name, c.unit.qualname])
        reason = (
            "short_summary" if words(text) < MIN_WORDS
            else "short_after_name" if words(query) < MIN_WORDS
            else "one_line_accessor" if c.unit.kind in ACCESSORS and c.accessor_statements <= 1
            else "single_line" if c.unit.end_line <= c.unit.start_line
            else "duplicate_code" if code_count[c.code_key] > 1
            else None
        )  # fmt: skip
        if reason:
            skipped[reason] += 1
        else:
            kept.append((c, text, query))
    query_count = Counter(_norm(q) for _, _, q in kept)
    skipped["duplicate_query"] = sum(1 for _, _, q in kept if query_count[_norm(q)] > 1)
    return [k for k in kept if query_count[_norm(k[2])] == 1], skipped


def sample(items: list[tuple[Candidate, str, str]], cap: int, seed: str = "") -> list:
    """At most ``cap`` items spread across folders, then files: folders take turns (in
    a hash order), each giving its files in turn, each file its units in hash order.
    Deterministic: the same repository and seed give the same set."""

    def key(text: str) -> str:
        return hashlib.sha1(f"{seed}:{text}".encode()).hexdigest()

    by_file: dict[str, list] = defaultdict(list)
    for item in items:
        c = item[0]
        by_file[c.file].append(item)
    by_folder: dict[str, list[list]] = defaultdict(list)
    for path in sorted(by_file, key=key):
        units = sorted(
            by_file[path],
            key=lambda i: key(f"{i[0].file}:{i[0].unit.start_line}:{i[0].unit.qualname}"),
        )
        by_folder[str(PurePosixPath(path).parent)].append(units)
    queues = [
        _round_robin(files) for _, files in sorted(by_folder.items(), key=lambda kv: key(kv[0]))
    ]
    picked = _round_robin(queues)[:cap]
    return sorted(picked, key=lambda i: (i[0].file, i[0].unit.start_line, i[0].unit.qualname))


def _round_robin(lists: list[list]) -> list:
    out = []
    for turn in range(max((len(x) for x in lists), default=0)):
        out += [x[turn] for x in lists if turn < len(x)]
    return out


def generate(
    repo: Repository, cap: int = DEFAULT_CAP, seed: str = "", prefix: str = "q"
) -> QuerySetResult:
    """The query set of ``repo``: doc, name and calls queries over its documented
    functions and methods, at most ``cap`` targets."""
    if cap < 1:
        raise ValueError(f"cap must be at least 1, got {cap}")
    candidates, documented, files = collect(repo.source_files())
    kept, skipped = select(candidates)
    chosen = sample(kept, cap, seed)
    skipped["over_cap"] = len(kept) - len(chosen)
    functions = [c for c in candidates if c.code_key]
    names = Counter(n for c in functions for n in {c.unit.name, c.unit.qualname})
    calls = Counter(" ".join(c.calls) for c in functions if len(c.calls) >= 2)
    records = []
    for number, (c, text, query) in enumerate(chosen, 1):
        tid = f"{prefix}-{number:04d}"
        unit = c.unit
        target = {
            "file": c.file,
            "start_line": unit.start_line,
            "end_line": unit.end_line,
            "name": unit.name,
            "qualname": unit.qualname,
            "kind": unit.kind,
            "lang": c.language,
        }
        variants = {"doc": query}
        name = unit.name if unit.name != "constructor" and names[unit.name] == 1 else unit.qualname
        if names[name] == 1 and name != "constructor":
            variants["name"] = name
        if len(c.calls) >= 2 and calls[" ".join(c.calls)] == 1:
            variants["calls"] = " ".join(c.calls)
        for variant, text_ in variants.items():
            record = {
                "id": f"{tid}-{variant}",
                "target_id": tid,
                "variant": variant,
                "query": text_,
                "target": target,
                "blank_docs": True,
            }
            if variant == "doc":
                record["doc_summary"] = text
            records.append(record)
    return QuerySetResult(
        records=records,
        units=len(functions),
        documented=documented,
        targets=len(chosen),
        skipped=skipped,
        files=files,
    )
