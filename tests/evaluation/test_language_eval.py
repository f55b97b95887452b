"""The query-set builder of bench/retrieval/language_eval.py: what counts as a Go doc comment, how
it is blanked and read. (The benchmark itself downloads packages and is not run here.)"""

from __future__ import annotations

import pytest

from bench.retrieval.language_eval import SETS, go_calls, go_docs, go_summary, python_docs, strip
from nexus.chunking.grammar import parse

GO = b"""// Copyright 2024 Someone.

// Package demo shows doc comments.
package demo

// Sum adds the numbers it is given
// and returns their total.
func Sum(xs ...int) int {
\ttotal := 0 // a trailing comment, not a doc comment
\t// a comment inside a body
\tfor _, x := range xs {
\t\ttotal += x
\t}
\treturn total + helper.Round(len(xs))
}

// Detached comment.

func Alone() {}

// Point is a point.
type Point struct {
\t// X is the abscissa.
\tX int
}

// Norm reports the length of [Point] p.
//
// It panics on overflow.
func (p Point) Norm() int { return fmt.Sprint(p.X) }
"""


def test_go_doc_comments_are_the_runs_right_above_a_declaration() -> None:
    tree = parse(GO, "go")
    docs = {GO[d.start_byte : d.end_byte].decode(): d.owner.type for d in go_docs(tree)}
    assert docs == {
        "// Package demo shows doc comments.": "package_clause",
        "// Sum adds the numbers it is given\n// and returns their total.": "function_declaration",
        "// Point is a point.": "type_declaration",
        "// X is the abscissa.": "field_declaration",
        "// Norm reports the length of [Point] p.\n//\n// It panics on overflow.": (
            "method_declaration"
        ),
    }


@pytest.mark.parametrize("language", ["go", "python"])
def test_blanking_keeps_every_line_number(language: str) -> None:
    data = GO if language == "go" else b'def f():\n    """Doc\n    more."""\n    return 1\n'
    qs = SETS[language]
    stripped = strip(data, qs.docs(parse(data, language)), qs.blank)
    assert stripped.count(b"\n") == data.count(b"\n")
    assert b"Sum adds" not in stripped and b"Doc" not in stripped
    assert b"// a trailing comment" in stripped or language == "python"
    parse_errors = parse(stripped, language).root_node.has_error
    assert not parse_errors


@pytest.mark.parametrize(
    ("doc", "summary"),
    [
        (
            "// Sum adds the numbers it is given\n// and returns their total.",
            "Sum adds the numbers it is given and returns their total.",
        ),
        (
            "// Norm reports the length of [Point] p.\n//\n// It panics.",
            "Norm reports the length of Point p.",
        ),
        ("// Run runs it:\n//\n//\tcode()\n", "Run runs it:"),
        ("/* Block says a thing. More. */", "Block says a thing."),
        ("// Deprecated: use Other.", ""),
    ],
)
def test_go_summary_is_the_first_sentence(doc: str, summary: str) -> None:
    assert go_summary(doc) == summary


def test_go_calls_name_the_callee_and_a_plain_operand() -> None:
    tree = parse(GO, "go")
    sum_ = next(d.owner for d in go_docs(tree) if d.owner.type == "function_declaration")
    assert go_calls(sum_) == ["helper", "Round", "len"]


def test_python_docstrings_are_found_in_modules_classes_and_defs() -> None:
    data = b'"""Module."""\nclass A:\n    """Class."""\n    def f(self):\n        """F."""\n'
    found = [data[d.start_byte : d.end_byte] for d in python_docs(parse(data, "python"))]
    assert sorted(found) == [b'"""Class."""', b'"""F."""', b'"""Module."""']


def test_each_tuning_set_is_another_set_of_the_same_language_with_other_packages() -> None:
    """Choices are made on the tuning set and reported on the held-out one: they must
    not share a package (nor a work folder, which holds the built corpus)."""
    tuned = [qs for qs in SETS.values() if qs.tuning]
    assert tuned, "no set names a tuning set"
    for held_out in tuned:
        tuning = SETS[held_out.tuning]
        assert tuning.language == held_out.language and not tuning.tuning
        assert {p.name for p in tuning.packages}.isdisjoint(p.name for p in held_out.packages)
        assert tuning.work != held_out.work and tuning.name != held_out.name
