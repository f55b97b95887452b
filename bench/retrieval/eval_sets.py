"""The query sets the retrieval benchmark runs on, built on demand with shared/eval's tools.

* ``dev``: the shared dev set (express, commander, @tanstack/query-core), built by
  ``shared/eval/build.sh`` into ``$WORK`` (default ``/tmp/nexus-eval``).
* ``heldout``: our own set from packages outside dev (rxjs, svelte, luxon; see
  ``bench/retrieval/heldout-manifest.json``), built by the same scripts and rules into
  ``$HELDOUT_WORK`` (default ``/tmp/nexus-heldout``). Defaults are chosen on both, so
  a setting that only fits the dev packages does not win.
* ``check``: a third set from yet other packages (axios, preact, ramda; see
  ``bench/retrieval/check-manifest.json``) into ``$CHECK_WORK`` (default ``/tmp/nexus-check``).
  It is only ever reported, never used to choose a setting: the one set that says how
  the defaults do on code they were not tuned on.

Building needs npm (``npm pack``) and the pinned tree-sitter grammars of this venv.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVAL_DIR = Path(os.environ.get("NEXUS_EVAL_DIR", ROOT.parent / "shared" / "eval"))
DEV_WORK = Path(os.environ.get("WORK", "/tmp/nexus-eval"))
HELDOUT_WORK = Path(os.environ.get("HELDOUT_WORK", "/tmp/nexus-heldout"))
HELDOUT_MANIFEST = ROOT / "bench" / "retrieval" / "heldout-manifest.json"
CHECK_WORK = Path(os.environ.get("CHECK_WORK", "/tmp/nexus-check"))
CHECK_MANIFEST = ROOT / "bench" / "retrieval" / "check-manifest.json"


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
    """The held-out set (rxjs, svelte, luxon), built when missing."""
    return _built_set("heldout", HELDOUT_MANIFEST, HELDOUT_WORK)


def check_set() -> QuerySet:
    """The check set (axios, preact, ramda), built when missing; never tuned on."""
    return _built_set("check", CHECK_MANIFEST, CHECK_WORK)


def _built_set(name: str, manifest_path: Path, work: Path) -> QuerySet:
    """Fetch, unpack, strip and make queries as shared/eval's build.py does for dev."""
    corpus = work / "corpus" / name
    queries = work / "queries" / name / "queries.jsonl"
    if not queries.exists():
        print(f"building the {name} set into {work} (npm pack of its packages)")
        sys.path.insert(0, str(EVAL_DIR))
        sys.dont_write_bytecode = True  # shared/eval is read-only
        build = importlib.import_module("build")
        manifest = build.prepare.load_manifest(manifest_path)
        tarballs = work / "tarballs"
        tarballs.mkdir(parents=True, exist_ok=True)
        for package in manifest["sets"][name]["packages"]:
            build.unpack(build.fetch(package, tarballs, False), work / "src" / package["name"])
        for script in ("prepare.py", "make_queries.py"):
            subprocess.run(
                [
                    sys.executable,
                    str(EVAL_DIR / script),
                    "--manifest",
                    str(manifest_path),
                    "--work",
                    str(work),
                ],
                check=True,
            )
    return QuerySet(name, corpus, queries)
