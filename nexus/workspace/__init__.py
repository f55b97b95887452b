"""The front door: open a repository, build or reuse its index, search it.

Takes a folder, a .zip or zip bytes and ``Settings``; hands on answers as plain data
(``SearchAnswer``, ``Status``, ``Freshness``). Every face of Nexus (the CLI verbs, the
MCP server, the pages, scripts) calls this one class instead of threading settings
through the stages by hand::

    ws = Workspace.open("path/to/repo", Settings(tier="fast"))
    answer = ws.search("where are cookies parsed", k=5, budget_tokens=2000)
    for read in answer.reads:
        print(read.file, read.start_line, read.end_line, read.cut)

A workspace holds the repository as read, the embedder behind the embedding cache,
and one open index per strategy: the saved index of the same files, settings and
model when there is one (``nexus.retrieval.store``), else built and saved (``building``,
``saving``). Indexes stay open between calls. ``refresh`` brings an open index up to
date with the files on disk (``refreshing``, ``freshness``): changed files are chunked
again and embedded through the cache into a small index beside the saved one
(``overlay``), which hides their old chunks; answers say how fresh they are
(``answering``, ``answers``). ``settings`` opens the embedders.
"""

from nexus.workspace.answers import Freshness, SearchAnswer, Status, check_budget
from nexus.workspace.building import Cancel, Chunker, Report
from nexus.workspace.settings import Settings, is_static, open_embedder, static_model
from nexus.workspace.workspace import Workspace

__all__ = [
    "Cancel",
    "Chunker",
    "Freshness",
    "Report",
    "SearchAnswer",
    "Settings",
    "Status",
    "Workspace",
    "check_budget",
    "is_static",
    "open_embedder",
    "static_model",
]
