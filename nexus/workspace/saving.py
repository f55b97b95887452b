"""Saving a workspace's indexes in the background.

A first build answers before its index is written: the save runs on a thread at once
(waiting for a pause in questions, a server killed soon after its first answer built
everything again at its next start: issue 41, 50 s on sentry against 13 s from the saved
index). An index with edits merged in waits until no answer has been asked for
``SAVE_WHEN_IDLE_S``, so that it does not slow the answers beside it. A closing server
starts the waiting saves at once (``finish_saves``).
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

#: An index saved in the background waits until no answer was asked for this long: its
#: save holds the GIL for a second or more on a large repository (JSON of every chunk),
#: which slowed the answers beside it (scale corpus: warm p95 over 50 queries asked right
#: after the first answer, 36 ms -> 190 ms).
SAVE_WHEN_IDLE_S = 1.0


class Saving:
    """The background saves of a ``Workspace`` (whose ``__init__`` sets this state)."""

    _saving: list[threading.Thread]
    _no_more_answers: threading.Event  # saves need not wait for a pause
    _last_answer: float  # time.monotonic() when the last answer ended
    _answering: int  # answers being made now
    say: Callable[[str], None]  # told of each save once it is written

    def _save_later(
        self, save: Callable[[], Path], *, daemon: bool, after_pause: bool = False
    ) -> None:
        """Save an index on a thread, so that the first answer does not wait for it; with
        ``after_pause``, once answers pause (``SAVE_WHEN_IDLE_S``: the keyword table of a
        merged index takes seconds on a large repository). An unfinished save leaves no
        index (the manifest is written last); a ``daemon`` one is dropped when the
        process ends. ``say`` hears of each save once it is written."""
        self._last_answer = time.monotonic()  # the answer this index was opened for
        thread = threading.Thread(
            target=self._save_when_idle, args=(save, after_pause), daemon=daemon
        )
        self._saving.append(thread)
        thread.start()

    def _save_when_idle(self, save: Callable[[], Path], after_pause: bool) -> None:
        while after_pause and not self._no_more_answers.is_set():
            quiet = time.monotonic() - self._last_answer
            if not self._answering and quiet >= SAVE_WHEN_IDLE_S:
                break
            self._no_more_answers.wait(0.1 if self._answering else SAVE_WHEN_IDLE_S - quiet)
        began = time.perf_counter()
        try:
            folder = save()
        except (OSError, ValueError) as exc:  # the open index still answers; said on stderr
            warnings.warn(f"could not save the index: {exc}", stacklevel=1)
            return
        self.say(f"saved the index in {folder} ({time.perf_counter() - began:.1f} s)")

    def wait_for_saves(self) -> None:
        """Return once the indexes being saved in the background are written."""
        for thread in self._saving:
            thread.join()

    def finish_saves(self) -> None:
        """No more answers will be asked (a server closing): the saves waiting for a pause
        start now, and this returns once every one is written, daemon ones included. An
        MCP client gives a server 2 s after closing its input before it kills it; a save
        that first waited out ``SAVE_WHEN_IDLE_S`` missed that on the scale corpus, and
        the next start built everything again."""
        self._no_more_answers.set()
        self.wait_for_saves()

    @contextlib.contextmanager
    def _answer(self) -> Iterator[None]:
        """Around a call that answers: a background save waits until none has run for
        ``SAVE_WHEN_IDLE_S`` (a first search can take a second)."""
        self._answering += 1
        try:
            yield
        finally:
            self._answering -= 1
            self._last_answer = time.monotonic()
