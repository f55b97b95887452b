"""Dashboard server memory against its budget, and many sessions at once.

Run: ``.venv/bin/python bench/memory/server_memory.py`` (``--help`` for options). Needs Debian's
``/usr/bin/chromium`` and the ``playwright`` package; every request stays on loopback.

1. **Calibration**: the bytes a parsed file really takes (tracemalloc, which sees
   tree-sitter's trees because py-tree-sitter allocates through Python's allocator)
   per byte of source, on generated 1 MB plain-JS files and the sample repositories,
   beside the estimate ``nexus/runtime/footprint.py`` uses.
2. **Memory**: a real ``streamlit run`` server with ``NEXUS_MEMORY_BUDGET_MB=--budget-mb``;
   one Chromium session opens ``--repos`` different generated repositories of ~1 MB
   (4 files of ~250 KB) in turn through the local-path box, then uploads a zip of
   ``--upload-files`` generated ~1 MB files. The server's RSS (``/proc``) after each
   step and its peak are printed beside the budget.
3. **Load**: ``--sessions`` browser sessions at once (fake embedder) each open the
   home page (first page load), then switch to Chunks and AST, move ``max_tokens``
   three times, switch to Search, run two queries and switch to Compare; each action
   is timed from the input to the settled page (script ``notRunning``, no skeleton).
   With ``--before DIR`` (a checkout of the code before, e.g. ``git worktree add
   /tmp/before <commit>``), the same runs first against that checkout's server.

Figures go to stdout and to ``bench/results/server_memory.json`` and ``.md``; the
machine's load (``uptime``) is printed beside each part: it is shared, so compare
before and after only within one run.

``--budget-mb`` defaults to 512 so that 20 repositories (~45 MB each, estimated) must evict.
``--before DIR`` takes a checkout (``git archive COMMIT | tar -x -C DIR``); ``--rounds N``
measures N pairs in the order before, after, after, before... so a rising or falling load hits
both alike. Beside the wall-clock figures, the CPU seconds of the server and of the browser
(Chromium and Playwright, sampled every 0.5 s over the process tree): the browser takes ~8x
the server's CPU on the same cores, so settle times mostly measure Chromium; the server's CPU
seconds are what sharing work between sessions cuts. ``--profile-server`` runs the server's
threads under cProfile and lists the calls that took the most time; ``--parts load`` keeps the
other parts' figures from the last results file. About 25 minutes with ``--before`` on 2 busy
cores; ``--parts load --rounds 2`` about 8.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.machine import machine  # noqa: E402
from nexus.chunking.analysis import analyze  # noqa: E402
from nexus.config import DEFAULT_ENCODING  # noqa: E402
from nexus.ingest.classify import classify  # noqa: E402
from nexus.ingest.sources import decode_source, open_repository  # noqa: E402
from nexus.runtime import footprint  # noqa: E402
from nexus.ui.serve import CHROMIUM, CHROMIUM_ARGS, dashboard_process  # noqa: E402

RESULTS = ROOT / "bench" / "results"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
NO_SKELETON = "!document.querySelector(\"[data-testid='stSkeleton']\")"
WORDS = [
    "user",
    "item",
    "cache",
    "value",
    "index",
    "store",
    "render",
    "parse",
    "load",
    "save",
    "count",
    "list",
    "node",
    "tree",
]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def js_file(seed: int, size: int) -> bytes:
    """Readable plain JS of about ``size`` bytes (functions, classes, comments)."""
    rng = random.Random(seed)
    out, total, n = [f"// generated module {seed}\n'use strict';\n"], 0, 0
    while total < size:
        a, b, c = rng.sample(WORDS, 3)
        n += 1
        if n % 5 == 0:
            block = (
                f"class {a.title()}{b.title()}{n} {{\n  constructor({c}) {{\n"
                f"    this.{c} = {c};\n    this.{a} = [];\n  }}\n  {b}{n}(x, y) {{\n"
                f"    // add {a} to {b}\n    const r = this.{a}.map((v) => v + x * {n});\n"
                f"    if (r.length > y) {{ return r.slice(0, y); }}\n"
                f"    return r.concat([x, y, '{c}']);\n  }}\n}}\n\n"
            )
        else:
            block = (
                f"/**\n * {a} {b} {c} helper number {n}.\n */\n"
                f"function {a}{b.title()}{n}({c}, opts = {{}}) {{\n  let total = 0;\n"
                f"  for (let i = 0; i < {c}.length; i++) {{\n    total += {c}[i].{a} || {n};\n"
                f'  }}\n  const result = {{ {b}: total, name: "{a}-{n}", list: [1, {n}] }};\n'
                f"  return opts.{c} ? result : total;\n}}\n\n"
            )
        out.append(block)
        total += len(block)
    return "".join(out).encode()


# --- 1. calibration ---------------------------------------------------------------------


def calibrate(files: int) -> dict[str, Any]:
    """Measured bytes of a parsed file (with its units and imports) per source byte."""
    sets: dict[str, list] = {
        "generated ~1 MB plain JS": [
            decode_source(classify(f"g{i}.js", d, len(d)), d)
            for i, d in enumerate(js_file(1000 + i, 950_000) for i in range(files))
        ],
        "sample repositories": [
            source
            for folder in sorted((ROOT / "sample_repos").iterdir())
            for source in open_repository(folder).source_files()
        ],
    }
    analyze(sets["sample repositories"][0], DEFAULT_ENCODING)  # grammar and encoding loaded
    out = {}
    for name, sources in sets.items():
        gc.collect()
        tracemalloc.start()
        kept = [analyze(source, DEFAULT_ENCODING) for source in sources]
        for analysis in kept:
            analysis.units, analysis.import_uses, analysis.top_level  # noqa: B018
        measured, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        size = sum(len(s.data) for s in sources)
        estimate = sum(footprint.analysis_bytes(a) for a in kept)
        out[name] = {
            "files": len(sources),
            "source_bytes": size,
            "measured_bytes": measured,
            "measured_per_byte": round(measured / size, 1),
            "estimate_bytes": estimate,
            "estimate_over_measured": round(estimate / measured, 2),
        }
        del kept
    return out


# --- 2. memory ----------------------------------------------------------------------------


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait_idle(page, timeout_ms: float) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=timeout_ms)
    page.wait_for_function(NO_SKELETON, timeout=timeout_ms)


def write_repos(folder: Path, count: int) -> list[Path]:
    repos = []
    for r in range(count):
        repo = folder / f"repo{r:02d}"
        (repo / "src").mkdir(parents=True, exist_ok=True)
        for f in range(4):
            (repo / "src" / f"m{f}.js").write_bytes(js_file(r * 10 + f, 250_000))
        repos.append(repo)
    return repos


def upload_zip(path: Path, files: int) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(files):
            archive.writestr(f"big/src/m{n:02d}.js", js_file(5000 + n, 990_000))
    path.write_bytes(buffer.getvalue())
    return path


class PeakSampler:
    """RSS of a process every 0.2 s in a thread; ``peak`` since ``reset``."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                self.peak = max(self.peak, rss_mb(self.pid))
            except OSError:
                return

    def reset(self) -> None:
        self.peak = rss_mb(self.pid)

    def stop(self) -> None:
        self._stop.set()


def memory_run(root: Path, work: Path, args: argparse.Namespace, upload: bool) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    repos = write_repos(work / "repos", args.repos)
    zip_path = upload_zip(work / "big.zip", args.upload_files) if upload else None
    env = {"NEXUS_MEMORY_BUDGET_MB": str(args.budget_mb), "NEXUS_ALLOWED_ROOTS": str(work)}
    out: dict[str, Any] = {"budget_mb": args.budget_mb, "uptime_start": uptime(), "repos": []}
    timeout = args.timeout * 1000
    with (
        dashboard_process(work, timeout_s=120, root=root, env=env) as (url, process),
        sync_playwright() as playwright,
    ):
        sampler = PeakSampler(process.pid)
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(timeout)
        page.set_default_navigation_timeout(timeout)
        page.goto(url)
        wait_idle(page, timeout)
        out["rss_after_first_page_mb"] = round(rss_mb(process.pid))
        page.get_by_text("Local path", exact=True).click()
        wait_idle(page, timeout)
        for repo in repos:
            start = time.monotonic()
            box = page.get_by_label("Repository folder or .zip on the server")
            box.fill(str(repo))
            box.press("Enter")
            wait_idle(page, timeout)
            page.wait_for_function(
                f"document.querySelector(\"[data-testid='stMain']\").innerText"
                f".includes({repo.name!r})",
                timeout=timeout,
            )
            step = {"repo": repo.name, "s": round(time.monotonic() - start, 1)}
            step["rss_mb"] = round(rss_mb(process.pid))
            out["repos"].append(step)
            print(f"  {repo.name}: RSS {step['rss_mb']} MB ({step['s']} s)", flush=True)
        if zip_path is not None:
            page.get_by_text("Upload a zip", exact=True).click()
            wait_idle(page, timeout)
            sampler.reset()
            start = time.monotonic()
            page.locator("input[type='file']").set_input_files(str(zip_path))
            page.wait_for_timeout(1000)
            wait_idle(page, timeout)
            errors = page.locator("[data-testid='stAlertContentError']").all_inner_texts()
            out["upload"] = {
                "files": args.upload_files,
                "zip_mb": round(zip_path.stat().st_size / 1e6, 1),
                "s": round(time.monotonic() - start, 1),
                "peak_rss_mb": round(sampler.peak),
                "rss_after_mb": round(rss_mb(process.pid)),
                "message": errors[0] if errors else "(accepted)",
            }
            print(f"  upload: {out['upload']}", flush=True)
        page.close()
        browser.close()
        time.sleep(2)
        out["rss_after_sessions_closed_mb"] = round(rss_mb(process.pid))
        out["peak_rss_mb"] = round(rss_mb(process.pid, "VmHWM"))
        sampler.stop()
    out["uptime_end"] = uptime()
    return out


# --- 3. load --------------------------------------------------------------------------------


async def _settle(page, act, timeout_ms: float) -> float:
    """Seconds from ``act()`` to the settled page."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    start = time.monotonic()
    await act()
    # The rerun may start (and end) at once, or after the widget's debounce.
    with contextlib.suppress(PlaywrightTimeout):
        await page.wait_for_selector(
            "[data-testid='stApp'][data-test-script-state='running']", timeout=1500
        )
    await page.wait_for_selector(IDLE, timeout=timeout_ms)
    await page.wait_for_function(NO_SKELETON, timeout=timeout_ms)
    return time.monotonic() - start


async def _session(browser, url: str, timeout_ms: float, record: dict[str, list]) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(timeout_ms)
    context.set_default_navigation_timeout(timeout_ms)
    page = await context.new_page()
    record["first_load"].append(await _settle(page, lambda: page.goto(url), timeout_ms))

    def nav(label: str):
        link = page.locator("[data-testid='stSidebarNav']").get_by_role("link", name=label)
        return link.click

    async def action(label: str, act) -> None:
        seconds = await _settle(page, act, timeout_ms)
        record["action"].append(seconds)
        record.setdefault(label, []).append(seconds)

    await action("to Chunks", nav("Chunks and AST"))
    thumb = (
        page.locator("[data-testid='stSlider']").filter(has_text="max_tokens").get_by_role("slider")
    )
    for key in ("PageDown", "PageDown", "PageUp"):
        await action("max_tokens", lambda k=key: thumb.press(k))
    await action("to Search", nav("Search"))
    box = page.get_by_label("Query")
    for query in ("resize an image and upload the thumbnail", "copy an object to a new key"):
        await box.fill(query)
        await action("query", lambda: box.press("Enter"))
    await action("to Compare", nav("Compare"))
    await context.close()


async def _load(url: str, sessions: int, timeout_ms: float) -> dict[str, list]:
    from playwright.async_api import async_playwright

    record: dict[str, list] = {"first_load": [], "action": []}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        await asyncio.gather(*(_session(browser, url, timeout_ms, record) for _ in range(sessions)))
        await browser.close()
    return record


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a live process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class TreeCPU:
    """CPU seconds of this process's descendants except ``skip`` (the server): Playwright's
    driver and every Chromium process, sampled every 0.5 s so that renderers of closed
    sessions count too (up to their last sample)."""

    def __init__(self, skip: int) -> None:
        self.skip, self.seen, self._stop = skip, {}, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.sample()

    def sample(self) -> None:
        parents = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, IndexError):
                    stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    parents[int(entry.name)] = int(stat[1])
        mine = {os.getpid()}
        changed = True
        while changed:
            changed = False
            for pid, parent in parents.items():
                if parent in mine and pid not in mine and pid != self.skip:
                    mine.add(pid)
                    changed = True
        for pid in mine - {os.getpid()}:
            with contextlib.suppress(OSError, IndexError, ValueError):
                self.seen[pid] = max(self.seen.get(pid, 0.0), cpu_s(pid))

    def total(self) -> float:
        self._stop.set()
        self._thread.join()
        self.sample()
        return sum(self.seen.values())


#: Put first on the server's PYTHONPATH by ``--profile-server``: every thread (the event
#: loop, each rerun's script thread) runs under cProfile; the stats are written at exit.
PROFILER = """
import atexit, cProfile, os, pstats, threading

_profiles = [cProfile.Profile()]
_run = threading.Thread.run


def _profiled_run(self):
    profile = cProfile.Profile()
    _profiles.append(profile)
    profile.enable()
    try:
        _run(self)
    finally:
        profile.disable()


def _dump():
    _profiles[0].disable()
    stats = pstats.Stats(_profiles[0])
    for profile in _profiles[1:]:
        try:
            stats.add(profile)
        except (TypeError, ValueError):  # a thread still running, or one that never ran
            pass
    stats.dump_stats(os.environ["NEXUS_PROFILE_OUT"])


threading.Thread.run = _profiled_run
atexit.register(_dump)
_profiles[0].enable()
"""


def server_profile(path: Path, top: int = 25) -> dict[str, list[tuple[float, str]]]:
    """The calls that took the server the most time, all threads together: by cumulative
    seconds (what a call and its callees took) and by own seconds."""
    import pstats

    calls = [
        (cumulative, own, f"{file.split('site-packages/')[-1].split('/work/')[-1]}:{line}({func})")
        for (file, line, func), (_, _, own, cumulative, _) in pstats.Stats(str(path)).stats.items()
    ]
    return {
        "cumulative": [(round(c, 2), name) for c, _, name in sorted(calls, reverse=True)[:top]],
        "own": [(round(o, 2), name) for _, o, name in sorted(calls, key=lambda c: -c[1])[:top]],
    }


def load_run(root: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The sessions against one checkout's server. Beside the wall-clock figures (which
    the machine's load moves), the CPU seconds the server spent serving them and those
    the browser spent: the server's are what sharing work between sessions can cut."""
    out: dict[str, Any] = {"sessions": args.sessions, "uptime_start": uptime()}
    env = {}
    if args.profile_server:
        (work / "profiler").mkdir()
        (work / "profiler" / "sitecustomize.py").write_text(PROFILER)
        env = {"PYTHONPATH": str(work / "profiler"), "NEXUS_PROFILE_OUT": str(work / "prof")}
    with dashboard_process(work, timeout_s=120, root=root, env=env) as (url, process):
        start = time.monotonic()
        server_start, browser = cpu_s(process.pid), TreeCPU(skip=process.pid)
        record = asyncio.run(_load(url, args.sessions, args.timeout * 1000))
        out["wall_s"] = round(time.monotonic() - start, 1)
        out["server_cpu_s"] = round(cpu_s(process.pid) - server_start, 1)
        out["browser_cpu_s"] = round(browser.total(), 1)
        out["peak_rss_mb"] = round(rss_mb(process.pid, "VmHWM"))
    for name, values in record.items():
        out[name] = {
            "n": len(values),
            "p50_s": round(statistics.median(values), 2),
            "p95_s": round(percentile(values, 0.95), 2),
            "max_s": round(max(values), 2),
        }
    out["uptime_end"] = uptime()
    if args.profile_server:
        out["profile"] = server_profile(work / "prof")
    return out


# --- report ---------------------------------------------------------------------------------


def markdown(results: dict[str, Any]) -> str:
    dates = results.get("dates", {})
    lines = [
        "# Dashboard server memory and concurrent sessions",
        "",
        f"`bench/memory/server_memory.py`, {results['date']}. Machine: {results['machine']}.",
        "The machine is shared with other jobs: `uptime` load is given with each part;",
        "compare figures of one run only.",
        "",
        "## Calibration: a parsed file per byte of source (tracemalloc)",
        "",
        f"Measured {dates.get('calibration', results['date'])}.",
        "",
        "| files | n | source MB | measured MB | B per source B | estimate / measured |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in results.get("calibration", {}).items():
        lines.append(
            f"| {name} | {row['files']} | {row['source_bytes'] / 1e6:.2f} | "
            f"{row['measured_bytes'] / 1e6:.1f} | {row['measured_per_byte']} | "
            f"{row['estimate_over_measured']} |"
        )
    for label, run in results.get("memory", {}).items():
        repos = run["repos"]
        lines += [
            "",
            f"## Memory ({label}): {len(repos)} repositories of ~1 MB in turn, then an upload",
            "",
            f"Measured {dates.get('memory', results['date'])}. "
            f"Budget `NEXUS_MEMORY_BUDGET_MB={run['budget_mb']}`. Load at start: "
            f"`{run['uptime_start']}`; at end: `{run['uptime_end']}`.",
            "",
            f"- RSS after the first page: {run['rss_after_first_page_mb']} MB",
            "- RSS after each repository (MB): " + ", ".join(str(r["rss_mb"]) for r in repos),
            f"- RSS after all sessions closed: {run['rss_after_sessions_closed_mb']} MB; "
            f"peak RSS (VmHWM): {run['peak_rss_mb']} MB",
        ]
        if "upload" in run:
            up = run["upload"]
            lines.append(
                f"- upload of {up['files']} x ~1 MB files ({up['zip_mb']} MB zip): "
                f"{up['s']} s, peak RSS during it {up['peak_rss_mb']} MB, after "
                f"{up['rss_after_mb']} MB; page said: {up['message']!r}"
            )
    if results.get("load"):
        lines += [
            "",
            f"## {results['args']['sessions']} concurrent sessions (fake embedder)",
            "",
            f"Measured {dates.get('load', results['date'])}, each checkout's own server in "
            "turn (`--rounds` alternates them). "
            "Server CPU: seconds the dashboard process spent serving all sessions; browser "
            "CPU: Chromium and Playwright on the same cores. Wall-clock figures move with the "
            "machine's load; the server's CPU seconds much less.",
            "",
            "| code | first page load p50 / p95 (s) | action settle p50 / p95 / max (s) "
            "| actions | wall (s) | server CPU (s) | browser CPU (s) | peak RSS MB "
            "| load at start / end |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for label, run in results["load"].items():
            first, act = run["first_load"], run["action"]
            load = " / ".join(
                run[f"uptime_{when}"].split("load average:")[-1].split(",")[0].strip()
                for when in ("start", "end")
            )
            lines.append(
                f"| {label} | {first['p50_s']} / {first['p95_s']} | {act['p50_s']} / "
                f"{act['p95_s']} / {act['max_s']} | {act['n']} | {run['wall_s']} | "
                f"{run.get('server_cpu_s', '–')} | {run.get('browser_cpu_s', '–')} | "
                f"{run['peak_rss_mb']} | {load} |"
            )
    if results.get("load"):
        actions = ("to Chunks", "max_tokens", "to Search", "query", "to Compare")
        lines += [
            "",
            "Settle p50 / p95 (s) per action:",
            "",
            "| code | " + " | ".join(actions) + " |",
            "|---|" + "---|" * len(actions),
        ]
        for label, run in results["load"].items():
            cells = [f"{run[a]['p50_s']} / {run[a]['p95_s']}" if a in run else "–" for a in actions]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for label, run in results.get("load", {}).items():
        if "profile" not in run:
            continue
        lines += [
            "",
            f"### Where the server's time goes ({label}, under cProfile, all threads)",
            "",
            "| cumulative s | call | | own s | call |",
            "|---|---|---|---|---|",
        ]
        for (cum, cum_call), (own, own_call) in zip(
            run["profile"]["cumulative"], run["profile"]["own"], strict=True
        ):
            lines.append(f"| {cum} | `{cum_call}` | | {own} | `{own_call}` |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-mb", type=float, default=512)
    parser.add_argument("--repos", type=int, default=20)
    parser.add_argument("--upload-files", type=int, default=60)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--calibration-files", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=600, help="seconds per wait")
    parser.add_argument("--before", type=Path, help="checkout of the code before, to compare")
    parser.add_argument("--before-upload", action="store_true", help="upload on --before too")
    parser.add_argument("--parts", default="calibration,memory,load")
    parser.add_argument("--rounds", type=int, default=1, help="before/after pairs (ABBA order)")
    parser.add_argument(
        "--profile-server", action="store_true", help="cProfile the server's threads (slower)"
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "args": {k: str(v) for k, v in vars(args).items()},
        "memory": {},
        "load": {},
    }
    results["dates"] = {part: results["date"] for part in PARTS if part in parts}
    keep_earlier(results, parts)
    runs = []
    for n in range(1, args.rounds + 1):  # before, after, after, before...: a rising load
        suffix = f" {n}" if args.rounds > 1 else ""  # hits both alike
        pair = [(f"before{suffix}", args.before)] if args.before else []
        pair.append((f"after{suffix}", ROOT))
        runs += pair if n % 2 else pair[::-1]
    if "calibration" in parts:
        print(f"calibration ({uptime()})", flush=True)
        results["calibration"] = calibrate(args.calibration_files)
        print(json.dumps(results["calibration"], indent=1), flush=True)
    for label, root in runs:
        if "memory" in parts:
            print(f"memory, {label} ({uptime()})", flush=True)
            with tempfile.TemporaryDirectory() as work:
                upload = label.startswith("after") or args.before_upload
                results["memory"][label] = memory_run(root, Path(work), args, upload)
        if "load" in parts:
            print(f"load, {label} ({uptime()})", flush=True)
            with tempfile.TemporaryDirectory() as work:
                results["load"][label] = load_run(root, Path(work), args)
            print(json.dumps(results["load"][label], indent=1), flush=True)
        save(results)  # after each checkout, so a failure later keeps what was measured
    print(save(results))


PARTS = ("calibration", "memory", "load")


def keep_earlier(results: dict[str, Any], parts: set[str]) -> None:
    """Copy the parts not run now from the last results file, with their dates, so a run
    of one part does not drop the others' figures."""
    path = RESULTS / "server_memory.json"
    if not path.exists():
        return
    earlier = json.loads(path.read_text())
    for part in PARTS:
        if part not in parts and part in earlier:
            results[part] = earlier[part]
            results["dates"][part] = earlier.get("dates", {}).get(part, earlier["date"])
            if part == "load":
                results["args"]["sessions"] = earlier["args"]["sessions"]


def save(results: dict[str, Any]) -> str:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "server_memory.json").write_text(json.dumps(results, indent=2) + "\n")
    report = markdown(results)
    (RESULTS / "server_memory.md").write_text(report)
    return report


if __name__ == "__main__":
    main()
