"""Chunking per language against that language's floor (parse + one tiktoken encode),
with the quality figures of bench/chunking.py: % over budget, coverage of
non-whitespace bytes, and fragments (chunks under 32 tokens that are not a whole unit).

Corpora (real code only; whatever is not on this machine is skipped and said so):
  * python: the library modules of the three sdists of ``bench/language_eval.py
    --language python`` (run it first: it downloads them into ``$PY_WORK``) and
    sample_repos/py-orders;
  * go: the Go files Debian's git package ships (/usr/share/doc/git/contrib) and the
    three Debian packages of ``bench/language_eval.py --language go`` (``$GO_WORK``);
  * javascript/typescript: see bench/chunking.py.

    .venv/bin/python bench/language_speed.py

Results: ``bench/results/language_speed.{json,md}``. CPU time, best of 5, every run cold.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nexus.chunking.analysis import analyze  # noqa: E402
from nexus.config import ChunkConfig  # noqa: E402
from nexus.languages import language_for_path, parse  # noqa: E402
from nexus.pipeline import chunk_analysis  # noqa: E402
from nexus.sources import open_repository  # noqa: E402
from nexus.tokens import get_encoding  # noqa: E402
from nexus.types import SourceFile  # noqa: E402

PY_WORK = Path(os.environ.get("PY_WORK", "/tmp/nexus-pyeval"))
GO_WORK = Path(os.environ.get("GO_WORK", "/tmp/nexus-goeval"))
CORPORA = {
    "python": [PY_WORK / "src", ROOT / "sample_repos" / "py-orders"],
    "go": [Path("/usr/share/doc/git/contrib"), GO_WORK / "src"],
}
REPEAT = 5
CONFIG = ChunkConfig()


def files_of(language: str) -> list[SourceFile]:
    found = []
    for root in CORPORA[language]:
        if not root.is_dir():
            print(f"{language}: {root} is missing, skipped")
            continue
        repo = open_repository(root)
        found += [s for s in repo.source_files() if s.info.language == language]
    return found


def best_cpu(fn) -> float:
    best = float("inf")
    for _ in range(REPEAT):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def measure(language: str, sources: list[SourceFile]) -> dict[str, object]:
    encode = get_encoding(CONFIG.encoding).encode_ordinary

    def floor() -> None:
        for source in sources:
            parse(source.data, language)
            encode(source.text)

    def nexus() -> list:
        return [
            (analysis, chunk_analysis(analysis, CONFIG, repo="bench"))
            for analysis in (analyze(source, CONFIG.encoding) for source in sources)
        ]

    floor_s, nexus_s = best_cpu(floor), best_cpu(nexus)
    chunks = over = fragments = nws = covered = 0
    for analysis, file_chunks in nexus():
        data = analysis.data
        mask = bytearray(len(data))
        whole = {(u.start_byte, u.end_byte) for u in analysis.units}
        for chunk in file_chunks:
            chunks += 1
            over += chunk.token_count > CONFIG.max_tokens
            mask[chunk.start_byte : chunk.end_byte] = b"\x01" * (chunk.end_byte - chunk.start_byte)
            inner = data[chunk.start_byte : chunk.end_byte].strip()
            start = chunk.start_byte + data[chunk.start_byte : chunk.end_byte].find(inner[:1])
            is_unit = any(a >= start and b <= chunk.end_byte for a, b in whole)
            is_file = len(file_chunks) == 1
            fragments += chunk.token_count < 32 and not is_unit and not is_file
        nws += sum(1 for byte in data if not chr(byte).isspace())
        covered += sum(1 for i, byte in enumerate(data) if mask[i] and not chr(byte).isspace())
    size = sum(len(s.data) for s in sources)
    return {
        "language": language,
        "files": len(sources),
        "bytes": size,
        "floor_cpu_s": round(floor_s, 4),
        "nexus_cpu_s": round(nexus_s, 4),
        "x_floor": round(nexus_s / floor_s, 2) if floor_s else None,
        "chunks": chunks,
        "over_budget_pct": round(100 * over / max(chunks, 1), 2),
        "coverage_pct": round(100 * covered / max(nws, 1), 3),
        "fragments_pct": round(100 * fragments / max(chunks, 1), 2),
    }


def main() -> None:
    load = "load average {:.1f} {:.1f} {:.1f}, machine shared with other jobs".format(
        *os.getloadavg()
    )
    rows = []
    for language in CORPORA:
        sources = [s for s in files_of(language) if language_for_path(s.info.path) == language]
        if not sources:
            continue
        row = measure(language, sources)
        rows.append(row)
        print(row, flush=True)
    report = {"load": load, "max_tokens": CONFIG.max_tokens, "rows": rows}
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "language_speed.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [
        "# Chunking per language (bench/language_speed.py)",
        "",
        f"{load}; {CONFIG.max_tokens}/{CONFIG.min_tokens} tokens, auto profile; CPU time, "
        f"best of {REPEAT}. Targets: <= 1.5x floor, 0% over, 100% coverage, fragments < 0.5%.",
        "",
        "| language | files | KB | floor CPU s | Nexus CPU s | x floor | chunks | % over | "
        "% covered | % fragments |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *(
            f"| {r['language']} | {r['files']} | {r['bytes'] / 1024:.0f} | {r['floor_cpu_s']} | "
            f"{r['nexus_cpu_s']} | {r['x_floor']} | {r['chunks']} | {r['over_budget_pct']} | "
            f"{r['coverage_pct']} | {r['fragments_pct']} |"
            for r in rows
        ),
        "",
        "Java and Rust: no real source reachable offline on this machine (their PyPI sdists",
        "need a Rust/Java build to download); they are covered by the property tests only.",
    ]
    (results / "language_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
