"""The first call of every dashboard page: page config, kept widget values, a link's settings.

Pages use plain ``pages/`` directory mode; what one page chooses (the repository,
the chunking settings, the file) lives in ``st.session_state`` so the next page
sees it. Widget values are kept across page switches by re-assigning their keys at
the top of each page (Streamlit drops a widget's state when its page is left).
The rest of a page's state lives beside this module: ``repos`` (the repository and
its file selection), ``cache`` (memory shared by every session), ``analyses``
(parsed files, chunks, targets), ``indexing`` (the model and index builds),
``wordpieces``, ``settings`` (the sidebar), ``links`` (URL parameters) and
``widgets`` (the keys and ranges they share).
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from nexus.ui import indexing, links, render, repos, safe, settings, widgets

#: ``(page title, problems)`` of the link this session was opened with.
LINK_PROBLEMS = "_link_problems"
#: Session keys: the kept values as the last run set them up, and its page's title
#: (``widgets.kept_values``).
_LAST_RUN, _LAST_PAGE = widgets.LAST_RUN_KEY, "_last_page"


def page_setup(title: str, load_model: bool = True) -> None:
    """First call of every page: page config, kept widget values, defaults.

    ``load_model``: the model starts loading on a thread before a link's repository is
    opened, so a cold server reads the files meanwhile. Every page does it (Streamlit runs
    no app code before the first page is shown): a saved index opened later on Search
    waited 10-20 s for the model when only Search loaded it.
    """
    leave_directory_mode()
    st.set_page_config(
        page_title=f"Nexus · {title}", page_icon=":material/view_agenda:", layout="wide"
    )
    st.html(render.RESPONSIVE_CSS)
    if load_model:
        indexing.load_model_soon()
    values = {key: st.session_state[key] for key in widgets.KEPT_KEYS if key in st.session_state}
    switched = st.session_state.get(_LAST_PAGE) != title
    st.session_state[_LAST_PAGE] = title
    last_run = st.session_state.get(_LAST_RUN, {})
    for key, value in widgets.kept_values(values, last_run, switched).items():
        st.session_state[key] = value
    for key, value in widgets.DEFAULTS.items():
        st.session_state.setdefault(key, value)
    problems = links.apply_url_params()
    if problems:
        # Kept for the page the link opened: a rerun (a build finishing, a repository
        # loading) would otherwise wipe the only run that showed them.
        st.session_state[LINK_PROBLEMS] = (title, problems)
    shown_on, kept = st.session_state.get(LINK_PROBLEMS, ("", []))
    said = kept if shown_on == title else []
    for problem in said:
        st.warning(f"Link: {safe.md(problem)}")
    failed = repos.failed_open()
    # The Repository page says it in full; a link's own page said it above.
    if failed is not None and title != "Repository" and not said:
        st.warning(
            f"Opening {safe.code(failed.asked)} failed ({safe.md(failed.reason)}), so this "
            f"page shows {safe.code(failed.shown or repos.DEFAULT_SAMPLE)}, the repository "
            "open before. Choose another on the Repository page."
        )
    if "preset" not in st.session_state:
        settings.matching_preset()
    # What the browser will be shown: a slider that differs from it next run was moved there.
    st.session_state[_LAST_RUN] = {
        key: st.session_state[key] for key in widgets.KEPT_KEYS if key in st.session_state
    }


#: Whether this process already switched its server out of directory mode.
_SWITCHED = False


def leave_directory_mode() -> None:
    """Run under ``app.py``'s navigation from the first script run of a server on.

    With ``pages/`` beside ``app.py``, a fresh server runs in Streamlit's older
    directory mode until a script calls ``st.navigation``: a link straight to a page
    (``/Compare``) ran the page alone, and the sidebar of every session until someone
    opened the home page listed ``app.py`` itself as a stray "app" page (clicking it
    reset the repository). The first such run switches the server over and runs again,
    once per process: Streamlit's AppTest sets the flag back before every run, and a
    rerun there would drop the run's button click.
    """
    global _SWITCHED
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        if not _SWITCHED:
            _SWITCHED = True
            st.rerun()
