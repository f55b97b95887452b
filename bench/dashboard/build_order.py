"""What a background build covers early: keyword files at the first dense answer, the
seconds until keyword search covers every file, and where the first vectors come from.

Run: ``.venv/bin/python bench/dashboard/build_order.py --label after`` (``--help``); for the
figures before a change, run the same script with ``PYTHONPATH`` on the older tree and
``--label before`` (it uses only what both have: ``IndexBuild``, ``ChunkStream`` and
the progress' ``files_done``/``done``/``total``).

The build is the dashboard's (``nexus.runtime.builds.IndexBuild``) fed file by file on
its own thread as ``nexus.ui.indexing`` does (one ``chunk_ref`` per file), with the
model (``--embedder model``, its load included) or a hashing embedder that waits
``SECONDS`` per text (``fake:SECONDS``) and a fresh embedding cache. The progress is read
every 0.25 s until the build is done or ``--limit-s`` passes. Figures go to stdout and
``bench/results/build_order.{json,md}`` (one entry per label); times are never asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
REPO = Path("/tmp/mono/getsentry+sentry-javascript")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def top_folders(files: list[str], n: int = 5) -> list[tuple[str, int]]:
    """The ``n`` commonest first two path parts among ``files``."""
    return Counter("/".join(f.split("/")[:2]) for f in files).most_common(n)


def run(args: argparse.Namespace) -> dict[str, Any]:
    import nexus
    from nexus.ingest.repository import IngestSettings
    from nexus.ingest.selection import FileSelection
    from nexus.ingest.sources import open_repository

    settings = IngestSettings(selection=FileSelection(tests=args.tests))
    repo = open_repository(args.repo, settings=settings)
    cache_folder = Path(tempfile.mkdtemp(prefix="nexus-build-order-"))
    out: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "nexus": str(Path(nexus.__file__).parent),
        "repo": str(args.repo),
        "files": len(repo.chunkable_files()),
        "embedder": args.embedder,
    }
    print(f"{args.label}: {out['files']:,} files of {args.repo}, {args.embedder}")
    out.update(watch(repo, cache_folder, args))
    if args.resume:
        print("resumed: a new build (new model, new cache handle) on the same cache folder")
        out["resumed"] = watch(repo, cache_folder, args, until_done=out["end_done"])
    return out


def watch(
    repo: Any, cache_folder: Path, args: argparse.Namespace, until_done: int | None = None
) -> dict[str, Any]:
    """Build the repository's index on ``cache_folder``'s cache, reading the progress
    every 0.25 s, until it is done, ``limit_s`` passes, or (``until_done``) that many
    chunks are embedded."""
    from nexus.config import ChunkConfig
    from nexus.retrieval.embedding import CachedEmbedder, EmbeddingCache, default_embedder
    from nexus.runtime.builds import ChunkStream, IndexBuild
    from nexus.runtime.stream import chunk_ref
    from nexus.ui.fake_embedder import HashingEmbedder

    refs = list(repo.refs())
    config = ChunkConfig()
    parts = (list(chunk_ref(ref, config, repo=repo.name).chunks) for ref in refs)
    stream = ChunkStream(parts, [ref.info.size for ref in refs])
    if args.embedder == "model":
        inner = default_embedder()
    else:
        inner = HashingEmbedder(dim=384, delay_s=float(args.embedder.partition(":")[2] or 0))
    embedder = CachedEmbedder(inner, EmbeddingCache(cache_folder))
    out: dict[str, Any] = {"load_before": uptime()}
    print(f"  {out['load_before']}")
    build = IndexBuild(stream, embedder, idle_after=1e9)
    t0 = time.perf_counter()
    build.start()
    while time.perf_counter() - t0 < args.limit_s:
        now = round(time.perf_counter() - t0, 2)
        progress = build.progress()
        if "keyword_all_files_s" not in out and progress.files_done == len(refs):
            out["keyword_all_files_s"] = now
            print(f"  {now:7.2f} s  keyword search covers all {len(refs):,} files")
        if "first_dense_s" not in out and progress.done:
            index = build.index()
            first = [c.file for c in index.chunks] if index is not None else []
            out.update(
                first_dense_s=now,
                first_dense_keyword_files=progress.files_done,
                first_dense_chunks=progress.done,
                first_dense_folders=top_folders(first),
            )
            print(
                f"  {now:7.2f} s  first dense answer: {progress.done} chunks embedded, "
                f"keyword covers {progress.files_done:,}/{len(refs):,} files; "
                f"first vectors from {top_folders(first)}"
            )
        if until_done is not None and progress.done >= until_done:
            out["until_done_s"] = now
            print(f"  {now:7.2f} s  {progress.done:,} chunks embedded: {progress.summary()}")
            break
        if not progress.running:
            break
        time.sleep(0.25)
    progress = build.progress()
    build.cancel()
    out.update(
        watched_s=round(time.perf_counter() - t0, 2),
        end_phase=progress.phase,
        end_files_chunked=progress.files_done,
        end_chunks=progress.total,
        end_done=progress.done,
        end_summary=progress.summary(),
        load_after=uptime(),
    )
    print(f"  end ({out['watched_s']} s): {progress.summary()}; {out['load_after']}")
    build.join(120)
    return out


def write(label: str, result: dict[str, Any]) -> None:
    path = RESULTS / "build_order.json"
    found = json.loads(path.read_text()) if path.exists() else {}
    found[label] = result
    path.write_text(json.dumps(found, indent=2) + "\n")
    lines = [
        "# Build order: what keyword and dense search cover early",
        "",
        "`bench/dashboard/build_order.py` (see its docstring). One row per label; load is the "
        "1-minute load average at the start and the end (2 cores, shared).",
        "",
        "| label | files | embedder | keyword covers all files at | first dense answer at | "
        "keyword files then | first vectors from | end | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in found.items():
        keyword = (
            f"{r['keyword_all_files_s']} s"
            if "keyword_all_files_s" in r
            else (f"not within {r['watched_s']} s ({r['end_files_chunked']:,} files)")
        )
        folders = ", ".join(f"{f} ({n})" for f, n in r.get("first_dense_folders", []))
        load = f"{_load(r['load_before'])} → {_load(r['load_after'])}"
        lines.append(
            f"| {name} | {r['files']:,} | {r['embedder']} | {keyword} | "
            f"{r.get('first_dense_s', '–')} s | {r.get('first_dense_keyword_files', 0):,} | "
            f"{folders} | {r['end_summary']} | {load} |"
        )
    for name, r in found.items():
        again = r.get("resumed")
        if again is None:
            continue
        lines += [
            "",
            f"**{name}, resumed** (a second build on the same cache folder, new model: as "
            "after a restart): keyword covers every file after "
            f"{again.get('keyword_all_files_s')} s; "
            f"the {r['end_done']:,} chunks the first build embedded are back in the dense index "
            f"after {again.get('until_done_s', '–')} s; progress then: {again['end_summary']} "
            f"(load {_load(again['load_before'])} → {_load(again['load_after'])}).",
        ]
    (RESULTS / "build_order.md").write_text("\n".join(lines) + "\n")


def _load(line: str) -> str:
    return line.rsplit("load average:", 1)[-1].split(",")[0].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--label", default="after", help="the row's name (before / after)")
    parser.add_argument("--repo", type=Path, default=REPO, help="a repository folder")
    parser.add_argument("--embedder", default="model", help="model, or fake:SECONDS per text")
    parser.add_argument("--limit-s", type=float, default=240.0, help="stop watching after this")
    parser.add_argument(
        "--tests", action=argparse.BooleanOptionalAction, default=True, help="chunk test files"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="then build again on the same cache (as after a restart): seconds until the "
        "chunks the first build embedded are back in the dense index",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    result = run(args)
    write(args.label, result)
    sys.exit(0)


if __name__ == "__main__":
    main()
