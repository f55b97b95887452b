"""File selection: globs, category switches, the tests flag, the ``.d.ts`` rule, ``[files]``."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from nexus.cli import main
from nexus.config import load_config, load_selection
from nexus.ingest.classify import classify
from nexus.ingest.selection import DEFAULT_SELECTION, FileSelection
from nexus.ingest.sources import IngestSettings, open_repository
from nexus.types import Category

JS = b"export function add(a, b) {\n  return a + b;\n}\n"
TREE = {
    "src/a.js": JS,
    "src/b.ts": JS,
    "src/util/c.ts": JS,
    "src/a.test.js": JS,
    "tests/helper.js": JS,
    "src/generated/routes.js": JS,
    "vendor/lib.js": JS,
    "public/app.min.js": JS,
    "types/globals.d.ts": b"declare const VERSION: string;\n",
    "lib/index.js": JS,
    "lib/index.d.ts": b"export declare function add(a: number, b: number): number;\n",
    "README.md": b"# demo\n",
}


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def chunked(root: Path | bytes, selection: FileSelection = DEFAULT_SELECTION) -> list[str]:
    repo = open_repository(root, settings=IngestSettings(selection=selection))
    return [info.path for info in repo.chunkable_files()]


def test_default_is_source_only_and_the_rest_is_listed_with_reasons(tmp_path: Path) -> None:
    repo = open_repository(write_tree(tmp_path, TREE))
    assert [info.path for info in repo.chunkable_files()] == [
        "lib/index.js",
        "src/a.js",
        "src/b.ts",
        "src/util/c.ts",
        "types/globals.d.ts",
    ]
    infos = {info.path: info for info in repo.files}
    assert "--with-tests" in infos["src/a.test.js"].left_out
    assert "--with-tests" in infos["tests/helper.js"].left_out
    assert "--with-generated" in infos["src/generated/routes.js"].left_out
    assert "--with-vendored" in infos["vendor/lib.js"].left_out
    assert "--with-minified" in infos["public/app.min.js"].left_out
    assert infos["README.md"].left_out == ""  # never chunkable: its reason says why


@pytest.mark.parametrize(
    ("switch", "added"),
    [
        ("tests", ["src/a.test.js", "tests/helper.js"]),
        ("generated", ["lib/index.d.ts", "src/generated/routes.js"]),
        ("vendored", ["vendor/lib.js"]),
        ("minified", ["public/app.min.js"]),
    ],
)
def test_each_switch_puts_its_category_back(tmp_path: Path, switch: str, added: list) -> None:
    write_tree(tmp_path, TREE)
    base = chunked(tmp_path)
    assert sorted(set(chunked(tmp_path, FileSelection(**{switch: True}))) - set(base)) == added


def test_include_and_exclude_globs_are_gitignore_patterns(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    assert chunked(tmp_path, FileSelection(include=("src/",))) == [
        "src/a.js",
        "src/b.ts",
        "src/util/c.ts",
    ]
    assert chunked(tmp_path, FileSelection(include=("*.ts",), exclude=("util/",))) == [
        "src/b.ts",
        "types/globals.d.ts",
    ]
    only = FileSelection(include=("src/**/*.js",), tests=True)
    assert chunked(tmp_path, only) == ["src/a.js", "src/a.test.js"]
    assert "include" in left_out(tmp_path, only)["lib/index.js"]
    assert "exclude" in left_out(tmp_path, FileSelection(exclude=("lib/",)))["lib/index.js"]


def left_out(root: Path, selection: FileSelection) -> dict[str, str]:
    repo = open_repository(root, settings=IngestSettings(selection=selection))
    return {info.path: info.left_out for info in repo.files}


def test_selection_checks_itself() -> None:
    with pytest.raises(ValueError, match="not a string"):
        FileSelection(include="src/")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="true or false"):
        FileSelection(tests="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown"):
        FileSelection.from_dict({"test": True})


def test_files_table_in_the_settings_file(tmp_path: Path) -> None:
    config = tmp_path / "nexus.toml"
    config.write_text('[chunking]\nmax_tokens = 256\n\n[files]\ninclude = ["src/"]\ntests = true\n')
    assert load_selection(config) == FileSelection(include=("src/",), tests=True)
    assert load_config(config).max_tokens == 256
    flat = tmp_path / "flat.toml"
    flat.write_text('max_tokens = 256\n[files]\nexclude = ["x/"]\n')
    assert load_config(flat).max_tokens == 256  # [files] is not a chunking setting


def test_hand_written_declarations_are_source(tmp_path: Path) -> None:
    infos = {i.path: i for i in open_repository(write_tree(tmp_path, TREE)).files}
    assert infos["types/globals.d.ts"].category is Category.SOURCE
    assert "hand-written" in infos["types/globals.d.ts"].reason
    assert infos["lib/index.d.ts"].category is Category.GENERATED
    assert "'index.js'" in infos["lib/index.d.ts"].reason


@pytest.mark.parametrize(
    ("path", "siblings", "head", "category"),
    [
        ("a.d.ts", ["a.d.ts"], b"type A = 1;\n", Category.SOURCE),
        ("a.d.ts", ["a.d.ts", "a.ts"], b"type A = 1;\n", Category.GENERATED),
        ("A.D.TS", ["a.d.ts", "a.js"], b"type A = 1;\n", Category.GENERATED),
        ("a.d.mts", ["a.d.mts", "a.mjs"], b"type A = 1;\n", Category.GENERATED),
        ("a.d.mts", ["a.d.mts", "a.js"], b"type A = 1;\n", Category.SOURCE),
        ("a.d.ts", ["a.d.ts"], b"// @generated by protoc\ntype A = 1;\n", Category.GENERATED),
        ("a.d.ts", None, b"type A = 1;\n", Category.GENERATED),  # folder unknown
    ],
)
def test_declaration_rule(path: str, siblings, head: bytes, category: Category) -> None:
    assert classify(path, head, len(head), siblings=siblings).category is category


def test_declaration_rule_in_zips(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for rel, data in TREE.items():
            archive.writestr(f"proj/{rel}", data)
    assert chunked(buffer.getvalue()) == chunked(write_tree(tmp_path, TREE))


def test_cli_flags_on_scan_and_chunk(tmp_path: Path, capsys) -> None:
    root = write_tree(tmp_path / "repo", TREE)
    assert main(["scan", str(root), "--json"]) == 0
    skipped = {row["path"]: row for row in json.loads(capsys.readouterr().out)["skipped"]}
    assert "--with-tests" in skipped["src/a.test.js"]["left_out"]
    out = tmp_path / "chunks.jsonl"
    args = ["chunk", str(root), "--format", "jsonl", "-o", str(out)]
    assert main([*args, "--with-tests", "--include", "src/", "--exclude", "util/"]) == 0
    files = {json.loads(line)["file"] for line in out.read_text().splitlines()}
    assert files == {"src/a.js", "src/a.test.js", "src/b.ts"}
    config = tmp_path / "nexus.toml"
    config.write_text('[files]\ninclude = ["lib/"]\n')
    assert main([*args, "--config", str(config)]) == 0
    files = {json.loads(line)["file"] for line in out.read_text().splitlines()}
    assert files == {"lib/index.js"}
    config.write_text('[files]\ninclude = "lib/"\n')
    assert main([*args, "--config", str(config)]) == 2
    assert "not a string" in capsys.readouterr().err


MIXED = {
    "api/app.py": b"def handler():\n    return 1\n",
    "api/test_app.py": b"def test_handler():\n    assert True\n",
    "svc/main.go": b"package main\n\nfunc Main() {}\n",
    "web/app.ts": JS,
    "web/view.tsx": b"export const View = () => <div/>;\n",
    "lib/Util.java": b"public class Util {}\n",
    "core/lib.rs": b"pub fn f() {}\n",
    "legacy/app.rb": b"puts 1\n",
}


@pytest.mark.parametrize(
    ("languages", "expected"),
    [
        (
            (),
            [
                "api/app.py",
                "core/lib.rs",
                "lib/Util.java",
                "svc/main.go",
                "web/app.ts",
                "web/view.tsx",
            ],
        ),
        (("python",), ["api/app.py"]),
        (("python", "go"), ["api/app.py", "svc/main.go"]),
        (("typescript", "tsx"), ["web/app.ts", "web/view.tsx"]),
        (("java", "rust", "java"), ["core/lib.rs", "lib/Util.java"]),
    ],
)
def test_languages_keep_only_their_files(tmp_path: Path, languages: tuple, expected: list) -> None:
    write_tree(tmp_path, MIXED)
    assert chunked(tmp_path, FileSelection(languages=languages)) == expected


def test_languages_combine_with_switches_and_globs(tmp_path: Path) -> None:
    write_tree(tmp_path, MIXED)
    both = FileSelection(languages=("python",), tests=True)
    assert chunked(tmp_path, both) == ["api/app.py", "api/test_app.py"]
    assert chunked(tmp_path, both.with_(exclude=("test_*",))) == ["api/app.py"]
    why = left_out(tmp_path, FileSelection(languages=("python",)))
    assert why["svc/main.go"] == (
        "go is not among the selected languages python (--language / [files] languages)"
    )
    assert why["legacy/app.rb"] == ""  # never chunkable: its reason says why


@pytest.mark.parametrize(
    ("languages", "message"),
    [
        ("python", "not a string"),
        (("ruby",), "unsupported language.*'ruby'.*Nexus chunks csharp, go, java"),
        (("Python",), "'Python'"),
        ((1,), "1"),
    ],
)
def test_languages_are_checked(languages: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FileSelection(languages=languages)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--language", "python,go"], {"api/app.py", "svc/main.go"}),
        (["--language", "python", "--language", "GO"], {"api/app.py", "svc/main.go"}),
        (["--language", " rust , "], {"core/lib.rs"}),
    ],
)
def test_language_flag_on_chunk(tmp_path: Path, capsys, flags: list, expected: set) -> None:
    root = write_tree(tmp_path / "repo", MIXED)
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", str(root), "--format", "jsonl", "-o", str(out), *flags]) == 0
    assert {json.loads(line)["file"] for line in out.read_text().splitlines()} == expected
    err = capsys.readouterr().err
    assert "Unsupported languages (no grammar; listed, not chunked): 1 file: ruby 1" in err


def test_language_flag_and_files_table(tmp_path: Path, capsys) -> None:
    root = write_tree(tmp_path / "repo", MIXED)
    config = tmp_path / "nexus.toml"
    config.write_text('[files]\nlanguages = ["java"]\n')
    assert load_selection(config) == FileSelection(languages=("java",))
    assert main(["scan", str(root), "--json", "--config", str(config), "--language", "rust"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["chunkable_by_language"] == {"java": 1, "rust": 1}
    assert summary["unsupported_languages"] == {"ruby": 1}
    assert main(["scan", str(root), "--language", "ruby"]) == 2
    assert "unsupported language(s) 'ruby'" in capsys.readouterr().err
    config.write_text('[files]\nlanguages = "java"\n')
    assert main(["scan", str(root), "--config", str(config)]) == 2
    assert "not a string" in capsys.readouterr().err
