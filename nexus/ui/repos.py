"""The current repository: opened once from a sample, an upload or a path, checked
against the memory budget, and the view of it that the file selection chunks."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from pathlib import Path

import streamlit as st

from nexus.ingest.selection import DEFAULT_SELECTION, FileSelection
from nexus.ingest.sources import (
    IngestError,
    IngestSettings,
    Repository,
    default_allowed_roots,
    open_repository,
)
from nexus.runtime import footprint
from nexus.ui import cache, widgets

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sample_repos"
DEFAULT_SAMPLE = "express-images"
#: One repository's parsed files may take at most this share of the budget, so one
#: large upload cannot push every other session's work out (and its chunks fit too).
REPO_SHARE = 0.5


@dataclass(frozen=True)
class RepoChoice:
    """Where the current repository came from (``kind`` sample | upload | path)."""

    kind: str
    value: str  # sample name, sha256 of the upload, or the path typed
    label: str = field(default="", compare=False)  # an upload's file name

    @property
    def url_value(self) -> str:
        """How a link names this repository; an upload by its name and digest, so a
        link made on it can say so instead of opening another repository."""
        if self.kind == "upload":
            return f"upload:{self.label or 'upload'}@{self.value[:12]}"
        return f"{self.kind}:{self.value}"


def sample_names() -> list[str]:
    """The bundled sample repositories, default first."""
    names = sorted(p.name for p in SAMPLES_DIR.iterdir() if p.is_dir())
    return sorted(names, key=lambda n: n != DEFAULT_SAMPLE)


def check_fits(repo: Repository) -> None:
    """Refuse a repository whose parsed files would take more than its share of the budget."""
    need = footprint.repo_parse_bytes(repo)
    budget = cache.memory().budget
    if need > REPO_SHARE * budget:
        raise IngestError(
            f"{repo.name!r} is too large for this dashboard: parsing its "
            f"{len(chunkable_paths(repo)):,} source files would take about {need / 1e6:,.0f} MB "
            f"of memory, and one repository may use at most {REPO_SHARE * budget / 1e6:,.0f} MB "
            f"({REPO_SHARE:.0%} of the server's memory budget, "
            f"{cache.MEMORY_ENV}={budget / 1e6:g}). "
            "Open a smaller part of it, or chunk it with the command line (`nexus chunk`)."
        )


def _opened(key: Hashable, open_: Callable[[], Repository]) -> Repository:
    """A sample or an upload (fixed contents): opened and checked once, shared by all
    sessions. A refusal is remembered too, so a rerun with the same upload still in
    its widget does not unpack it again."""
    refused = cache.memory().get(("refused", key))
    if refused is not None:
        raise IngestError(refused)

    def open_checked() -> Repository:
        repo = open_()
        try:
            check_fits(repo)
        except IngestError as exc:
            cache.memory().put(("refused", key), str(exc), len(str(exc)) + 200)
            raise
        return repo

    return cache.cached(key, open_checked, footprint.repo_bytes)


#: Session key of the last open that failed (``FailedOpen``), until one succeeds.
FAILED_OPEN = "_failed_open"


@dataclass(frozen=True)
class FailedOpen:
    """A repository that could not be opened: the other pages say so, not silently
    go on with the one open before (``shown``: its name, "" when none was)."""

    asked: str
    reason: str
    shown: str


def failed_open() -> FailedOpen | None:
    """The open that failed since the last one that succeeded, if any."""
    return st.session_state.get(FAILED_OPEN)


def load_repo(choice: RepoChoice, data: bytes | None = None, name: str | None = None) -> Repository:
    """Open a repository and make it the current one (a failure is kept for the other
    pages to say: ``failed_open``).

    Raises ``IngestError``, also for a repository too large for the memory budget.
    """
    try:
        repo = _open(choice, data, name)
    except (IngestError, OSError) as exc:  # a missing sample is a FileNotFoundError
        base = st.session_state.get("repo_base")
        shown = base.name if base is not None else ""
        st.session_state[FAILED_OPEN] = FailedOpen(choice.label or choice.value, str(exc), shown)
        raise
    set_repo(repo, choice)
    return repo


def _open(choice: RepoChoice, data: bytes | None, name: str | None) -> Repository:
    if choice.kind == "sample":
        if choice.value not in sample_names():
            raise FileNotFoundError(f"no sample repository named {choice.value!r}")
        path = SAMPLES_DIR / choice.value
        repo = _opened(("sample", choice.value), lambda: open_repository(path, name=choice.value))
    elif choice.kind == "upload":
        assert data is not None, "an upload needs its bytes"
        name = name or "upload"
        repo = _opened(("upload", choice.value, name), lambda: open_repository(data, name=name))
    else:
        settings = IngestSettings(
            allowed_roots=default_allowed_roots(),
            scan_cache=cache.embedding_cache().folder / "scans",
        )
        repo = open_repository(choice.value, settings=settings)
        check_fits(repo)
    return repo


def set_repo(repo: Repository, choice: RepoChoice) -> None:
    """Store the repository as opened, where it came from, a fingerprint of its
    contents and each file's content hash (hashed once here, not on every rerun), and
    the view of it that the file selection chunks."""
    ss = st.session_state
    ss.pop(FAILED_OPEN, None)
    if ss.get("repo_choice") == choice and ss.get("repo_base") is repo:
        return
    if ss.get("repo_choice") not in (None, choice):
        for key in widgets.PER_REPOSITORY_KEYS:  # places in the repository open before
            ss.pop(key, None)
            ss.get(widgets.LAST_RUN_KEY, {}).pop(key, None)
    digests = file_digests(repo)
    ss["repo_base"] = repo
    ss["repo_choice"] = choice
    ss["repo_fingerprint"] = fingerprint(repo, digests)
    ss["file_digests"] = digests
    apply_selection()


def globs(text: str) -> tuple[str, ...]:
    """Globs typed one a line or separated by commas."""
    return tuple(g.strip() for g in text.replace(",", "\n").splitlines() if g.strip())


def current_selection() -> FileSelection:
    """The selection the home page's widgets describe (the last valid one if the globs
    typed now are invalid: ``selection_error`` says why)."""
    return st.session_state.get("selection", DEFAULT_SELECTION)


def apply_selection() -> None:
    """Read the selection widgets and make the current repository the view of the
    opened one that this selection chunks (files are re-classified, not re-read)."""
    ss = st.session_state
    try:
        selection = FileSelection(
            include=globs(ss.get(widgets.GLOB_KEYS["include"], "")),
            exclude=globs(ss.get(widgets.GLOB_KEYS["exclude"], "")),
            languages=tuple(ss.get(widgets.LANGUAGES_KEY, ())),
            **{name: bool(ss.get(key, False)) for name, key in widgets.SWITCH_KEYS.items()},
        )
        ss["selection_error"] = ""
    except ValueError as exc:
        ss["selection_error"] = str(exc)
        selection = current_selection()
    ss["selection"] = selection
    base = ss.get("repo_base")
    if base is None:
        return
    ss["repo"] = replace(base, files=tuple(selection.apply(info) for info in base.files))
    ss["repo_key"] = hashlib.sha256(f"{ss['repo_fingerprint']}\0{selection!r}".encode()).hexdigest()


def file_digests(repo: Repository) -> dict[str, str]:
    """sha256 of each file's contents, by path (a folder's scan has them already)."""
    return {info.path: repo.digest(info.path) for info in repo.files}


def fingerprint(repo: Repository, digests: dict[str, str] | None = None) -> str:
    """sha256 over the repository's name, paths and contents (the cache key of a repo)."""
    digests = file_digests(repo) if digests is None else digests
    h = hashlib.sha256(repo.name.encode())
    for info in repo.files:
        h.update(info.path.encode() + b"\0")
        h.update(bytes.fromhex(digests[info.path]))
    return h.hexdigest()


def file_digest(repo: Repository, path: str) -> str:
    """The content hash of one file (remembered for the current repository)."""
    if st.session_state.get("repo") is repo:
        return st.session_state["file_digests"][path]
    return repo.digest(path)


def current_repo() -> Repository:
    """The repository chosen on the home page (as the file selection sees it), or the
    default sample when there is none."""
    repo = st.session_state.get("repo")
    if repo is None:
        repo = load_repo(RepoChoice("sample", DEFAULT_SAMPLE))
    return repo


def current_choice() -> RepoChoice:
    current_repo()
    return st.session_state["repo_choice"]


def repo_key() -> str:
    current_repo()
    return st.session_state["repo_key"]


def chunkable_paths(repo: Repository) -> list[str]:
    return sorted(info.path for info in repo.files if info.chunkable)
