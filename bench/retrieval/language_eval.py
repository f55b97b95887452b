"""Retrieval benchmarks on real code outside JS/TS: query sets built by the rules of
``../shared/eval`` from documented packages of a language, Nexus AST against the two
reference baselines. One machinery, one ``QuerySet`` of data and readers per set:

  * python: the sdists of toolz, more-itertools and sortedcontainers from PyPI
    (``pip download --no-binary :all:``), docstrings as the doc comments: the held-out
    set, reported and never tuned on;
  * python-tuning: the sdists of boltons, pydash and click, the same way: Python's own
    chunking choices (``LanguageSpec`` data such as ``groups_small_units``) are made
    here; ``--set python`` runs it first and reports it beside the held-out set;
  * go: go-cmp, cobra and pkg/errors as Debian ships them (``apt-get download`` of the
    pinned ``golang-*-dev`` packages, sha256 checked, ``dpkg-deb -x``), the ``//``
    comment block right above a declaration as its doc comment (Go's rule).

The set is built at bench time into ``$PY_WORK`` / ``$PY_TUNING_WORK`` / ``$GO_WORK``
(default ``/tmp/nexus-pyeval``, ``/tmp/nexus-pytuning``, ``/tmp/nexus-goeval``; nothing
of it is committed):
  * sources: the packages' library files (tests, examples and fixtures left out);
  * corpus: every doc comment blanked (a docstring becomes ``""``, a Go doc comment
    nothing) keeping its newlines, so line numbers do not change (all doc comments,
    not only the targets');
  * targets: documented functions, methods and constructors (Nexus's units: the span
    holds the decorators, never a comment above); filters as shared/eval: summary
    under 4 words, under 4 words once the name is removed, single-line definitions,
    duplicate code or duplicate queries; at most ``MAX_TARGETS`` per package by sha1;
  * queries: ``doc`` (the doc comment's first sentence, the function's name removed),
    ``name`` (bare if unique in the set, else qualified if unique), ``calls`` (called
    identifiers minus built-ins, at least 2, at most 8, unique).
Runs, with all-MiniLM-L6-v2 and exact top 10 (overlap >= 50% rule):
  * fixed 50-line windows, plain text (reference);
  * one chunk per outermost function or method, plus the lines between them as chunks
    (reference; shared/eval embeds the rest of a file as one chunk of ranges, which
    Nexus's scorer has no form for, so each run of other lines is a chunk here);
  * Nexus AST at the defaults, as plain text without keywords, and at two neighbours
    of the defaults (512/32, 384/64); for a language whose small units stand alone,
    also with them grouped as in JS/TS (the ablation of that choice).

    .venv/bin/python bench/retrieval/language_eval.py --set python   # or go; --language is the same

Results: ``bench/results/<set>_retrieval.{json,md}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from nexus.chunking.analysis import analyze  # noqa: E402
from nexus.chunking.grammar import parse  # noqa: E402
from nexus.chunking.languages import LANGUAGES  # noqa: E402
from nexus.chunking.pipeline import analyze_files  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.evaluation.doc_summary import line_doc_summary  # noqa: E402
from nexus.evaluation.experiments import evaluate_config  # noqa: E402
from nexus.evaluation.query_sets import load_queries  # noqa: E402
from nexus.evaluation.runs import evaluate  # noqa: E402
from nexus.ingest.sources import open_repository  # noqa: E402
from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache, default_embedder  # noqa: E402
from nexus.retrieval.index import VectorIndex  # noqa: E402
from nexus.types import Chunk  # noqa: E402

RESULTS = ROOT / "bench" / "results"
MAX_TARGETS = 100
FUNCTION_KINDS = {"function", "method", "constructor"}


@dataclass(frozen=True)
class Package:
    """One package of a set: where it comes from and which of its files are the corpus."""

    name: str
    version: str
    folder: str  # the package's root inside the unpacked download
    include: tuple[str, ...]  # globs relative to that root
    exclude: tuple[str, ...] = ()
    sha256: str = ""  # of the downloaded archive, where the registry gives no check
    download: str = ""  # the registry's name for it, when not ``name``
    inner: str = ""  # a tarball inside the download holding the sources, unpacked in place

    def files(self, root: Path, suffix: str) -> list[str]:
        """The corpus files under ``root`` (the unpacked package), relative, sorted."""
        return [
            rel
            for rel in (
                path.relative_to(root).as_posix() for path in sorted(root.rglob(f"*{suffix}"))
            )
            if any(fnmatchcase(rel, glob) for glob in self.include)
            and not any(fnmatchcase(rel, glob) for glob in self.exclude)
        ]


@dataclass(frozen=True)
class Doc:
    """A doc comment: the node it documents and the bytes to blank."""

    owner: object  # tree_sitter.Node
    start_byte: int
    end_byte: int


@dataclass(frozen=True)
class QuerySet:
    """What differs between sets: packages, how to fetch them, what a doc comment is and
    how it reads, how calls are written, and the built-ins left out of ``calls``."""

    name: str  # the set's name: ids, results files
    language: str  # a Nexus language name
    short: str  # the target's ``lang``
    suffix: str
    work: Path
    packages: tuple[Package, ...]
    fetch: Callable[[Path, tuple[Package, ...]], dict[str, Path]]  # (work, packages)
    docs: Callable[[object], list[Doc]]  # every doc comment of a parsed file
    blank: bytes  # what a blanked doc comment leaves before its newlines
    summary: Callable[[str], str]  # the doc's first sentence
    calls: Callable[[object], list[str]]  # called names in a function, in order
    stoplist: frozenset[str]
    function_nodes: frozenset[str]  # node kinds whose doc makes a target
    origin: str  # where the packages come from, for the results
    # The set of other packages of the same language on which choices for this language
    # are made (run first, reported beside this one, which stays held out).
    tuning: str = ""


def strip(data: bytes, docs: list[Doc], blank: bytes) -> bytes:
    """Doc comments replaced by ``blank`` and their newlines (line numbers unchanged)."""
    out, last = [], 0
    for doc in sorted(docs, key=lambda d: d.start_byte):
        newlines = data.count(b"\n", doc.start_byte, doc.end_byte)
        out += [data[last : doc.start_byte], blank + b"\n" * newlines]
        last = doc.end_byte
    return b"".join([*out, data[last:]])


def first_sentence(paragraph: str) -> str:
    """The first sentence of a paragraph, at most 40 words, backticks dropped."""
    paragraph = " ".join(paragraph.split())
    sentence = re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0]
    return " ".join(sentence.split()[:40]).replace("``", "").replace("`", "")


def remove_name(text: str, names: list[str]) -> str:
    for name in sorted(set(names), key=len, reverse=True):
        text = re.sub(rf"(?<![\w.]){re.escape(name)}(\(\))?(?![\w])", "", text)
    return " ".join(text.split())


def walk(node):
    """Every node under ``node``, in source order, without recursion."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


# --- Python ---------------------------------------------------------------------------

PY_CALL_STOPLIST = frozenset(
    [
        "len",
        "str",
        "int",
        "float",
        "bool",
        "list",
        "dict",
        "set",
        "tuple",
        "range",
        "enumerate",
        "zip",
        "map",
        "filter",
        "sorted",
        "reversed",
        "isinstance",
        "issubclass",
        "hasattr",
        "getattr",
        "setattr",
        "iter",
        "next",
        "super",
        "print",
        "repr",
        "type",
        "min",
        "max",
        "sum",
        "any",
        "all",
        "abs",
        "append",
        "extend",
        "pop",
        "get",
        "items",
        "keys",
        "values",
        "format",
        "join",
        "split",
        "strip",
        "self",
        "cls",
        "object",
    ]
)


def pip_sdists(work: Path, packages: tuple[Package, ...]) -> dict[str, Path]:
    """Each package's unpacked sdist, downloaded once into ``work/sdists``."""
    sdists, roots = work / "sdists", {}
    sdists.mkdir(parents=True, exist_ok=True)
    for package in packages:
        target = work / "src" / package.folder
        if not target.is_dir():
            found = list(sdists.glob(f"{package.folder}.tar.gz"))
            if not found:
                subprocess.run(
                    [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary"]
                    + [":all:", "-d", str(sdists), f"{package.name}=={package.version}"],
                    check=True,
                )
                found = list(sdists.glob(f"{package.folder}.tar.gz"))
            with tarfile.open(found[0]) as archive:
                archive.extractall(work / "src", filter="data")
        roots[package.name] = target
    return roots


def python_docs(tree) -> list[Doc]:
    """Each docstring: the first statement of a module, class or def, if a string."""
    found = []
    for node in walk(tree.root_node):
        body = node if node.type == "module" else node.child_by_field_name("body")
        if node.type not in ("module", "function_definition", "class_definition") or not body:
            continue
        first = body.named_children[0] if body.named_children else None
        if first is not None and first.type == "expression_statement":
            value = first.named_children[0] if first.named_children else None
            if value is not None and value.type == "string":
                found.append(Doc(node, value.start_byte, value.end_byte))
    return found


def python_summary(doc: str) -> str:
    """The first sentence of the docstring's first paragraph."""
    text = doc.strip().strip("\"'").strip()
    text = re.sub(r"^[rRbBuU]?(\"\"\"|''')", "", text)
    return first_sentence(
        re.split(r"\n\s*\n|\n\s*(?:>>>|Example|Args:|Parameters|:param)", text)[0]
    )


def call_names(call: str, member: str, receiver: str, name: str) -> Callable[..., list[str]]:
    """A function listing the callees under a node: ``f()`` -> f; ``x.m()`` -> x m (the
    receiver when it is a plain name). The arguments are the grammar's node types
    (a call, a member access) and the member access's fields (receiver, name)."""

    def calls(node) -> list[str]:
        found: list[str] = []
        for current in walk(node):
            if current.type != call:
                continue
            function = current.child_by_field_name("function")
            if function is not None and function.type == "identifier":
                found.append(function.text.decode())
            elif function is not None and function.type == member:
                operand = function.child_by_field_name(receiver)
                if operand is not None and operand.type == "identifier":
                    found.append(operand.text.decode())
                found.append(function.child_by_field_name(name).text.decode())
        return found

    return calls


python_calls = call_names("call", "attribute", "object", "attribute")


# --- Go -------------------------------------------------------------------------------


def debian_packages(work: Path, packages: tuple[Package, ...]) -> dict[str, Path]:
    """Each package as Debian ships it (``apt-get download NAME=VERSION``, its sha256
    checked, ``dpkg-deb -x``, and its ``inner`` tarball unpacked where it lies),
    downloaded once into ``work/debs``."""
    debs, roots = work / "debs", {}
    debs.mkdir(parents=True, exist_ok=True)
    for package in packages:
        unpacked = work / "src" / package.name
        if not unpacked.is_dir():
            found = list(debs.glob(f"{package.download}_*.deb"))
            if not found:
                subprocess.run(
                    ["apt-get", "download", f"{package.download}={package.version}"],
                    cwd=debs,
                    check=True,
                )
                found = list(debs.glob(f"{package.download}_*.deb"))
            digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
            if digest != package.sha256:
                raise SystemExit(f"{found[0]}: sha256 {digest}, expected {package.sha256}")
            unpacked.mkdir(parents=True)
            subprocess.run(["dpkg-deb", "-x", str(found[0]), str(unpacked)], check=True)
            if package.inner:
                with tarfile.open(unpacked / package.inner) as archive:
                    archive.extractall((unpacked / package.inner).parent, filter="data")
        roots[package.name] = unpacked / package.folder
    return roots


#: Where Go doc comments may stand: above top-level declarations, struct fields and
#: interface methods.
GO_DOC_PARENTS = frozenset({"source_file", "field_declaration_list", "interface_type"})


def go_docs(tree) -> list[Doc]:
    """Each doc comment: a run of comments on consecutive lines, on lines of their own,
    ending on the line right above a declaration (Go's rule, as ``go doc`` reads it)."""
    found = []
    for node in walk(tree.root_node):
        if node.type not in GO_DOC_PARENTS:
            continue
        run: list = []
        previous_row = -1
        for child in node.children:
            if child.type == "comment":
                own_line = child.start_point.row > previous_row
                follows = run and child.start_point.row == run[-1].end_point.row + 1
                run = [*run, child] if follows else ([child] if own_line else [])
            else:
                if run and child.is_named and child.start_point.row == run[-1].end_point.row + 1:
                    found.append(Doc(child, run[0].start_byte, run[-1].end_byte))
                run = []
            previous_row = child.end_point.row
    return found


#: The first sentence of the doc comment's first paragraph (``//`` and ``/* */`` markers,
#: indented code blocks and doc links' brackets dropped): the product's rule, one copy.
go_summary = line_doc_summary


go_calls = call_names("call_expression", "selector_expression", "operand", "field")


#: Go's built-in functions and conversions.
GO_CALL_STOPLIST = frozenset(
    [
        "append",
        "cap",
        "clear",
        "close",
        "complex",
        "copy",
        "delete",
        "imag",
        "len",
        "make",
        "max",
        "min",
        "new",
        "panic",
        "print",
        "println",
        "real",
        "recover",
        "bool",
        "byte",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "any",
    ]
)

GO_SRC = "usr/share/gocode/src/github.com"


def python_set(name: str, work: str, packages: tuple[Package, ...], tuning: str = "") -> QuerySet:
    """A Python set: sdists from PyPI, docstrings as the doc comments."""
    return QuerySet(
        name=name,
        language="python",
        short="py",
        suffix=".py",
        work=Path(work),
        packages=packages,
        fetch=pip_sdists,
        docs=python_docs,
        blank=b'""',
        summary=python_summary,
        calls=python_calls,
        stoplist=PY_CALL_STOPLIST,
        function_nodes=frozenset({"function_definition"}),
        origin="sdists, docstrings blanked",
        tuning=tuning,
    )


SETS = {
    "python": python_set(
        "python",
        os.environ.get("PY_WORK", "/tmp/nexus-pyeval"),
        (
            Package(
                "toolz",
                "1.2.0",
                "toolz-1.2.0",
                ("toolz/*.py",),
                ("toolz/_version.py", "toolz/compat*"),
            ),
            Package("more-itertools", "11.2.1", "more_itertools-11.2.1", ("more_itertools/*.py",)),
            Package(
                "sortedcontainers", "2.4.0", "sortedcontainers-2.4.0", ("sortedcontainers/*.py",)
            ),
        ),
        tuning="python-tuning",
    ),
    # Python chunking choices are made here, never on "python" (held out): three other
    # well-documented packages of the same mix (functional helpers, classes).
    "python-tuning": python_set(
        "python-tuning",
        os.environ.get("PY_TUNING_WORK", "/tmp/nexus-pytuning"),
        (
            Package("boltons", "26.2.0", "boltons-26.2.0", ("boltons/*.py",)),
            Package("pydash", "8.1.0", "pydash-8.1.0", ("src/pydash/*.py",)),
            Package("click", "8.5.1", "click-8.5.1", ("src/click/*.py",)),
        ),
    ),
    "go": QuerySet(
        name="go",
        language="go",
        short="go",
        suffix=".go",
        work=Path(os.environ.get("GO_WORK", "/tmp/nexus-goeval")),
        packages=(
            Package(
                "go-cmp",
                "0.5.9-1",
                f"{GO_SRC}/google/go-cmp",
                ("cmp/*.go", "cmp/**/*.go"),
                ("*_test.go", "cmp/internal/teststructs/*", "cmp/internal/testprotos/*"),
                "b68bd919daa7c1bdf02abfb68894e29e532f19b03b68c8615f50626c48f553b6",
                "golang-github-google-go-cmp-dev",
            ),
            Package(
                "cobra",
                "1.6.1-1",
                f"{GO_SRC}/spf13/cobra",
                ("*.go",),
                ("*_test.go", "doc/*"),  # Nexus counts a folder doc/ as documentation
                "4f5d20855133319beef3c5b49d3c21a0406f270bf94fb4b6f4d406b691283cb2",
                "golang-github-spf13-cobra-dev",
            ),
            Package(
                "pkg-errors",
                "0.9.1-2",
                f"{GO_SRC}/pkg/errors",
                ("*.go",),
                ("*_test.go",),
                "87227544904795f81d8c660b7854045a1ef78d5c690993bb4a0c43e05104ca64",
                "golang-github-pkg-errors-dev",
            ),
        ),
        fetch=debian_packages,
        docs=go_docs,
        blank=b"",
        summary=go_summary,
        calls=go_calls,
        stoplist=GO_CALL_STOPLIST,
        function_nodes=frozenset({"function_declaration", "method_declaration"}),
        origin="Debian golang-*-dev packages, doc comments blanked",
    ),
}


def called(qs: QuerySet, node, own: str) -> list[str]:
    """The ``calls`` words: first calls first, deduplicated, no built-ins, at most 8."""
    found: list[str] = []
    for name in qs.calls(node):
        if len(name) > 1 and name != own and name not in qs.stoplist and name not in found:
            found.append(name)
    return found[:8]


def build(qs: QuerySet) -> tuple[Path, Path]:
    """The stripped corpus and the queries (rebuilt each run: a few seconds)."""
    corpus, queries_path = qs.work / "corpus" / qs.name, qs.work / "queries.jsonl"
    candidates = []
    for package, root in zip(qs.packages, qs.fetch(qs.work, qs.packages).values(), strict=True):
        name, version = package.name, package.version
        for rel in package.files(root, qs.suffix):
            data = (root / rel).read_bytes()
            tree = parse(data, qs.language)
            all_docs = qs.docs(tree)
            stripped = strip(data, all_docs, qs.blank)
            out = corpus / name / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(stripped)
            stripped_lines = stripped.decode("utf-8", "replace").split("\n")
            docs = {d.owner.end_byte: d for d in all_docs if d.owner.type in qs.function_nodes}
            source = open_repository(root).read(rel)
            for unit in analyze(source, ChunkConfig().encoding).units:
                doc = docs.get(unit.end_byte)
                if unit.kind not in FUNCTION_KINDS or doc is None:
                    continue
                first = qs.summary(data[doc.start_byte : doc.end_byte].decode("utf-8", "replace"))
                query = remove_name(first, [unit.name, unit.qualname])
                code = stripped_lines[unit.start_line - 1 : unit.end_line]
                candidates.append(
                    {
                        "package": name,
                        "version": version,
                        "path": rel,
                        "file": f"{name}/{rel}",
                        "start_line": unit.start_line,
                        "end_line": unit.end_line,
                        "n_lines": unit.n_lines,
                        "name": unit.name,
                        "qualname": unit.qualname,
                        "kind": unit.kind,
                        "lang": qs.short,
                        "nested": bool(unit.parent and "." in unit.parent),
                        "_summary": first,
                        "_query": query,
                        "_code": " ".join(" ".join(code).split()),
                        "_calls": called(qs, doc.owner, unit.name),
                    }
                )
    code_counts: dict[str, int] = {}
    query_counts: dict[str, int] = {}
    for c in candidates:
        code_counts[c["_code"]] = code_counts.get(c["_code"], 0) + 1
        query_counts[c["_query"].lower()] = query_counts.get(c["_query"].lower(), 0) + 1
    kept = [
        c
        for c in candidates
        if len(c["_summary"].split()) >= 4
        and len(c["_query"].split()) >= 4
        and c["n_lines"] > 1
        and code_counts[c["_code"]] == 1
        and query_counts[c["_query"].lower()] == 1
    ]
    selected = []
    for package in qs.packages:
        mine = [c for c in kept if c["package"] == package.name]
        mine.sort(
            key=lambda c: hashlib.sha1(
                f"{c['file']}:{c['start_line']}:{c['qualname']}".encode()
            ).hexdigest()
        )
        selected += sorted(mine[:MAX_TARGETS], key=lambda c: (c["file"], c["start_line"]))
    names: dict[str, int] = {}  # definitions per bare and per qualified name
    for c in candidates:
        for key in {c["name"], c["qualname"]}:
            names[key] = names.get(key, 0) + 1
    call_counts: dict[str, int] = {}
    for c in candidates:
        call_counts[" ".join(c["_calls"])] = call_counts.get(" ".join(c["_calls"]), 0) + 1
    rows = []
    for number, c in enumerate(selected, 1):
        target = {k: v for k, v in c.items() if not k.startswith("_")}
        tid = f"{qs.name}-{number:04d}"
        variants = [("doc", c["_query"])]
        name = c["name"] if names[c["name"]] == 1 else c["qualname"]
        if names[name] == 1:
            variants.append(("name", name))
        joined = " ".join(c["_calls"])
        if len(c["_calls"]) >= 2 and call_counts[joined] == 1:
            variants.append(("calls", joined))
        for variant, text in variants:
            record = {"id": f"{tid}-{variant}", "target_id": tid, "set": qs.name}
            record.update({"variant": variant, "query": text, "target": target})
            rows.append(record)
    queries_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(candidates)} documented units, {len(selected)} targets, {len(rows)} queries")
    return corpus, queries_path


def per_function_chunks(analyses, repo: str, language: str) -> list[Chunk]:
    """Reference baseline: each outermost function or method a chunk, and each run of
    the other non-blank lines a chunk."""
    chunks = []
    for analysis in analyses:
        lines = analysis.source.text.split("\n")
        outer = [
            u
            for u in analysis.units
            if u.kind in FUNCTION_KINDS
            and not any(
                o.kind in FUNCTION_KINDS
                and o.start_byte <= u.start_byte
                and u.end_byte <= o.end_byte
                and o is not u
                for o in analysis.units
            )
        ]
        taken = [False] * (len(lines) + 2)
        ranges = []
        for unit in outer:
            ranges.append((unit.start_line, unit.end_line))
            for line in range(unit.start_line, unit.end_line + 1):
                taken[line] = True
        start = None
        for line in range(1, len(lines) + 2):
            free = line <= len(lines) and not taken[line]
            if free and start is None:
                start = line
            if not free and start is not None:
                if any(lines[i - 1].strip() for i in range(start, line)):
                    ranges.append((start, line - 1))
                start = None
        for first, last in sorted(ranges):
            text = "\n".join(lines[first - 1 : last])
            path = analysis.source.info.path
            chunks.append(
                Chunk(
                    id=f"{path}:{first}",
                    repo=repo,
                    file=path,
                    language=language,
                    strategy="function",
                    start_line=first,
                    end_line=last,
                    start_byte=0,
                    end_byte=0,
                    token_count=0,
                    text=text,
                )
            )
    return chunks


def run_set(qs: QuerySet) -> dict:
    """Build one set and run every chunking on it: its summary for the results."""
    corpus, queries_path = build(qs)
    queries = load_queries(queries_path)
    repo = open_repository(corpus, name=qs.name)
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    cache = EmbeddingCache()
    plain_embedder = CachedEmbedder(default_embedder(words_view=False), cache)
    nexus_embedder = CachedEmbedder(default_embedder(), cache)
    default = ChunkConfig()
    plain = default.with_(context_header=False, words_view=False, lexical_weight=0.0)
    spec = LANGUAGES[qs.language]
    # (config, the language's spec for the run): ablations of the spec's choices too.
    settings = {
        "fixed 50-line windows (reference)": (plain.with_(strategy="lines"), spec),
        "Nexus AST, plain text, no keywords": (plain, spec),
        "Nexus AST, embeddings alone (lexical_weight = 0)": (
            default.with_(lexical_weight=0.0),
            spec,
        ),
        "Nexus AST, defaults": (default, spec),
        # Not tuned on this set: two neighbours of the defaults in the JS grid.
        "Nexus AST, 512/32": (default.with_(min_tokens=32), spec),
        "Nexus AST, 384/64": (default.with_(max_tokens=384), spec),
    }
    if not spec.groups_small_units:
        settings["Nexus AST, defaults, small units grouped (the JS rule)"] = (
            default,
            replace(spec, groups_small_units=True),
        )
    runs = {}
    for label, (config, run_spec) in settings.items():
        embedder = nexus_embedder if config.words_view else plain_embedder
        LANGUAGES[qs.language] = run_spec  # the chunker reads the table on each call
        try:
            result = evaluate_config(analyses, repo.name, config, queries, embedder)
        finally:
            LANGUAGES[qs.language] = spec
        runs[label] = (result.chunks, result.report)
        print(f"{qs.name}: {label:50} MRR@10 {result.metric('MRR@10'):.3f}", flush=True)
    chunks = per_function_chunks(analyses, repo.name, qs.language)
    index = VectorIndex.from_chunks(chunks, plain_embedder)
    label = "one chunk per function (reference)"
    runs[label] = (len(chunks), evaluate(queries, index, plain_embedder, label=label))
    order = [label, *[k for k in runs if k != label]]
    order.insert(0, order.pop(order.index("fixed 50-line windows (reference)")))

    def metric(report, variant: str, name: str) -> float:
        group = variant if variant in report.metrics else "all"
        return round(report.metric(group, name), 3)

    table = [
        {
            "run": run,
            "chunks": runs[run][0],
            **{
                f"{v}:{m}": metric(runs[run][1], v, m)
                for v in ("doc", "name", "calls")
                for m in ("R@1", "R@5", "MRR@10", "lines@5")
            },
            # Doc MRR@10 and lines@5 per package: does an effect hold in each?
            "doc_by_package": {
                p.name: [metric(runs[run][1], f"doc|{p.name}", m) for m in ("MRR@10", "lines@5")]
                for p in qs.packages
            },
        }
        for run in order
    ]
    per_function_lines = table[1]["doc:lines@5"]
    best_reference = max(table[0]["doc:MRR@10"], table[1]["doc:MRR@10"])
    nexus = next(r for r in table if r["run"] == "Nexus AST, defaults")
    return {
        "set": qs.name,
        "date": date.today().isoformat(),
        "load": "load average {:.1f} {:.1f} {:.1f}, machine shared with other jobs".format(
            *os.getloadavg()
        ),
        "machine": machine(),
        "packages": [f"{p.name}=={p.version}" for p in qs.packages],
        "origin": qs.origin,
        "queries": {v: sum(1 for q in queries if q.variant == v) for v in ("doc", "name", "calls")},
        "model": nexus_embedder.name,
        "runs": table,
        "targets": {
            "MRR@10 above both baselines": nexus["doc:MRR@10"] > best_reference,
            "lines@5 <= 1.4 x per-function": nexus["doc:lines@5"] <= 1.4 * per_function_lines,
        },
    }


def render(summary: dict) -> list[str]:
    """One set's paragraph, table, targets and per-package figures, as Markdown lines."""
    packages = summary["runs"][0]["doc_by_package"]
    return [
        f"{summary['date']}; {summary['load']}; model {summary['model']}; packages "
        f"{', '.join(summary['packages'])} ({summary['origin']}); queries "
        f"{summary['queries']}.",
        "",
        "| run | chunks | doc R@1 | doc R@5 | doc MRR@10 | doc lines@5 | name MRR | calls MRR |",
        "|---|---|---|---|---|---|---|---|",
        *(
            f"| {r['run']} | {r['chunks']} | {r['doc:R@1']:.3f} | {r['doc:R@5']:.3f} | "
            f"**{r['doc:MRR@10']:.3f}** | {r['doc:lines@5']:.1f} | {r['name:MRR@10']:.3f} | "
            f"{r['calls:MRR@10']:.3f} |"
            for r in summary["runs"]
        ),
        "",
        *(f"- {name}: {'PASS' if ok else 'FAIL'}" for name, ok in summary["targets"].items()),
        "",
        "Doc MRR@10 / lines@5 per package:",
        "",
        f"| run | {' | '.join(packages)} |",
        f"|---|{'---|' * len(packages)}",
        *(
            f"| {r['run']} | "
            + " | ".join(f"{mrr:.3f} / {lines:.1f}" for mrr, lines in r["doc_by_package"].values())
            + " |"
            for r in summary["runs"]
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", "--language", dest="set", choices=sorted(SETS), default="python")
    qs = SETS[parser.parse_args().set]
    lines = [
        f"# {qs.name.capitalize()} retrieval (bench/retrieval/language_eval.py --set {qs.name})",
        "",
    ]
    summaries = []
    if qs.tuning:
        tuning = run_set(SETS[qs.tuning])
        summaries.append(tuning)
        lines += [
            f"## Tuning set ({qs.tuning}): choices for {qs.language} are made here",
            "",
            *render(tuning),
            "",
            f"## Held-out set ({qs.name}): reported, never tuned on",
            "",
        ]
    summary = run_set(qs)
    summaries.append(summary)
    lines += render(summary)
    RESULTS.mkdir(parents=True, exist_ok=True)
    document = {**summary, "tuning": summaries[0] if qs.tuning else None}
    (RESULTS / f"{qs.name}_retrieval.json").write_text(json.dumps(document, indent=2) + "\n")
    (RESULTS / f"{qs.name}_retrieval.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
