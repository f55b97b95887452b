"""Export: the tuned settings as TOML and the repository's chunks as JSONL."""

from __future__ import annotations

import json

import streamlit as st

from nexus.config import dump_config_toml
from nexus.ui import analyses, cache, repos, safe, settings, state

state.page_setup("Export")
config = settings.settings_sidebar()
repo = repos.current_repo()
st.title("Export")

st.subheader("Settings")
toml = dump_config_toml(config, repos.current_selection())
st.code(toml, language="toml")
st.download_button(
    "Download nexus.toml", toml, file_name="nexus.toml", mime="application/toml", key="dl_toml"
)
st.caption(
    "The command line reads the same file: "
    "`nexus chunk REPOSITORY --config nexus.toml --format jsonl -o chunks.jsonl`"
)

st.subheader("Chunks")
strategy = st.radio(
    "Strategy",
    ["ast", "lines"],
    key="export_strategy",
    horizontal=True,
    format_func=lambda s: {"ast": "AST (these settings)", "lines": "Line-based baseline"}[s],
)
chosen = config.with_(strategy=strategy)
chunks = analyses.repo_chunks(repo, chosen)
if not chunks:
    st.warning(f"{safe.code(repo.name)} has no chunkable files: there is nothing to export.")
    st.stop()
jsonl = cache.shared(
    "jsonl",
    analyses.settings_key(chosen),
    lambda: "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in chunks),
)
st.download_button(
    f"Download {len(chunks)} chunks (JSONL)",
    jsonl,
    file_name=f"{repo.name}-{strategy}-chunks.jsonl",
    mime="application/jsonl",
    key="dl_chunks",
)
st.caption(
    f"{len(chunks)} chunks from {len({c.file for c in chunks})} files, "
    f"{len(jsonl.encode()) / 1000:,.1f} KB; one `Chunk.to_dict()` record a line. First record:"
)
st.json(chunks[0].to_dict(), expanded=1)
