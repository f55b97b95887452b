"""The dashboard's shared helpers: the only part of ``nexus`` that imports streamlit.

Takes what the library hands on; hands the pages widgets, state and drawings.
"""
