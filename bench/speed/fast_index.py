"""Fast-tier index time of the scale corpus, from cold: ``nexus index --tier fast``.

Run: ``.venv/bin/python bench/speed/fast_index.py [--corpus /tmp/nexus-bench/scale/corpus]
[--code PATH --label before]`` (``bench/speed/scale.py`` lays the corpus out).

Each run spawns the CLI with an empty embedding cache and no saved index (the distilled
model is linked in from ``$NEXUS_CACHE_DIR/models``, as on a machine that distilled it
once), so it walks, chunks, embeds, builds the keyword table and saves. ``--code`` runs
another checkout's ``nexus`` (a ``git worktree`` of an older commit) for a before/after on
the same machine. Wall and CPU seconds (the CLI and its chunking workers) and the load
average go to stdout and to ``bench/results/fast_index.json`` and ``.md``. Target (issue
27): at most 60 s on 2 cores. Never asserts times.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
MODELS = Path(os.environ.get("NEXUS_CACHE_DIR", "/tmp/nexus-shared-cache")) / "models"


def run_once(code: Path, corpus: Path) -> dict[str, object]:
    """One cold build with ``code``'s nexus: wall and CPU seconds, load, the CLI's last line."""
    with tempfile.TemporaryDirectory(prefix="nexus-fast-index-") as tmp:
        cache = Path(tmp) / "cache"
        cache.mkdir()
        (cache / "models").symlink_to(MODELS)
        env = {**os.environ, "PYTHONPATH": str(code), "NEXUS_CACHE_DIR": str(cache)}
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        command = [sys.executable, "-m", "nexus.cli", "index", str(corpus), "--tier", "fast"]
        load_before = os.getloadavg()
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        done = subprocess.run(
            [*command, "--cache", str(cache)],
            env=env,
            cwd=code,  # ``-m`` puts the working folder first on the path
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - began
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        return {
            "wall_s": round(wall, 1),
            "cpu_s": round(
                cpu.ru_utime - cpu_before.ru_utime + cpu.ru_stime - cpu_before.ru_stime, 1
            ),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "said": done.stdout.strip().splitlines()[-1],
        }


def write(rows: list[dict[str, object]], corpus: Path) -> None:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fast_index.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = [
        "# Fast-tier index of the scale corpus, from cold (`bench/speed/fast_index.py`)",
        "",
        f"`nexus index {corpus.name} --tier fast` with an empty embedding cache and no saved "
        f"index; nproc {os.cpu_count()}. CPU counts the CLI's process only: its chunking workers "
        "are children of the fork server, not of the CLI (since the workers embed, most of "
        "the work is theirs). The machine "
        "is shared: the load average is printed beside each run (wall time is inflated by it, "
        "CPU time much less). Target: at most 60 s wall on 2 cores.",
        "",
        "| code | when (UTC) | wall s | CPU s | load before | load after |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        load = " ".join(map(str, row["load_before"]))
        after = " ".join(map(str, row["load_after"]))
        lines.append(
            f"| {row['label']} | {row['when']} | {row['wall_s']} | {row['cpu_s']} "
            f"| {load} | {after} |"
        )
    lines += ["", "The CLI's last line, per run:", ""]
    lines += [f"- {row['label']}: {row['said']}" for row in rows]
    (RESULTS / "fast_index.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/nexus-bench/scale/corpus"))
    parser.add_argument("--code", type=Path, default=ROOT, help="a checkout of nexus to run")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--fresh", action="store_true", help="forget earlier rows")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(
            f"{args.corpus} is not a folder: lay the corpus out with bench/speed/scale.py first"
        )
    if not MODELS.is_dir():
        sys.exit(f"{MODELS} has no distilled model: run any fast-tier command once first")
    saved = RESULTS / "fast_index.json"
    rows = [] if args.fresh or not saved.is_file() else json.loads(saved.read_text())
    row = run_once(args.code.resolve(), args.corpus)
    row = {"label": args.label, "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"), **row}
    print(json.dumps(row))
    write([*rows, row], args.corpus)


if __name__ == "__main__":
    main()
