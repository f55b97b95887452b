"""The dashboard's widget keys, defaults and slider ranges, read by the pages, the
sidebar and the links alike."""

from __future__ import annotations

from typing import Any

from nexus.config import ChunkConfig
from nexus.ingest.selection import SWITCHES
from nexus.types import CHUNKABLE_LANGUAGES

DEFAULTS: dict[str, Any] = {
    "max_tokens": ChunkConfig().max_tokens,
    "min_tokens": ChunkConfig().min_tokens,
    "profile": ChunkConfig().profile,
    "line_window": ChunkConfig().line_window,
    "lexical_pct": round(ChunkConfig().lexical_weight * 100),
    "ranking_mode": "stage" if ChunkConfig().ranking else "hybrid",
}
#: The Ranking choice: its values (in links) and labels.
RANKING_MODES = {"stage": "ranking stage", "hybrid": "cosine + keywords"}
#: Widget keys of the file selection on the home page; they travel in links and Export.
SWITCH_KEYS = {name: f"files_{name}" for name in SWITCHES}
GLOB_KEYS = {"include": "files_include", "exclude": "files_exclude"}
LANGUAGES_KEY = "files_languages"  # a multiselect; empty = every language
LANGUAGE_NAMES = sorted(CHUNKABLE_LANGUAGES)
#: How people write the chunkable languages' names, in the order the home page lists
#: them (TSX is TypeScript to a reader); a language missing here comes last, capitalised.
LANGUAGE_TITLES = {
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "tsx": "TypeScript",
    "python": "Python",
    "go": "Go",
    "java": "Java",
    "rust": "Rust",
    "csharp": "C#",
}


def language_list() -> str:
    """Every chunkable language, as people write it (``JavaScript, ..., C#``)."""
    named = [LANGUAGE_TITLES[name] for name in LANGUAGE_TITLES if name in CHUNKABLE_LANGUAGES]
    others = [name.capitalize() for name in LANGUAGE_NAMES if name not in LANGUAGE_TITLES]
    return ", ".join(dict.fromkeys([*named, *others]))


#: Session key of the Search page's selected hit.
HIT_KEY = "search_hit"
#: Session keys that name places in one repository (a file, a unit, a line, a hit):
#: dropped when another repository is opened, so neither the pages nor a link carry
#: ``file=...resizeElements.ts`` over to flask.
PER_REPOSITORY_KEYS = ("file", "target", "_link_unit", "_link_line", HIT_KEY)
#: Session key of the kept values as the last run set them up (``kept_values``).
LAST_RUN_KEY = "_kept_last_run"
#: Widget keys whose values survive a page switch.
KEPT_KEYS = (
    *DEFAULTS,
    *SWITCH_KEYS.values(),
    *GLOB_KEYS.values(),
    LANGUAGES_KEY,
    *("preset", "source", "sample", "local_path", "file", "query", "k", "target"),
    *("sweep_max", "sweep_min", "sweep_variant", "sweep_tier", "sweep_distractors"),
)
#: The Evaluate page's sweep: the budgets offered, and those picked at first.
SWEEP_MAX_OPTIONS = (64, 96, 128, 192, 256, 320, 384, 512, 768, 1024)
SWEEP_MIN_OPTIONS = (0, 16, 32, 48, 64, 96, 128)
SWEEP_MAX_DEFAULT, SWEEP_MIN_DEFAULT = (128, 256, 512), (0, 48)
SOURCES = ("Sample repository", "Upload a zip", "Local path")
#: Each slider's (min, max, step): the sidebar and the links read the same ranges.
SLIDERS: dict[str, tuple[int, int, int]] = {
    "max_tokens": (64, 2048, 16),
    "min_tokens": (0, 256, 8),
    "line_window": (10, 200, 5),
    "lexical_pct": (0, 100, 5),
    "k": (1, 20, 1),
}


def kept_values(
    values: dict[str, Any], last_run: dict[str, Any], page_switched: bool
) -> dict[str, Any]:
    """What a page re-assigns at the top of a run (``state.page_setup``): ``values``
    (the session's kept keys), but a slider the user has moved since ``last_run`` (the
    values the previous run set up) is left alone, and on a page switch any kept value
    the session has lost takes its ``last_run`` value.

    Re-assigning keeps a widget's value when its page is left, but it also makes
    Streamlit send the run's value back to the browser. A slider sends a rerun per
    arrow-key step, so a run overtaken by the next step pushed its older value back and
    the burst settled there (pressed to 544, ended at 512). Left alone, a moved slider's
    value lives only in its widget, which a page switch drops: hence ``last_run`` then.
    Other widgets lose theirs too when a switch stops their page's run before they were
    drawn (a shared link's query was gone on coming back to Search, under load).
    """
    kept = {}
    for key in KEPT_KEYS:
        if key in values and (
            key not in SLIDERS or page_switched or values[key] == last_run.get(key)
        ):
            kept[key] = values[key]
        elif page_switched and key in last_run:
            kept[key] = last_run[key]
    return kept


def slider_range(key: str) -> range:
    """Every value the slider ``key`` can take."""
    low, high, step = SLIDERS[key]
    return range(low, high + 1, step)
