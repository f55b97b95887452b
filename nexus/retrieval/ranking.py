"""The ranking stage: what happens between candidate retrieval and the results.

Dense (cosine) and keyword (BM25) retrieval each propose candidates; this stage fuses
their scores without depending on their scales, then weighs evidence that only code
has: which chunk *defines* a name the query asks for, file paths, how many strong chunks
a file has, and priors on tests, examples, compatibility copies, barrels and
declarations. Last, each hit gathers its neighbouring candidates of the same file into
one result window (``nexus.retrieval.windows``). Every weight lives in ``RankingRules``
(one table) and each rule's worth alone is measured by ``bench/retrieval/questions_eval.py``
(``bench/results/questions.md``).

Every hit keeps the parts of its score (``ScorePart``), so the dashboard can show why a
hit ranks where it does: the parts add up to the score.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from nexus.chunking.languages import is_test_path
from nexus.config import ChunkConfig
from nexus.retrieval.embedding import is_static_model
from nexus.retrieval.lexical import terms
from nexus.retrieval.windows import gather, window_chunk
from nexus.types import Chunk

NATURAL, SYMBOL = "natural", "symbol"
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


@dataclass(frozen=True)
class RankingRules:
    """Every weight of the ranking stage, chosen on the tuning half of the question set.

    Scores are on a 0-1 scale after fusion (the best candidate of each retriever gets
    1), so a boost of 0.1 moves a hit past candidates within a tenth of the best.
    """

    #: Candidates each retriever proposes (``nexus.retrieval.candidates``); the rest of
    #: the index is never re-ranked. 200 with ``window_share`` 0.5 (against 100 and 0):
    #: R@1k +0.017 on the tuning half, +0.014 held out, doc-query MRR@10 within 0.01 at
    #: fewer lines@5 on every doc set (bench/results/per_token*.md).
    candidates: int = 200
    #: For a symbol query, at most this many chunks that define the name join the
    #: candidates from the symbol table over every chunk (0: off), so a definition that
    #: neither retriever proposes can still be found.
    definition_lookup: int = 0
    #: Query feedback (``nexus.retrieval.candidates.candidates_for``; a sentence over a
    #: static model's index): the query's vector moves toward its ``feedback_hits`` best
    #: hits by ``feedback`` x their mean vector, and the candidates are chosen again with it
    #: (0: off). 0.5 with the best 2 (fast tier, tuning half, 320/48: NDCG@10 +0.010, R@1k
    #: +0.009; bench/results/per_token.md).
    feedback: float = 0.5
    feedback_hits: int = 2
    #: ``minmax``: each retriever's scores scaled to 0-1 over the candidates; ``rrf``:
    #: reciprocal rank fusion (1 / (60 + rank)), scaled so the best rank gets 1.
    fusion: str = "minmax"
    #: Share of the dense score in the fusion for a sentence; keywords get the rest. 0.5
    #: (was 0.6): with the stemmer joining word forms and folder and unit names in the
    #: keyword text, keywords earn an equal share (fast tier, tuning half: NDCG@10 +0.009,
    #: R@1k +0.007, R@4k +0.024, bench/results/per_token.md).
    natural_dense: float = 0.5
    #: ... for a sentence over an index of a model that reads the sentence as a whole
    #: (MiniLM, the quality tier; ``for_model``): its cosine earns more. 0.6 (quality
    #: tier, tuning half, 320/48: NDCG@10 +0.004, R@1k +0.031, R@2k +0.008, R@4k -0.013;
    #: doc MRR@10 dev +0.011, python-tuning +0.018; 0.55-0.8 measured). The static model
    #: stays at 0.5: 0.55 and 0.6 cost it 0.009 NDCG@10 and up to 0.025 R@1k.
    contextual_dense: float = 0.6
    #: ... for a bare or qualified name: names are matched by their words, not meaning
    #: (0.3, was 0.4, measured together with the sentence weight).
    symbol_dense: float = 0.3
    #: A chunk that defines the name a symbol query asks for (its symbol or a unit it holds).
    defines: float = 0.5
    #: ... a name written inside a sentence (``where is getCookie called``): weak evidence,
    #: as a sentence often names another unit to compare with (``like :func:`flat_map```).
    #: 0.15 moved no question and cost doc-comment sets up to 0.010 MRR@10 (python-tuning).
    defines_in_sentence: float = 0.05
    #: The same name in another case or as the qualified name's last part only.
    defines_loosely: float = 0.6  # x the boost above
    #: A sentence whose words name the chunk's own unit (``parse the cookie header`` ->
    #: ``parseCookieHeader``), x the share of the name's words the query holds. 0.1 (was
    #: 0.05) with 320/48 chunks: tuning questions R@1k +0.005, R@2k +0.018; doc MRR@10 dev
    #: +0.005, python-tuning +0.006 (0.15 and above lose; bench/results/per_token.md).
    name_words: float = 0.1
    #: Each query word found in the file's name or folders (at most two count).
    path_word: float = 0.05
    #: A file with several strong candidates: its best chunk is promoted once.
    file_coherence: float = 0.0
    #: How much each earlier hit of the same file takes off the next (spreads the top k).
    same_file: float = 0.0
    #: Hits of one file that come before the damping starts (saturation per file: two
    #: methods of one class often answer together; the third rarely adds to them).
    same_file_free: int = 1
    #: Tests, examples, compatibility copies, re-export barrels, declarations: places that
    #: mention a name without being where it lives (only when they are indexed at all).
    #: (``test_file`` also damps a unit in a test module of a source file: Rust's ``mod
    #: tests``. Fast tier, tuning half, 320/48: NDCG@10 +0.003, R@4k +0.008.)
    test_file: float = 0.15
    example_file: float = 0.1
    compat_file: float = 0.08
    barrel_file: float = 0.1
    declaration_file: float = 0.08
    #: For a sentence (people ask where something is *done*): a chunk whose main unit only
    #: declares a shape (interface, struct, type alias, enum, trait)...
    shape_only: float = 0.3
    #: ... or that holds no unit at all (module code: imports, constants, data tables).
    module_code: float = 0.15
    #: A chunk that is mostly comment lines (a module's long doc block).
    mostly_comments: float = 0.0
    #: What counts as "strong" for file coherence: within this share of the best score.
    strong_share: float = 0.8
    #: A hit gathers the neighbouring chunks of its file that are candidates too into one
    #: result of at most this many lines (``nexus.retrieval.windows``; 0: one chunk a hit).
    #: A screenful: small AST units join their neighbours, 50-line windows stay alone.
    window_lines: int = 80
    #: ... and a neighbour joins a hit's window only when it scores at least this share
    #: of the hit (0: any neighbouring candidate), so windows grow only while they pay.
    #: 0.6 (was 0.5) with query feedback: fast tier, tuning half, 320/48, R@1k 0.643 ->
    #: 0.656, R@2k +0.005, 37 fewer lines@10, NDCG@10 -0.003; doc MRR@10 -0.004 at ~20
    #: fewer lines@5 (0.55-0.7 measured: bench/results/per_token.md).
    window_share: float = 0.6

    def for_model(self, model: str) -> RankingRules:
        """These rules as they apply to an index of ``model``'s vectors: a static model's
        get query feedback and ``natural_dense``; a model that reads the sentence itself
        (MiniLM) gets no feedback (it cost MiniLM 0.009-0.011 doc MRR@10) and
        ``contextual_dense``. Applying it twice changes nothing more."""
        if is_static_model(model):
            return self
        return replace(self, feedback=0.0, natural_dense=self.contextual_dense)

    def without(self, rule: str) -> RankingRules:
        """These rules with one boost or damping switched off (for the ablation)."""
        if rule not in BOOSTS:
            raise ValueError(f"unknown rule {rule!r}; rules: {', '.join(BOOSTS)}")
        return replace(self, **{field: type(getattr(self, field))(0) for field in BOOSTS[rule]})


#: The rules an ablation switches off one at a time, and the weights each one owns.
BOOSTS: dict[str, tuple[str, ...]] = {
    "definition": ("defines", "defines_in_sentence", "definition_lookup"),
    "name words": ("name_words",),
    "path": ("path_word",),
    "file coherence": ("file_coherence",),
    "same-file damping": ("same_file",),
    "file priors": (
        "test_file",
        "example_file",
        "compat_file",
        "barrel_file",
        "declaration_file",
    ),
    "comment damping": ("mostly_comments",),
    "kind priors": ("shape_only", "module_code"),
    "result windows": ("window_lines",),
}
DEFAULT_RULES = RankingRules()


def rules_for(config: ChunkConfig) -> RankingRules | None:
    """The ranking rules a search with ``config`` uses (None: today's hybrid score)."""
    return DEFAULT_RULES if config.ranking else None


def query_kind(text: str) -> str:
    """``symbol`` for a bare or qualified identifier, else ``natural``."""
    return SYMBOL if _SYMBOL_QUERY.fullmatch(text.strip()) else NATURAL


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


@dataclass(frozen=True)
class Ranked:
    """A candidate after ranking: its key in the index, score and the parts that sum to it;
    ``window``: the keys of the neighbouring chunks shown with it, its own included (in
    file order; empty when it is shown alone)."""

    key: int
    score: float
    parts: tuple[ScorePart, ...]
    window: tuple[int, ...] = ()


def hit_chunk(chunks: Sequence[Chunk], ranked: Ranked) -> Chunk:
    """What a ranked hit shows: its chunk, or the window of neighbours gathered with it."""
    if len(ranked.window) < 2:
        return chunks[ranked.key]
    return window_chunk(chunks, ranked.key, ranked.window)


def _minmax(values: np.ndarray) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    if high - low <= 1e-9:
        return np.ones_like(values) if high > 0 else np.zeros_like(values)
    return (values - low) / (high - low)


def _fuse(dense: np.ndarray, keyword: np.ndarray, fusion: str) -> tuple[np.ndarray, np.ndarray]:
    """Both retrievers' scores of the candidates on one 0-1 scale, whatever their own."""
    dense, keyword = dense.astype(np.float64), keyword.astype(np.float64)
    if fusion == "rrf":
        return _reciprocal_ranks(dense), _reciprocal_ranks(keyword) * (keyword > 0)
    if fusion != "minmax":
        raise ValueError(f"unknown fusion {fusion!r}; use minmax or rrf")
    best_keyword = float(keyword.max())
    return _minmax(dense), keyword / best_keyword if best_keyword > 0 else keyword


def _reciprocal_ranks(scores: np.ndarray) -> np.ndarray:
    ranks = np.empty(len(scores))
    ranks[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
    return 61.0 / (60.0 + ranks)


def rank(
    chunks: Sequence[Chunk],
    dense: np.ndarray,
    keyword: np.ndarray,
    query: str,
    k: int = 10,
    rules: RankingRules = DEFAULT_RULES,
) -> list[Ranked]:
    """The ``k`` best of the candidates ``chunks`` for ``query`` (``Ranked.key`` is a
    position in ``chunks``). Candidates are chosen before, in one place
    (``nexus.retrieval.candidates``): every chunk given here is scored.

    Args:
        chunks: the candidates, in index order (windows join neighbours among them).
        dense: cosine similarity of each candidate with the query.
        keyword: BM25 of each candidate for the query (any scale; zeros where nothing
            matches).
    """
    if len(chunks) == 0 or k <= 0:
        return []
    names, is_symbol = query_names(query)
    dense_share = rules.symbol_dense if is_symbol else rules.natural_dense
    dense_part, keyword_part = _fuse(np.asarray(dense), np.asarray(keyword), rules.fusion)
    dense_part, keyword_part = dense_share * dense_part, (1 - dense_share) * keyword_part
    query_terms = frozenset(terms(query))
    scored: list[tuple[int, list[ScorePart]]] = []
    for key, (d, w) in enumerate(zip(dense_part.tolist(), keyword_part.tolist(), strict=True)):
        chunk = chunks[key]
        parts = [ScorePart("dense", d), ScorePart("keyword", w)]
        parts += _evidence(chunk, names, is_symbol, query_terms, rules)
        scored.append((key, parts))
    _promote_coherent_files(scored, chunks, rules)
    if not rules.window_lines:
        return _spread(scored, chunks, k, rules)
    ranked = {r.key: r for r in _spread(scored, chunks, len(scored), rules)}
    totals = [0.0] * len(chunks)
    for r in ranked.values():
        totals[r.key] = r.score
    windows = gather(list(ranked), chunks, k, rules.window_lines, totals, rules.window_share)
    return [replace(ranked[head], window=keys if len(keys) > 1 else ()) for head, keys in windows]


def _evidence(
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


@lru_cache(maxsize=65536)
def _path_matches(query_terms: frozenset[str], path_terms: frozenset[str]) -> int:
    """Query words found in a path, a word meeting its longer form halfway (the stemmer is
    light: ``cookies`` -> ``cooki`` meets ``cookie``, ``parsed`` -> ``pars`` meets ``parser``)."""
    return len(frozenset().union(*(_words_meeting(query_terms, p) for p in path_terms)))


@lru_cache(maxsize=65536)
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


def _total(parts: list[ScorePart]) -> float:
    return sum(p.value for p in parts)


def _promote_coherent_files(
    scored: list[tuple[int, list[ScorePart]]], chunks: Sequence[Chunk], rules: RankingRules
) -> None:
    """Give the best chunk of each file with several strong candidates one boost."""
    if not rules.file_coherence or not scored:
        return
    totals = [_total(parts) for _, parts in scored]
    bar = rules.strong_share * max(totals)
    strong = Counter(
        chunks[key].file for (key, _), t in zip(scored, totals, strict=True) if t >= bar
    )
    best: dict[str, int] = {}
    for i, (key, _) in enumerate(scored):
        file = chunks[key].file
        if strong[file] > 1 and (file not in best or totals[i] > totals[best[file]]):
            best[file] = i
    for file, i in best.items():
        boost = rules.file_coherence * min(strong[file] - 1, 3)
        scored[i][1].append(ScorePart("file has several matches", boost))


def _spread(
    scored: list[tuple[int, list[ScorePart]]],
    chunks: Sequence[Chunk],
    k: int,
    rules: RankingRules,
) -> list[Ranked]:
    """Pick the top ``k`` greedily; each pick of a file damps that file's next chunks."""
    order = sorted(scored, key=lambda item: (-_total(item[1]), item[0]))
    if not rules.same_file:
        return [Ranked(key, _total(parts), tuple(parts)) for key, parts in order[:k]]
    picked: list[Ranked] = []
    seen: Counter[str] = Counter()
    pool = [(key, parts, _total(parts)) for key, parts in order]

    def excess(file: str) -> int:
        return max(0, seen[file] - rules.same_file_free + 1)

    while pool and len(picked) < k:
        best_i, best_score = 0, -np.inf
        for i, (key, _, total) in enumerate(pool):
            score = total - rules.same_file * excess(chunks[key].file)
            if score > best_score:
                best_i, best_score = i, score
            if total <= best_score:  # sorted by total: no later one can win
                break
        key, parts, _ = pool.pop(best_i)
        file = chunks[key].file
        if excess(file):
            damping = -rules.same_file * excess(file)
            parts = [*parts, ScorePart("same file as higher hits", damping)]
        seen[file] += 1
        picked.append(Ranked(key, _total(parts), tuple(parts)))
    return picked


def explain(parts: Sequence[ScorePart]) -> str:
    """One line: ``dense 0.41 + keyword 0.22 + defines 0.50 - test file 0.15 = 0.98``."""
    if not parts:
        return ""
    terms_ = [f"{parts[0].name} {parts[0].value:.2f}"]
    terms_ += [f"{'-' if p.value < 0 else '+'} {p.name} {abs(p.value):.2f}" for p in parts[1:]]
    return " ".join(terms_) + f" = {sum(p.value for p in parts):.2f}"
