"""Small builders shared by tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

import numpy as np

from nexus.chunking.analysis import FileAnalysis, analyze
from nexus.config import DEFAULT_ENCODING
from nexus.runtime.builds import BUILD_THREAD
from nexus.types import Category, Chunk, FileInfo, SourceFile
from nexus.ui.fake_embedder import HashingEmbedder


def make_source(
    text: str, path: str = "src/example.ts", language: str = "typescript"
) -> SourceFile:
    data = text.encode("utf-8")
    info = FileInfo(path, len(data), Category.SOURCE, language, "test fixture")
    return SourceFile(info=info, text=text, data=data)


def analyze_text(
    text: str, path: str = "src/example.ts", language: str = "typescript"
) -> FileAnalysis:
    return analyze(make_source(text, path, language), DEFAULT_ENCODING)


def make_chunk(
    chunk_id: str, file: str = "src/a.js", start: int = 1, end: int = 10, **fields
) -> Chunk:
    """A hand-made chunk for index and metric tests (defaults for everything else)."""
    values = dict(
        id=chunk_id,
        repo="demo",
        file=file,
        language="javascript",
        strategy="ast",
        start_line=start,
        end_line=end,
        start_byte=0,
        end_byte=10,
        token_count=5,
        text=f"function {chunk_id}() {{}}",
        context=f"// {file}",
    )
    return Chunk(**{**values, **fields})


def large_typescript(n_bytes: int) -> str:
    """A realistic TypeScript file of at least ``n_bytes``: documented functions and
    classes, as in a large hand-written module (for the large-file test and bench)."""
    blocks: list[str] = []
    size = 0
    while size < n_bytes:
        i = len(blocks)
        block = f"""
/** Compute value {i}: a sum scaled by the options. */
export function compute{i}(input: number, options: {{ scale?: number }} = {{}}): number {{
  const scale = options.scale ?? {i % 7 + 1};
  let total = 0;
  for (let k = 0; k < input; k++) {{
    total += (k * scale) % {i % 13 + 3};
  }}
  return total + {i};
}}

export class Service{i} {{
  private cache = new Map<string, number>();

  get(key: string): number | undefined {{
    return this.cache.get(key);
  }}

  set(key: string, value: number): void {{
    this.cache.set(key, compute{i}(value));
  }}
}}
"""
        blocks.append(block)
        size += len(block)
    return "".join(blocks)


# --- hostile repository contents (issue 13: markdown injection) ----------------------

#: A file whose name breaks out of a code span into an image (the issue's zip entry).
HOSTILE_FILE = "proj/a`![x](https:/evil.invalid/zipname.png)`b.js"
#: Object-key symbols that markdown would turn into images, links, bold text or HTML.
HOSTILE_KEYS = (
    "![k](https://evil.invalid/key.png)",
    "**bold** [kl](https://evil.invalid/kl)",
    "<img src=https://evil.invalid/img.png onerror=alert(1)>",
)
HOSTILE_QUERY = "![q](https://evil.invalid/q.png) **bold** handler"


def hostile_files() -> dict[str, bytes]:
    """A small repository whose file names, symbols and query set hold the payloads."""
    keys = "".join(
        f'  "{key}": function () {{\n    return "handler {n}";\n  }},\n'
        for n, key in enumerate(HOSTILE_KEYS)
    )
    source = (
        f"const handlers = {{\n{keys}"
        "  __dunder_name__: function () {\n    return 'dunder';\n  },\n};\n"
        "module.exports = handlers;\n"
    )
    target = {"file": HOSTILE_FILE, "start_line": 2, "end_line": 4}
    queries = [
        {"id": "q1", "query": HOSTILE_QUERY, "variant": "doc", "target": target},
        {
            "id": "q2",
            "query": "[sign in](https://evil.invalid/login) __dunder_name__",
            "variant": "<a href='https://evil.invalid/v'>**bold**</a>",
            "target": target,
        },
    ]
    return {
        HOSTILE_FILE: source.encode(),
        "__dunder_name__.js": b"function __dunder_name__() {\n  return 1;\n}\n",
        "queries.jsonl": "".join(json.dumps(q) + "\n" for q in queries).encode(),
    }


class GatedEmbedder(HashingEmbedder):
    """Counts the texts a build embeds; each batch waits for one ``step``."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.embedded: list[str] = []
        #: The thread that embedded each of ``embedded`` (two builds may run at once).
        self.threads: list[int] = []
        self.gate = threading.Semaphore(0)
        self.waiting = threading.Semaphore(0)

    def encode(self, texts: Sequence[str], progress=None) -> np.ndarray:
        if threading.current_thread().name == BUILD_THREAD:  # queries pass freely
            self.waiting.release()
            assert self.gate.acquire(timeout=30)
            self.embedded.extend(texts)
            self.threads.extend(threading.get_ident() for _ in texts)
        return super().encode(texts, progress)

    def step(self) -> None:
        """Let one batch through, once the build is waiting for it."""
        assert self.waiting.acquire(timeout=30)
        self.gate.release()


#: The verbs that embed (``--tier``): the fast tier is their default.
EMBEDDING_VERBS = ("index", "search", "eval")


def on_quality_tier(argv: Sequence[str]) -> list[str]:
    """``argv`` of a command-line run with ``--tier quality`` added when it embeds and names
    no tier: such tests read MiniLM's (or a fake quality model's) vectors; the default tier
    (fast: distilled once, minutes in a fresh cache) has tests of its own."""
    argv = list(argv)
    if argv and argv[0] in EMBEDDING_VERBS and "--tier" not in argv:
        argv[1:1] = ["--tier", "quality"]
    return argv
