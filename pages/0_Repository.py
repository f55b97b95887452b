"""Home page: choose a repository and see how its files were classified."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pandas as pd
import streamlit as st

from nexus.ingest.scan import summarize, unsupported_line
from nexus.ingest.selection import SWITCHES
from nexus.ingest.sources import IngestError, OutsideRoots, default_allowed_roots
from nexus.types import CHUNKABLE_LANGUAGES
from nexus.ui import analyses, cache, indexing, repos, safe, settings, state, views, widgets

state.page_setup("Repository")
st.title("Nexus · Repository")
st.markdown(
    f"Nexus cuts a codebase ({widgets.language_list()}) into chunks along its syntax tree "
    "(whole functions, methods and classes) so that retrieval for an LLM finds the code a "
    "question is about; these pages let you tune that chunking, compare it with plain line "
    "windows and try queries on both. By default only **source** files are chunked: tests, "
    "generated, vendored and minified files are left out unless you switch them on below."
)
st.caption(
    "Pick a repository here; the other pages (Chunks and AST, Compare, Search, Evaluate, "
    "Export) all work on it."
)

st.session_state.setdefault("source", widgets.SOURCES[0])
source = st.radio("Source", widgets.SOURCES, key="source", horizontal=True)
choice: repos.RepoChoice | None = None
data: bytes | None = None
name: str | None = None
if source == widgets.SOURCES[0]:
    st.session_state.setdefault("sample", repos.DEFAULT_SAMPLE)
    sample = st.selectbox("Sample repository", repos.sample_names(), key="sample")
    choice = repos.RepoChoice("sample", sample)
elif source == widgets.SOURCES[1]:
    upload = st.file_uploader("A zip of the repository", type=["zip"], key="upload")
    if upload is not None:
        data = upload.getvalue()
        name = Path(upload.name).stem
        choice = repos.RepoChoice("upload", hashlib.sha256(data).hexdigest(), name)
    elif repos.current_choice().kind != "upload":
        st.info("Upload a .zip of a JavaScript/TypeScript repository.")
else:
    roots = ", ".join(safe.code(p) for p in default_allowed_roots())
    path = st.text_input("Repository folder or .zip on the server", key="local_path")
    st.caption(f"Allowed roots: {roots}")
    if path.strip():
        choice = repos.RepoChoice("path", path.strip())

if choice is not None and choice != st.session_state.get("repo_choice"):
    try:
        with st.spinner("Reading the repository…"):
            repos.load_repo(choice, data, name)
    except (IngestError, OSError) as exc:
        upload = ", or upload it as a zip" if isinstance(exc, OutsideRoots) else ""
        st.error(f"Could not open the repository: {safe.md(exc)}{upload}")
        st.stop()
elif choice is not None:  # chosen again after a failed open: the pages show it
    st.session_state.pop(repos.FAILED_OPEN, None)


def _files(n: int) -> str:
    return f"{n} file{'' if n == 1 else 's'}"


repo = repos.current_repo()
base = st.session_state["repo_base"]
with st.expander("What to index", expanded=True):
    # Every file of the category (as the chart counts them), and of those the chunkable.
    kinds = {
        name: [info.language in CHUNKABLE_LANGUAGES for info in base.files if info.category is c]
        for name, c in SWITCHES.items()
    }
    toggles = st.container(key="nx_stack_toggles").columns(len(SWITCHES))
    for column, (name, key) in zip(toggles, widgets.SWITCH_KEYS.items(), strict=True):
        chunkable = sum(kinds[name])
        of_them = f", {chunkable} chunkable" if chunkable < len(kinds[name]) else ""
        column.toggle(
            f"{name.capitalize()} ({_files(len(kinds[name]))}{of_them})",
            key=key,
            on_change=repos.apply_selection,
            help=f"Chunk and index {name} files too (left out by default).",
        )
    language_files = Counter(
        info.language for info in base.files if info.language in CHUNKABLE_LANGUAGES
    )
    st.multiselect(
        "Languages (none chosen: every language)",
        widgets.LANGUAGE_NAMES,
        key=widgets.LANGUAGES_KEY,
        format_func=lambda lang: f"{lang} ({_files(language_files[lang])})",
        on_change=repos.apply_selection,
        placeholder="every language",
        help="Chunk only files of these languages (--language / [files] languages).",
    )
    include, exclude = st.container(key="nx_stack_globs").columns(2)
    include.text_area(
        "Only files matching (globs, one a line)",
        key=widgets.GLOB_KEYS["include"],
        on_change=repos.apply_selection,
        placeholder="Empty: every file. For example: src/**",
        height=80,
        help="gitignore patterns relative to the repository root; empty = every file.",
    )
    exclude.text_area(
        "Leave out files matching (globs, one a line)",
        key=widgets.GLOB_KEYS["exclude"],
        on_change=repos.apply_selection,
        placeholder="Empty: nothing left out. For example: **/*.stories.tsx",
        height=80,
        help="gitignore patterns; a file matching one is not chunked.",
    )
    if st.session_state.get("selection_error"):
        st.error(
            f"Those globs cannot be used: {safe.md(st.session_state['selection_error'])}. "
            "The previous selection still applies."
        )
    st.caption(
        "The choice travels with the settings: in the link, and in the `[files]` table of "
        "the Export page's nexus.toml (`nexus chunk --config` reads it)."
    )
repo = repos.current_repo()
config = settings.settings_sidebar()
shared_key = (repos.repo_key(),)
report = cache.shared("report", shared_key, lambda: summarize(repo.report()))
totals = report["totals"]

# Parse every chunkable file once now, so the other pages open instantly.
paths = repos.chunkable_paths(repo)
parsed = []
if paths:
    progress, done = indexing.progress_callback("Parsing files…")
    parsed = analyses.repo_analyses(
        repo, config.encoding, progress=lambda i, n, _p: progress(i + 1, n)
    )
    done()

st.subheader(safe.code(repo.name))
cols = st.columns(4)
cols[0].metric("Files", f"{totals['files']:,}")
cols[1].metric("Chunkable files", f"{totals['chunkable_files']:,}")
cols[2].metric("Not chunked", f"{totals['skipped_files']:,}")
cols[3].metric("Chunkable size", f"{totals['chunkable_bytes'] / 1000:,.1f} KB")
for note in report["notes"]:
    st.warning(safe.md(note))
if report["unsupported_languages"]:
    st.info(safe.md(unsupported_line(report["unsupported_languages"])))
if not totals["files"]:
    st.stop()

left, right = st.columns([3, 2])
with left:
    fig = cache.shared(
        "category_chart",
        shared_key,
        lambda: views.category_chart(views.category_table(report["by_category_language"])),
    )
    st.plotly_chart(fig, key="category_chart")
with right:
    st.markdown("**Category × language**")
    rows = cache.shared_table(
        "category_rows", shared_key, lambda: views.category_table(report["by_category_language"])
    )
    st.dataframe(rows, hide_index=True)

languages = [
    {"language": lang, "files": n, "chunked": "yes"}
    for lang, n in report["chunkable_by_language"].items()
] + [
    {"language": lang, "files": n, "chunked": "no: unsupported language (no grammar)"}
    for lang, n in report["unsupported_languages"].items()
]
if languages:
    st.markdown("**Languages**")
    st.dataframe(pd.DataFrame(languages), hide_index=True)

st.markdown("**Chunked files**")
files = cache.shared(
    "chunked_files",
    (*shared_key, config.encoding),
    lambda: views.chunked_files_table(
        repo.files, {a.source.info.path: len(a.tokens.starts) for a in parsed}
    ),
)
wanted = st.text_input(
    "Filter the chunked files",
    key="files_filter",
    placeholder="A part of the path, or a glob. For example: src/**/*.ts",
    help="Without * ? [: the paths holding the text (any case); with: a gitignore glob.",
)
try:
    shown_files = views.filter_files(files, wanted)
except ValueError as exc:
    st.error(safe.md(exc))
    shown_files = files
st.caption(f"Showing {len(shown_files):,} of {len(files):,} chunked files")
st.dataframe(shown_files, hide_index=True)

skipped = report["skipped"]
st.markdown(f"**Not chunked ({len(skipped)} files)** and why")
if skipped:
    columns = ["path", "category", "language", "reason", "left_out", "size"]
    st.dataframe(
        cache.shared_table("skipped", shared_key, lambda: pd.DataFrame(skipped)[columns]),
        hide_index=True,
    )
else:
    st.caption("Every file is chunked.")
