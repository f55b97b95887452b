"""The query-set generator: which comments document what in each language, blanking that
keeps every line, undocumented units skipped, filters, sampling and determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nexus.evaluation.doc_summary import marked_summary, mentions_name, remove_name, summary
from nexus.evaluation.generate import blank_file, blanked_repository, generate
from nexus.evaluation.query_sets import parse_queries
from nexus.ingest.sources import Repository, open_repository
from nexus.types import Category, FileInfo

SAMPLES = Path(__file__).resolve().parents[2] / "sample_repos"


def repo_of(files: dict[str, tuple[str, str]]) -> Repository:
    """An in-memory repository: path -> (language, text)."""
    infos = [
        FileInfo(path, len(text.encode()), Category.SOURCE, language, "test fixture")
        for path, (language, text) in files.items()
    ]
    contents = {path: text.encode() for path, (_, text) in files.items()}
    return Repository(name="fixture", files=tuple(infos), contents=contents)


# (language, path, source, documented targets, doc text that must be blanked)
CASES = [
    (
        "javascript",
        "lib/a.js",
        """// a plain comment, not a doc
function plain(a, b) {
  return a + b;
}

/**
 * Adds two numbers and returns their total sum.
 * @param {number} a
 */
function add(a, b) {
  return helper.round(a + b) + other(a);
}

/** Picks the request's preferred language from its headers. */

res.lang = function lang() {
  return pick(this.headers);
};

/** Far away from what follows, so it documents nothing at all. */


function far() {
  return 1;
}

/* A block comment but not a doc comment of any kind. */
function block() {
  return 2;
}
""",
        {"add", "res.lang"},
        "returns their total sum",
    ),
    (
        "typescript",
        "src/b.ts",
        """export class Cache {
  /** Drops every entry older than the given age in ms. */
  @logged
  prune(age: number): void {
    this.entries.clear();
  }

  size(): number {
    return this.entries.size;
  }
}

/** Parses a duration written with a unit, like 5m. */
export function parse(text: string): number;
export function parse(text: string, unit: string): number;
export function parse(text: string, unit?: string): number {
  return toMs(text, unit);
}
""",
        {"Cache.prune", "parse"},
        "older than the given age",
    ),
    (
        "python",
        "pkg/c.py",
        '''"""A module docstring, blanked too."""


class Store:
    """A class docstring: classes are not targets."""

    def put(self, key, value):
        """Store the value under the key, replacing any older one."""
        self.data[key] = value
        self.log.write(key)

    def get(self, key):
        # only a comment
        return self.data[key]


@cached
def load(path):
    r"""Read the configuration file and return its settings."""
    return parse(open(path).read())
''',
        {"Store.put", "load"},
        "replacing any older one",
    ),
    (
        "go",
        "cmd/d.go",
        """package demo

// Sum adds the numbers it is given
// and returns their total.
func Sum(xs ...int) int {
\ttotal := 0 // a trailing comment, not a doc comment
\tfor _, x := range xs {
\t\ttotal += x
\t}
\treturn total
}

// Detached comment, documenting nothing.

func Alone() int {
\treturn 1
}

// Norm reports the length of [Point] p in the plane.
func (p Point) Norm() int {
\treturn math.Abs(p.X)
}
""",
        {"Sum", "Point.Norm"},
        "adds the numbers",
    ),
    (
        "java",
        "src/E.java",
        """class Account {
  /** Moves the given amount to the other account atomically. */
  @Override
  public void transfer(Account other, long amount) {
    lock.lock();
    other.deposit(amount);
  }

  /* A plain block comment, so no doc. */
  public long balance() {
    return value;
  }
}
""",
        {"Account.transfer"},
        "to the other account",
    ),
    (
        "rust",
        "src/f.rs",
        """//! Crate docs: blanked, never a target.

/// Adds two numbers together and returns the sum.
/// More text after the first line.
#[inline]
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

// A plain comment, not a doc.
pub fn sub(a: i32, b: i32) -> i32 {
    a - b
}
""",
        {"add"},
        "two numbers together",
    ),
]


@pytest.mark.parametrize(("language", "path", "source", "targets", "doc_words"), CASES)
def test_documented_units_are_the_targets(language, path, source, targets, doc_words):
    result = generate(repo_of({path: (language, source)}))
    docs = [r for r in result.records if r["variant"] == "doc"]
    assert {r["target"]["qualname"] for r in docs} == targets
    for record in docs:  # the target's span is the definition itself, never its comment
        first = source.split("\n")[record["target"]["start_line"] - 1]
        assert "/**" not in first and "///" not in first and '"""' not in first


@pytest.mark.parametrize(("language", "path", "source", "targets", "doc_words"), CASES)
def test_blanking_keeps_every_line(language, path, source, targets, doc_words):
    blanked = blank_file(source.encode(), language).decode()
    assert doc_words in source and doc_words not in blanked
    before, after = source.split("\n"), blanked.split("\n")
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):  # a line is kept or blanked, not moved
        assert new == old or new.strip() in ("", '""') or new in old or not new.strip()
    if language == "python":  # the body stays valid: an empty string in its place
        assert '""' in blanked


def test_go_and_java_plain_comments_stay():
    go_source = CASES[3][2]
    assert "a trailing comment" in blank_file(go_source.encode(), "go").decode()
    assert "Detached comment" in blank_file(go_source.encode(), "go").decode()
    java = blank_file(CASES[4][2].encode(), "java").decode()
    assert "A plain block comment" in java


def test_inline_doc_comment_becomes_one_space():
    assert blank_file(b"let a = /** x */ 1;\n", "javascript") == b"let a =   1;\n"


def test_counts_say_why_units_were_skipped():
    source = '''class A:
    """Classes are counted, never targets."""

    def short(self):
        """Too short."""
        return 1

    def named(self):
        """named does this job."""
        return 2

    def one(self): return 3

    def twin_a(self):
        """Returns the same thing as its twin below."""
        return 4

    def twin_b(self):
        """Returns the same thing as its twin below."""
        return 5
'''
    result = generate(repo_of({"a.py": ("python", source)}))
    assert result.targets == 0
    assert result.skipped["not_function"] == 1
    assert result.skipped["short_summary"] == 1
    assert result.skipped["short_after_name"] == 1
    assert result.skipped["single_line"] == 0  # undocumented: not counted at all
    assert result.skipped["duplicate_query"] == 2
    assert any("summary under 4 words" in line for line in result.counts_lines())


@pytest.mark.parametrize(
    ("doc", "language", "expected"),
    [
        ("/**\n * Sends the {@link Response} body.\n *\n * More.\n * @param x\n */",
         "javascript", "Sends the Response body."),
        ('"""Read the file.\n\n    Args:\n        path: where."""', "python", "Read the file."),
        ("// Sum adds the [Point] values. And more.", "go", "Sum adds the Point values."),
        ("/// Adds `a` and `b`\n/// together.\n///\n/// # Examples", "rust",
         "Adds a and b together."),
    ],
)  # fmt: skip
def test_summary_per_language(doc, language, expected):
    assert summary(doc, language) == expected


def test_the_name_is_removed_from_the_query():
    assert remove_name("Sends res.send() now.", ["send", "res.send"]) == "Sends now."


# Name removal on real doc comments: (language, doc comment as written, the definition's
# names, the doc query). The name goes where it is written as code; prose keeps the word.
NAME_CASES = [
    (  # hono src/context.ts: the method name in backticks, the same word in prose and a MIME type
        "typescript",
        """/**
   * `.text()` can render text as `Content-Type:text/plain`.
   *
   * @see {@link https://hono.dev/docs/api/context#text}
   *
   * @example
   * ```ts
   * app.get('/say', (c) => {
   *   return c.text('Hello!')
   * })
   * ```
   */""",
        ["text", "Context.text"],
        "can render text as Content-Type:text/plain.",
    ),
    (  # hono src/request.ts: a member chain in backticks; "param" inside "parameters" stays
        "typescript",
        """/**
   * `.req.param()` gets the path parameters.
   *
   * @see {@link https://hono.dev/docs/api/routing#path-parameter}
   */""",
        ["param", "HonoRequest.param"],
        "gets the path parameters.",
    ),
    (  # other members' names stay; the target's own goes
        "typescript",
        """/**
   * `.body()` can return the HTTP response.
   * You can set headers with `.header()` and set HTTP status code with `.status`.
   */""",
        ["body", "Context.body"],
        "can return the HTTP response. You can set headers with .header() and set HTTP status "
        "code with .status.",
    ),
    (  # express: a call on a receiver in prose; the word "type" stays
        "javascript",
        """/**
 * Set the Content-Type from the given type, the way res.type('json') does.
 *
 * @param {String} type
 * @return {ServerResponse} for chaining
 * @public
 */""",
        ["type", "res.type"],
        "Set the Content-Type from the given type, the way does.",
    ),
    (  # a Python docstring: a reST literal of the call goes, the word in prose stays
        "python",
        '''"""Raise the `HTTPStatusError` if one occurred; ``raise_for_status()`` returns
        the response itself, for chaining.

        Returns:
            The response.
        """''',
        ["raise_for_status", "Response.raise_for_status"],
        "Raise the HTTPStatusError if one occurred; returns the response itself, for chaining.",
    ),
    (  # a Python identifier in prose is code even without backticks
        "python",
        '''"""Iterate over the lines of the body, like iter_lines in the sync client."""''',
        ["iter_lines", "Response.iter_lines"],
        "Iterate over the lines of the body, like in the sync client.",
    ),
    (  # a Python prose word that is the name stays
        "python",
        '''"""Close the response and release the connection.

        Automatically called if the response body is read to completion.
        """''',
        ["close", "Response.close"],
        "Close the response and release the connection.",
    ),
    (  # Javadoc (jsoup Element.text): {@code p.text()} goes, "text" in prose stays
        "java",
        """/**
     * Gets the normalized, combined text of this element and all its children. For example,
     * given HTML {@code <p>Hello <b>there</b> now!</p>},
     * {@code p.text()} returns {@code "Hello there now!"}.
     *
     * @return unencoded, normalized text, or empty string if none.
     * @see #wholeText()
     */""",
        ["text", "Element.text"],
        "Gets the normalized, combined text of this element and all its children. For example, "
        'given HTML Hello there now! , returns "Hello there now!".',  # (HTML tags dropped)
    ),
    (  # Javadoc: a {@link #name()} reference goes
        "java",
        """/**
     * Set the text of this element, clearing what it held; read it back with {@link #text()}.
     */""",
        ["text", "Element.text"],
        "Set the text of this element, clearing what it held; read it back with.",
    ),
    (  # Go: the name opens the comment by convention, and [Store.Get] is a doc link to it
        "go",
        """// Get returns the value stored under key, or nil. Call [Store.Get] from one
// goroutine at a time.""",
        ["Get", "Store.Get"],
        "returns the value stored under key, or nil.",
    ),
    (  # Go: another name opening the comment (a doc on a var block, say) stays
        "go",
        "// Get requests are retried three times by the default client's transport.",
        ["Retry"],
        "Get requests are retried three times by the default client's transport.",
    ),
    (  # Rust: an intra-doc link with a path goes, the type in backticks stays
        "rust",
        """/// Creates a new `Bytes` from a static slice; [`Bytes::from_static`] never allocates.
///
/// # Examples""",
        ["from_static", "Bytes.from_static"],
        "Creates a new Bytes from a static slice; never allocates.",
    ),
    (  # C#: an XML doc <see cref> of the method itself goes
        "csharp",
        """/// <summary>
/// Adds the line to the order; <see cref="Order.AddLine(Line)"/> throws when the order
/// is closed.
/// </summary>
/// <param name="line">The line to add.</param>""",
        ["AddLine", "Order.AddLine"],
        "Adds the line to the order; throws when the order is closed.",
    ),
]


@pytest.mark.parametrize(("language", "doc", "names", "query"), NAME_CASES)
def test_name_removal_on_real_doc_comments(language, doc, names, query):
    marked = marked_summary(doc, language)
    assert remove_name(marked, names) == query
    assert not mentions_name(query, names)


@pytest.mark.parametrize(
    ("text", "names", "expected"),
    [
        # never from inside another word, a path or a MIME type
        ("Render text as text/plain; see a.ts.", ["text"], "Render text as text/plain; see a.ts."),
        ("Gets the path parameters.", ["param"], "Gets the path parameters."),
        ("Wraps koa-compose for Hono.", ["compose"], "Wraps koa-compose for Hono."),
        # every code form of the name
        ("Alias of `Foo#bar` for the old API users.", ["bar"], "Alias of for the old API users."),
        ("Like Foo::bar but it never allocates.", ["bar"], "Like but it never allocates."),
        ("Call bar(x, y) once the socket is open.", ["bar"], "Call once the socket is open."),
        ("Use this?.bar() when the host is missing.", ["bar"], "Use when the host is missing."),
        ("Flushes what parseBody buffered so far.", ["parseBody"], "Flushes what buffered so far."),
        ("at the point Wrap is called. Wrap it.", ["Wrap"], "at the point is called. Wrap it."),
    ],
)  # fmt: skip
def test_name_removal_keeps_prose(text, names, expected):
    assert remove_name(text, names) == expected


def test_generated_queries_never_mention_their_target_as_code():
    for sample in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        for record in generate(open_repository(sample)).records:
            target = record["target"]
            if record["variant"] == "doc":
                assert not mentions_name(record["query"], [target["name"], target["qualname"]])


def test_a_csharp_repository_gets_a_query_set():
    result = generate(open_repository(SAMPLES / "inventory_csharp"))
    assert result.targets >= 10 and {"doc", "name", "calls"} <= set(result.by_variant())
    records = {r["id"]: r for r in result.records}
    apply = next(r for r in records.values() if r["target"]["qualname"] == "StockItem.Apply")
    assert apply["query"] == (
        "Records a movement of units in or out and updates the quantity on hand."
    )
    assert (apply["target"]["kind"], apply["target"]["lang"]) == ("method", "csharp")
    blanked = blank_file(
        (SAMPLES / "inventory_csharp" / apply["target"]["file"]).read_bytes(), "csharp"
    )
    assert b"///" not in blanked


def test_same_repository_same_set_and_the_seed_changes_the_sample():
    repo = open_repository(SAMPLES / "express-images")
    first, again = generate(repo, cap=10), generate(repo, cap=10)
    assert first.jsonl() == again.jsonl()
    other = generate(repo, cap=10, seed="another")
    assert other.targets == first.targets == 10
    assert other.jsonl() != first.jsonl()
    assert first.skipped["over_cap"] == generate(repo).targets - 10


def test_the_cap_samples_across_folders():
    files = {
        f"{folder}/m{i}.js": (
            "javascript",
            "".join(
                f"/** Handles the case number {folder} {i} {n} of many. */\n"
                f"function f{folder}{i}x{n}() {{\n  return {n};\n}}\n"
                for n in range(5)
            ),
        )
        for folder in ("a", "b", "c")
        for i in range(2)
    }
    result = generate(repo_of(files), cap=6)
    folders = [r["target"]["file"].split("/")[0] for r in result.records if r["variant"] == "doc"]
    assert sorted(folders) == ["a", "a", "b", "b", "c", "c"]
    files_hit = {r["target"]["file"] for r in result.records}
    assert len(files_hit) == 6  # within a folder, its files take turns too


def test_the_set_reads_back_and_its_targets_are_in_the_blanked_copy():
    repo = open_repository(SAMPLES / "ts-payments")
    result = generate(repo)
    queries = parse_queries(result.jsonl())
    assert len(queries) == len(result.records)
    assert {q.variant for q in queries} == {"doc", "name", "calls"}
    blanked = blanked_repository(repo)
    assert [i.path for i in blanked.files] == [i.path for i in repo.files]
    for q in queries:
        original = repo.read(q.target.file).text.split("\n")
        copy = blanked.read(q.target.file).text.split("\n")
        assert len(original) == len(copy)
        assert copy[q.target.start_line - 1] == original[q.target.start_line - 1]
    doc = next(r for r in result.records if r["variant"] == "doc")
    assert doc["doc_summary"] not in blanked.read(doc["target"]["file"]).text
    assert json.loads(result.jsonl().splitlines()[0])["blank_docs"] is True


def test_cap_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        generate(repo_of({}), cap=0)


def test_cli_writes_the_set_and_eval_blanks_the_docs(capsys, monkeypatch, tmp_path):
    from nexus import cli
    from nexus.cli import indexes
    from nexus.ui.fake_embedder import HashingEmbedder

    out = tmp_path / "q.jsonl"
    target = str(SAMPLES / "ts-payments")
    assert cli.main(["queries", target, "-o", str(out), "--cap", "5"]) == 0
    printed = capsys.readouterr().out
    assert "5 targets" in printed and "documented units found" in printed
    assert "examples" in printed and f"nexus eval {target} --queries {out}" in printed
    assert len({json.loads(line)["target_id"] for line in out.read_text().splitlines()}) == 5

    monkeypatch.setattr(indexes, "cached_embedder", lambda args, config: HashingEmbedder())
    assert (
        cli.main(["eval", target, "--tier", "quality", "--queries", str(out), "--strategy", "ast"])
        == 0
    )
    result = capsys.readouterr()
    assert "doc comments blanked" in result.err and "MRR@10" in result.out
    assert (
        cli.main(["eval", target, "--tier", "quality", "--queries", str(out), "--no-blank-docs"])
        == 0
    )
    assert "doc comments blanked" not in capsys.readouterr().err


def test_cli_says_so_when_nothing_is_documented(capsys, tmp_path):
    from nexus import cli

    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.py").write_text("def f():\n    return 1\n")
    code = cli.main(["queries", str(tmp_path / "repo"), "-o", str(tmp_path / "q.jsonl")])
    assert code == 2 and "no documented function" in capsys.readouterr().err
