"""Helpers shared by the AppTests."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_repos"


def zip_folder(folder: Path) -> bytes:
    """A zip of ``folder`` (entries relative to it), built in memory."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def metric(at: AppTest, label: str) -> str:
    """The value of the metric with this label."""
    return next(m.value for m in at.metric if m.label == label)
