"""What a candidate earns on its own, before the candidates are compared: the names a query
asks for (``query_names``), and the boosts and dampings of one chunk (``evidence``): whether
it *defines* a name asked for, the query's words in its unit's name and its file's path,
and priors on tests, examples, compatibility copies, barrels, declarations and module code.
Each is a ``ScorePart``, so a hit shows why it ranks where it does; the weights are
``nexus.retrieval.rules.RankingRules``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from nexus.chunking.languages import is_test_path
from nexus.retrieval.lexical import terms
from nexus.retrieval.rules import RankingRules
from nexus.types import Chunk

NATURAL, SYMBOL = "natural", "symbol"
#: A sentence of at most this many words names a topic, as typed into a search box
#: ("cookie parsing", "connection pool limits"): its words are the code's own, so the
#: unit's name and the file's path say more than for a long paraphrase (on the questions,
#: topical queries have 2-5 words and paraphrases 6 or more).
TOPIC_WORDS = 5
#: Unit kinds that declare a shape without behaviour (``Chunk.symbol_kind``).
SHAPE_KINDS = frozenset({"interface", "struct", "type", "enum", "trait"})
#: Unit kinds that add to a type defined elsewhere (Rust's ``impl Body``): asked for
#: ``Body``, they match as loosely as another case would.
ADDS_TO_A_TYPE = frozenset({"impl"})

# A bare or qualified identifier, as people type one: HTTPAdapter, Router.add,
# field_validator, Producer::split_at, Router#param, getCookie().
_SYMBOL_QUERY = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*(?:\(\))?")
# A name inside a sentence: camelCase, PascalCase with an inner capital, snake_case,
# or a dotted name.
_CODE_NAME = re.compile(
    r"\b(?:[a-z_$][\w$]*[A-Z][\w$]*|[A-Z][a-z0-9]+[A-Z][\w$]*|[A-Za-z]\w*_\w+"
    r"|[A-Za-z_$][\w$]*(?:\.|::)[A-Za-z_$][\w$]*)\b"
)
_SEGMENTS = re.compile(r"\.|::|#")


def query_kind(text: str) -> str:
    """``symbol`` for a bare or qualified identifier, else ``natural``."""
    return SYMBOL if _SYMBOL_QUERY.fullmatch(text.strip()) else NATURAL


def is_topical(text: str) -> bool:
    """Whether a query is a short topic (``TOPIC_WORDS``) rather than a name or a sentence."""
    return query_kind(text) != SYMBOL and len(text.split()) <= TOPIC_WORDS


@dataclass(frozen=True)
class QueryName:
    """A name the query asks for: its last part and the qualifier before it (``Router.add``)."""

    name: str
    qualifier: str = ""


def query_names(text: str) -> tuple[tuple[QueryName, ...], bool]:
    """The names a query asks for, and whether it is a symbol query (else: a sentence)."""
    text = text.strip()
    found = [text.removesuffix("()")] if query_kind(text) == SYMBOL else _CODE_NAME.findall(text)
    names = []
    for raw in found:
        parts = [p for p in _SEGMENTS.split(raw) if p]
        if parts:
            names.append(QueryName(parts[-1], ".".join(parts[:-1])))
    return tuple(names), query_kind(text) == SYMBOL


@dataclass(frozen=True)
class ScorePart:
    """One term of a hit's score: ``dense``, ``keyword``, or a boost (+) or damping (-)."""

    name: str
    value: float


def evidence(
    chunk: Chunk,
    names: tuple[QueryName, ...],
    is_symbol: bool,
    query_terms: frozenset[str],
    rules: RankingRules,
) -> list[ScorePart]:
    """The boosts and dampings a chunk earns on its own."""
    parts = []
    defines = _defines(chunk, names, rules.defines_loosely)
    if defines:
        weight = rules.defines if is_symbol else rules.defines_in_sentence
        parts.append(ScorePart("defines", weight * defines))
    if not is_symbol and rules.name_words and chunk.symbol:
        named = _name_terms(chunk.symbol)
        share = _path_matches(query_terms, named) / len(named) if named else 0.0
        if share:
            parts.append(ScorePart("name words", rules.name_words * share))
    matched = _path_matches(query_terms, _path_terms(chunk.file))
    if matched:
        parts.append(ScorePart("path", rules.path_word * min(matched, 2)))
    for name, weight in _file_priors(chunk.file, rules):
        parts.append(ScorePart(name, -weight))
    if rules.test_file and in_test_module(chunk) and not is_test_path(chunk.file):
        parts.append(ScorePart("test module", -rules.test_file))
    if rules.barrel_file and only_reexports(chunk):
        parts.append(ScorePart(_PRIOR_LABELS["barrel_file"], -rules.barrel_file))
    if not is_symbol:
        if chunk.symbol_kind in SHAPE_KINDS and rules.shape_only:
            parts.append(ScorePart("declares a shape", -rules.shape_only))
        elif chunk.symbol_kind is None and rules.module_code and not only_reexports(chunk):
            parts.append(ScorePart("module code", -rules.module_code))
    if rules.mostly_comments and _mostly_comments(chunk):
        parts.append(ScorePart("mostly comments", -rules.mostly_comments))
    return [p for p in parts if p.value]


def _defines(chunk: Chunk, names: tuple[QueryName, ...], loosely: float) -> float:
    """1 when the chunk defines a name asked for, ``loosely`` on a loose match (another
    case, or a qualifier that differs, or an ``impl`` block of the type rather than the
    type itself), else 0."""
    if not names:
        return 0.0
    best = 0.0
    for symbol in (chunk.symbol, *chunk.symbols):
        if not symbol:
            continue
        parts = [p for p in _SEGMENTS.split(symbol) if p]
        last, qualifier = parts[-1], ".".join(parts[:-1])
        for wanted in names:
            if last == wanted.name and (
                not wanted.qualifier or qualifier.endswith(wanted.qualifier)
            ):
                if symbol == chunk.symbol and chunk.symbol_kind in ADDS_TO_A_TYPE:
                    best = max(best, loosely)  # ``impl Body``: Body's methods, not Body
                    continue
                return 1.0
            if last.lower() == wanted.name.lower():
                best = max(best, loosely)
    return best


@lru_cache(maxsize=65536)
def _path_terms(path: str) -> frozenset[str]:
    """The words of a file's folders and name (without its extension)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return frozenset(terms(stem.replace("/", " ")))


@lru_cache(maxsize=65536)
def _name_terms(symbol: str) -> frozenset[str]:
    """The words of a symbol's own name (its last part): ``Router.addRoute`` -> add, route."""
    return frozenset(terms(_SEGMENTS.split(symbol)[-1]))


#: Pairs of (query words, path or name words) the two memos below keep: a few queries'
#: worth (a query weighs about 400 candidates). Keys of queries gone by only cost: kept by
#: the 65,536 they grew to 165,000 objects in 200 queries at 63k chunks, which every full
#: garbage collection walked (up to 300 ms a pause; 5 ms a query on average).
QUERY_MEMO = 4096


@lru_cache(maxsize=QUERY_MEMO)
def _path_matches(query_terms: frozenset[str], path_terms: frozenset[str]) -> int:
    """Query words found in a path, a word meeting its longer form halfway (the stemmer is
    light: ``cookies`` -> ``cooki`` meets ``cookie``, ``parsed`` -> ``pars`` meets ``parser``)."""
    met = query_terms & path_terms
    for word in path_terms:
        if len(word) >= 4:  # a shorter word meets only its equal
            met = met | _words_meeting(query_terms, word)
    return len(met)


@lru_cache(maxsize=QUERY_MEMO)
def _words_meeting(query_terms: frozenset[str], word: str) -> frozenset[str]:
    """The query words that meet ``word`` (see ``_path_matches``), remembered: a query's
    candidates share most path words, so each pair is compared once, not once per chunk."""
    return frozenset(
        q
        for q in query_terms
        if q == word or (min(len(q), len(word)) >= 4 and (word.startswith(q) or q.startswith(word)))
    )


# Benchmarks and perf harnesses are examples too: they call the API to exercise it.
_EXAMPLE_PATH = re.compile(
    r"(^|/)(examples?|demos?|samples?|benchmarks?|benches|bench|perf[-_]measures?)/"
)
_COMPAT_PATH = re.compile(r"(^|/)(compat|legacy|deprecated|v[0-9]+)(/|\.|_)|_compat\.\w+$")
# A line that imports, re-exports or declares a submodule (never one that defines)...
_EXPORT_LINE = re.compile(
    r"\s*(import\s|from\s+\S+\s+import\s|export\s+(type\s+)?[*{]|export\s+default\s+[\w$.]+;?\s*$"
    r"|(pub(\([\w:]+\))?\s+)?(use\s|mod\s+\w+\s*;)|module\.exports\s*=\s*(require\(|\{)"
    r"|exports\.[\w$]+\s*=\s*require\(|__all__\s*=)"
)
# ... and the continuation lines of such a statement (``  parse as parseCookie,``,
# ``} from './cookie'``, ``"Router",``).
_ITEM = r"['\"]?[\w$.*]+['\"]?(?:\s+as\s+[\w$]+)?"
_LIST_LINE = re.compile(
    rf"\s*(?:{_ITEM}(?:\s*,\s*{_ITEM})*\s*,?)?\s*[\]}})]?"
    r"\s*(?:from\s+['\"][^'\"]+['\"])?\s*;?\s*$"
)
_COMMENT_LINE = re.compile(r"\s*(#|//|/\*|\*|\"\"\"|''')")


@lru_cache(maxsize=65536)
def _path_priors(path: str) -> tuple[str, ...]:
    found = []
    if is_test_path(path):  # test folders, and each language's test file names
        found.append("test_file")
    if _EXAMPLE_PATH.search(path):
        found.append("example_file")
    if _COMPAT_PATH.search(path):
        found.append("compat_file")
    if path.endswith((".d.ts", ".d.mts", ".d.cts", ".pyi")):
        found.append("declaration_file")
    return tuple(found)


_PRIOR_LABELS = {
    "test_file": "test file",
    "example_file": "example",
    "compat_file": "compatibility copy",
    "barrel_file": "re-exports",
    "declaration_file": "declarations",
}


#: Module names that hold a source file's own tests (Rust's ``mod tests``, ``mod test``).
_TEST_MODULES = frozenset({"tests", "test"})


def in_test_module(chunk: Chunk) -> bool:
    """Whether the chunk's unit lives in a test module inside a source file
    (``tests.client_happy_eyeballs``: Rust keeps unit tests beside the code they test, so
    the path alone does not say so). Only the qualifier counts: a method named ``test``
    (``RegExp.test``) is code."""
    return bool(chunk.symbol) and any(
        part in _TEST_MODULES for part in _SEGMENTS.split(chunk.symbol)[:-1]
    )


def _file_priors(path: str, rules: RankingRules) -> list[tuple[str, float]]:
    return [
        (_PRIOR_LABELS[name], getattr(rules, name))
        for name in _path_priors(path)
        if getattr(rules, name)
    ]


def only_reexports(chunk: Chunk) -> bool:
    """Whether a chunk defines nothing and every code line of it imports, re-exports or
    declares a submodule: a barrel (``export * from './x'``, ``from .a import b``,
    ``pub use``), whatever its file is called. An ``index.ts`` or ``__init__.py`` that
    holds code is not one, and is not damped as one."""
    return not (chunk.symbol or chunk.symbols) and _only_reexport_lines(chunk.text)


@lru_cache(maxsize=65536)
def _only_reexport_lines(text: str) -> bool:
    """Remembered: a chunk is a candidate of many queries (a sweep's: hundreds)."""
    code = [line for line in text.splitlines() if line.strip() and not _COMMENT_LINE.match(line)]
    return any(_EXPORT_LINE.match(line) for line in code) and all(
        _EXPORT_LINE.match(line) or _LIST_LINE.match(line) for line in code
    )


def _mostly_comments(chunk: Chunk) -> bool:
    lines = [line.strip() for line in chunk.text.splitlines() if line.strip()]
    if len(lines) < 8:
        return False
    comments = sum(1 for line in lines if line.startswith(("#", "//", "/*", "*", '"""', "'''")))
    return comments > 0.7 * len(lines)
