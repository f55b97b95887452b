"""The regex baseline: functions found by a line pattern per language, to show what
line-pattern tools miss beside the syntax tree's units (``nexus functions``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from nexus.chunking.languages import LANGUAGES


@cache
def _regex(language: str) -> re.Pattern[str]:
    return re.compile(LANGUAGES[language].regex, re.MULTILINE)


@dataclass(frozen=True)
class RegexMatch:
    """A function the regex baseline found: name and 1-based line range."""

    name: str
    start_line: int
    end_line: int


def regex_functions(text: str, language: str) -> list[RegexMatch]:
    """The regex baseline: top-of-line function definitions (``LanguageSpec.regex``),
    closed by brace counting, or for Python by the first line indented no deeper.

    It sees no arrows, methods or assignments in JS, and brace counting is fooled
    by braces in strings (indentation by a multi-line signature), which is the
    point of showing it.
    """
    matches = []
    by_indent = LANGUAGES[language].regex_blocks == "indent"
    lines = text.split("\n") if by_indent else []
    for match in _regex(language).finditer(text):
        start_line = text.count("\n", 0, match.start()) + 1
        if by_indent:
            end_line = _indented_end(lines, start_line)
        else:
            end_line = text.count("\n", 0, _brace_end(text, match.end())) + 1
        matches.append(RegexMatch(match.group(1), start_line, end_line))
    return matches


def _brace_end(text: str, start: int) -> int:
    depth = 0
    opened = False
    for index in range(start, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
            opened = True
        elif char == "}":
            depth -= 1
            if opened and depth == 0:
                return index
    return len(text)


def _indented_end(lines: list[str], start_line: int) -> int:
    """The last non-blank line before the next one indented no deeper than the
    ``def`` line (comments aside), 1-based."""
    header = lines[start_line - 1]
    indent = len(header) - len(header.lstrip(" \t"))
    last = start_line
    for number in range(start_line + 1, len(lines) + 1):
        line = lines[number - 1]
        stripped = line.lstrip(" \t")
        if not stripped.strip():
            continue
        if len(line) - len(stripped) <= indent and not stripped.startswith("#"):
            break
        last = number
    return last
