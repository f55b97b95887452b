"""Helper processes (chunking workers, their fork server, the resource tracker) that die
with the process that started them and never hold its standard input and output.

A server killed mid-build (``nexus mcp``, SIGKILL) left its workers behind: each waits
on its task queue, whose write end its siblings hold too, so none sees the end of its
work; the fork server waits for them, the resource tracker for it, and all of them held
the server's stdin and stdout, so the MCP client never saw end-of-file and hung (issue
41: four processes, 470 MB, seven minutes later still there). Each worker now watches
the process that owns its pool and exits when it goes; the others then see their pipes
close and exit by themselves. Their standard streams point at /dev/null and stderr.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator

#: prctl(2): ask the kernel for this signal when the parent process dies.
_PR_SET_PDEATHSIG = 1
#: Without pidfds (not Linux): how often a worker looks whether its owner is alive.
_POLL_SECONDS = 1.0


def detach_stdio() -> None:
    """Point this process's stdin at /dev/null and its stdout at its stderr: a helper
    that keeps a server's stdio pipes open keeps the server's client waiting."""
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    os.dup2(2, 1)


@contextlib.contextmanager
def stdio_detached() -> Iterator[None]:
    """Within the block, stdin is /dev/null and stdout is stderr, so the helper processes
    started in it (``multiprocessing``'s fork server and resource tracker inherit fds
    0-2) do not hold the real ones. Only while no other thread reads or writes them."""
    sys.stdout.flush()
    saved = os.dup(0), os.dup(1)
    try:
        detach_stdio()
        yield
    finally:
        for fd, original in enumerate(saved):
            os.dup2(original, fd)
            os.close(original)


def die_with(owner: int) -> None:
    """End this process (a worker) when the process ``owner`` ends.

    The worker's parent is the fork server, which outlives the owner (it waits for its
    workers), so the kernel's parent-death signal is set for the case where the fork
    server goes, and a daemon thread waits on the owner itself: on a pidfd (no polling,
    no pid reuse), else by looking every second.
    """
    die_with_parent()
    try:
        pidfd = os.pidfd_open(owner)
    except ProcessLookupError:
        os._exit(1)  # already gone
    except (OSError, AttributeError):
        pidfd = None
    watchdog = threading.Thread(target=_wait_for, args=(owner, pidfd), name="nexus-lifeline")
    watchdog.daemon = True
    watchdog.start()


def die_with_parent() -> None:
    """Ask the kernel to kill this process when its parent ends (Linux; elsewhere nothing):
    also a ``preexec_fn`` for a server a test or benchmark starts."""
    with contextlib.suppress(OSError, AttributeError):  # Linux only
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _wait_for(owner: int, pidfd: int | None) -> None:
    if pidfd is not None:
        select.select([pidfd], [], [])  # readable once the owner has exited
    else:
        while alive(owner):
            threading.Event().wait(_POLL_SECONDS)
    os._exit(1)


def alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
