"""The inference lab's cache-size calculator: public model shapes (``PRESETS``), n capped at the
model's context, a sliding window, MHA through GQA to MQA.

Called by ``app_pages/inference.py`` with its page kit (its ``preset``/``calc_*`` settings, declared in ``attention_ui.inference.settings``; ``inference`` catalog). Widgets
-> ``attention_core.labs.inference.cache_calculation`` -> ``attention_ui.inference.figures`` -> the kit.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import inference as lab_inference
from attention_core.labs.cost import format_bytes
from attention_core.labs.inference import DTYPE_BYTES, PRESETS, kv_choices
from attention_ui import kit
from attention_ui.figures.base import AxisText
from attention_ui.inference import figures as figures_inference
from attention_ui.inference.settings import CALC_N_RANGE, CALC_WINDOW_RANGE


def fit_choice(key: str, choices) -> None:
    """Keep a select slider's value among its choices (the largest valid one not above it)."""
    current = st.session_state.get(key, choices[0])
    if current not in choices:
        st.session_state[key] = max([c for c in choices if c <= current] or [choices[0]])


def section_size(t, page: kit.Page) -> None:
    kit.opening(
        t("inference.sec_size"),
        t("inference.explain_size"),
        rf"\text{{{t('inference.tex_bytes')}}} = 2 \cdot \text{{{t('inference.tex_layers')}}} \cdot n \cdot g"
        rf" \cdot d_k \cdot \text{{{t('inference.tex_per_value')}}}",
        anchor="size",
    )
    s, key = st.session_state, page.key
    c1, c2, c3 = st.columns(3)
    page.widget(
        t, "selectbox", "preset", list(range(len(PRESETS))), format_func=lambda i: PRESETS[i].name,
        helped=True, where=c1,
    )  # fmt: skip
    page.widget(t, "number_input", "calc_n", *CALC_N_RANGE, step=1024, where=c2)
    page.widget(t, "selectbox", "dtype", list(DTYPE_BYTES), where=c3)
    preset = page.value("preset")
    shape = PRESETS[int(preset)]
    if page.value("preset_shown") != preset:  # a new model starts at its own KV heads and window
        s[key("calc_kv")] = shape.kv_heads
        s[key("calc_window")] = shape.window
        s[key("preset_shown")] = preset
    kvs = kv_choices(shape.heads)
    fit_choice(key("calc_kv"), kvs)
    c1, c2 = st.columns([2, 1])
    page.widget(t, "select_slider", "calc_kv", kvs, helped=True, where=c1)
    page.widget(t, "number_input", "calc_window", *CALC_WINDOW_RANGE, step=1024, helped=True, where=c2)
    asked = page.whole(t, key("calc_n"), t("inference.calc_n"), CALC_N_RANGE)
    window = page.whole(t, key("calc_window"), t("inference.calc_window"), CALC_WINDOW_RANGE)
    if asked is None or window is None:
        return
    g = int(page.value("calc_kv"))
    calc = lab_inference.cache_calculation(shape, asked, g, DTYPE_BYTES[page.value("dtype")], window)
    size, n, big = (
        calc.size,
        f"{calc.n:,}",
        dict(name=shape.name, asked=f"{asked:,}", context=f"{shape.context:,}"),
    )
    if calc.capped:
        st.warning(t("inference.over_context", **big))
    for column, label, value in zip(
        st.columns(3),
        (
            t("inference.size_metric", g=g),
            t("inference.mha_metric", h=shape.heads),
            t("inference.saved_metric"),
        ),
        (size.bytes, size.bytes_mha, size.saved),
        strict=True,
    ):
        column.metric(label, format_bytes(value))
    st.caption(
        t("inference.source", name=shape.name, layers=shape.layers, heads=shape.heads, kv=shape.kv_heads,
          d_k=shape.head_dim, source=t(f"inference.source_{shape.key}"))
        + t("inference.source_context", **big)  # each of these starts with its own gap (none in ja)
        + (t("inference.source_window", w=f"{shape.window:,}", layers=shape.layers_windowed, total=shape.layers)
           if shape.window else "")
    )  # fmt: skip
    if window and size.held < calc.n:
        st.markdown(t("inference.window_note", w=f"{window:,}", n=n, held=f"{size.held:,}"))
    saved = format_bytes(size.saved)
    st.markdown(t("inference.size_note", g=g, h=shape.heads, ratio=f"{size.ratio:.3g}", saved=saved, n=n))
    kvs, sizes = zip(*calc.bars, strict=True)
    axes = AxisText(t("inference.axis_kv"), t("inference.axis_bytes"))
    fig = figures_inference.cache_bars_figure(list(kvs), list(sizes), g, axes=axes)
    alt = t("inference.alt_size", name=shape.name, n=n, h=shape.heads, g=g, size=format_bytes(size.bytes))
    page.chart(fig, "size", alt)
