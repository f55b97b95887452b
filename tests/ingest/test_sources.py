"""Ingestion: decoding, directory walks, ignore rules, and every hostile input we know of."""

from __future__ import annotations

import io
import os
import re
import stat
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nexus.ingest import repository, zips
from nexus.ingest.folders import Found, walk_directory
from nexus.ingest.sources import (
    DEFAULT_IGNORES,
    IngestError,
    IngestSettings,
    Repository,
    decode_source,
    default_allowed_roots,
    open_repository,
    scan_repository,
)
from nexus.types import Category, FileInfo

JS = b"export const x = 1;\n"


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def make_zip(
    files: dict[str, bytes], *, method: int = zipfile.ZIP_DEFLATED, dirs: tuple[str, ...] = ()
) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        for name in dirs:
            archive.writestr(zipfile.ZipInfo(name), b"")
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return buffer.getvalue()


def paths(repo: Repository) -> list[str]:
    return [info.path for info in repo.files]


def by_path(repo: Repository) -> dict[str, FileInfo]:
    return {info.path: info for info in repo.files}


# --- decoding ----------------------------------------------------------------

INFO = FileInfo("a.js", 0, Category.SOURCE, "javascript", "javascript source")


@pytest.mark.parametrize(
    ("raw", "text", "errors", "bom"),
    [
        (b"", "", 0, False),
        (b"let a = 1;\n", "let a = 1;\n", 0, False),
        (b"\xef\xbb\xbflet a;\n", "let a;\n", 0, True),
        (b"\xef\xbb\xbf", "", 0, True),
        (b"a\xffb\xfe\n", "a\ufffdb\ufffd\n", 2, False),
        (b"ok \xe2\x82 end", "ok \ufffd end", 1, False),  # truncated 3-byte sequence
        ("real \ufffd char".encode(), "real \ufffd char", 0, False),  # genuine U+FFFD
        (b"\xef\xbb\xbf\xc3(\n", "\ufffd(\n", 1, True),
        (b"a\r\nb\r\n", "a\r\nb\r\n", 0, False),  # CRLF kept
    ],
)
def test_decode_source(raw: bytes, text: str, errors: int, bom: bool) -> None:
    source = decode_source(INFO, raw)
    assert (source.text, source.decode_errors, source.had_bom) == (text, errors, bom)
    assert source.data == text.encode("utf-8")
    assert source.data.decode("utf-8") == source.text


@given(st.binary(max_size=200))
def test_decode_source_never_fails_and_keeps_offsets_safe(raw: bytes) -> None:
    source = decode_source(INFO, raw)
    assert source.data.decode("utf-8") == source.text
    assert source.decode_errors >= 0
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        assert source.decode_errors > 0
    else:
        assert (source.decode_errors, source.data) == (0, body)


@given(st.text(alphabet="ab./\\:C\x00", max_size=12))
def test_zip_entry_paths_are_either_rejected_or_inside(name: str) -> None:
    try:
        path = zips._safe_entry_path(name)
    except IngestError as err:
        assert "zip slip" in str(err)
    else:
        parts = path.split("/")
        assert ".." not in parts and "" not in parts[:-1] and not path.startswith("/")
        assert not re.match("[A-Za-z]:", path)


def test_crlf_line_numbers_match_the_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.js": b"const a = 1;\r\n\r\nfunction f() {}\r\n"})
    source = open_repository(tmp_path).read("a.js")
    lines = source.text.split("\n")
    assert lines[2].startswith("function f()")  # line 3, as an editor shows it
    assert source.data == (tmp_path / "a.js").read_bytes()
    offset = source.data.index(b"function")
    assert source.data[:offset].count(b"\n") + 1 == 3


# --- directories ---------------------------------------------------------------


def test_directory_lists_every_file_sorted_with_categories(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "src/b.ts": JS,
            "src/a.js": JS,
            "src/a.test.js": JS,
            "README.md": b"# Demo\n",
            "package.json": b"{}",
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
            "src/empty.js": b"",
        },
    )
    repo = open_repository(tmp_path, name="demo")
    assert repo.name == "demo"
    assert paths(repo) == sorted(paths(repo))
    assert {p: i.category for p, i in by_path(repo).items()} == {
        "README.md": Category.DOCS,
        "logo.png": Category.BINARY,
        "package.json": Category.CONFIG,
        "src/a.js": Category.SOURCE,
        "src/a.test.js": Category.TEST,
        "src/b.ts": Category.SOURCE,
        "src/empty.js": Category.SOURCE,
    }
    # tests are listed but left out of chunking by default
    assert [s.info.path for s in repo.source_files()] == ["src/a.js", "src/b.ts", "src/empty.js"]
    assert "--with-tests" in by_path(repo)["src/a.test.js"].left_out
    assert repo.read("src/empty.js").text == ""
    assert repo.read("README.md").text == "# Demo\n"
    report = repo.report()
    assert (report.repo, report.files, report.notes) == ("demo", repo.files, repo.notes)


def test_name_defaults_to_the_directory(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "my-app", {"a.js": JS})
    assert open_repository(root).name == "my-app"
    assert open_repository(str(root)).name == "my-app"


def test_binary_and_too_large_files_are_listed_but_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"bin.js": b"ab\x00cd", "huge.js": b"x" * 10_000_000})
    caps: dict[str, int] = {}
    real_read = repository.read_path

    def spy(path: Path, cap: int) -> bytes:
        caps[path.name] = cap
        return real_read(path, cap)

    monkeypatch.setattr(repository, "read_path", spy)
    repo = open_repository(tmp_path)
    files = by_path(repo)
    assert files["bin.js"].category is Category.BINARY
    assert files["bin.js"].reason == "NUL byte at offset 2 (git's binary rule)"
    huge = files["huge.js"]
    assert (huge.category, huge.size) == (Category.TOO_LARGE, 10_000_000)
    assert caps["huge.js"] == 8000  # only sniffed, never read whole
    assert repo.contents.keys() == set()
    assert list(repo.source_files()) == []
    with pytest.raises(IngestError, match="too_large"):
        repo.read("huge.js")
    with pytest.raises(KeyError, match="nope.js"):
        repo.read("nope.js")


def test_max_file_bytes_is_a_setting(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.js": b"x = 1;\n" * 20})
    repo = open_repository(tmp_path, settings=IngestSettings(max_file_bytes=100))
    assert repo.files[0].category is Category.TOO_LARGE
    assert "140 bytes exceeds the 100-byte limit" in repo.files[0].reason


def test_empty_directory_is_a_repository_with_a_note(tmp_path: Path) -> None:
    repo = open_repository(tmp_path)
    assert repo.files == ()
    assert any("empty repository" in note for note in repo.notes)
    assert list(repo.source_files()) == []


def test_repo_of_only_ignored_files_is_empty_with_notes(tmp_path: Path) -> None:
    write_tree(tmp_path, {"node_modules/x/index.js": JS, "dist/a.js": JS})
    repo = open_repository(tmp_path)
    assert repo.files == ()
    assert any("0 files and 2 directories ignored" in note for note in repo.notes)


def test_no_chunkable_files_is_noted(tmp_path: Path) -> None:
    write_tree(tmp_path, {"README.md": b"# x"})
    assert any("no chunkable" in note for note in open_repository(tmp_path).notes)


def test_walk_is_deterministic(tmp_path: Path) -> None:
    names = ["b/z.js", "a.js", "b/a.js", "a/b/c.js", "A.js", "b.js", "a-b.js", "a/a.js"]
    first = write_tree(tmp_path / "one", {n: JS for n in names})
    second = write_tree(tmp_path / "two", {n: JS for n in reversed(names)})
    listed = paths(open_repository(first))
    assert listed == paths(open_repository(second)) == sorted(names)


def test_a_folder_scan_hands_out_files_in_path_order_before_its_walk_ends(
    tmp_path: Path,
) -> None:
    names = ["a.js", "a/x.js", "a0.js", "a-b/y.js", "a-b.js", "b/c/d.js", "b.js", "B.js"]
    names += ["a/README.md", "a/lib.py", "ab/z.ts", "a.jsx", "logo.png"]
    root = write_tree(tmp_path / "repo", {n: JS for n in names})
    scan = scan_repository(root)
    refs = scan.refs()
    first = next(refs)
    assert scan.chunkable_files() is None  # the walk goes on while its first files are used
    handed = [first.info.path, *(ref.info.path for ref in refs)]
    repo = scan.repository()
    assert handed == [info.path for info in repo.chunkable_files()]  # the order it sorts to
    assert scan.chunkable_files() == len(handed) == 11
    assert repo == open_repository(root)
    assert repo.read(first.info.path).text == first.load().text


def test_walk_yields_each_file_in_repository_order(tmp_path: Path) -> None:
    names = ["x/a.js", "x.js", "x-y/b.js", "x/b/c.js", "x0/d.js", "x!.txt", "x/~.js"]
    root = write_tree(tmp_path / "repo", {n: JS for n in names})
    found = Found()
    walked = [info.path for info in walk_directory(root, IngestSettings(), found)]
    assert walked == sorted(names) == [info.path for info in found.files]


def test_a_zip_scan_is_whole_from_the_start(tmp_path: Path) -> None:
    scan = scan_repository(make_zip({"p/a.js": JS, "p/b.ts": JS}))
    assert scan.chunkable_files() == 2 and [r.info.path for r in scan.refs()] == ["a.js", "b.ts"]


# --- ignore rules ------------------------------------------------------------


def test_nested_gitignore_applies_relative_to_its_directory(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".gitignore": b"*.log\nsecret/\n/root-only.js\n",
            "app.log": b"x",
            "root-only.js": JS,
            "local.js": JS,
            "secret/key.js": JS,
            "sub/.gitignore": b"local.js\n!keep.log\n",
            "sub/local.js": JS,
            "sub/keep.log": b"x",
            "sub/other.log": b"x",
            "sub/root-only.js": JS,  # '/root-only.js' is anchored to the root
            "sub/deeper/local.js": JS,  # unanchored patterns reach into subdirectories
        },
    )
    assert paths(open_repository(tmp_path)) == [
        ".gitignore",
        "local.js",
        "sub/.gitignore",
        "sub/keep.log",
        "sub/root-only.js",
    ]


def test_files_in_an_ignored_directory_cannot_be_re_included(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": b"gen/\n!gen/keep.js\n", "gen/keep.js": JS, "a.js": JS})
    assert paths(open_repository(tmp_path)) == [".gitignore", "a.js"]


def test_default_ignores_and_their_override(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "src/a.js": JS,
            "node_modules/lib/index.js": JS,
            "packages/x/node_modules/y.js": JS,
            "dist/bundle.js": JS,
            ".git/config": b"[core]",
            "coverage/lcov.info": b"x",
        },
    )
    assert paths(open_repository(tmp_path)) == ["src/a.js"]
    everything = open_repository(tmp_path, settings=IngestSettings(default_ignores=()))
    assert len(everything.files) == 6
    assert by_path(everything)["node_modules/lib/index.js"].category is Category.VENDORED
    only_git = IngestSettings(default_ignores=(".git/",))
    assert ".git/config" not in paths(open_repository(tmp_path, settings=only_git))
    assert "node_modules/" in DEFAULT_IGNORES


def test_gitignore_negation_can_re_include_a_default_ignore(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": b"!dist/\n", "dist/a.js": JS, "build/b.js": JS})
    assert paths(open_repository(tmp_path)) == [".gitignore", "dist/a.js"]


def test_ignore_patterns_win_over_gitignore(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": b"!*.snap\n", "a.js": JS, "a.snap": b"x"})
    settings = IngestSettings(ignore_patterns=("*.snap", ".gitignore"))
    repo = open_repository(tmp_path, settings=settings)
    assert paths(repo) == ["a.js"]
    assert any("ignore_patterns: 2" in note for note in repo.notes)


def test_bad_gitignore_lines_are_skipped_not_fatal(tmp_path: Path) -> None:
    write_tree(tmp_path, {".gitignore": b"***/\n*.log\n", "a.log": b"x", "a.js": JS})
    repo = open_repository(tmp_path)
    assert "a.log" not in paths(repo)
    assert "a.js" in paths(repo)


# --- symlinks and special files ------------------------------------------------


def test_symlinks_never_escape_and_directories_are_not_followed(tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "outside", {"secret.js": b"const key = 'x';\n"})
    root = write_tree(tmp_path / "repo", {"src/a.js": JS})
    os.symlink(outside / "secret.js", root / "leak.js")
    os.symlink(outside, root / "leakdir")
    os.symlink(root, root / "src" / "loop")  # a cycle
    os.symlink(root / "src" / "a.js", root / "alias.js")  # inside: fine
    os.symlink(root / "missing.js", root / "broken.js")
    os.symlink("../../outside/secret.js", root / "src" / "relative.js")

    repo = open_repository(root)
    files = by_path(repo)
    assert files["leak.js"].reason == "symlink leaves the repository"
    assert files["leakdir"].reason == "symlink leaves the repository"
    assert files["src/relative.js"].reason == "symlink leaves the repository"
    assert files["src/loop"].reason == "symlinked directory not followed (avoids cycles)"
    assert files["broken.js"].reason == "broken symlink"
    for path in ("leak.js", "leakdir", "src/relative.js", "src/loop", "broken.js"):
        assert files[path].category is Category.UNSUPPORTED
        assert path not in repo.contents
    assert files["alias.js"].reason == "symlink to src/a.js, read there"  # not read twice
    assert [s.info.path for s in repo.source_files()] == ["src/a.js"]
    assert not any("secret" in s.text for s in repo.source_files())


def test_a_symlink_to_a_file_the_walk_does_not_reach_is_read(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"vendor/lib.js": JS, ".gitignore": b"vendor/\n"})
    os.symlink(root / "vendor" / "lib.js", root / "lib.js")
    files = by_path(open_repository(root))
    assert files["lib.js"].category is Category.SOURCE and "vendor/lib.js" not in files


def test_symlink_loops_are_skipped_files_with_a_reason(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"a.js": JS})
    os.symlink("loop2.js", root / "loop1.js")
    os.symlink("loop1.js", root / "loop2.js")
    os.symlink("self.js", root / "self.js")
    os.symlink("d2", root / "d1")
    os.symlink("d1", root / "d2")
    files = by_path(open_repository(root))
    for path in ("loop1.js", "loop2.js", "self.js", "d1", "d2"):
        assert files[path].reason == "symlink loop (it links back to itself)"
        assert files[path].category is Category.UNSUPPORTED
    assert files["a.js"].category is Category.SOURCE


def test_a_root_that_is_a_symlink_loop_is_a_clear_error(tmp_path: Path) -> None:
    os.symlink("root", tmp_path / "root")
    os.symlink("zip2.zip", tmp_path / "zip1.zip")
    os.symlink("zip1.zip", tmp_path / "zip2.zip")
    for target in (tmp_path / "root", tmp_path / "zip1.zip"):
        with pytest.raises(IngestError, match="is a symlink loop"):
            open_repository(target)
    with pytest.raises(IngestError, match="is a symlink loop"):
        open_repository(tmp_path / "root", settings=IngestSettings(allowed_roots=(tmp_path,)))
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(IngestError, match="outside the allowed roots"):
        open_repository(tmp_path / "root", settings=IngestSettings(allowed_roots=(other,)))


def test_fifo_is_listed_and_never_opened(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.js": JS})
    os.mkfifo(tmp_path / "pipe.js")
    files = by_path(open_repository(tmp_path))
    assert files["pipe.js"].category is Category.UNSUPPORTED
    assert "not a regular file" in files["pipe.js"].reason


# --- targets and allowed roots ------------------------------------------------


def test_allowed_roots(tmp_path: Path) -> None:
    allowed = write_tree(tmp_path / "allowed", {"repo/a.js": JS})
    other = write_tree(tmp_path / "other", {"a.js": JS})
    settings = IngestSettings(allowed_roots=(allowed,))
    assert paths(open_repository(allowed / "repo", settings=settings)) == ["a.js"]
    with pytest.raises(IngestError, match="outside the allowed roots") as err:
        open_repository(other, settings=settings)
    assert str(allowed.resolve()) in str(err.value)
    # '..' and symlinks are resolved before the check
    with pytest.raises(IngestError, match="outside the allowed roots"):
        open_repository(allowed / ".." / "other", settings=settings)
    os.symlink(other, allowed / "sneaky")
    with pytest.raises(IngestError, match="outside the allowed roots"):
        open_repository(allowed / "sneaky", settings=settings)
    (other / "r.zip").write_bytes(make_zip({"a.js": JS}))
    with pytest.raises(IngestError, match="outside the allowed roots"):
        open_repository(other / "r.zip", settings=settings)


def test_default_allowed_roots() -> None:
    roots = default_allowed_roots()
    assert roots[0] == Path.cwd()
    assert roots[1].name == "sample_repos"
    IngestSettings(allowed_roots=roots)  # valid as settings


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "does not exist"),
        (lambda p: write_tree(p, {"a.txt": b"hi"}) / "a.txt", "neither a directory nor a .zip"),
        (lambda p: write_tree(p, {"r.zip": b"not a zip"}) / "r.zip", "not a valid zip file"),
    ],
)
def test_bad_targets(tmp_path: Path, make: Callable[[Path], Path], message: str) -> None:
    with pytest.raises(IngestError, match=message):
        open_repository(make(tmp_path))


def test_ingest_error_is_a_value_error() -> None:
    assert issubclass(IngestError, ValueError)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_file_bytes": 0},
        {"max_file_bytes": -1},
        {"max_file_bytes": 1.5},
        {"max_file_bytes": True},
        {"max_zip_entries": 0},
        {"max_zip_total_bytes": 0},
        {"max_zip_ratio": 0.5},
        {"ignore_patterns": "*.log"},
        {"ignore_patterns": (1,)},
        {"default_ignores": "node_modules/"},
        {"allowed_roots": ()},
        {"allowed_roots": "/tmp"},
    ],
)
def test_settings_reject_bad_values(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        IngestSettings(**kwargs)  # type: ignore[arg-type]


def test_settings_normalise_lists_to_tuples(tmp_path: Path) -> None:
    settings = IngestSettings(ignore_patterns=["*.log"], allowed_roots=[str(tmp_path)])  # type: ignore[arg-type]
    assert settings.ignore_patterns == ("*.log",)
    assert settings.allowed_roots == (tmp_path,)
    hash(settings)


# --- zips ----------------------------------------------------------------------

PROJECT = {"src/a.js": JS, "src/b.ts": JS, "README.md": b"# x\n", ".gitignore": b"*.log\n"}


def test_zip_bytes_and_zip_path_and_directory_agree(tmp_path: Path) -> None:
    data = make_zip({**PROJECT, "debug.log": b"x"})
    (tmp_path / "proj.zip").write_bytes(data)
    from_bytes = open_repository(data)
    from_path = open_repository(tmp_path / "proj.zip")
    from_dir = open_repository(write_tree(tmp_path / "proj", {**PROJECT, "debug.log": b"x"}))
    assert from_bytes.files == from_path.files == from_dir.files
    assert paths(from_bytes) == [".gitignore", "README.md", "src/a.js", "src/b.ts"]
    assert from_bytes.read("src/a.js").text == JS.decode()
    assert (from_bytes.name, from_path.name) == ("upload", "proj")
    assert open_repository(data, name="mine").name == "mine"


def test_zip_single_top_folder_is_stripped(tmp_path: Path) -> None:
    data = make_zip({f"my-app-main/{k}": v for k, v in PROJECT.items()}, dirs=("my-app-main/",))
    repo = open_repository(data)
    assert paths(repo) == [".gitignore", "README.md", "src/a.js", "src/b.ts"]
    assert repo.name == "my-app-main"
    assert any("my-app-main/" in note for note in repo.notes)
    (tmp_path / "download.zip").write_bytes(data)
    assert open_repository(tmp_path / "download.zip").name == "my-app-main"
    assert open_repository(data, name="x").name == "x"


@pytest.mark.parametrize(
    "names",
    [
        ["a/x.js", "b/y.js"],  # two top folders
        ["a/x.js", "top.js"],  # a file at the top
        ["only.js"],
    ],
)
def test_zip_top_folder_kept_when_not_single(names: list[str]) -> None:
    assert paths(open_repository(make_zip(dict.fromkeys(names, JS)))) == sorted(names)


def test_zip_gitignore_nested_and_defaults() -> None:
    data = make_zip(
        {
            "p/.gitignore": b"*.log\n",
            "p/a.log": b"x",
            "p/sub/.gitignore": b"tmp.js\n",
            "p/sub/tmp.js": JS,
            "p/tmp.js": JS,
            "p/node_modules/x/index.js": JS,
            "p/__MACOSX/._tmp.js": b"\x00\x05",
            "p/.DS_Store": b"\x00",
        }
    )
    repo = open_repository(data)
    assert paths(repo) == [".gitignore", "sub/.gitignore", "tmp.js"]
    assert "3 files and 2 directories ignored (.gitignore: 2, default ignores: 3)" in "".join(
        repo.notes
    )


def test_zip_macosx_metadata_is_dropped() -> None:
    repo = open_repository(make_zip({"proj/a.js": JS, "__MACOSX/proj/._a.js": b"\x00"}))
    assert paths(repo) == ["a.js"]
    assert repo.name == "proj"


def test_zip_backslash_separators_are_read_as_folders() -> None:
    assert paths(open_repository(make_zip({"src\\a.js": JS, "b.js": JS}))) == ["b.js", "src/a.js"]


@pytest.mark.parametrize(
    "entry",
    [
        "../evil.js",
        "/abs.js",
        "a/../../evil.js",
        "C:/evil.js",
        "c:evil.js",
        "..\\evil.js",
        "a\\..\\..\\x.js",
        "\\abs.js",
        "./C:/x.js",
    ],
)
def test_zip_slip_is_rejected_naming_the_entry(entry: str) -> None:
    data = make_zip({"ok.js": JS, entry: JS})
    with pytest.raises(IngestError, match="zip slip") as err:
        open_repository(data)
    assert repr(entry) in str(err.value)


@pytest.mark.parametrize("name", ["proj/a.js\x00.png", "proj/b.js\x00../../x.js", "proj/\x00c.js"])
def test_zip_entry_with_a_nul_byte_in_its_name_is_refused_in_the_notes(name: str) -> None:
    # zipfile cannot write such a name, so write a stand-in of the same length and patch
    # it in the local header and the central directory.
    stand_in = name.replace("\x00", "#")
    data = make_zip({"proj/a.js": JS, "proj/b.js": JS, stand_in: b"const evil = 1;\n"})
    data = data.replace(stand_in.encode(), name.encode())
    repo = open_repository(data)
    assert paths(repo) == ["a.js", "b.js"]
    assert repo.read("a.js").text == JS.decode()
    note = next(n for n in repo.notes if "NUL" in n)
    assert note.startswith("refused 1 zip entry name(s) holding a NUL byte")
    assert repr(name) in note


def test_zip_slip_in_a_directory_entry_is_rejected() -> None:
    with pytest.raises(IngestError, match="zip slip"):
        open_repository(make_zip({"ok.js": JS}, dirs=("../up/",)))


def test_zip_bomb_single_entry_over_the_ratio() -> None:
    data = make_zip({"a.js": JS, "bomb.js": b"\x00" * 2_000_000})
    assert len(data) < 10_000
    with pytest.raises(IngestError, match="zip bomb") as err:
        open_repository(data)
    assert "'bomb.js'" in str(err.value)
    assert "max_zip_ratio" in str(err.value)


def test_zip_bomb_overall_ratio_from_many_small_entries() -> None:
    data = make_zip({f"f{i}.js": b" " * 600_000 for i in range(3)})  # each under the floor
    with pytest.raises(IngestError, match="overall"):
        open_repository(data)
    relaxed = IngestSettings(max_zip_ratio=100_000)
    assert len(open_repository(data, settings=relaxed).files) == 3


def test_small_compressible_files_are_not_bombs() -> None:
    repo = open_repository(make_zip({"blank.js": b" " * 50_000, "a.js": JS}))
    assert len(repo.files) == 2


def test_zip_too_many_entries() -> None:
    data = make_zip({f"f{i}.js": JS for i in range(6)})
    with pytest.raises(IngestError, match="6 entries, over the limit of 5"):
        open_repository(data, settings=IngestSettings(max_zip_entries=5))


def test_zip_declared_total_over_limit() -> None:
    data = make_zip({"a.js": b"x" * 600, "b.js": b"y" * 600}, method=zipfile.ZIP_STORED)
    with pytest.raises(IngestError, match="declares 1,200 uncompressed bytes"):
        open_repository(data, settings=IngestSettings(max_zip_total_bytes=1000))


def _lie_about_size(data: bytes, declared: int) -> bytes:
    """Rewrite the central directory's uncompressed size of the (only) entry."""
    at = data.index(b"PK\x01\x02") + 24
    return data[:at] + struct.pack("<I", declared) + data[at + 4 :]


def test_zip_declared_size_lie_is_caught_when_reading() -> None:
    honest = make_zip({"a.js": b"let x = 1;\n" * 5_000})
    liar = _lie_about_size(honest, 10)
    assert zipfile.ZipFile(io.BytesIO(liar)).infolist()[0].file_size == 10
    with pytest.raises(IngestError, match="'a.js' is corrupt"):
        open_repository(liar)


def test_zip_reads_are_capped_by_the_actual_byte_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # Even if the declared sizes passed every check, actual bytes read are counted.
    data = make_zip({"a.js": b"x" * 800, "b.js": b"y" * 800}, method=zipfile.ZIP_STORED)
    monkeypatch.setattr(zips, "_check_zip", _trusting_check)
    with pytest.raises(IngestError, match="beyond what it declared"):
        open_repository(data, settings=IngestSettings(max_zip_total_bytes=1000))


def _trusting_check(
    infos: list[zipfile.ZipInfo], settings: IngestSettings
) -> tuple[dict[str, zipfile.ZipInfo], list[str]]:
    return {info.filename: info for info in infos}, []


def _set_encrypted_flag(data: bytes, name: bytes) -> bytes:
    """Set bit 0 (encrypted) of an entry's flags in the central directory."""
    at = data.index(b"PK\x01\x02")
    while data[at + 46 : at + 46 + len(name)] != name:
        at = data.index(b"PK\x01\x02", at + 4)
    (flags,) = struct.unpack_from("<H", data, at + 8)
    return data[: at + 8] + struct.pack("<H", flags | 0x1) + data[at + 10 :]


def test_zip_large_entry_is_only_sniffed() -> None:
    data = make_zip({"big.js": b"x" * 5000, "a.js": JS})
    repo = open_repository(data, settings=IngestSettings(max_file_bytes=1000))
    big = by_path(repo)["big.js"]
    assert (big.category, big.size) == (Category.TOO_LARGE, 5000)
    assert "big.js" not in repo.contents


def test_zip_symlink_and_encrypted_entries_are_listed_not_read() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        link = zipfile.ZipInfo("link.js")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "../../etc/passwd")
        archive.writestr("locked.js", b"garbage")
        archive.writestr("a.js", JS)
    data = _set_encrypted_flag(buffer.getvalue(), b"locked.js")
    files = by_path(open_repository(data))
    assert files["link.js"].reason == "symlink entry in zip (not followed)"
    assert files["locked.js"].category is Category.UNSUPPORTED
    assert "encrypted" in files["locked.js"].reason
    assert files["a.js"].category is Category.SOURCE


@pytest.mark.parametrize(
    "data",
    [b"", b"not a zip at all", make_zip({}), make_zip({"a.js": JS})[:40]],
    ids=["empty-bytes", "garbage", "no-entries", "truncated"],
)
def test_empty_or_corrupt_zip_is_an_error(data: bytes) -> None:
    with pytest.raises(IngestError, match="not a valid zip file"):
        open_repository(data)


def test_zip_of_only_directories_is_an_empty_repository() -> None:
    repo = open_repository(make_zip({}, dirs=("proj/", "proj/src/")))
    assert repo.files == ()
    assert any("empty repository" in note for note in repo.notes)


def test_zip_duplicate_names_keep_the_first() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.js", b"first\n")
        archive.writestr("./a.js", b"second\n")
    repo = open_repository(buffer.getvalue())
    assert repo.read("a.js").text == "first\n"
    assert any("duplicate" in note for note in repo.notes)


def test_zip_hostile_bytes_decode_like_files() -> None:
    repo = open_repository(make_zip({"bom.js": b"\xef\xbb\xbfx;\r\n", "bad.js": b"a\xff;\n"}))
    bom, bad = repo.read("bom.js"), repo.read("bad.js")
    assert (bom.had_bom, bom.text) == (True, "x;\r\n")
    assert (bad.decode_errors, bad.text) == (1, "a\ufffd;\n")


def test_allowed_roots_come_from_the_environment(tmp_path, monkeypatch):
    from nexus.ingest.sources import default_allowed_roots

    inside = tmp_path / "repos" / "a"
    inside.mkdir(parents=True)
    (inside / "x.js").write_text("const a = 1;\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.setenv("NEXUS_ALLOWED_ROOTS", str(tmp_path / "repos"))
    settings = IngestSettings(allowed_roots=default_allowed_roots())
    assert [f.path for f in open_repository(inside, settings=settings).files] == ["x.js"]
    with pytest.raises(IngestError, match="outside the allowed roots"):
        open_repository(outside, settings=settings)


def test_outside_the_roots_one_answer_and_nothing_looked_at(tmp_path, monkeypatch):
    """Issue 13: no oracle for what exists outside the roots, and no stat() there."""
    allowed = write_tree(tmp_path / "allowed", {"repo/a.js": JS})
    secret = write_tree(tmp_path / "secret", {"shadow": b"x"})
    os.symlink(secret, allowed / "link")
    settings = IngestSettings(allowed_roots=(allowed,))
    looked_at: list[str] = []
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def spy(path, *args, _real=real, **kwargs):
            looked_at.append(os.fspath(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, spy)
    answers = []
    for target in (
        secret / "shadow",
        secret / "nonexistent",
        allowed / ".." / "secret" / "shadow",
        allowed / ".." / "secret" / "nonexistent",
    ):
        with pytest.raises(IngestError, match="outside the allowed roots") as err:
            open_repository(target, settings=settings)
        answers.append(str(err.value).replace(str(target), "PATH"))
    assert len(set(answers)) == 1
    assert not [p for p in looked_at if "secret" in p], looked_at
    # Through a link inside the root: resolved, and the same answer either way.
    for target in (allowed / "link" / "shadow", allowed / "link" / "nonexistent"):
        with pytest.raises(IngestError, match="outside the allowed roots") as err:
            open_repository(target, settings=settings)
        assert str(err.value).replace(str(target), "PATH") == answers[0]
    assert [f.path for f in open_repository(allowed / "repo", settings=settings).files] == ["a.js"]
