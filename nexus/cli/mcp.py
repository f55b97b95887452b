"""``nexus mcp [PATH ...]``: the workspace served to coding agents over MCP (stdio).

Four tools (``nexus.cli.mcp_server``), thin layers over ``nexus.workspace.Workspace``:
``search``, ``chunks``, ``find_related`` and ``index_status``. Each repository is opened on
first use (or
warmed at start) and stays open; before each answer the files changed since the last
call are chunked and embedded again (``Workspace.refresh``), and the answer says how
fresh it is; a restart after edits opens the index saved before them and does the same
for the files changed since. Only protocol messages go to stdout (the SDK points file
descriptor 1 at stderr while it serves); logs go to stderr. Every path is confined to the folders on
the command line, with the dashboard's allowed-roots rules (``nexus.ingest.sources``).
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexus.ingest.sources import IngestError, real_path

if TYPE_CHECKING:  # imported when serving: usearch must not load before Ray (require_ray)
    from nexus.workspace import Settings, Workspace

INSTRUCTIONS = (
    "Code search over the repositories this server was started with. `search` finds "
    "code by meaning and by name; give `budget_tokens` to get only as much text as you "
    "can read. `chunks` lists a file's chunks, `find_related` finds code like a place "
    "in a file, `index_status` says what is indexed and how fresh it is."
)


class ToolInputError(ValueError):
    """Bad input to a tool: answered as a tool error, the server stays up."""


class Repositories:
    """The repositories the server may open (the roots), each opened once and kept.

    ``repo`` in a tool names one by its folder name or by a path under a root; without
    it, the first root. One lock per repository: calls to it run one at a time.
    """

    def __init__(
        self,
        roots: Sequence[Path],
        settings: Settings,
        embedder=None,  # noqa: ANN001 - the settings' tier's (default: opened on first use)
        fast_embedder=None,  # noqa: ANN001 - the fast tier's, while the quality tier builds
        refine: bool = True,
    ) -> None:
        if not roots:
            raise ValueError("give at least one repository folder")
        self.roots = tuple(real_path(Path(r).expanduser()) for r in roots)
        files = replace(settings.files, allowed_roots=self.roots)
        self.settings = replace(settings, files=files)
        self.refine = refine
        self._embedder = embedder
        self._fast_embedder = fast_embedder
        self._open: dict[Path, Workspace] = {}
        self._locks: dict[Path, threading.Lock] = {}
        self._lock = threading.Lock()
        self._refining: dict[Path, threading.Thread] = {}

    def embedder(self):  # noqa: ANN201 - the workspaces' shared embedder
        with self._lock:
            if self._embedder is None:
                from nexus.workspace import open_embedder

                self._embedder = open_embedder(self.settings, say=_log)
            return self._embedder

    def place(self, repo: str | None) -> Path:
        """The folder ``repo`` names (ToolInputError when it names none of ours)."""
        if repo is None or not repo.strip():
            return self.roots[0]
        named = [root for root in self.roots if root.name == repo.strip()]
        if named:
            return named[0]
        path = Path(repo).expanduser()
        if not path.is_absolute():
            path = self.roots[0] / path
        if not path.exists():
            known = ", ".join(root.name for root in self.roots)
            raise ToolInputError(
                f"unknown repository {repo!r}: use one of {known}, or a folder under them"
            )
        return real_path(path)  # one workspace per folder, however it is named

    def using(self, repo: str | None, call: Callable[[Workspace], Any]) -> Any:
        """``call(workspace)`` with the repository opened and refreshed, under its lock."""
        place = self.place(repo)
        with self._lock:
            lock = self._locks.setdefault(place, threading.Lock())
        with lock:
            workspace = self._open.get(place)
            if workspace is None:
                workspace = self._open[place] = self._opened(place)
                # The index's objects live as long as the server: out of the collector's
                # sight, a full collection no longer stops an answer now and then (scale
                # corpus: 1 in 25 warm answers took 220-300 ms instead of 35 ms).
                gc.freeze()
            else:
                workspace.refresh()
            return call(workspace)

    def _opened(self, place: Path) -> Workspace:
        """The workspace of ``place`` with its index open. A restart after edits opens the
        index saved before them and chunks only the files changed since
        (``Workspace.index``). With the quality tier and no saved index of it, the fast
        tier answers while the quality tier builds in the background (``_refine``)."""
        from nexus.workspace import Workspace

        try:
            workspace = Workspace.open(place, self.settings, self.embedder(), say=_log)
        except IngestError as exc:
            raise ToolInputError(str(exc)) from None
        if self._refines():
            try:
                (opened, *_) = workspace.index(refresh_saved=True, builder=_saved_only)
            except _NotSaved:
                fast_settings, fast_embedder = self._fast_settings(), self.fast_embedder()
                fast = Workspace(workspace.repo, fast_settings, fast_embedder, place, _log)
                (opened, *_) = fast.index(refresh_saved=True)
                _log(f"opened {place}: {opened.describe(fast.config.strategy)}")
                _log(f"building the quality tier of {place}; the fast tier answers meanwhile")
                thread = threading.Thread(
                    target=self._refine, args=(place, workspace), name="nexus-mcp-refine"
                )
                thread.daemon = True  # what it embedded stays cached: a restart resumes
                self._refining[place] = thread
                thread.start()
                return fast
        else:
            (opened, *_) = workspace.index(refresh_saved=True)
        _log(f"opened {place}: {opened.describe(workspace.config.strategy)}")
        return workspace

    def _refines(self) -> bool:
        """Whether a quality-tier repository is answered from the fast tier while it builds:
        asked for, and the fast tier's model at hand (given, or distilled already: never
        distilled on the way to a first answer)."""
        from nexus.retrieval.tiers import FAST

        if not self.refine or self.settings.tier == FAST:
            return False
        return self._fast_embedder is not None or _distilled(self.settings.cache_folder)

    def _fast_settings(self) -> Settings:
        from nexus.retrieval.tiers import FAST

        return replace(self.settings, tier=FAST, model_path=None)

    def fast_embedder(self):  # noqa: ANN201 - the fast tier's shared embedder
        with self._lock:
            if self._fast_embedder is None:
                from nexus.workspace import open_embedder

                self._fast_embedder = open_embedder(self._fast_settings(), say=_log)
            return self._fast_embedder

    def _refine(self, place: Path, quality: Workspace) -> None:
        """Build ``quality``'s index, then answer ``place`` from it."""
        try:
            (opened, *_) = quality.index(refresh_saved=True)
        except Exception as exc:  # noqa: BLE001 - said on stderr; the fast tier answers on
            _log(f"could not build the quality tier of {place}: {exc}; the fast tier answers")
            return
        with self._locks[place]:
            self._open[place] = quality  # the next call refreshes it with the edits since
            gc.freeze()
        _log(
            f"the quality tier answers for {place} now: {opened.describe(quality.config.strategy)}"
        )

    def refining(self, workspace: Workspace) -> bool:
        """Whether the quality tier of ``workspace``'s folder is still being built."""
        thread = self._refining.get(workspace.root) if workspace.root is not None else None
        return thread is not None and thread.is_alive()

    def wait_refined(self) -> None:
        """Return once every quality tier being built is built (or failed)."""
        for thread in list(self._refining.values()):
            thread.join()

    def close(self) -> None:
        """Write the indexes still being saved in the background (the server is closing)."""
        with self._lock:
            opened = list(self._open.values())
        for workspace in opened:
            workspace.finish_saves()

    def warm(self) -> None:
        """Open and index every root now (on a thread: the first question waits less)."""
        for root in self.roots:
            try:
                self.using(str(root), lambda workspace: None)
            except Exception as exc:  # noqa: BLE001 - said on stderr; a tool call says it again
                _log(f"could not open {root}: {exc}")


class _NotSaved(Exception):
    """No saved index to open: ``_saved_only`` was asked to build one."""


def _saved_only(missing):  # noqa: ANN001, ANN202 - a store.Builder that builds nothing
    raise _NotSaved


def _log(line: str) -> None:
    print(f"nexus mcp: {line}", file=sys.stderr, flush=True)


def _distilled(cache: Path) -> bool:
    """Whether the fast tier's model lies in the cache folder ``cache``."""
    from nexus.retrieval.tiers import STATIC_MODEL_NAME, models_dir

    return (models_dir(cache) / STATIC_MODEL_NAME).is_dir()


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now, with stdin and stdout pointed
    elsewhere: started later by the first chunking pool, it held the client's pipes
    (the fork server lets go of them itself: ``nexus.runtime.worker_preload``)."""
    from multiprocessing import resource_tracker

    from nexus.runtime.lifeline import stdio_detached

    with stdio_detached():
        resource_tracker.ensure_running()


def cmd_mcp(args: argparse.Namespace) -> int:
    from nexus.cli.common import config_from_args
    from nexus.cli.indexes import workspace_settings

    settings = workspace_settings(args, config_from_args(args))
    roots = [Path(p) for p in args.paths or [os.getcwd()]]
    repos = Repositories(roots, settings, refine=args.refine)
    for root in repos.roots:
        if not root.is_dir():
            raise ValueError(f"{root} is not a folder: nexus mcp serves repository folders")
    _log(f"serving {', '.join(map(str, repos.roots))} ({settings.tier} tier) over stdio")
    _log(f"cache folder: {settings.cache_folder}")
    if settings.tier == "fast" and not _distilled(settings.cache_folder):
        _log("the fast tier's model is not distilled yet: the first answer waits minutes for it")
        _log(f"(`nexus setup --cache {settings.cache_folder}` does it once, ahead of time)")
    _start_resource_tracker()
    if args.warm:
        threading.Thread(target=repos.warm, name="nexus-mcp-warm", daemon=True).start()
    from nexus.cli.mcp_server import build_server

    build_server(repos).run("stdio")
    # The client has gone: write what is still to be saved before exiting. Its SIGTERM
    # (2 s after it closed our input) waits for that; its SIGKILL 2 s later would not.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    repos.close()
    return 0
