"""The training lab's five experiments, one click each (filled in when the core's experiments land)."""

from __future__ import annotations

import streamlit as st


def section_experiments(t) -> None:
    st.header(t("training.h_experiments"))
