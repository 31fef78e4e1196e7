"""Worksheets for teachers (issue 19): hand-sized attention exercises as a PDF with an answer key.

Widgets (``ws_`` keys) -> ``WorksheetSettings`` (validated by the builder, its messages in the
``practice`` catalog) -> a download button that builds the PDF when clicked -> a preview of the
first exercise. The builder is imported lazily (``attention_ui.worksheet.worksheet_view``).
"""

from __future__ import annotations

import streamlit as st

from attention_ui import kit
from attention_ui.i18n import LANGUAGE_NAMES, LANGUAGES
from attention_ui.worksheet import worksheet_view as view

PAGE = kit.Page(view.PREFIX, "practice", view.DEFAULTS)


def controls(t) -> None:
    with st.sidebar:
        st.header(t("practice.ws_settings"))
        st.session_state.setdefault("ws_lang", t.lang)
        PAGE.widget(t, "number_input", "exercises", *view.EXERCISES_RANGE, step=1, text="ws_exercises")
        PAGE.widget(
            t, "number_input", "students", *view.STUDENTS_RANGE, step=1, text="ws_students", helped=True
        )
        PAGE.widget(
            t, "number_input", "first_seed", *kit.SEED_RANGE, step=1, text="ws_first_seed", helped=True
        )
        PAGE.widget(t, "selectbox", "lang", LANGUAGES, format_func=LANGUAGE_NAMES.get, text="ws_lang")
        PAGE.widget(t, "toggle", "causal", text="ws_causal", helped=True)
        PAGE.widget(t, "toggle", "code", text="ws_code", helped=True)


def main() -> None:
    t = PAGE.start()
    controls(t)
    st.title(t("practice.ws_title"))
    st.markdown(t("practice.ws_intro"))
    with PAGE.guard(t, "worksheet"):
        settings = view.read_settings(t)
        if settings is None:
            return
        last = settings.seed(settings.students, settings.exercises)
        st.markdown(
            t(
                "practice.ws_summary",
                students=settings.students,
                exercises=settings.exercises,
                total=settings.total,
                pages=2 * settings.total,
                first=settings.first_seed,
                last=last,
            )
        )
        st.download_button(
            t("practice.ws_download"),
            data=lambda: view.build_pdf(settings),  # built when clicked, not on every rerun
            file_name=view.file_name(settings),
            mime="application/pdf",
            key="ws_download",
            icon=":material/picture_as_pdf:",
            on_click="ignore",  # deferred data: a rerun could drop the callable before it is read
            type="primary",
        )
        st.caption(
            t(
                "practice.ws_regenerate",
                command=f"`python -m attention_core exercise --seed {settings.first_seed}`",
            )
        )
        view.preview(t, settings)


main()
