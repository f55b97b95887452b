"""Time to a first answer on Search for a 5,000-file corpus, as a user sees it.

Run: ``flock /work/wt/bench.lock .venv/bin/python bench/dashboard/first_answer.py`` (``--help``).
Needs Debian's ``/usr/bin/chromium`` and the ``playwright`` package (no browser download).

Corpus: the npm packages of ``bench/speed/scale.py`` unpacked side by side (6,270 chunkable
files; ``fetch_corpus`` rebuilds it when absent). Each case starts ``streamlit run
app.py`` (``nexus.ui.serve.dashboard_process``) with ``NEXUS_ALLOWED_ROOTS`` set to the
corpus' folder, and opens, in a new Chromium page, a link to Search on the corpus with a
query (``/Search?repo=path:CORPUS&q=...``). The clock starts at ``page.goto``; the page's
text is read every 250 ms:

* **cold** (``--embedder``, the model by default; a fresh ``NEXUS_CACHE_DIR``): when the
  keyword (BM25) hits show, when the embedding model is announced as loading, and when
  the first dense hits over the chunks embedded so far show (the first answer: keyword
  hits + partial dense), with the build's progress line at that moment.
* **saved** (fake embedder; the saved index needs every chunk embedded, which the model
  cannot do on two cores within a benchmark): a first server builds and saves both
  indexes; a second, fresh server (same cache folder, nothing in memory) opens the page:
  time until the AST index's hits show from the saved index.
* **slider**: ``bench/dashboard/ui_latency.py``'s measurement (press -> settled page) of
  ``max_tokens`` changes on Chunks and AST, on the corpus' largest source file.

Figures go to stdout and ``bench/results/first_answer.{json,md}``; the targets (cold
<= 30 s, saved <= 5 s, slider p50 <= 0.5 s) are printed as PASS/FAIL, never asserted.

``--only cold|saved|slider`` runs one case.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.dashboard import ui_latency  # noqa: E402
from bench.machine import machine  # noqa: E402
from nexus.types import Category  # noqa: E402
from nexus.ui.serve import CHROMIUM, CHROMIUM_ARGS, dashboard_process  # noqa: E402

RESULTS = ROOT / "bench" / "results"
BASE = Path("/tmp/nexus-bench/scale")
TARGETS = {"cold": 30.0, "saved": 5.0, "slider_p50": 0.5}
QUERY = "debounce a function so it runs once after the last call"

KEYWORD = re.compile(r"Keyword \(BM25\), [^\n]*\s+1\. ")
DENSE = re.compile(r"Embeddings, the [\d,]+ chunks embedded so far\s+.*?1\. ", re.S)
DONE_HITS = re.compile(r"AST \(max \d+ tokens\)\s+(?:(?!Partial:).)*?1\. ", re.S)
PROGRESS = re.compile(r"AST index: [^\n]*")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def corpus_path(folder: Path | None) -> Path:
    if folder is not None:
        return folder
    corpus = BASE / "corpus"
    if not corpus.is_dir():
        from bench.speed.scale import fetch_corpus

        corpus, _ = fetch_corpus(BASE)
    return corpus


def search_link(url: str, corpus: Path, query: str) -> str:
    return f"{url}/Search?" + urlencode({"repo": f"path:{corpus}", "q": query})


def watch(page, link: str, until: list[str], timeout_s: float) -> dict[str, Any]:
    """Open ``link`` and read the page every 250 ms: seconds from ``goto`` to each event
    (``drawn``: the build's progress shows, ``keyword``, ``loading``, ``dense``,
    ``done_hits``) until those in ``until`` happened."""
    seen: dict[str, Any] = {}
    t0 = time.perf_counter()
    page.goto(link, wait_until="commit")
    while time.perf_counter() - t0 < timeout_s:
        try:
            text = page.locator("[data-testid='stMain']").inner_text(timeout=5_000)
        except Exception:  # noqa: BLE001 - the page is still loading
            text = ""
        now = round(time.perf_counter() - t0, 2)
        progress = PROGRESS.search(text)
        for name, hit in (
            ("drawn", progress),
            ("keyword", KEYWORD.search(text)),
            ("loading", "loading the embedding model" in text.lower()),
            ("dense", DENSE.search(text)),
            ("done_hits", DONE_HITS.search(text)),
        ):
            if hit and name not in seen:
                seen[name] = now
                seen[f"{name}_progress"] = progress.group(0) if progress else ""
                print(f"  {now:7.2f} s  {name}: {seen[f'{name}_progress'][:150]}")
        if "Traceback" in text or "Error" in text.split("\n", 1)[0]:
            seen["error"] = text[:500]
            break
        if all(name in seen for name in until) or ("dense" in until and "done_hits" in seen):
            break
        page.wait_for_timeout(250)
    seen["last_progress"] = progress.group(0) if progress else ""
    seen["watched_s"] = round(time.perf_counter() - t0, 2)
    return seen


def server_env(corpus: Path, cache: Path, embedder: str) -> dict[str, str]:
    return {
        "NEXUS_ALLOWED_ROOTS": str(corpus.parent),
        "NEXUS_CACHE_DIR": str(cache),
        "NEXUS_UI_EMBEDDER": embedder,
    }


def open_browser(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def cold_case(corpus: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    cache = work / "cold-cache"
    env = server_env(corpus, cache, args.embedder)
    print(f"cold: {args.embedder} embedder, empty cache {cache}; {uptime()}")
    (work / "cold").mkdir()
    with dashboard_process(work / "cold", 120, ROOT, env) as (url, _), sync_playwright() as pw:
        browser = open_browser(pw)
        page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
        seen = watch(page, search_link(url, corpus, args.query), ["keyword", "dense"], args.limit_s)
        browser.close()
    seen["load_after"] = uptime()
    return seen


def saved_case(corpus: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    cache = work / "saved-cache"
    env = server_env(corpus, cache, "fake")
    out: dict[str, Any] = {"load_before": uptime()}
    link = None
    print(f"saved: fake embedder; first server builds both indexes; {out['load_before']}")
    for run in ("build", "reopen"):
        folder = work / f"saved-{run}"
        folder.mkdir()
        with dashboard_process(folder, 120, ROOT, env) as (url, _), sync_playwright() as pw:
            browser = open_browser(pw)
            page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
            link = search_link(url, corpus, args.query)
            if run == "build":
                t0 = time.perf_counter()
                seen = watch(page, link, ["done_hits"], args.limit_s)
                page.get_by_text("Line-based index: done").wait_for(timeout=args.limit_s * 1000)
                seen["both_done_s"] = round(time.perf_counter() - t0, 2)
            else:
                seen = watch(page, link, ["done_hits"], args.limit_s)
            browser.close()
        out[run] = seen
    out["indexes"] = sorted(p.name for p in (cache / "indexes").iterdir())
    out["load_after"] = uptime()
    return out


def slider_case(corpus: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    expected_root = corpus
    from nexus.ingest.sources import open_repository

    repo = open_repository(corpus)
    sources = [i for i in repo.files if i.chunkable and i.category is Category.SOURCE]
    largest = max(sources, key=lambda i: (i.size, i.path))
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    started = {"date": now, "load_before": uptime()}
    print(f"slider: {largest.path} ({largest.size:,} bytes), fake embedder; {uptime()}")
    expected = ui_latency.Expected(expected_root, largest.path)
    query = "?" + urlencode({"repo": f"path:{corpus}", "file": largest.path})
    folder = work / "slider"
    folder.mkdir()
    env = server_env(corpus, folder / "cache", "fake")
    options = argparse.Namespace(n=args.slider_n, n_other=0, timeout_s=args.limit_s)
    with dashboard_process(folder, 120, ROOT, env) as (url, _):
        browser = ui_latency.run_browser(url, expected, options, query)
    summary = ui_latency.summarize(browser["samples"]["max_tokens"])
    return {
        **started,
        "file": largest.path,
        "bytes": largest.size,
        "lines": expected.analysis.source.text.count("\n") + 1,
        "open": {k: v for k, v in browser.items() if k != "samples"},
        "max_tokens": summary,
        "load_after": uptime(),
    }


def verdict(value: float | None, target: float) -> str:
    return "n/a" if value is None else ("PASS" if value <= target else "FAIL")


def markdown(r: dict[str, Any]) -> str:
    cold, saved, slider = r.get("cold", {}), r.get("saved", {}), r.get("slider", {})
    lines = [
        "# Time to a first answer on Search (issue 11)",
        "",
        f"{r['date']}; {r['machine']['nproc']} CPUs ({r['machine']['cpu']}), Python "
        f"{r['machine']['python']}. **The machine is shared with other jobs** (2 cores); "
        f"load before: `{r['load_before']}`.",
        "",
        f"Corpus: `{r['corpus']}` ({r['files']:,} files, {r['chunkable']:,} chunked). "
        "Measured in headless Chromium driving a real `streamlit run app.py` (Playwright): "
        "the clock starts at `page.goto` of a Search link with the repository and a query, "
        "and stops when the page shows the hits.",
        "",
        "| case | embedder | page drawn s | keyword hits s | model announced s | "
        "first dense hits s | target | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    if cold:
        first = cold.get("dense", cold.get("done_hits"))
        lines.append(
            f"| cold cache | {r['embedder']} | {cold.get('drawn', '–')} | "
            f"{cold.get('keyword', '–')} | "
            f"{cold.get('loading', '–')} | {first if first is not None else '–'} | "
            f"≤ {TARGETS['cold']:g} s | {verdict(first, TARGETS['cold'])} |"
        )
    if saved:
        reopen = saved.get("reopen", {})
        lines.append(
            f"| saved index matches | fake | {reopen.get('drawn', '–')} | – | – | "
            f"{reopen.get('done_hits', '–')} | "
            f"≤ {TARGETS['saved']:g} s | {verdict(reopen.get('done_hits'), TARGETS['saved'])} |"
        )
    lines.append("")
    if cold:
        lines += [
            f"Cold, build progress at the first dense answer: `{cold.get('dense_progress', '')}`; "
            f"when the watch ended ({cold.get('watched_s')} s): "
            f"`{cold.get('last_progress', '')}`. Load after: `{cold.get('load_after')}`.",
            "",
        ]
    if saved:
        build = saved.get("build", {})
        lines += [
            f"Saved: the first server (fake embedder, empty cache) showed AST hits after "
            f"{build.get('done_hits')} s and had both indexes built and saved after "
            f"{build.get('both_done_s')} s ({', '.join(saved.get('indexes', []))}); a fresh "
            f"server then opened the saved AST index: "
            f"`{saved.get('reopen', {}).get('done_hits_progress', '')}`. "
            f"Load after: `{saved.get('load_after')}`.",
            "",
        ]
    if slider:
        s = slider["max_tokens"]
        total = s.get("total", {})
        lines += [
            f"Slider: `{slider['file']}` ({slider['bytes']:,} bytes, {slider['lines']:,} "
            f"lines), Chunks and AST, `max_tokens` presses (bench/dashboard/ui_latency.py's "
            f"press -> settled page): n={s.get('n')}, failed {s.get('failed')}, "
            f"p50 {total.get('p50', float('nan')):.3f} s, p95 {total.get('p95', float('nan')):.3f}"
            f" s, max {total.get('max', float('nan')):.3f} s; target p50 ≤ "
            f"{TARGETS['slider_p50']:g} s: {verdict(total.get('p50'), TARGETS['slider_p50'])}"
            f" (p50 press -> script done {s.get('to_end', {}).get('p50', float('nan')):.3f} s, "
            f"browser long tasks {s.get('long_ms', {}).get('p50', float('nan')):.3f} s). "
            f"Page open: {slider['open']}. Measured {slider.get('date')}, load before: "
            f"`{slider.get('load_before')}`, after: `{slider.get('load_after')}`.",
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="repository folder (default: npm corpus)")
    parser.add_argument("--embedder", default="model", help="cold case: model or fake")
    parser.add_argument("--query", default=QUERY)
    parser.add_argument("--limit-s", type=int, default=300, help="give up on a case after this")
    parser.add_argument("--slider-n", type=int, default=10, help="max_tokens presses (0: skip)")
    parser.add_argument(
        "--only", choices=("cold", "saved", "slider"), action="append", help="cases to run"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"no Chromium at {CHROMIUM}; nothing measured")
        return 1
    corpus = corpus_path(args.corpus).resolve()
    from nexus.ingest.sources import open_repository

    repo = open_repository(corpus)
    report: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "load_before": uptime(),
        "corpus": str(corpus),
        "files": len(repo.files),
        "chunkable": sum(1 for i in repo.files if i.chunkable),
        "embedder": args.embedder,
        "query": args.query,
    }
    previous = args.out / "first_answer.json"
    if args.only and previous.exists():  # keep the other cases' figures
        old = json.loads(previous.read_text())
        report.update({k: old[k] for k in ("cold", "saved", "slider") if k in old})
    cases = {"cold": cold_case, "saved": saved_case, "slider": slider_case}
    with tempfile.TemporaryDirectory(prefix="nexus-first-answer-") as tmp:
        for name, case in cases.items():
            if args.only and name not in args.only or (name == "slider" and not args.slider_n):
                continue
            work = Path(tmp) / name
            work.mkdir()
            report[name] = case(corpus, work, args)
    report["load_after"] = uptime()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "first_answer.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    text = markdown(report)
    (args.out / "first_answer.md").write_text(text + "\n")
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
