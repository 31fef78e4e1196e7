"""Session-wide UI state shared by every page (language)."""

from __future__ import annotations

import streamlit as st

from .i18n import LANGUAGES, Translator, language_from_locale

LANG_KEY = "lang"


def current_language() -> str:
    """The chosen language; first visit: a shared link's ``?lang=``, else the browser's locale."""
    if LANG_KEY not in st.session_state:
        from_url = st.query_params.get(LANG_KEY)
        st.session_state[LANG_KEY] = (
            from_url if from_url in LANGUAGES else language_from_locale(getattr(st.context, "locale", None))
        )
    lang = st.session_state[LANG_KEY]
    return lang if lang in LANGUAGES else LANGUAGES[0]


def translator() -> Translator:
    return Translator(current_language())
