"""`nexus chunk` on a real corpus: wall, CPU and peak RSS vs --workers, RSS as the
repository grows, and one 5 MB source file.

Run: ``.venv/bin/python bench/workers.py`` (``--help`` for options). The corpus is
the eight npm packages of issue 10 (three, date-fns, @mui/material, lodash,
typescript 5, @babel/core, @angular/core, vue), fetched with ``npm pack`` into
``$NEXUS_BENCH_DIR/workers`` (default ``/tmp/nexus-bench/workers``) on first use and
unpacked side by side; nothing is committed. Each measurement runs the real CLI in
a subprocess writing JSONL, while a sampler reads the CLI and its worker processes
every 20 ms: peak RSS of the CLI alone, and peak PSS summed over the whole process
tree (workers fork from one server and share its pages: summing their RSS would
count those pages once per worker).

The floor is what issue 10 measured against: parse + one tiktoken encode per file,
one process (CPU seconds). The machine is shared: the load (``uptime``) is printed
and written beside the figures, and the runs that are compared run back to back.
Results go to ``bench/results/workers.{json,md}``; times are never asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import machine  # noqa: E402

from nexus.config import ChunkConfig  # noqa: E402
from nexus.languages import parse  # noqa: E402
from nexus.sources import open_repository  # noqa: E402
from nexus.stream import default_workers  # noqa: E402
from nexus.tokens import get_encoding  # noqa: E402
from tests.helpers import large_typescript  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PACKAGES = (
    "three@0.187.0",
    "date-fns@4.4.0",
    "@mui/material@9.5.0",
    "lodash@4.18.1",
    "typescript@5.9.3",
    "@babel/core@7.29.13",
    "@angular/core@21.2.26",
    "vue@3.5.45",
)
SUBSETS = (1000, 3000)


def bench_dir() -> Path:
    return Path(os.environ.get("NEXUS_BENCH_DIR", "/tmp/nexus-bench")) / "workers"


def fetch_corpus(folder: Path) -> Path:
    """The packages unpacked side by side under ``folder/corpus`` (npm pack on first use)."""
    corpus = folder / "corpus"
    tarballs = folder / "tarballs"
    tarballs.mkdir(parents=True, exist_ok=True)
    for spec in PACKAGES:
        name, version = spec.rsplit("@", 1)
        target = corpus / f"{name.strip('@').replace('/', '-')}-{version}"
        if target.is_dir():
            continue
        packed = subprocess.run(
            ["npm", "pack", spec, "--json", "--pack-destination", str(tarballs)],
            check=True,
            capture_output=True,
            text=True,
        )
        tarball = tarballs / json.loads(packed.stdout)[0]["filename"]
        target.mkdir(parents=True)
        with tarfile.open(tarball) as archive:
            for member in archive.getmembers():
                member.name = member.name.split("/", 1)[-1]  # drop "package/"
            archive.extractall(target, filter="data")
    return corpus


def subset(corpus: Path, paths: list[str], n: int, folder: Path) -> Path:
    """A corpus of the first ``n`` chunkable files (hard links, in path order)."""
    target = folder / f"subset-{n}"
    if not target.is_dir():
        for rel in paths[:n]:
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            os.link(corpus / rel, target / rel)
    return target


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _tree_sample(root: int, cpu: dict[int, float]) -> tuple[int, int]:
    """RSS in bytes of ``root`` alone and PSS of ``root`` with all its descendants;
    the CPU seconds each process of the tree has used so far go into ``cpu``."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    used: dict[int, float] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    ticks = os.sysconf("SC_CLK_TCK")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
            statm = Path(f"/proc/{entry.name}/statm").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = int(statm.split()[1]) * page
        used[pid] = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        total += _pss(pid)
        cpu[pid] = max(cpu.get(pid, 0.0), used.get(pid, 0.0))
        pending.extend(children.get(pid, []))
    return rss.get(root, 0), total


def run_cli(args: list[str]) -> dict:
    """Run ``nexus`` in a subprocess: wall, CPU and peak RSS of it and its workers.

    CPU is the sum over the process tree as last sampled (workers are children of
    multiprocessing's fork server, so the CLI's own rusage does not hold them).
    """
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "nexus.cli", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = {"cli": 0, "tree": 0}
    cpu: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            cli, tree = _tree_sample(process.pid, cpu)
            peak["cli"] = max(peak["cli"], cli)
            peak["tree"] = max(peak["tree"], tree)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, err = process.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode:
        raise RuntimeError(f"nexus {' '.join(args)} failed:\n{err[-2000:]}")
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(sum(cpu.values()), 2),
        "peak_rss_cli_mb": round(peak["cli"] / 1e6),
        "peak_pss_all_mb": round(peak["tree"] / 1e6),
    }


def chunk_run(corpus: Path, workers: int, out: Path) -> dict:
    args = ["chunk", str(corpus), "--format", "jsonl", "-o", str(out), "--workers", str(workers)]
    figures = run_cli(args)
    figures["sha256"] = hashlib.sha256(out.read_bytes()).hexdigest()
    figures["chunks"] = sum(1 for _ in out.open(encoding="utf-8"))
    return figures


def floor_seconds(corpus: Path) -> tuple[float, int, int]:
    """CPU seconds of parse + one encode per chunkable file in this process; files; bytes."""
    repo = open_repository(corpus)
    encode = get_encoding(ChunkConfig().encoding).encode_ordinary
    sources = list(repo.source_files())
    start = time.process_time()
    for source in sources:
        parse(source.data, source.info.language)
        encode(source.text)
    return time.process_time() - start, len(sources), sum(len(s.data) for s in sources)


def large_file_run(folder: Path, n_bytes: int) -> dict:
    repo = folder / f"large-{n_bytes}"
    path = repo / "src" / "big.ts"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(large_typescript(n_bytes), encoding="utf-8")
    out = folder / "large.jsonl"
    figures = run_cli(["chunk", str(repo), "--format", "jsonl", "-o", str(out), "--workers", "1"])
    figures["bytes"] = path.stat().st_size
    figures["chunks"] = sum(1 for _ in out.open(encoding="utf-8"))
    return figures


def write_markdown(path: Path, report: dict) -> None:
    floor = report["floor_cpu_s"]
    lines = [
        "# nexus chunk: workers, memory, a large file",
        "",
        f"{report['date']}; {report['machine']['nproc']} CPUs ({report['machine']['cpu']}); "
        "**the machine is shared with other jobs**: load before / after:",
        "",
        f"- `{report['load_before']}`",
        f"- `{report['load_after']}`",
        "",
        f"Corpus: {', '.join(PACKAGES)} unpacked side by side: {report['files']:,} files, "
        f"{report['chunkable_files']:,} chunked ({report['chunkable_bytes'] / 1e6:.1f} MB). "
        f"Floor (parse + one encode per file, one process): {floor:.2f} s CPU.",
        "",
        "| workers | wall s | x floor | CPU s | peak RSS, CLI | peak PSS, CLI + workers |"
        " chunks | same output as 1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    base = report["runs"][0]["sha256"]
    for run in report["runs"]:
        lines.append(
            f"| {run['workers']} | {run['wall_s']:.2f} | {run['wall_s'] / floor:.2f} | "
            f"{run['cpu_s']:.2f} | {run['peak_rss_cli_mb']} MB | {run['peak_pss_all_mb']} MB | "
            f"{run['chunks']:,} | {'yes' if run['sha256'] == base else 'NO'} |"
        )
    lines += [
        "",
        "Peak RSS as the corpus grows (first N chunkable files, same workers as the last row):",
        "",
        "| files | wall s | peak RSS, CLI | peak PSS, CLI + workers |",
        "|---|---|---|---|",
    ]
    for run in report["growth"]:
        lines.append(
            f"| {run['files']:,} | {run['wall_s']:.2f} | {run['peak_rss_cli_mb']} MB | "
            f"{run['peak_pss_all_mb']} MB |"
        )
    large = report["large_file"]
    lines += [
        "",
        f"One generated TypeScript file of {large['bytes'] / 1e6:.1f} MB (`--workers 1`): "
        f"{large['wall_s']:.2f} s wall, {large['cpu_s']:.2f} s CPU, peak RSS "
        f"{large['peak_rss_cli_mb']} MB, {large['chunks']:,} chunks.",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default=f"1,2,{default_workers()}", help="list to run")
    parser.add_argument("--large-mb", type=float, default=5.0, help="size of the large file")
    args = parser.parse_args(argv)
    folder = bench_dir()
    corpus = fetch_corpus(folder)
    load_before = uptime()
    print(f"load: {load_before}")
    floor, n_chunkable, n_bytes = floor_seconds(corpus)
    repo = open_repository(corpus)
    print(
        f"corpus {corpus}: {len(repo.files):,} files, {n_chunkable:,} chunked, floor {floor:.2f} s"
    )
    workers = sorted({int(w) for w in args.workers.split(",")})
    runs = []
    for n in workers:
        run = {"workers": n, **chunk_run(corpus, n, folder / f"chunks-{n}.jsonl")}
        print(json.dumps(run))
        runs.append(run)
    paths = [info.path for info in repo.chunkable_files()]
    growth = []
    for n in (*SUBSETS, len(paths)):
        target = corpus if n == len(paths) else subset(corpus, paths, n, folder)
        run = {"files": n, **chunk_run(target, workers[-1], folder / "growth.jsonl")}
        print(json.dumps(run))
        growth.append(run)
    large = large_file_run(folder, int(args.large_mb * 1e6))
    print(json.dumps({"large_file": large}))
    report = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "load_before": load_before,
        "load_after": uptime(),
        "files": len(repo.files),
        "chunkable_files": n_chunkable,
        "chunkable_bytes": n_bytes,
        "floor_cpu_s": round(floor, 2),
        "runs": runs,
        "growth": growth,
        "large_file": large,
    }
    print(f"load: {report['load_after']}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "workers.json").write_text(json.dumps(report, indent=2) + "\n")
    write_markdown(RESULTS / "workers.md", report)
    print(f"written: {RESULTS / 'workers.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
