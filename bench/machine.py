"""What a benchmark ran on, written beside its figures."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine() -> dict[str, object]:
    """CPU count and model, platform and Python version."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu or platform.processor(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
