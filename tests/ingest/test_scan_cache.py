"""A folder opened again: files whose stat is unchanged are not read, changed ones are."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from nexus.ingest import repository, scan_cache
from nexus.ingest.sources import IngestSettings, open_repository
from nexus.retrieval.store import files_digest


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.ts").write_text("export function alpha() { return 1 }\n")
    (root / "src" / "b.ts").write_text("export function beta() { return 2 }\n")
    (root / "README.md").write_text("# repo\n")
    old = 1_600_000_000_000_000_000  # written long before they are read: not racy
    for path in root.rglob("*.*"):
        os.utime(path, ns=(old, old))
    return root


def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files the scan reads from now on."""
    seen: list[str] = []
    read_path = repository.read_path

    def counting(path: Path, cap: int) -> bytes:
        seen.append(path.name)
        return read_path(path, cap)

    monkeypatch.setattr(repository, "read_path", counting)
    return seen


def test_an_unchanged_folder_is_not_read_again(folder, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(scan_cache, "RACY_NS", 0)  # ctime is "now" in a fresh tmp folder
    settings = IngestSettings(scan_cache=tmp_path / "scans")
    first = open_repository(folder, settings=settings)
    seen = reads(monkeypatch)
    again = open_repository(folder, settings=settings)
    assert seen == []
    assert again.files == first.files and again.digests == first.digests
    assert (
        again.digest("src/a.ts") == hashlib.sha256((folder / "src/a.ts").read_bytes()).hexdigest()
    )
    assert files_digest(again) == files_digest(open_repository(folder))  # no cache: the same


def test_a_changed_file_is_read_again_and_changes_the_digest(folder, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(scan_cache, "RACY_NS", 0)
    settings = IngestSettings(scan_cache=tmp_path / "scans")
    before = files_digest(open_repository(folder, settings=settings))
    changed = folder / "src" / "b.ts"
    old = changed.stat().st_mtime_ns
    changed.write_text("export function gamma() { return 3 }\n")  # same size
    os.utime(changed, ns=(old, old))  # and the old mtime: only ctime tells
    seen = reads(monkeypatch)
    after = open_repository(folder, settings=settings)
    assert seen == ["b.ts"]
    assert files_digest(after) != before
    assert files_digest(after) == files_digest(open_repository(folder))


def test_a_file_written_around_its_read_is_read_again(folder, tmp_path, monkeypatch) -> None:
    settings = IngestSettings(scan_cache=tmp_path / "scans")
    open_repository(folder, settings=settings)  # ctime is now: every file is racy
    seen = reads(monkeypatch)
    open_repository(folder, settings=settings)
    assert sorted(seen) == ["README.md", "a.ts", "b.ts"]


def test_another_selection_or_limit_classifies_again(folder, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(scan_cache, "RACY_NS", 0)
    open_repository(folder, settings=IngestSettings(scan_cache=tmp_path / "scans"))
    seen = reads(monkeypatch)
    smaller = IngestSettings(scan_cache=tmp_path / "scans", max_file_bytes=10)
    repo = open_repository(folder, settings=smaller)
    assert sorted(seen) == ["README.md", "a.ts", "b.ts"]
    assert {i.path: i.category.value for i in repo.files}["src/a.ts"] == "too_large"


def test_a_damaged_cache_file_only_costs_a_full_read(folder, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(scan_cache, "RACY_NS", 0)
    settings = IngestSettings(scan_cache=tmp_path / "scans")
    first = open_repository(folder, settings=settings)
    for path in (tmp_path / "scans").iterdir():
        path.write_text("{not json")
    seen = reads(monkeypatch)
    assert open_repository(folder, settings=settings).files == first.files
    assert len(seen) == 3
