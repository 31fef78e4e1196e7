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

from pathlib import Path  # noqa: E402

# Lab pages are listed here as they land; the filter goes once all of them exist.
LABS = [
    ("pages/why_sqrt_dk.py", "app.nav_why_sqrt", "📏", "why-sqrt-dk"),
    ("pages/masks.py", "app.nav_masks", "🎭", "masks"),
    ("pages/multi_head.py", "app.nav_multi_head", "🧩", "multi-head"),
    ("pages/cost.py", "app.nav_cost", "📈", "cost"),
    ("pages/lookalikes.py", "app.nav_lookalikes", "🔀", "lookalikes"),
    ("pages/quiz.py", "app.nav_quiz", "✅", "quiz"),
]
_here = Path(__file__).parent
pages = {
    t("app.nav_section_explore"): [
        st.Page("pages/playground.py", title=t("app.nav_playground"), icon="🧮", default=True, url_path="playground"),
    ],
    t("app.nav_section_labs"): [
        st.Page(path, title=t(key), icon=icon, url_path=url)
        for path, key, icon, url in LABS
        if (_here / path).exists()
    ],
}
st.navigation({k: v for k, v in pages.items() if v}).run()
