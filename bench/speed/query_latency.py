"""Query latency of ``Workspace.search`` with re-scoring on (the default), and MCP memory.

Run: ``nice -n 10 .venv/bin/python bench/speed/query_latency.py --corpus /tmp/nexus-questions/knex
--corpus CORPUS50K [--synthetic 50000] [--mcp CORPUS8K]`` (``--help``), with
``NEXUS_MODEL_PRECISION=float32`` as on an AVX2 laptop.

Per corpus, with a fresh cache folder (the fast tier's model and the ONNX query model
linked in from ``$NEXUS_CACHE_DIR/models``):

* **build**: the fast-tier index (``Workspace.index``; chunked, embedded and saved), then
  MiniLM's vectors of every chunk: computed by the background job
  (``nexus.runtime.rescore_vectors``; its seconds are the wait until answers are
  re-scored), or, with ``--synthetic N`` for a corpus of N chunks or more, random unit
  vectors written where the job writes them: a search reads 30 rows of them whatever
  their values, and MiniLM would need hours for 50k chunks on two shared cores;
* **cold**: a fresh process opens the saved index and answers one query (wall from
  process start, imports included), re-scored;
* **before the vectors**: the same without the vectors file (answers "not re-scored yet");
* **warm**: one process, ``--n`` distinct questions each asked once (after one warm-up
  query), ``Workspace.search(q, 10)``: p50 / p95, re-scored and with ``rescore=False``;
  and the query model alone (MiniLM on ONNX, both views).

``--mcp CORPUS``: ``nexus mcp CORPUS`` (defaults) with the vectors present, driven by the
MCP client over ``--n`` searches; the server's RSS and peak RSS (``/proc``) after them.

Figures go to stdout and ``bench/results/query_latency.{json,md}`` (``--name``) with the
load average and what numpy ran on (AVX-512 or AVX2).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.mcp.mcp_latency import _queries  # noqa: E402

RESULTS = ROOT / "bench" / "results"
WORK = Path("/tmp/nexus-bench/query-latency")
MODELS = ("all-MiniLM-L6-v2-static256", "all-MiniLM-L6-v2-onnx")

COLD = """
import sys, time, json
began = time.perf_counter()
from nexus.workspace import Settings, Workspace
ws = Workspace.open(sys.argv[1], Settings(tier="fast", cache_dir=sys.argv[2]))
answer = ws.search(sys.argv[3], 10)
print(json.dumps({"s": time.perf_counter() - began, "rescore": answer.rescore}))
"""


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _cache_for(corpus: Path) -> Path:
    cache = WORK / f"cache-{corpus.name}"
    from nexus.retrieval.embedding_cache import default_cache_dir

    models = default_cache_dir() / "models"  # where `nexus setup` put them
    for name in MODELS:
        target = cache / "models" / name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(models / name, target)
    return cache


def _workspace(corpus: Path, cache: Path, rescore: bool = True):
    from nexus.workspace import Settings, Workspace

    return Workspace.open(corpus, Settings(tier="fast", cache_dir=cache, rescore=rescore))


def build(corpus: Path, synthetic: int | None) -> dict:
    """The saved fast-tier index and MiniLM's vectors of its chunks (see the module doc)."""
    from nexus.runtime import rescore_vectors

    cache = _cache_for(corpus)
    began = time.perf_counter()
    ws = _workspace(corpus, cache)
    opened = ws.index()[0]
    ws.wait_for_saves()
    index_s = time.perf_counter() - began
    chunks = len(opened.index)
    folder = ws._folders[ws.config.strategy]
    rescorer = ws._rescorer(ws.config.strategy, ws._live[ws.config.strategy])
    assert rescorer is not None
    target = rescore_vectors.vectors_file(folder, rescorer.name)
    began = time.perf_counter()
    if target.exists():
        kind = "written by an earlier run"
    elif synthetic is not None and chunks >= synthetic:
        rows = np.random.default_rng(0).normal(size=(chunks, 384)).astype(np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        np.save(target, rows.astype(np.float16))
        kind = "synthetic"
    else:
        state = ws.wait_for_rescore()
        kind = f"MiniLM ({state})"
    return {
        "corpus": str(corpus),
        "chunks": chunks,
        "index_s": round(index_s, 1),
        "vectors": kind,
        "vectors_s": round(time.perf_counter() - began, 1),
        "vectors_file": str(target),
        "load": _load(),
    }


def cold(corpus: Path, query: str, hide_vectors: Path | None = None) -> dict:
    """A fresh process: open the saved index and answer ``query`` (``hide_vectors``: moved
    aside for the run, as before the background job has written them)."""
    cache = _cache_for(corpus)
    aside = hide_vectors.with_suffix(".aside") if hide_vectors else None
    if hide_vectors is not None and aside is not None:
        hide_vectors.rename(aside)
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        out = subprocess.run(
            [sys.executable, "-c", COLD, str(corpus), str(cache), query],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        ).stdout
    finally:
        if hide_vectors is not None and aside is not None:
            aside.rename(hide_vectors)
    return json.loads(out.strip().splitlines()[-1]) | {"load": _load()}


def warm(corpus: Path, queries: list[str], rescore: bool) -> dict:
    """``Workspace.search(q, 10)`` over distinct queries in one warm process."""
    ws = _workspace(corpus, _cache_for(corpus), rescore)
    first = ws.search("warm up the process", 10)
    times, cpu, states = [], [], set()
    for query in queries:
        began, used = time.perf_counter(), time.process_time()
        answer = ws.search(query, 10)
        times.append(time.perf_counter() - began)
        cpu.append(time.process_time() - used)
        states.add(answer.rescore)
    extra = {"states": sorted(states), "first": first.rescore, "load": _load()}
    return _percentiles(times) | _percentiles(cpu, "cpu_") | extra


def query_model(corpus: Path, queries: list[str]) -> dict:
    """MiniLM on ONNX alone, both views, one query at a time."""
    from nexus.retrieval.onnx_minilm import onnx_model_at
    from nexus.runtime.rescorer import query_model as model_of

    graph = onnx_model_at(_cache_for(corpus))
    assert graph is not None
    model = model_of(graph, True)
    model.encode(["warm up"])
    times, cpu = [], []
    for query in queries:
        began, used = time.perf_counter(), time.process_time()
        model.encode([query])
        times.append(time.perf_counter() - began)
        cpu.append(time.process_time() - used)
    return _percentiles(times) | _percentiles(cpu, "cpu_") | {"load": _load()}


def _percentiles(times: list[float], prefix: str = "") -> dict:
    """p50 / p95 / max in ms (``cpu_``: the process's CPU time, all threads: what the
    query costs a quiet machine, less sensitive to the other jobs than wall time)."""
    ms = np.array(times) * 1000
    return {
        "n": len(times),
        f"{prefix}p50_ms": round(float(np.percentile(ms, 50)), 1),
        f"{prefix}p95_ms": round(float(np.percentile(ms, 95)), 1),
        f"{prefix}max_ms": round(float(ms.max()), 1),
    }


async def _mcp(corpus: Path, queries: list[str]) -> dict:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    cache = _cache_for(corpus)
    env = dict(os.environ, PYTHONPATH=str(ROOT), NEXUS_CACHE_DIR=str(cache))
    args = ["-m", "nexus.cli", "mcp", str(corpus), "--cache", str(cache)]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    before = _pids()
    async with Client(params, read_timeout_seconds=3600) as client:
        states = set()
        for query in queries:
            result = await client.call_tool("search", {"query": query, "top_k": 5})
            states.add((result.structured_content or {}).get("rescore"))
        server = [pid for pid in _pids() - before if _is_server(pid)]
        memory = {pid: _memory(pid) for pid in server}
    rss = max(memory.values(), key=lambda m: m["rss_mb"]) if memory else {}
    return {"searches": len(queries), "states": sorted(map(str, states)), **rss, "load": _load()}


def _pids() -> set[int]:
    return {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}


def _is_server(pid: int) -> bool:
    try:
        return b"nexus.cli\x00mcp" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _memory(pid: int) -> dict:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = round(int(value.split()[0]) / 1024, 1)
    return {"rss_mb": fields.get("VmRSS"), "peak_rss_mb": fields.get("VmHWM")}


def markdown(report: dict) -> str:
    lines = [
        "# Query latency, re-scoring from precomputed MiniLM vectors "
        "(`bench/speed/query_latency.py`)",
        "",
        f"{report['date']}, {report['cpu']}, `NEXUS_MODEL_PRECISION={report['precision']}`, "
        f"{report['simd']}; "
        "the machine is shared (2 cores, up to 8 jobs): the load average (1, 5, 15 min) "
        "is beside each figure. Command: `" + report["command"] + "`",
        "",
        "| corpus | chunks | MiniLM vectors | vectors ready after (s) | cold first answer, "
        "re-scored (s) | cold, before the vectors (s) | warm p50 / p95 re-scored, wall "
        "(CPU) ms | warm p50 / p95 fast tier only, wall (CPU) ms | query model p50 / p95, "
        "wall (CPU) ms | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report["corpora"]:
        b, c, p, w, f, q = (row[k] for k in ("build", "cold", "pending", "warm", "fast", "query"))
        lines.append(
            f"| {Path(b['corpus']).name} | {b['chunks']:,} | {b['vectors']} | {b['vectors_s']} "
            f"| {c['s']:.2f} ({c['rescore']}) | {p['s']:.2f} ({p['rescore']}) "
            f"| {_pair(w)} | {_pair(f)} | {_pair(q)} | {w['load']} |"
        )
    if report.get("mcp"):
        m = report["mcp"]
        lines += [
            "",
            f"MCP (`nexus mcp {m['corpus']}`, {m['chunks']:,} chunks, defaults, vectors "
            "present), after "
            f"{m['searches']} searches ({', '.join(m['states'])}): server RSS "
            f"{m.get('rss_mb')} MB, peak {m.get('peak_rss_mb')} MB (load {m['load']}).",
        ]
    return "\n".join(lines) + "\n"


def _pair(m: dict) -> str:
    cpu = f" ({m['cpu_p50_ms']} / {m['cpu_p95_ms']})" if "cpu_p50_ms" in m else ""
    return f"{m['p50_ms']} / {m['p95_ms']}{cpu}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append", default=[])
    parser.add_argument("--synthetic", type=int, default=None, metavar="CHUNKS")
    parser.add_argument("--mcp", type=Path, default=None, metavar="CORPUS")
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument(
        "--name", default="query_latency", help="results file name (bench/results/NAME.md)"
    )
    args = parser.parse_args()
    from nexus.retrieval.embedding import resolve_precision

    report: dict = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu": _cpu(),
        "precision": resolve_precision(),
        "simd": _simd(),
        "command": " ".join(["bench/speed/query_latency.py", *sys.argv[1:]]),
        "corpora": [],
    }
    for corpus in args.corpus:
        queries = _queries(corpus, args.n)
        built = build(corpus, args.synthetic)
        print(built, flush=True)
        row = {"build": built, "cold": cold(corpus, queries[0])}
        row["pending"] = cold(corpus, queries[0], Path(built["vectors_file"]))
        row["warm"] = warm(corpus, queries, rescore=True)
        row["fast"] = warm(corpus, queries, rescore=False)
        row["query"] = query_model(corpus, queries)
        print(row, flush=True)
        report["corpora"].append(row)
    if args.mcp is not None:
        chunks = build(args.mcp, args.synthetic)["chunks"]
        report["mcp"] = asyncio.run(_mcp(args.mcp, _queries(args.mcp, args.n))) | {
            "corpus": args.mcp.name,
            "chunks": chunks,
        }
        print(report["mcp"], flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / f"{args.name}.md").write_text(markdown(report))
    print(markdown(report))


def _simd() -> str:
    """What numpy and OpenBLAS run on: an AVX-512 machine can be told to use AVX2 only
    (``NPY_DISABLE_CPU_FEATURES``, ``OPENBLAS_CORETYPE=Haswell``), as on most laptops."""
    from numpy._core._multiarray_umath import __cpu_features__ as features

    flags = set(Path("/proc/cpuinfo").read_text().split())
    cpu = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    used = "AVX-512" if features.get("X86_V4") else "AVX2" if features.get("X86_V3") else "SSE"
    blas = os.environ.get("OPENBLAS_CORETYPE", "its own choice")
    return f"CPU {cpu}, numpy on {used}, OpenBLAS core {blas}"


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return f"{os.cpu_count()} CPUs ({line.partition(':')[2].strip()})"
    return f"{os.cpu_count()} CPUs"


if __name__ == "__main__":
    main()
