"""Hierarchy profiles: which units start a chunk of their own, at which depth.

A profile is data (TOML/JSON round-trip), so a team can write its own. Depth
counts enclosing units: a top-level function is depth 0, a method of a top-level
class depth 1, a closure inside that method depth 2.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

from nexus.types import Unit

FUNCTION_KINDS = frozenset(
    {"function", "arrow", "function_expression", "wrapped_function", "lambda"}
)
MEMBER_KINDS = frozenset({"method", "constructor", "getter", "setter", "property"})
TYPE_KINDS = frozenset(
    {"class", "interface", "type", "enum", "namespace", "struct", "trait", "impl"}
)
#: Type declarations without behaviour: under ``min_tokens`` they join their neighbours.
DECLARATION_KINDS = frozenset({"interface", "type", "enum", "struct"})
ALL_UNIT_KINDS = FUNCTION_KINDS | MEMBER_KINDS | TYPE_KINDS


@dataclass(frozen=True)
class Profile:
    """Which units are chunk boundaries.

    Attributes:
        name: how users select it.
        description: one line for the dashboard and ``--help``.
        boundary_kinds: unit kinds that start their own chunk when they are not
            merged for being under ``min_tokens``.
        max_depth: units nested deeper than this never start a chunk; they stay
            inside their enclosing unit (closures in the functional profile).
        split_jsx: JSX elements of an oversized component start chunks of their own.
    """

    name: str
    description: str
    boundary_kinds: frozenset[str]
    max_depth: int
    split_jsx: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.boundary_kinds) - ALL_UNIT_KINDS
        if unknown:
            raise ValueError(
                f"profile {self.name!r}: unknown unit kinds {sorted(unknown)}; "
                f"known: {sorted(ALL_UNIT_KINDS)}"
            )
        if self.max_depth < 0:
            raise ValueError(f"profile {self.name!r}: max_depth must be >= 0")

    def is_boundary(self, unit: Unit, depth: int) -> bool:
        return unit.kind in self.boundary_kinds and depth <= self.max_depth

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["boundary_kinds"] = sorted(self.boundary_kinds)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Profile:
        fields = dict(data)
        fields["boundary_kinds"] = frozenset(fields.get("boundary_kinds", ()))  # type: ignore[arg-type]
        return cls(**fields)  # type: ignore[arg-type]


PROFILES: dict[str, Profile] = {
    "oop": Profile(
        name="oop",
        description="class -> method -> block: types and their members are the units",
        boundary_kinds=ALL_UNIT_KINDS,
        max_depth=1,
    ),
    "functional": Profile(
        name="functional",
        description="module-level functions and arrows are the units; closures stay inside",
        boundary_kinds=FUNCTION_KINDS | TYPE_KINDS,
        max_depth=0,
    ),
    "frontend": Profile(
        name="frontend",
        description="React components and hooks are the units; large JSX splits at elements",
        boundary_kinds=FUNCTION_KINDS | TYPE_KINDS,
        max_depth=0,
        split_jsx=True,
    ),
}

AUTO = "auto"
PROFILE_NAMES = (AUTO, *PROFILES)


class TopLevel(NamedTuple):
    """What ``auto`` decides on: members of a file's top-level classes, and its
    top-level functions (through ``export`` and ``const f =``).

    Counting every unit of the file instead picks the same profile for 98.8% of
    2,601 files of the benchmark and query-set packages, without a walk of the
    whole tree.
    """

    members: int
    functions: int


def choose_profile(top_level: TopLevel, has_jsx: bool) -> tuple[Profile, str]:
    """The ``auto`` choice for one file, and why, in words."""
    if has_jsx:
        return PROFILES["frontend"], "file contains JSX"
    members, functions = top_level
    if members and members >= functions:
        return PROFILES["oop"], f"{members} class members vs {functions} top-level functions"
    return PROFILES["functional"], f"{functions} top-level functions vs {members} class members"


def resolve_profile(name: str, custom: dict[str, Profile] | None = None) -> Profile | None:
    """A named profile (built-in or custom); ``None`` for ``auto``."""
    if name == AUTO:
        return None
    available = {**PROFILES, **(custom or {})}
    if name not in available:
        raise ValueError(f"unknown profile {name!r}; choose one of {sorted(available) + [AUTO]}")
    return available[name]


def load_profiles(path: str | Path) -> dict[str, Profile]:
    """Custom profiles from a TOML (``[profiles.NAME]`` tables) or JSON file."""
    path = Path(path)
    raw = path.read_text(encoding="utf-8")
    data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw)
    tables = data.get("profiles", {})
    return {name: Profile.from_dict({"name": name, **table}) for name, table in tables.items()}


def dump_profiles_toml(profiles: list[Profile]) -> str:
    """TOML text for profiles; ``load_profiles`` reads it back unchanged."""
    lines: list[str] = []
    for profile in profiles:
        lines.append(f"[profiles.{profile.name}]")
        lines.append(f"description = {json.dumps(profile.description)}")
        lines.append(f"boundary_kinds = {json.dumps(sorted(profile.boundary_kinds))}")
        lines.append(f"max_depth = {profile.max_depth}")
        lines.append(f"split_jsx = {'true' if profile.split_jsx else 'false'}")
        lines.append("")
    return "\n".join(lines)
