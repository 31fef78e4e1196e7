"""Guided path (issue 19): an ordered route through the playground's steps and the labs.

Each stop: its goal, one or two predict-then-reveal questions about a hand-sized exercise, a link
onward. Progress lives in the URL (``?seed=&stop=&answers=``), so a reload or a shared link
restores it. Route and URL format: ``attention_ui.path.path``; drawing: ``path_view``. All text
from the ``path`` catalog (practice mode's questions: the ``practice`` catalog).
"""

from __future__ import annotations

import streamlit as st

from attention_ui import kit
from attention_ui.path import path, path_view
from attention_ui.path.settings import PAGE
from attention_ui.playground import share
from attention_ui.practice import predict_view


def main() -> None:
    t = PAGE.start()
    path_view.sync_from_url()
    st.session_state.setdefault(predict_view.MODE_KEY, True)  # the labs ask too, on the path
    st.title(t("path.path_title"))
    st.markdown(t("path.path_intro"))
    with st.sidebar:
        st.number_input(t("path.path_seed"), *kit.SEED_RANGE, step=1, key=path_view.SEED_KEY)
        st.caption(t("path.path_seed_help"))
        predict_view.mode_toggle(t)
        share.copy_link(t)  # the progress lives in the URL: a link to where the learner is
    with PAGE.guard(t, "guided path"):
        progress = path_view.current()
        path_view.progress_line(t, progress)
        if progress.stop == path.SUMMARY:
            path_view.render_summary(t, progress)
        else:
            path_view.render_stop(t, progress)
        path_view.nav_buttons(t, progress)
        path_view.sync_to_url(path_view.current(), t.lang)


main()
