"""Example sentences shipped with the playground, in English and Japanese (data, not UI text).

Japanese has no spaces between words; the tokenizer makes each kanji/kana one token, so these
sentences stay short (at most 15 tokens) to keep every map readable.
"""

from __future__ import annotations

import streamlit as st

from attention_ui.playground.settings import TABLE

EXAMPLES: tuple[tuple[str, str], ...] = (
    ("en", "the cat sat on the mat"),
    ("en", "the animal didn't cross the street because it was too tired"),
    ("en", "I read a book in the library yesterday"),
    ("en", "attention is all you need"),
    ("ja", "猫がマットの上に座った。"),
    ("ja", "私は昨日図書館で本を読んだ。"),
    ("ja", "東京は日本の首都です。"),
    ("ja", "彼女は毎朝コーヒーを飲む。"),
)
PICK_KEY = TABLE.key("example_pick")


def examples_for(lang: str) -> list[str]:
    """The sentences, those of the UI language first."""
    own = [s for lg, s in EXAMPLES if lg == lang]
    return own + [s for lg, s in EXAMPLES if lg != lang]


def _use_example() -> None:
    choice = st.session_state.get(PICK_KEY)
    if choice:
        st.session_state[TABLE.key("text")] = choice
    st.session_state[PICK_KEY] = None  # the picker is an action, not a setting


def example_picker(t, lang: str) -> None:
    """A selectbox that copies the chosen example into the sentence box."""
    st.selectbox(
        t("playground.examples"),
        examples_for(lang),
        index=None,
        key=PICK_KEY,
        placeholder=t("playground.examples_placeholder"),
        on_change=_use_example,
    )
