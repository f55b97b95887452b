"""The streaming pipeline: N workers give exactly the output of one; a failing file is
reported for that file and the run goes on."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from nexus.config import ChunkConfig
from nexus.ingest.selection import FileSelection
from nexus.ingest.sources import FileRef, IngestSettings, open_repository
from nexus.runtime.stream import collect_chunks, stream_chunks, stream_refs

SAMPLES = Path(__file__).resolve().parents[2] / "sample_repos"
ALL_FILES = IngestSettings(selection=FileSelection(tests=True, generated=True))


def records(results) -> list[dict]:
    return [chunk.to_dict() for result in results for chunk in result.chunks]


def generated_repo(root: Path, n_files: int = 300) -> Path:
    """Hundreds of small JS/TS files of varied shapes and sizes, in nested folders."""
    for i in range(n_files):
        ext = (".js", ".ts", ".tsx")[i % 3]
        body = "".join(
            f"export function f{i}_{k}(a{k}) {{\n  return a{k} * {k} + {i};\n}}\n"
            for k in range(1 + i % 17)
        )
        if ext == ".tsx":
            body += f"export const View{i} = () => <div className='v{i}'>{{f{i}_0(1)}}</div>;\n"
        path = root / f"pkg{i % 7}" / f"sub{i % 3}" / f"file{i:04d}{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return root


@pytest.mark.parametrize("name", ["express-images", "react-dashboard", "ts-payments"])
def test_workers_give_identical_output_on_the_sample_repos(name: str) -> None:
    repo = open_repository(SAMPLES / name, settings=ALL_FILES)
    one = list(stream_chunks(repo, ChunkConfig(), workers=1))
    two = list(stream_chunks(repo, ChunkConfig(), workers=2))
    assert [r.path for r in two] == [info.path for info in repo.chunkable_files()]
    assert records(two) == records(one)  # ids, bytes, metadata and order
    assert not any(r.error for r in one)


def test_workers_give_identical_output_on_hundreds_of_files(tmp_path: Path) -> None:
    repo = open_repository(generated_repo(tmp_path / "gen"))
    assert len(repo.chunkable_files()) == 300
    config = ChunkConfig(max_tokens=64, min_tokens=8)
    one = records(stream_chunks(repo, config, workers=1))
    three = records(stream_chunks(repo, config, workers=3))
    assert three == one and len(one) > 300
    lines = config.with_(strategy="lines", line_window=5)
    assert records(stream_chunks(repo, lines, workers=2)) == records(
        stream_chunks(repo, lines, workers=1)
    )


@dataclass(frozen=True)
class BadRef(FileRef):
    """A file whose reading raises, or kills the process reading it."""

    how: str = "raise"

    def load(self):
        if self.how == "die":
            os._exit(3)  # a worker crash, as a segfault in a parser would be
        raise RuntimeError("cannot read this one")


@pytest.mark.parametrize(("how", "workers"), [("raise", 1), ("raise", 2), ("die", 2)])
def test_a_failing_file_is_reported_and_the_run_goes_on(how: str, workers: int) -> None:
    repo = open_repository(SAMPLES / "ts-payments")
    refs = list(repo.refs())
    bad = refs[2]
    refs[2] = BadRef(bad.info, disk_path=bad.disk_path, cap=bad.cap, how=how)
    results = list(stream_refs(refs, ChunkConfig(), repo=repo.name, workers=workers))
    assert [r.path for r in results] == [ref.info.path for ref in refs]
    assert [bool(r.error) for r in results] == [i == 2 for i in range(len(refs))]
    expected = "worker process died" if how == "die" else "RuntimeError: cannot read this one"
    assert expected in results[2].error
    good = list(stream_chunks(repo, ChunkConfig()))
    assert records(results[:2] + results[3:]) == records(good[:2] + good[3:])
    chunks, failed = collect_chunks(results)
    assert failed == [results[2]] and len(chunks) == len(records(results))


@pytest.mark.parametrize(("how", "workers"), [("raise", 1), ("raise", 2), ("die", 2)])
def test_jsonl_made_on_the_workers_is_the_chunks_records(
    tmp_path: Path, how: str, workers: int
) -> None:
    """``jsonl=True``: each file's chunks come back as the lines ``Chunk.to_dict`` gives,
    in file order, failures included."""
    repo = open_repository(generated_repo(tmp_path / "gen", 120))
    refs = list(repo.refs())
    refs[5] = BadRef(refs[5].info, disk_path=refs[5].disk_path, cap=refs[5].cap, how=how)
    objects = list(stream_refs(refs, ChunkConfig(), repo=repo.name, workers=workers))
    texts = list(stream_refs(refs, ChunkConfig(), repo=repo.name, workers=workers, jsonl=True))
    assert [r.path for r in texts] == [r.path for r in objects]
    assert [(r.n_chunks, r.error) for r in texts] == [(len(r.chunks), r.error) for r in objects]
    lines = [json.loads(line) for r in texts for line in r.text.splitlines()]
    assert lines == records(objects) and len(lines) > 120
    assert texts[5].error and not texts[5].text


@pytest.mark.parametrize("bad", ["largest", "before the largest"])
def test_the_largest_file_goes_first_and_a_crash_loses_no_file(tmp_path: Path, bad: str) -> None:
    """The largest file is started first and held until its turn; a worker that dies,
    on it or on a file before it, still leaves every other file's chunks in order."""
    root = generated_repo(tmp_path / "gen", 120)
    big = "".join(f"export function big{k}(a) {{\n  return a + {k};\n}}\n" for k in range(9000))
    (root / "pkg3" / "sub1" / "file0050big.ts").write_text(big)
    repo = open_repository(root)
    refs = list(repo.refs())
    largest = max(range(len(refs)), key=lambda i: refs[i].info.size)
    assert refs[largest].info.path.endswith("big.ts") and 10 < largest < len(refs) - 40
    at = largest if bad == "largest" else 3
    good = list(stream_refs(refs, ChunkConfig(), repo=repo.name, workers=1))
    refs[at] = BadRef(refs[at].info, disk_path=refs[at].disk_path, cap=refs[at].cap, how="die")
    results = list(stream_refs(refs, ChunkConfig(), repo=repo.name, workers=2))
    assert [r.path for r in results] == [r.path for r in good]
    assert [i for i, r in enumerate(results) if r.error] == [at]
    assert records(results[:at] + results[at + 1 :]) == records(good[:at] + good[at + 1 :])


def test_the_largest_file_is_started_early_once_every_file_has_arrived(
    tmp_path: Path, monkeypatch
) -> None:
    from concurrent.futures import Future

    from nexus.runtime import stream

    submitted: list[list[str]] = []

    class LazyPool:
        """Runs a batch only when its result is asked for, so the walk always runs ahead."""

        def __init__(self, workers, job) -> None:
            stream._start_worker(job)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            return None

        def submit(self, fn, batch):
            submitted.append([ref.info.path for ref in batch])
            future: Future = Future()
            wait = future.result

            def result(timeout=None):
                if not future.done():
                    future.set_result(fn(batch))
                return wait(timeout)

            future.result = result
            return future

    monkeypatch.setattr(stream, "_pool", LazyPool)
    root = generated_repo(tmp_path / "gen", 400)
    (root / "pkg5" / "big.ts").write_text("export const a = 1;\n" * 20_000)
    repo = open_repository(root)
    paths = [info.path for info in repo.chunkable_files()]
    assert paths.index("pkg5/big.ts") > 2 * stream.WINDOW_PER_WORKER * stream.BATCH_FILES
    results = list(stream_chunks(repo, ChunkConfig(), workers=2, jsonl=True))
    assert [r.path for r in results] == paths
    assert sorted(path for batch in submitted for path in batch) == paths  # each file once
    # The first window goes in path order; then, every batch known, the big file's batch
    # (the files before it since the last batch closed, and it) jumps the queue.
    in_path_order = sorted(submitted, key=lambda batch: paths.index(batch[0]))
    big = next(i for i, batch in enumerate(in_path_order) if batch[-1] == "pkg5/big.ts")
    window = 2 * stream.WINDOW_PER_WORKER
    assert submitted[:window] == in_path_order[:window]
    assert submitted[window] == in_path_order[big] and big > window


def test_zip_repositories_stream_the_same_chunks(tmp_path: Path) -> None:
    import io
    import zipfile

    root = SAMPLES / "express-images"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, f"express-images/{path.relative_to(root)}")
    from_zip = open_repository(buffer.getvalue())
    from_dir = open_repository(root)
    assert records(stream_chunks(from_zip, ChunkConfig(), workers=2)) == records(
        stream_chunks(from_dir, ChunkConfig())
    )


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        stream_refs([], ChunkConfig(), repo="x", workers=0)


def test_cli_chunk_jsonl_is_the_same_with_any_number_of_workers(tmp_path: Path, capsys) -> None:
    from nexus.cli import main

    root = generated_repo(tmp_path / "gen", n_files=120)
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"chunks-{workers}.jsonl"
        args = ["chunk", str(root), "--format", "jsonl", "-o", str(out), "--workers", workers]
        assert main(args) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") > 120
    progress = capsys.readouterr().err
    assert "chunking (ast)" in progress  # on stderr, with its total once the walk is done
    assert "120/120" in progress
    assert main(["chunk", str(root), "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


UNGUARDED = """
import sys
from nexus.config import ChunkConfig
from nexus.ingest.sources import open_repository
from nexus.runtime.stream import collect_chunks, stream_chunks

repo = open_repository(sys.argv[1])
chunks, failed = collect_chunks(stream_chunks(repo, ChunkConfig(), workers=2))
print(len({chunk.file for chunk in chunks}), len(failed))
"""


def test_a_script_without_a_main_guard_is_chunked_in_its_own_process(tmp_path: Path) -> None:
    """Workers run the main script again: unguarded, each would start workers of its own
    and die, and the build would never end."""
    import subprocess
    import sys

    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(120):
        (repo / f"m{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n")
    script = tmp_path / "build.py"
    script.write_text(UNGUARDED)
    done = subprocess.run(
        [sys.executable, str(script), str(repo)],
        capture_output=True,
        text=True,
        timeout=300,  # a hang fails the test instead of the suite
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["120", "0"]
    assert "has no `if __name__" in done.stderr and done.stderr.count("nexus: chunking") == 1


@pytest.mark.parametrize(
    ("source", "spec", "loaded", "unguarded"),
    [
        ("print('top level')\n", None, True, True),
        ("def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n", None, True, False),
        ("print('run with -m')\n", "tool.__main__", True, False),
        ("print('a Streamlit page')\n", None, False, False),  # its own module, no loader
    ],
)
def test_which_main_scripts_workers_cannot_run_again(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    source: str,
    spec: str | None,
    loaded: bool,
    unguarded: bool,
) -> None:
    import sys
    import types
    from importlib.machinery import ModuleSpec, SourceFileLoader

    from nexus.runtime.stream import unguarded_main_script, workers_that_can_start

    script = tmp_path / "script.py"
    script.write_text(source)
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    main.__spec__ = ModuleSpec(spec, None) if spec else None
    main.__loader__ = SourceFileLoader("__main__", str(script)) if loaded else None
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert unguarded_main_script() == (str(script) if unguarded else None)
    assert workers_that_can_start(4) == (1 if unguarded else 4)
