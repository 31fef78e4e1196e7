"""Attention Lab entry point: page config, language switch, navigation."""

import streamlit as st

from attention_ui.i18n import LANGUAGE_NAMES, LANGUAGES
from attention_ui.state import LANG_KEY, current_language, translator

st.set_page_config(page_title="Attention Lab", page_icon="🔍", layout="wide")

current_language()  # initialise from the browser locale once
t = translator()
with st.sidebar:
    st.selectbox(t("app.language"), LANGUAGES, key=LANG_KEY, format_func=LANGUAGE_NAMES.get)
t = translator()  # the selectbox may have changed the language on this run

pages = [
    st.Page("pages/playground.py", title=t("app.nav_playground"), icon="🧮", default=True, url_path="playground"),
]
st.navigation(pages).run()
