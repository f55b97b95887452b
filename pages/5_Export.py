"""Export: the tuned settings as TOML and the repository's chunks as JSONL."""

from __future__ import annotations

import json

import streamlit as st

from nexus.config import dump_config_toml
from nexus.evaluation.runs import no_nan
from nexus.ui import analyses, cache, repos, safe, settings, state, sweeps

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

swept = sweeps.export((config.max_tokens, config.min_tokens))
if swept is not None:
    st.subheader("Sweep")
    table, about = swept
    c1, c2 = st.columns(2)
    c1.download_button(
        f"Download the sweep's {len(table)} settings (CSV)",
        table.to_csv(index=False),
        file_name=f"{repo.name}-sweep.csv",
        mime="text/csv",
        key="dl_sweep_csv",
    )
    c2.download_button(
        "Download the sweep (JSON, with its grid, query variant, tier and files)",
        json.dumps(no_nan({**about, "rows": table.to_dict(orient="records")}), indent=1),
        file_name=f"{repo.name}-sweep.json",
        mime="application/json",
        key="dl_sweep_json",
    )
    st.caption(
        f"The Evaluate page's last sweep on {safe.code(repo.name)} "
        f"({safe.md(about['variant'])} queries; embedder {safe.md(about['embedder'])}; "
        f"{safe.md(about['files'])}; Δ against max {about['in_use'][0]} / min "
        f"{about['in_use'][1]}); the share link carries its grid, tier and files."
    )
    if not about["complete"]:
        st.warning(
            f"A partial sweep: {about['settings_done']} of {about['settings']} settings done."
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
