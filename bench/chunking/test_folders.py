"""How many files under test folders a scan chunks as source, per repository.

"Under a test folder" is judged here by a broader, independent rule than the
classifier's: any folder in the path whose name contains test, spec, e2e,
fixture, mock, cypress or playwright. The figure is the share of those files
that the classifier calls chunkable source; the top folders that still are
show what the rules miss (or rightly keep: a package named ``testing`` is code).

    python bench/chunking/test_folders.py /tmp/mono/getsentry+sentry-javascript ...
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import PurePosixPath

from nexus.ingest.sources import IngestSettings, open_repository
from nexus.types import Category

_TESTISH = re.compile(r"test|spec|e2e|fixture|mock|cypress|playwright", re.IGNORECASE)


def under_test_folder(path: str) -> bool:
    """True when any folder of ``path`` looks like it holds tests or their data."""
    return any(_TESTISH.search(part) for part in PurePosixPath(path).parts[:-1])


def measure(root: str) -> None:
    files = open_repository(root, settings=IngestSettings()).files
    chunked = [f for f in files if f.chunkable]
    testish = [f for f in files if under_test_folder(f.path) and f.language]
    as_source = [f for f in testish if f.category is Category.SOURCE and f.chunkable]
    share = len(as_source) / len(testish) if testish else 0.0
    print(
        f"{PurePosixPath(root).name}: {len(files):,} files, {len(chunked):,} chunked; "
        f"{len(testish):,} under test folders, {len(as_source):,} of them chunked as source "
        f"({share:.1%})"
    )
    tops = Counter("/".join(PurePosixPath(f.path).parts[:3]) for f in as_source)
    for folder, n in tops.most_common(5):
        print(f"    {n:5,}  {folder}/")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        measure(arg)
