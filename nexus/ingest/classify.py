"""Decide what each file of a repository is, from its path and its first bytes.

Only source and test files in a chunkable language are chunked; everything else
is still reported, with a reason a person can check.

``classify`` applies these checks in order; the first that fires decides:

1. binary     -- a NUL byte in the first 8000 bytes (git's rule), or a known
                 binary extension (.png, .woff2, ...).
2. too_large  -- more than ``max_file_bytes`` bytes.
3. lockfile   -- package-lock.json, yarn.lock, pnpm-lock.yaml, ...
4. unsupported language -- code in a language Nexus has no grammar for
                 (C, Ruby, PHP, Kotlin, Swift, Vue, Svelte, CSS, shell ...):
                 reason ``unsupported language (ruby): ...``, listed, never chunked.
5. minified   -- ``*.min.*``, or a code file whose lines are far too long: most of
                 its characters in lines over 1000 characters, or a mean line length
                 over 300 (at least 1000 characters either way). One long line is not enough.
6. generated  -- a marker (``@generated``, ``DO NOT EDIT``, ``auto-generated``,
                 ``Code generated``) in the first 10 lines, a generated path
                 (``generated/``, ``__generated__/``, ``*.gen.*``), or compiler
                 output ``*.d.ts`` (a same-named .js/.ts beside it, or no listing
                 of its folder to tell). A hand-written ``.d.ts`` is source.
7. vendored   -- under ``vendor/``, ``third_party/``, ``bower_components/``, ...
8. test       -- a code file, in any language, under a test folder (``__tests__/``,
                 ``tests/``, ``e2e/``, ``fixtures/``, ``testdata/``, ``cypress/``, a monorepo's
                 ``*-tests/`` or ``*_tests/`` package, ...: ``_TEST_DIR_RULES``), or named
                 ``*.test.*``, ``*.spec.*``, ``*_test.*``, ``test_*.py``, ``*Test.java``, ...
                 The reason names the rule and, for a wildcard, the folder it matched.
9. config     -- package.json, tsconfig*.json, .eslintrc*, ``*.config.*``, and
                 JSON / YAML / TOML / INI files generally.
10. docs     -- Markdown, reST, plain text, README/LICENSE, or under ``docs/``.
11. source   -- any other file in a recognised programming language.
12. unsupported -- everything else.

Binary and size come first because nothing later can be trusted on such files;
lockfiles and minified files come before the path rules because a minified
bundle under ``vendor/`` is better described by what it is than where it is.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

from nexus.ingest.selection import DEFAULT_SELECTION, FileSelection
from nexus.types import CHUNKABLE_LANGUAGES, Category, FileInfo

# Real hand-written sources reach a few MB (TypeScript's checker.ts: 3 MB); a 5 MB file
# chunks in seconds (bench/speed/scale.py --large-mb 5). Bundles above this are rarely
# worth an index.
DEFAULT_MAX_FILE_BYTES = 8_000_000
BINARY_SNIFF_BYTES = 8000  # git's FIRST_FEW_BYTES in xdiff-interface.c
MINIFIED_MEAN_LINE = 300
MINIFIED_MEAN_MIN_CHARS = 1000  # below this a few long lines are not evidence
# A line this long is machine-written or a table; a file is minified when most of its
# characters sit in such lines. One long lookup table in a hand-written file is not enough
# (three.js's MathUtils.js: a 1,552-character table in 741 lines of mean length 10).
MINIFIED_LONG_LINE = 1000
MINIFIED_LONG_SHARE = 0.5
GENERATED_HEADER_LINES = 10

_EXTENSIONS: dict[str, str] = {
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), "javascript"),
    **dict.fromkeys((".ts", ".mts", ".cts"), "typescript"),
    ".tsx": "tsx",
    **dict.fromkeys((".json", ".jsonc", ".json5"), "json"),
    **dict.fromkeys((".jsonl", ".ndjson"), "jsonl"),
    **dict.fromkeys((".md", ".markdown", ".mdx"), "markdown"),
    **dict.fromkeys((".yaml", ".yml"), "yaml"),
    ".toml": "toml",
    **dict.fromkeys((".ini", ".cfg", ".properties"), "ini"),
    ".xml": "xml",
    ".css": "css",
    ".scss": "scss",
    ".sass": "sass",
    ".less": "less",
    **dict.fromkeys((".html", ".htm"), "html"),
    ".vue": "vue",
    ".svelte": "svelte",
    **dict.fromkeys((".py", ".pyi"), "python"),
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    **dict.fromkeys((".kt", ".kts"), "kotlin"),
    ".rb": "ruby",
    ".php": "php",
    **dict.fromkeys((".c", ".h"), "c"),
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".hpp", ".hh"), "cpp"),
    ".cs": "csharp",
    ".swift": "swift",
    **dict.fromkeys((".sh", ".bash", ".zsh"), "shell"),
    ".ps1": "powershell",
    ".sql": "sql",
    **dict.fromkeys((".graphql", ".gql"), "graphql"),
    ".rst": "restructuredtext",
    **dict.fromkeys((".adoc", ".asciidoc"), "asciidoc"),
    ".txt": "text",
    ".svg": "svg",
    ".csv": "csv",
}

_FILENAMES: dict[str, str] = {
    "dockerfile": "dockerfile",
    "makefile": "makefile",
    ".babelrc": "json",
    ".eslintrc": "json",
    ".prettierrc": "json",
    ".editorconfig": "ini",
    ".npmrc": "ini",
    ".gitignore": "gitignore",
    ".npmignore": "gitignore",
    ".dockerignore": "gitignore",
    ".gitattributes": "gitattributes",
    "license": "text",
    "licence": "text",
    "copying": "text",
    "notice": "text",
    "authors": "text",
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DATA_LANGUAGES = frozenset(
    {
        "json",
        "jsonl",
        "yaml",
        "toml",
        "ini",
        "xml",
        "gitignore",
        "gitattributes",
        "dockerfile",
        "dotenv",
    }
)
_DOC_LANGUAGES = frozenset({"markdown", "restructuredtext", "asciidoc", "text"})
_OTHER_LANGUAGES = frozenset({"svg", "csv"})  # recognised, but neither code, config nor docs
_NON_CODE = _DATA_LANGUAGES | _DOC_LANGUAGES | _OTHER_LANGUAGES

_BINARY_EXTENSIONS = _words(
    ".png .jpg .jpeg .gif .bmp .ico .webp .avif .tif .tiff .psd .woff .woff2 .ttf .otf .eot "
    ".pdf .zip .gz .tgz .bz2 .xz .7z .rar .jar .war .exe .dll .so .dylib .a .o .class .pyc "
    ".wasm .mp3 .mp4 .m4a .wav .ogg .webm .mov .avi .sqlite .db .bin .lockb"
)

_LOCKFILES = _words(
    "package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml bun.lock bun.lockb "
    "deno.lock cargo.lock poetry.lock pipfile.lock uv.lock pdm.lock composer.lock "
    "gemfile.lock go.sum flake.lock mix.lock packages.lock.json"
)

_GENERATED_MARKERS = ("@generated", "do not edit", "auto-generated", "autogenerated")
_GENERATED_MARKER_RE = re.compile(
    "|".join(re.escape(m) for m in _GENERATED_MARKERS) + r"|code generated", re.IGNORECASE
)
_GENERATED_DIRS = ("generated", "__generated__")
#: A declaration file is compiler output when a same-named source lies beside it.
_DECLARATION_TWINS: dict[str, tuple[str, ...]] = {
    ".d.ts": (".js", ".jsx", ".ts", ".tsx"),
    ".d.mts": (".mjs", ".mts"),
    ".d.cts": (".cjs", ".cts"),
}

_VENDOR_DIRS = (
    "vendor",
    "vendors",
    "third_party",
    "third-party",
    "bower_components",
    "node_modules",
    "jspm_packages",
)
#: Folders that hold test suites, their data and their tools, in any language. Each rule is a
#: pattern a person can read in the reason and the regex that implements it; the first match
#: in the path, outermost folder first, names the rule. Monorepos keep whole test packages in
#: folders like ``dev-packages/browser-integration-tests/``, whose files are named ``test.ts``
#: or ``subject.js`` (sentry-javascript: 4,167 of its 5,749 files chunked before these rules).
#: A bare ``integration/`` is not one: Astro's ``src/integration/`` is source.
_TEST_DIR_RULES = tuple(
    (pattern, re.compile(regex))
    for pattern, regex in (
        ("__tests__/", r"^__tests__$"),
        ("__mocks__/", r"^__mocks__$"),
        ("__fixtures__/", r"^__(test)?fixtures__$"),
        ("__snapshots__/", r"^__snapshots__$"),
        ("test/", r"^test$"),
        ("tests/", r"^tests$"),
        ("spec/", r"^specs?$"),
        ("e2e/", r"^e2e$"),
        ("fixtures/", r"^fixtures?$"),
        ("testdata/", r"^testdata$"),  # Go's tooling skips it by this name
        ("cypress/", r"^cypress$"),
        ("playwright/", r"^playwright$"),
        ("*-tests/", r".-tests?$"),  # browser-integration-tests, e2e-tests, app-test
        ("*_tests/", r"._tests?$"),
        ("*-e2e/", r".[-_]e2e$"),  # Nx puts an app's end-to-end suite beside it
        ("*.Tests/", r".\.tests?$"),  # a .NET test project: Shop.Tests/
    )
)
_TEST_NAME_PATTERNS = (
    ("*.test.*", re.compile(r"\.test\.[^.]+$")),
    ("*.spec.*", re.compile(r"\.spec\.[^.]+$")),
    ("*.e2e.*", re.compile(r"\.e2e\.[^.]+$")),
    ("*.cy.*", re.compile(r"\.cy\.[^.]+$")),  # Cypress
    ("*_test.*", re.compile(r"_test\.[^.]+$")),  # Go, Python
    ("test_*.py", re.compile(r"^test_.*\.pyi?$")),  # pytest's default naming
    ("conftest.py", re.compile(r"^conftest\.py$")),
    # JUnit by Surefire's and Failsafe's default includes; matched on the name as written
    ("*Test.java", re.compile(r"[a-z0-9](Tests?|IT)\.java$")),
    ("*Tests.cs", re.compile(r"[a-z0-9]Tests?\.cs$")),  # xUnit, NUnit, MSTest
)
_CASED_NAME_PATTERNS = frozenset({"*Test.java", "*Tests.cs"})  # matched as written
_CONFIG_NAMES = _words(
    "package.json deno.json deno.jsonc .babelrc .editorconfig .npmrc .nvmrc .yarnrc "
    ".browserslistrc .gitignore .gitattributes .npmignore .dockerignore dockerfile "
    "docker-compose.yml docker-compose.yaml"
)
_CONFIG_NAME_PATTERNS = (
    ("tsconfig*.json", re.compile(r"^[tj]sconfig.*\.json$")),
    (".eslintrc*", re.compile(r"^\.eslintrc")),
    (".prettierrc*", re.compile(r"^\.prettierrc")),
    ("*.config.*", re.compile(r"\.config\.[^.]+$")),
    (".env*", re.compile(r"^\.env(\..+)?$")),
)
_DOC_DIRS = ("docs", "doc")
_DOC_STEMS = _words("readme changelog contributing license licence authors notice")


def detect_language(path: str) -> str | None:
    """The language of a file from its name, or None if Nexus does not know it.

    ``*.d.ts`` is reported as ``typescript`` (it is TypeScript syntax); compiler
    output is kept out of chunking by its category, ``generated``.
    """
    name = _folders_and_name(path)[1].lower()
    if name in _FILENAMES:
        return _FILENAMES[name]
    if name.startswith(".env"):
        return "dotenv"
    return _EXTENSIONS.get(_suffix(name))


def _folders_and_name(path: str) -> tuple[tuple[str, ...], str]:
    """``PurePosixPath(path).parts[:-1]`` and ``.name`` of a relative path, at a tenth of
    the cost (a scan classifies every file: pathlib was a sixth of its CPU)."""
    parts = [part for part in path.split("/") if part and part != "."]
    return tuple(parts[:-1]), parts[-1] if parts else ""


def _stem(name: str) -> str:
    """``PurePosixPath(name).stem``."""
    return name[: len(name) - len(_suffix(name))]


def _suffix(name: str) -> str:
    """``PurePosixPath(name).suffix``: from the last dot, unless it leads or ends the name."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def classify(
    path: str,
    head: bytes,
    size: int,
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    siblings: Collection[str] | None = None,
    selection: FileSelection = DEFAULT_SELECTION,
) -> FileInfo:
    """Classify one file; see the module docstring for the order of the checks.

    Args:
        path: POSIX path relative to the repository root.
        head: the file's leading bytes -- the whole file when it fits under
            ``max_file_bytes``, else at least its first 8000 bytes. Line-length
            statistics are computed on ``head``.
        size: the file's full size in bytes.
        max_file_bytes: files above this are ``too_large``.
        siblings: lower-cased names of the files in the same folder (None:
            unknown), which tell compiler output ``a.d.ts`` beside ``a.js`` from
            a hand-written one.
        selection: which chunkable files are chunked (sets ``left_out``).
    """
    language = detect_language(path)
    category, reason = _decide(path, head, size, language, max_file_bytes, siblings)
    info = FileInfo(path=path, size=size, category=category, language=language, reason=reason)
    return selection.apply(info)


def _decide(
    path: str,
    head: bytes,
    size: int,
    language: str | None,
    max_file_bytes: int,
    siblings: Collection[str] | None,
) -> tuple[Category, str]:
    folders, written_name = _folders_and_name(path)
    name = written_name.lower()
    dirs = tuple(part.lower() for part in folders)
    suffix = _suffix(written_name).lower()
    is_code = language is not None and _is_code(language)

    nul = head.find(b"\x00", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        return Category.BINARY, f"NUL byte at offset {nul} (git's binary rule)"
    if suffix in _BINARY_EXTENSIONS:
        return Category.BINARY, f"extension '{suffix}' is a binary format"
    if size > max_file_bytes:
        return (
            Category.TOO_LARGE,
            f"{size:,} bytes exceeds the {max_file_bytes:,}-byte limit (max_file_bytes)",
        )
    if name in _LOCKFILES:
        return Category.LOCKFILE, f"'{written_name}' is a package manager lockfile"
    if is_code and language not in CHUNKABLE_LANGUAGES:
        return Category.UNSUPPORTED, _unsupported_reason(str(language))
    if ".min." in name or name.endswith(("-min.js", "-min.css")):
        return Category.MINIFIED, f"name '{written_name}' marks a minified file"
    if is_code and (why := _minified_by_lines(head)):
        return Category.MINIFIED, why
    if why := _generated(written_name, dirs, head, siblings):
        return Category.GENERATED, why
    if vendor := next((d for d in dirs if d in _VENDOR_DIRS), None):
        return Category.VENDORED, f"under vendored directory '{vendor}/'"
    if is_code and (why := _test_match(written_name, dirs)):
        return Category.TEST, why
    if why := _config_match(name, language):
        return Category.CONFIG, why
    if language in _DOC_LANGUAGES or (language is None and _stem(name) in _DOC_STEMS):
        return Category.DOCS, f"{language or 'plain text'} documentation"
    if doc_dir := next((d for d in dirs if d in _DOC_DIRS), None):
        return Category.DOCS, f"under documentation directory '{doc_dir}/'"
    if is_code:
        empty = " (empty file)" if size == 0 else ""
        if _declaration_suffix(name):
            return Category.SOURCE, (
                "hand-written type declarations (no same-named .js/.ts beside it, "
                f"no generated header){empty}"
            )
        return Category.SOURCE, f"{language} source{empty}"
    if language is not None:
        return Category.UNSUPPORTED, f"{language} is recognised but is not code, config or docs"
    shown = f"extension '{suffix}'" if suffix else "files without an extension"
    return Category.UNSUPPORTED, f"no language known for {shown}"


def _unsupported_reason(language: str) -> str:
    """Why a file of a code language without a grammar is listed but not chunked."""
    return (
        f"unsupported language ({language}): Nexus has no grammar for it, so it is listed, "
        "not chunked"
    )


def unsupported_language(info: FileInfo) -> str | None:
    """The language of a code file Nexus has no grammar for (None for any other file)."""
    language = info.language
    if info.category is Category.UNSUPPORTED and language is not None and _is_code(language):
        return language
    return None


def _is_code(language: str) -> bool:
    return language not in _NON_CODE


def _minified_by_lines(head: bytes) -> str | None:
    """Line-length evidence of minification, stated with its numbers, or None."""
    text = head.decode("utf-8", errors="replace")
    lines = text.split("\n")
    chars = len(text) - (len(lines) - 1)
    if chars < MINIFIED_MEAN_MIN_CHARS:
        return None
    mean = chars / len(lines)
    longest = max(map(len, lines))
    in_long = (
        sum(len(line) for line in lines if len(line) > MINIFIED_LONG_LINE)
        if longest > MINIFIED_LONG_LINE
        else 0
    )
    if in_long > MINIFIED_LONG_SHARE * chars:
        return (
            f"{in_long / chars:.0%} of its {chars:,} characters sit in lines over "
            f"{MINIFIED_LONG_LINE:,} characters; longest line {longest:,}, "
            f"mean {mean:,.0f} over {len(lines):,} lines"
        )
    if mean > MINIFIED_MEAN_LINE:
        return (
            f"mean line length {mean:,.0f} characters over {len(lines):,} lines "
            f"(> {MINIFIED_MEAN_LINE})"
        )
    return None


def _declaration_suffix(name: str) -> str | None:
    return next((s for s in _DECLARATION_TWINS if name.lower().endswith(s)), None)


def _compiled_declarations(name: str, siblings: Collection[str] | None) -> str | None:
    """Why a ``*.d.ts`` looks like compiler output, or None if it looks hand-written."""
    suffix = _declaration_suffix(name)
    if suffix is None:
        return None
    if siblings is None:
        return f"type declarations (*{suffix}; its folder was not listed)"
    stem = name.lower()[: -len(suffix)]
    twin = next((stem + e for e in _DECLARATION_TWINS[suffix] if stem + e in siblings), None)
    return f"type declarations beside '{twin}' (compiler output)" if twin else None


def _generated(
    name: str, dirs: tuple[str, ...], head: bytes, siblings: Collection[str] | None
) -> str | None:
    if why := _compiled_declarations(name, siblings):
        return why
    if gen_dir := next((d for d in dirs if d in _GENERATED_DIRS), None):
        return f"under generated directory '{gen_dir}/'"
    if ".gen." in name.lower() or ".generated." in name.lower():
        return "name matches '*.gen.*'"
    lines = head[:4096].decode("utf-8", errors="replace").split("\n", GENERATED_HEADER_LINES)
    header = "\n".join(lines[:GENERATED_HEADER_LINES])  # no marker spans a line break
    if match := _GENERATED_MARKER_RE.search(header):
        return f"marker '{match.group(0)}' on line {header.count(chr(10), 0, match.start()) + 1}"
    return None


def _test_match(name: str, dirs: tuple[str, ...]) -> str | None:
    for folder in dirs:
        if pattern := _test_folder_rule(folder):
            shown = "" if pattern == f"{folder}/" else f" (folder '{folder}/')"
            return f"matches test pattern '{pattern}'{shown}"
    for pattern, regex in _TEST_NAME_PATTERNS:
        if regex.search(name if pattern in _CASED_NAME_PATTERNS else name.lower()):
            return f"matches test pattern '{pattern}'"
    return None


@lru_cache(maxsize=4096)
def _test_folder_rule(folder: str) -> str | None:
    """The first test-folder rule a folder name matches (names repeat across a repository)."""
    return next((pattern for pattern, regex in _TEST_DIR_RULES if regex.search(folder)), None)


def _config_match(name: str, language: str | None) -> str | None:
    if name in _CONFIG_NAMES:
        return f"'{name}' is a configuration file"
    for pattern, regex in _CONFIG_NAME_PATTERNS:
        if regex.search(name):
            return f"matches config pattern '{pattern}'"
    if language in _DATA_LANGUAGES:
        return f"{language} data/configuration file"
    return None
