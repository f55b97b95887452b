"""Where a dashboard rerun spends its time when many sessions look at the same thing.

Run: ``.venv/bin/python bench/dashboard/rerun_profile.py`` (``--root DIR`` profiles another
checkout, e.g. the code before a change: ``git archive COMMIT | tar -x -C DIR``).

Each page is opened once (the first session builds what is shared), then by
``--sessions`` new sessions (AppTest, fake embedder, the default sample): their CPU
time per session is printed, and a cProfile of those runs lists the calls that took
the most (cumulative) time, in ms per session. Figures go to stdout and to
``bench/results/rerun_profile.md`` (the ``--root`` checkout's name in the title); the
machine's load is printed beside them: compare two checkouts within one run of the
machine only.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = {
    "Repository": "app.py",
    "Chunks and AST": "pages/1_Chunks_and_AST.py",
    "Compare": "pages/2_Compare.py",
    "Search": "pages/3_Search.py",
    "Evaluate": "pages/4_Evaluate.py",
    "Export": "pages/5_Export.py",
}
#: Calls worth naming: the pages, nexus, figure and table building, element marshalling.
SHOWN = (
    "pages/",
    "nexus/",
    "plotly/express/_chart_types",
    "plotly/graph_objs/_figure.py",
    "plotly/io/_json",
    "streamlit/elements/",
    "streamlit/dataframe_util",
    "pandas/core/frame.py",
)
QUERY = "resize an image and upload the thumbnail"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def profile_pages(root: Path, sessions: int, top: int) -> list[dict]:
    """Per page: CPU ms per new session, and the top calls of a profile of them."""
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.testing.v1 import AppTest

    # AppTest runs the page on a script thread: profile that thread's runs only.
    active: list[cProfile.Profile] = []
    run_script = script_runner.ScriptRunner._run_script

    def profiled(self, rerun_data):  # noqa: ANN001, ANN202
        if not active:
            return run_script(self, rerun_data)
        active[0].enable()
        try:
            return run_script(self, rerun_data)
        finally:
            active[0].disable()

    script_runner.ScriptRunner._run_script = profiled

    def session(path: str) -> None:
        at = AppTest.from_file(str(root / path), default_timeout=300)
        at.session_state["query"] = QUERY
        at.run()
        if at.exception:
            raise RuntimeError(f"{path}: {at.exception[0].message}")

    out = []
    for name, path in PAGES.items():
        session(path)  # the first session builds what sessions share
        cpu = time.process_time()
        for _ in range(sessions):
            session(path)
        cpu_ms = (time.process_time() - cpu) * 1000 / sessions
        active.append(cProfile.Profile())
        for _ in range(sessions):
            session(path)
        stats = pstats.Stats(active.pop())
        calls = []
        for (file, line, func), (_, ncalls, _, cumulative, _) in stats.stats.items():
            short = file.split("site-packages/")[-1].replace(f"{root}/", "")
            if any(part in short for part in SHOWN):
                calls.append((cumulative * 1000 / sessions, f"{short}:{line}({func})", ncalls))
        calls.sort(reverse=True)
        out.append({"page": name, "cpu_ms": round(cpu_ms), "top": calls[:top]})
        print(f"{name}: {cpu_ms:.0f} ms CPU per new session", flush=True)
        for ms, call, _ in calls[:top]:
            print(f"  {ms:7.1f} ms  {call}", flush=True)
    return out


def markdown(root: Path, sessions: int, pages: list[dict], load: tuple[str, str]) -> str:
    lines = [
        f"# Dashboard reruns: where a new session's time goes ({root.name})",
        "",
        "`bench/dashboard/rerun_profile.py`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"{sessions} new sessions per page after a first one (AppTest, fake embedder, the "
        "default sample). The machine is shared: load at start "
        f"`{load[0].split('load average:')[-1].strip()}`, at end "
        f"`{load[1].split('load average:')[-1].strip()}`. Cumulative ms per session under "
        "cProfile (which slows Python calls); CPU ms measured without it.",
        "",
    ]
    for page in pages:
        lines += [f"## {page['page']}: {page['cpu_ms']} ms CPU per new session", ""]
        lines += ["| ms (cumulative) | call |", "|---|---|"]
        lines += [f"| {ms:.1f} | `{call}` |" for ms, call, _ in page["top"]]
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to profile")
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--output", type=Path, default=ROOT / "bench/results/rerun_profile.md")
    args = parser.parse_args()
    root, output = args.root.resolve(), args.output.resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    os.environ["NEXUS_UI_EMBEDDER"] = "fake"
    with tempfile.TemporaryDirectory() as cache:
        os.environ["NEXUS_CACHE_DIR"] = cache
        start = uptime()
        print(start, flush=True)
        pages = profile_pages(root, args.sessions, args.top)
        end = uptime()
    report = markdown(root, args.sessions, pages, (start, end))
    output.write_text(report)
    print(report)


if __name__ == "__main__":
    main()
