"""The query sets the retrieval benchmark runs on, built on demand with shared/eval's tools.

* ``dev``: the shared dev set (express, commander, @tanstack/query-core), built by
  ``shared/eval/build.sh`` into ``$WORK`` (default ``/tmp/nexus-eval``).
* ``heldout``: our own set from packages outside dev (rxjs, svelte, luxon; see
  ``bench/heldout-manifest.json``), built by the same scripts and rules into
  ``$HELDOUT_WORK`` (default ``/tmp/nexus-heldout``). Defaults are chosen on both, so
  a setting that only fits the dev packages does not win.

Building needs npm (``npm pack``) and the pinned tree-sitter grammars of this venv.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVAL_DIR = Path(os.environ.get("NEXUS_EVAL_DIR", ROOT.parent / "shared" / "eval"))
DEV_WORK = Path(os.environ.get("WORK", "/tmp/nexus-eval"))
HELDOUT_WORK = Path(os.environ.get("HELDOUT_WORK", "/tmp/nexus-heldout"))
HELDOUT_MANIFEST = ROOT / "bench" / "heldout-manifest.json"


@dataclass(frozen=True)
class QuerySet:
    """A stripped corpus and the queries over it."""

    name: str
    corpus: Path
    queries: Path


def dev_set() -> QuerySet:
    """The shared dev set, built with its own ``build.sh`` when missing."""
    corpus = DEV_WORK / "corpus" / "dev"
    if not corpus.is_dir():
        print(f"building the dev set into {DEV_WORK} (npm pack, a minute or two)")
        env = {**os.environ, "WORK": str(DEV_WORK)}
        subprocess.run(["bash", str(EVAL_DIR / "build.sh")], check=True, env=env)
    return QuerySet("dev", corpus, EVAL_DIR / "dev" / "queries.jsonl")


def heldout_set() -> QuerySet:
    """The held-out set: fetch, unpack, strip and make queries as build.py does for dev."""
    corpus = HELDOUT_WORK / "corpus" / "heldout"
    queries = HELDOUT_WORK / "queries" / "heldout" / "queries.jsonl"
    if not queries.exists():
        print(f"building the held-out set into {HELDOUT_WORK} (npm pack of three packages)")
        sys.path.insert(0, str(EVAL_DIR))
        sys.dont_write_bytecode = True  # shared/eval is read-only
        build = importlib.import_module("build")
        manifest = build.prepare.load_manifest(HELDOUT_MANIFEST)
        tarballs = HELDOUT_WORK / "tarballs"
        tarballs.mkdir(parents=True, exist_ok=True)
        for package in manifest["sets"]["heldout"]["packages"]:
            build.unpack(
                build.fetch(package, tarballs, False), HELDOUT_WORK / "src" / package["name"]
            )
        for script in ("prepare.py", "make_queries.py"):
            subprocess.run(
                [
                    sys.executable,
                    str(EVAL_DIR / script),
                    "--manifest",
                    str(HELDOUT_MANIFEST),
                    "--work",
                    str(HELDOUT_WORK),
                ],
                check=True,
            )
    return QuerySet("heldout", corpus, queries)
