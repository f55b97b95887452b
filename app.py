"""Nexus dashboard: the pages in the order of the work; the first one picks the repository.

``streamlit run app.py`` starts here. Naming the pages here (not by file name) is what
gives the home page its title in the navigation.
"""

from __future__ import annotations

import streamlit as st

from nexus.ui.state import leave_directory_mode

leave_directory_mode()  # before the first st.navigation of a fresh server (see there)
PAGES = [
    st.Page("pages/0_Repository.py", title="Repository", default=True),
    st.Page("pages/1_Chunks_and_AST.py", title="Chunks and AST", url_path="Chunks_and_AST"),
    st.Page("pages/2_Compare.py", title="Compare", url_path="Compare"),
    st.Page("pages/3_Search.py", title="Search", url_path="Search"),
    st.Page("pages/4_Evaluate.py", title="Evaluate", url_path="Evaluate"),
    st.Page("pages/5_Export.py", title="Export", url_path="Export"),
]

st.navigation(PAGES).run()
