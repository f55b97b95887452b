"""``nexus chunk --workers``: all cores against one, back to back, in alternating order.

Run: ``.venv/bin/python bench/speed/chunk_workers.py [CORPUS ...] [--rounds 3]
[--code before=/path/to/other/checkout]`` (``--help``).

Without a corpus it uses the scale corpus of ``bench/speed/scale.py`` (eight npm packages,
fetched once with ``npm pack``). For each corpus and each round, ``nexus chunk CORPUS
--format jsonl -o FILE --workers W`` runs for W = 1 and all cores, the order swapped
every round (the machine is shared: a burst of other work hits both sides), each in a
fresh process, with the load average beside each figure. ``--code NAME=DIR`` adds
another checkout (run with ``PYTHONPATH=DIR``), interleaved with this one, so a change
is measured against its parent under the same load.

Per run: wall, CPU of the whole process tree and of the main process (the parent's
work competes with the workers for the cores); per corpus: the speedup (median wall
of one worker / median wall of all), whether every output is byte-identical, and the
bound a serial scan would set (``--phases`` times the scan and the chunking in one
process). Since issue 22 the folder's walk overlaps the chunking (``RepositoryScan``),
so that bound is what the code before it could reach, not a limit of this code.

The phases run also times each batch of files, so the schedule of the chunking on
idle cores can be simulated (``simulate``): files in path order, or the largest batch
first (what the pool does), against the ideal of a perfect split.

Figures go to stdout and to ``bench/results/chunk_workers.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from bench.speed.scale import fetch_corpus, load, run_measured, sha256  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def phases(folder: str) -> None:
    """(A fresh process) CPU seconds of the scan and of chunking + JSONL in one process,
    and each batch's chunking CPU (as the workers get them) for ``simulate``."""
    from nexus.config import ChunkConfig
    from nexus.ingest.sources import open_repository
    from nexus.runtime.stream import _batches, as_jsonl, chunk_ref

    start = time.process_time()
    repo = open_repository(folder)
    scanned = time.process_time()
    config, chunks, batch_cpu = ChunkConfig(), 0, []
    for batch in _batches(repo.refs()):
        began = time.process_time()
        chunks += sum(
            j.n_chunks for j in as_jsonl([chunk_ref(r, config, repo=repo.name) for r in batch])
        )
        batch_cpu.append((sum(ref.info.size for ref in batch), time.process_time() - began))
    done = time.process_time()
    result = {
        "files": len(repo.files),
        "chunkable_files": len(repo.chunkable_files()),
        "chunks": chunks,
        "scan_cpu_s": round(scanned - start, 2),
        "chunk_cpu_s": round(done - scanned, 2),
        "batch_cpu": batch_cpu,
    }
    print(json.dumps(result))


def simulate(batch_cpu: list[tuple[int, float]], workers: int, largest_first: bool) -> float:
    """Seconds of chunking on ``workers`` idle cores, each batch going to the first
    free worker in submission order (the window never binds: see the module doc)."""
    order = [cpu for _, cpu in batch_cpu]
    if largest_first and order:
        first = max(range(len(batch_cpu)), key=lambda i: batch_cpu[i][0])
        order.insert(0, order.pop(first))
    free = [0.0] * workers
    for cpu in order:
        free[free.index(min(free))] += cpu
    return max(free)


def measure_phases(corpus: Path, code: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--phases", str(corpus)],
        env={**os.environ, "PYTHONPATH": str(code)},
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    result["load"] = load()
    return result


def chunk_run(corpus: Path, code: Path, workers: int, target: Path) -> dict[str, object]:
    cmd = [sys.executable, "-m", "nexus.cli", "chunk", str(corpus), "--format", "jsonl"]
    cmd += ["-o", str(target), "--workers", str(workers)]
    result = run_measured(cmd, env={**os.environ, "PYTHONPATH": str(code)})
    result["sha256"] = sha256(target)
    del result["stdout"], result["stderr"]
    return result


def bench_corpus(
    corpus: Path, codes: dict[str, Path], rounds: int, all_workers: int, work: Path
) -> dict[str, object]:
    counts = (1, all_workers)
    runs: dict[str, dict[int, list[dict[str, object]]]] = {
        name: {w: [] for w in counts} for name in codes
    }
    for r in range(rounds):
        order = counts if r % 2 == 0 else counts[::-1]
        names = list(codes) if r % 2 == 0 else list(codes)[::-1]
        for workers in order:
            for name in names:
                result = chunk_run(corpus, codes[name], workers, work / f"{name}-w{workers}.jsonl")
                runs[name][workers].append(result)
                print(f"  {name} --workers {workers}: {result['wall_s']} s wall, "
                      f"{result['cpu_s']} s CPU (main {result['main_cpu_s']} s), "
                      f"load {result['load']}", flush=True)  # fmt: skip
    digests = {run["sha256"] for by_w in runs.values() for rs in by_w.values() for run in rs}
    summary = {}
    for name, by_w in runs.items():
        medians = {
            w: round(statistics.median(run["wall_s"] for run in rs), 2) for w, rs in by_w.items()
        }
        summary[name] = {
            "median_wall_s": medians,
            "median_main_cpu_s": {
                w: round(statistics.median(run["main_cpu_s"] for run in rs), 2)
                for w, rs in by_w.items()
            },
            "speedup": round(medians[1] / medians[all_workers], 2),
            "pair_speedups": [
                round(one["wall_s"] / many["wall_s"], 2)
                for one, many in zip(by_w[1], by_w[all_workers], strict=True)
            ],
        }
    return {"runs": runs, "summary": summary, "identical": len(digests) == 1}


def markdown(report: dict) -> str:
    lines = [
        "# nexus chunk --workers: all cores against one",
        "",
        f"{report['date']}, {report['machine']}. **The machine is shared with other work**: "
        "the load average (1, 5, 15 min) is printed beside each run; the order of the runs "
        "alternates every round. Rerun: `.venv/bin/python bench/speed/chunk_workers.py`.",
        "",
    ]
    for corpus in report["corpora"]:
        ph = corpus["phases"]
        lines += [
            f"## {corpus['name']}",
            "",
            f"{ph['files']} files, {ph['chunkable_files']} chunked into {ph['chunks']} chunks. "
            f"One process: scan {ph['scan_cpu_s']} s CPU, chunking + JSONL {ph['chunk_cpu_s']} s "
            f"CPU (load {ph['load']}): had the scan stayed serial, {report['workers']} workers "
            f"could be at most {corpus['amdahl_bound']}x one (start-up not counted); the "
            "walk now overlaps the chunking, so the bound is the cores'. The chunking "
            f"on {report['workers']} idle workers, simulated from each batch's CPU: "
            + ", ".join(f"{k} {v} s" for k, v in ph["simulated_s"].items())
            + ".",
            "",
            "| code | workers | median wall s | walls s | median main CPU s | load at each |",
            "|---|---|---|---|---|---|",
        ]
        for name, by_w in corpus["runs"].items():
            summary = corpus["summary"][name]
            for w, runs in by_w.items():
                walls = " ".join(str(run["wall_s"]) for run in runs)
                loads = "; ".join(str(run["load"]) for run in runs)
                lines.append(
                    f"| {name} | {w} | {summary['median_wall_s'][w]} | {walls} | "
                    f"{summary['median_main_cpu_s'][w]} | {loads} |"
                )
        lines += [""]
        for name, summary in corpus["summary"].items():
            pairs = ", ".join(f"{x}x" for x in summary["pair_speedups"])
            lines.append(
                f"- **{name}**: {report['workers']} workers / one = **{summary['speedup']}x** "
                f"(median walls; round by round {pairs})."
            )
        lines += [f"- Every output byte-identical: {'yes' if corpus['identical'] else 'NO'}.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="*", type=Path, help="folders (default: scale corpus)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side per corpus")
    parser.add_argument("--code", action="append", default=[], help="NAME=DIR: also this code")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--phases", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phases:
        phases(args.phases)
        return
    base = Path(os.environ.get("NEXUS_BENCH_DIR") or "/tmp/nexus-bench")
    corpora = args.corpus or [fetch_corpus(base / "scale")[0]]
    codes = {"this": ROOT, **dict(_code(spec) for spec in args.code)}
    work = base / "chunk_workers"
    work.mkdir(parents=True, exist_ok=True)
    report: dict[str, object] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "workers": args.workers,
        "codes": {name: str(path) for name, path in codes.items()},
        "corpora": [],
    }
    for corpus in corpora:
        print(f"{corpus}:", flush=True)
        ph = measure_phases(corpus, ROOT)
        serial, parallel = ph["scan_cpu_s"], ph["chunk_cpu_s"]
        bound = (serial + parallel) / (serial + parallel / args.workers)
        batch_cpu = ph.pop("batch_cpu")
        ph["simulated_s"] = {
            "one worker": round(sum(cpu for _, cpu in batch_cpu), 2),
            "path order": round(simulate(batch_cpu, args.workers, False), 2),
            "largest first": round(simulate(batch_cpu, args.workers, True), 2),
            "perfect split": round(sum(cpu for _, cpu in batch_cpu) / args.workers, 2),
        }
        print(f"  phases: {ph} (load {ph['load']})", flush=True)
        result = bench_corpus(corpus, codes, args.rounds, args.workers, work)
        entry = {"name": str(corpus), "phases": ph, "amdahl_bound": round(bound, 2), **result}
        report["corpora"].append(entry)
        for name, summary in result["summary"].items():
            print(f"  {name}: speedup {summary['speedup']}x (bound {entry['amdahl_bound']}x), "
                  f"identical {result['identical']}", flush=True)  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "chunk_workers.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "chunk_workers.md").write_text(markdown(report) + "\n")


def _code(spec: str) -> tuple[str, Path]:
    name, _, folder = spec.partition("=")
    if not name or not folder:
        raise SystemExit(f"--code takes NAME=DIR, got {spec!r}")
    return name, Path(folder).resolve()


if __name__ == "__main__":
    main()
