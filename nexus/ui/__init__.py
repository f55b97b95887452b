"""The Streamlit dashboard's shared helpers: the only part of ``nexus`` that imports streamlit."""
