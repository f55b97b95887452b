"""Retrieval: embed chunks (with a cache), index them by vector and keyword, rank, search.

Takes ``Chunk``s; hands on a searchable index and ranked ``Hit``s for a query.
"""

import contextlib
import ctypes
import os


def _share_libstdcxx() -> None:
    """Load the system C++ runtime for the whole process before usearch loads.

    usearch's extension carries its own copy of parts of it; imported before
    onnxruntime (the query model of re-scoring), onnxruntime then crashed the
    process on import (a segmentation fault in ``std::codecvt``). With the system
    runtime loaded globally first, both bind to it. A no-op where there is none.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libstdc++.so.6", mode=os.RTLD_GLOBAL)


_share_libstdcxx()
