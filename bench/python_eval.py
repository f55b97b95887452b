"""Python retrieval benchmark: a query set built by the rules of ``../shared/eval`` from
three documented PyPI packages, Nexus AST against the two reference baselines.

The set (built at bench time into ``$PY_WORK``, default ``/tmp/nexus-pyeval``; nothing
of it is committed):
  * sources: the packages' sdists (``pip download --no-binary :all:``, pinned below),
    their library modules (tests, docs and version files left out);
  * corpus: every docstring replaced by ``""`` and as many newlines as it held, so
    line numbers do not change (all docstrings, not only the targets');
  * targets: documented functions, methods and constructors (Nexus's units: the span
    holds the decorators, never a comment above); filters as shared/eval: summary
    under 4 words, under 4 words once the name is removed, single-line definitions,
    duplicate code or duplicate queries; at most ``MAX_TARGETS`` per package by sha1;
  * queries: ``doc`` (the docstring's first sentence, the function's name removed),
    ``name`` (bare if unique in the set, else qualified if unique), ``calls`` (called
    identifiers minus built-ins, at least 2, at most 8, unique).
Runs, with all-MiniLM-L6-v2 and exact top 10 (overlap >= 50% rule):
  * fixed 50-line windows, plain text (reference);
  * one chunk per outermost function or method, plus the lines between them as chunks
    (reference; shared/eval embeds the rest of a file as one chunk of ranges, which
    Nexus's scorer has no form for, so each run of other lines is a chunk here);
  * Nexus AST at the defaults, as plain text without keywords, and at two neighbours
    of the defaults (512/32, 384/64).

    .venv/bin/python bench/python_eval.py

Results: ``bench/results/python_retrieval.{json,md}``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
from datetime import date
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from nexus.chunking.analysis import analyze  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.embedding import CachedEmbedder, EmbeddingCache, default_embedder  # noqa: E402
from nexus.evaluation import evaluate, load_queries  # noqa: E402
from nexus.experiments import evaluate_config  # noqa: E402
from nexus.index import VectorIndex  # noqa: E402
from nexus.languages import parse  # noqa: E402
from nexus.pipeline import analyze_files  # noqa: E402
from nexus.sources import open_repository  # noqa: E402
from nexus.types import Chunk  # noqa: E402

WORK = Path(os.environ.get("PY_WORK", "/tmp/nexus-pyeval"))
RESULTS = ROOT / "bench" / "results"
MAX_TARGETS = 100
PACKAGES = [  # (name, version, sdist folder prefix, include globs, exclude globs)
    ("toolz", "1.2.0", "toolz-1.2.0", ["toolz/*.py"], ["toolz/_version.py", "toolz/compat*"]),
    ("more-itertools", "11.2.1", "more_itertools-11.2.1", ["more_itertools/*.py"], []),
    ("sortedcontainers", "2.4.0", "sortedcontainers-2.4.0", ["sortedcontainers/*.py"], []),
]
FUNCTION_KINDS = {"function", "method", "constructor"}
CALL_STOPLIST = set(
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


def fetch() -> dict[str, Path]:
    """Each package's unpacked sdist, downloaded once into ``WORK/sdists``."""
    sdists, roots = WORK / "sdists", {}
    sdists.mkdir(parents=True, exist_ok=True)
    for name, version, prefix, _, _ in PACKAGES:
        target = WORK / "src" / prefix
        if not target.is_dir():
            found = list(sdists.glob(f"{prefix}.tar.gz"))
            if not found:
                subprocess.run(
                    [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary"]
                    + [":all:", "-d", str(sdists), f"{name}=={version}"],
                    check=True,
                )
                found = list(sdists.glob(f"{prefix}.tar.gz"))
            with tarfile.open(found[0]) as archive:
                archive.extractall(WORK / "src", filter="data")
        roots[name] = target
    return roots


def docstrings(tree) -> list:
    """(owner, string node) of each docstring: the first statement of a module, class or
    def."""
    found, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        body = node if node.type == "module" else node.child_by_field_name("body")
        if node.type not in ("module", "function_definition", "class_definition") or not body:
            continue
        first = body.named_children[0] if body.named_children else None
        if first is not None and first.type == "expression_statement":
            value = first.named_children[0] if first.named_children else None
            if value is not None and value.type == "string":
                found.append((node, value))
    return found


def strip(data: bytes, tree) -> bytes:
    """Docstrings replaced by ``""`` and their newlines (line numbers unchanged)."""
    out, last = [], 0
    for node in sorted((d for _, d in docstrings(tree)), key=lambda n: n.start_byte):
        out += [data[last : node.start_byte], b'""' + b"\n" * data.count(b"\n", *node.byte_range)]
        last = node.end_byte
    return b"".join([*out, data[last:]])


def summary(doc: str) -> str:
    """The first sentence of the docstring's first paragraph, whitespace collapsed."""
    text = doc.strip().strip("\"'").strip()
    text = re.sub(r"^[rRbBuU]?(\"\"\"|''')", "", text)
    paragraph = re.split(r"\n\s*\n|\n\s*(?:>>>|Example|Args:|Parameters|:param)", text)[0]
    paragraph = " ".join(paragraph.split())
    sentence = re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0]
    return " ".join(sentence.split()[:40]).replace("``", "").replace("`", "")


def remove_name(text: str, names: list[str]) -> str:
    for name in sorted(set(names), key=len, reverse=True):
        text = re.sub(rf"(?<![\w.]){re.escape(name)}(\(\))?(?![\w])", "", text)
    return " ".join(text.split())


def calls(node, own: str) -> list[str]:
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        stack.extend(reversed(current.children))
        if current.type != "call":
            continue
        function = current.child_by_field_name("function")
        names = []
        if function is not None and function.type == "identifier":
            names = [function.text.decode()]
        elif function is not None and function.type == "attribute":
            receiver = function.child_by_field_name("object")
            if receiver is not None and receiver.type == "identifier":
                names.append(receiver.text.decode())
            names.append(function.child_by_field_name("attribute").text.decode())
        for name in names:
            if len(name) > 1 and name != own and name not in CALL_STOPLIST and name not in found:
                found.append(name)
    return found[:8]


def build() -> tuple[Path, Path]:
    """The stripped corpus and the queries (rebuilt each run: a few seconds)."""
    corpus, queries_path = WORK / "corpus" / "python", WORK / "queries.jsonl"
    candidates = []
    for (name, version, _, include, exclude), root in zip(PACKAGES, fetch().values(), strict=True):
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if not any(fnmatchcase(rel, p) for p in include) or any(
                fnmatchcase(rel, p) for p in exclude
            ):
                continue
            data = path.read_bytes()
            tree = parse(data, "python")
            out = corpus / name / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(strip(data, tree))
            docs = {
                owner.end_byte: (owner, doc)
                for owner, doc in docstrings(tree)
                if owner.type == "function_definition"
            }
            source = open_repository(root).read(rel)
            for unit in analyze(source, ChunkConfig().encoding).units:
                node, definition = docs.get(unit.end_byte, (None, None))
                if unit.kind not in FUNCTION_KINDS or node is None:
                    continue
                first = summary(definition.text.decode("utf-8", "replace"))
                query = remove_name(first, [unit.name, unit.qualname])
                body = data[unit.start_byte : unit.end_byte]
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
                        "lang": "py",
                        "nested": bool(unit.parent and "." in unit.parent),
                        "_summary": first,
                        "_query": query,
                        "_code": " ".join(strip(body, parse(body, "python")).decode().split()),
                        "_calls": calls(node, unit.name),
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
    for name, *_ in PACKAGES:
        mine = [c for c in kept if c["package"] == name]
        mine.sort(
            key=lambda c: hashlib.sha1(
                f"{c['file']}:{c['start_line']}:{c['qualname']}".encode()
            ).hexdigest()
        )
        selected += sorted(mine[:MAX_TARGETS], key=lambda c: (c["file"], c["start_line"]))
    names: dict[str, int] = {}
    for c in candidates:
        names[c["name"]] = names.get(c["name"], 0) + 1
        names[c["qualname"]] = names.get(c["qualname"], 0) + 1
    call_counts: dict[str, int] = {}
    for c in candidates:
        call_counts[" ".join(c["_calls"])] = call_counts.get(" ".join(c["_calls"]), 0) + 1
    rows = []
    for number, c in enumerate(selected, 1):
        target = {k: v for k, v in c.items() if not k.startswith("_")}
        tid = f"python-{number:04d}"
        variants = [("doc", c["_query"])]
        name = c["name"] if names[c["name"]] == 1 else c["qualname"]
        if names[name] == 1:
            variants.append(("name", name))
        joined = " ".join(c["_calls"])
        if len(c["_calls"]) >= 2 and call_counts[joined] == 1:
            variants.append(("calls", joined))
        for variant, text in variants:
            record = {"id": f"{tid}-{variant}", "target_id": tid, "set": "python"}
            record.update({"variant": variant, "query": text, "target": target})
            rows.append(record)
    queries_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(candidates)} documented units, {len(selected)} targets, {len(rows)} queries")
    return corpus, queries_path


def per_function_chunks(analyses, repo: str) -> list[Chunk]:
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
                    language="python",
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


def main() -> None:
    corpus, queries_path = build()
    queries = load_queries(queries_path)
    repo = open_repository(corpus, name="python")
    analyses = analyze_files(repo.source_files(), ChunkConfig().encoding)
    cache = EmbeddingCache()
    plain_embedder = CachedEmbedder(default_embedder(words_view=False), cache)
    nexus_embedder = CachedEmbedder(default_embedder(), cache)
    default = ChunkConfig()
    plain = default.with_(context_header=False, words_view=False, lexical_weight=0.0)
    runs = {}
    for label, config in {
        "fixed 50-line windows (reference)": plain.with_(strategy="lines"),
        "Nexus AST, plain text, no keywords": plain,
        "Nexus AST, embeddings alone (lexical_weight = 0)": default.with_(lexical_weight=0.0),
        "Nexus AST, defaults": default,
        # Not tuned on this set: two neighbours of the defaults in the JS grid.
        "Nexus AST, 512/32": default.with_(min_tokens=32),
        "Nexus AST, 384/64": default.with_(max_tokens=384),
    }.items():
        embedder = nexus_embedder if config.words_view else plain_embedder
        result = evaluate_config(analyses, repo.name, config, queries, embedder)
        runs[label] = (result.chunks, result.report)
        print(f"{label:50} MRR@10 {result.metric('MRR@10'):.3f}", flush=True)
    chunks = per_function_chunks(analyses, repo.name)
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
        }
        for run in order
    ]
    per_function_lines = table[1]["doc:lines@5"]
    best_reference = max(table[0]["doc:MRR@10"], table[1]["doc:MRR@10"])
    nexus = next(r for r in table if r["run"] == "Nexus AST, defaults")
    targets = {
        "MRR@10 above both baselines": nexus["doc:MRR@10"] > best_reference,
        "lines@5 <= 1.4 x per-function": nexus["doc:lines@5"] <= 1.4 * per_function_lines,
    }
    summary_ = {
        "date": date.today().isoformat(),
        "load": "load average {:.1f} {:.1f} {:.1f}, machine shared with other jobs".format(
            *os.getloadavg()
        ),
        "machine": machine(),
        "packages": [f"{n}=={v}" for n, v, *_ in PACKAGES],
        "queries": {v: sum(1 for q in queries if q.variant == v) for v in ("doc", "name", "calls")},
        "model": nexus_embedder.name,
        "runs": table,
        "targets": targets,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "python_retrieval.json").write_text(json.dumps(summary_, indent=2) + "\n")
    lines = [
        "# Python retrieval (bench/python_eval.py)",
        "",
        f"{summary_['date']}; {summary_['load']}; model {summary_['model']}; packages "
        f"{', '.join(summary_['packages'])} (sdists, docstrings blanked); queries "
        f"{summary_['queries']}.",
        "",
        "| run | chunks | doc R@1 | doc R@5 | doc MRR@10 | doc lines@5 | name MRR | calls MRR |",
        "|---|---|---|---|---|---|---|---|",
        *(
            f"| {r['run']} | {r['chunks']} | {r['doc:R@1']:.3f} | {r['doc:R@5']:.3f} | "
            f"**{r['doc:MRR@10']:.3f}** | {r['doc:lines@5']:.1f} | {r['name:MRR@10']:.3f} | "
            f"{r['calls:MRR@10']:.3f} |"
            for r in table
        ),
        "",
        *(f"- {name}: {'PASS' if ok else 'FAIL'}" for name, ok in targets.items()),
    ]
    (RESULTS / "python_retrieval.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
