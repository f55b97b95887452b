"""The first ``nexus search`` on a repository nobody indexed yet, as a user types it: the
default tier (fast since 6 Dec) against ``--tier quality`` (the default before).

Run: ``.venv/bin/python bench/speed/cli_first_answer.py --repo /tmp/nexus-questions/werkzeug
[--query "cookie parsing"] [--runs 3]``.

Each run spawns the CLI with an empty embedding cache and no saved index (the distilled fast
model and the ONNX query model are linked in from ``$NEXUS_CACHE_DIR/models``, as on a
machine where ``nexus setup`` ran once), so it walks, chunks, embeds every chunk with the
tier's model and answers. The two commands run in turn, run by run, so a change in the
machine's load falls on both. Wall seconds, the load average and the CLI's last line (which
tier answered, and whether it was re-scored) go to stdout and
``bench/results/cli_first_answer.{json,md}``. Never asserts times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
MODELS = Path(os.environ.get("NEXUS_CACHE_DIR", Path.home() / ".cache" / "nexus")) / "models"
ARMS = {"default (fast tier)": [], "--tier quality (the default before)": ["--tier", "quality"]}


def run_once(repo: Path, query: str, flags: list[str]) -> dict[str, object]:
    """One first search in a fresh cache: wall seconds, load, the CLI's last line."""
    with tempfile.TemporaryDirectory(prefix="nexus-first-answer-") as tmp:
        cache = Path(tmp) / "cache"
        cache.mkdir()
        (cache / "models").symlink_to(MODELS)
        env = {**os.environ, "NEXUS_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
        command = [sys.executable, "-m", "nexus.cli", "search", str(repo), query, *flags]
        load = os.getloadavg()[0]
        began = time.perf_counter()
        done = subprocess.run(
            command, env=env, cwd=ROOT, capture_output=True, text=True, check=True
        )
        return {
            "wall_s": round(time.perf_counter() - began, 2),
            "load": round(load, 2),
            "said": done.stdout.strip().splitlines()[-1],
        }


def markdown(report: dict) -> str:
    lines = [
        "# The first `nexus search` on a new repository (`bench/speed/cli_first_answer.py`)",
        "",
        f"{report['date']}, nproc {os.cpu_count()}, `NEXUS_MODEL_PRECISION="
        f"{os.environ.get('NEXUS_MODEL_PRECISION', 'auto')}`; `nexus search {report['repo']} "
        f"{report['query']!r}` with an empty cache (the distilled models linked in), the two "
        "arms in turn. The machine is shared: the 1-minute load is beside each run.",
        "",
        "| arm | chunks | wall s, median | runs (wall s @ load) | the CLI's last line |",
        "|---|---|---|---|---|",
    ]
    for arm, runs in report["arms"].items():
        walls = " / ".join(f"{r['wall_s']} @ {r['load']}" for r in runs)
        median = statistics.median(r["wall_s"] for r in runs)
        said = runs[-1]["said"]
        lines.append(f"| {arm} | {report['chunks']} | {median:.2f} | {walls} | {said} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--query", default="cookie parsing")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not MODELS.is_dir():
        sys.exit(f"{MODELS} has no distilled models: run `nexus setup` once first")
    arms: dict[str, list[dict[str, object]]] = {arm: [] for arm in ARMS}
    for _ in range(args.runs):
        for arm, flags in ARMS.items():
            arms[arm].append(run_once(args.repo, args.query, flags))
            print(arm, arms[arm][-1], flush=True)
    from nexus.chunking.pipeline import chunk_repository
    from nexus.config import ChunkConfig
    from nexus.ingest.sources import open_repository

    chunks = len(chunk_repository(open_repository(args.repo), ChunkConfig()))
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "repo": args.repo.name,
        "query": args.query,
        "chunks": chunks,
        "arms": arms,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cli_first_answer.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "cli_first_answer.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
