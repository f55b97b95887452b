"""What every chunking worker needs, loaded once in the workers' fork server
(``stream._context``) so each worker forks with it instead of loading it itself: the
code, and the default token encoding (0.16 s of CPU per worker, before its first file).
The fork server also lets go of its starter's stdin and stdout here, before it forks
any worker (``nexus.runtime.lifeline``).

A run with another encoding loads it in each worker; an encoding that cannot be loaded
is left to the run, which fails with its own message before any worker starts.
"""

from __future__ import annotations

import contextlib

import nexus.runtime.stream  # noqa: F401 - what the workers run
from nexus.chunking.tokens import get_encoding
from nexus.config import ChunkConfig
from nexus.runtime.lifeline import detach_stdio

detach_stdio()

with contextlib.suppress(ValueError):
    get_encoding(ChunkConfig().encoding)
