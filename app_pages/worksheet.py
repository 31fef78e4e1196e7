"""Worksheets for teachers (issue 19): hand-sized attention exercises as a PDF with an answer key.

Widgets (declared in ``attention_ui.worksheet.settings``) -> ``WorksheetSettings`` (validated by the
builder, its messages in the ``worksheet`` catalog) -> a download button that builds the PDF when clicked -> a preview of the
first exercise. The builder is imported lazily (``attention_ui.worksheet.worksheet_view``).
"""

from __future__ import annotations

import streamlit as st

from attention_ui import kit
from attention_ui.i18n import LANGUAGE_NAMES, LANGUAGES
from attention_ui.worksheet import worksheet_view as view
from attention_ui.worksheet.settings import EXERCISES_RANGE, PAGE, STUDENTS_RANGE, TABLE


def controls(t) -> None:
    with st.sidebar:
        st.header(t("worksheet.ws_settings"))
        st.session_state.setdefault(TABLE.key("lang"), t.lang)
        PAGE.widget(t, "number_input", "exercises", *EXERCISES_RANGE, step=1, text="ws_exercises")
        PAGE.widget(t, "number_input", "students", *STUDENTS_RANGE, step=1, text="ws_students", helped=True)
        PAGE.widget(
            t, "number_input", "first_seed", *kit.SEED_RANGE, step=1, text="ws_first_seed", helped=True
        )
        PAGE.widget(t, "selectbox", "lang", LANGUAGES, format_func=LANGUAGE_NAMES.get, text="ws_lang")
        PAGE.widget(t, "toggle", "causal", text="ws_causal", helped=True)
        PAGE.widget(t, "toggle", "code", text="ws_code", helped=True)


def main() -> None:
    t = PAGE.start()
    controls(t)
    st.title(t("worksheet.ws_title"))
    st.markdown(t("worksheet.ws_intro"))
    with PAGE.guard(t, "worksheet"):
        settings = view.read_settings(t)
        if settings is None:
            return
        last = settings.seed(settings.students, settings.exercises)
        st.markdown(
            t(
                "worksheet.ws_summary",
                students=settings.students,
                exercises=settings.exercises,
                total=settings.total,
                pages=2 * settings.total,
                first=settings.first_seed,
                last=last,
            )
        )
        st.download_button(
            t("worksheet.ws_download"),
            data=lambda: view.build_pdf(settings),  # built when clicked, not on every rerun
            file_name=view.file_name(settings),
            mime="application/pdf",
            key=TABLE.key("download"),
            icon=":material/picture_as_pdf:",
            on_click="ignore",  # deferred data: a rerun could drop the callable before it is read
            type="primary",
        )
        st.caption(
            t(
                "worksheet.ws_regenerate",
                command=f"`python -m attention_core exercise --seed {settings.first_seed}`",
            )
        )
        view.preview(t, settings)


main()
