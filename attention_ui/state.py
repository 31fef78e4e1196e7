"""Session-wide UI state shared by every page (language)."""

from __future__ import annotations

import streamlit as st

from .i18n import LANGUAGES, Translator, language_from_locale

LANG_KEY = "lang"


def current_language() -> str:
    """The chosen language; first visit: the browser's locale."""
    if LANG_KEY not in st.session_state:
        st.session_state[LANG_KEY] = language_from_locale(getattr(st.context, "locale", None))
    lang = st.session_state[LANG_KEY]
    return lang if lang in LANGUAGES else LANGUAGES[0]


def translator() -> Translator:
    return Translator(current_language())
