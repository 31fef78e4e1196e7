"""Gemma 3's own sections of the decoder page (shown only while the chosen model is ``"gemma3"``): the layer
kinds, QK-norm, the two RoPE bases and local vs global attention on a long text, plus the two
decoders side by side (shown for either model).

Everything drawn is read from the cached trace (``q_lengths``, ``score_range``, ``weights``,
``window``, ``rope_base``) or from the two configs; the checks the page reports are
:func:`attention_core.labs.decoder.weight_outside_window` and ``score_bound``.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.kv_cache import windowed_cache_bytes
from attention_core.labs import decoder as lab_decoder
from attention_core.models import gemma3
from attention_ui import kit
from attention_ui.decoder import cached, models
from attention_ui.decoder.settings import PAGE, DecoderSettings
from attention_ui.figures import decoder as fdc
from attention_ui.figures.base import AxisText
from attention_ui.i18n import catalog

COMPARE_TOKENS = 8192  # the context length the comparison table sizes the cache at
BYTES = 4  # float32, as this code stores K and V
LONG_CHARS = {"en": 3000, "ja": 1300}  # enough for > 512 Gemma tokens and < 1,024 (tests check both)


def long_preset(lang: str) -> str:
    """A long text built from the app's own messages in ``lang`` (those without placeholders, at
    least 120 characters, in key order) until ``LONG_CHARS[lang]`` characters: more than 512 Gemma
    tokens, so a local layer's window shows. No outside text."""
    messages = catalog(lang)
    parts: list[str] = []
    total = 0
    for key in sorted(messages):
        text = messages[key]
        if (
            "{" in text
            or len(text) < 120
            or not key.startswith(("decoder.", "heads.", "masks.", "playground."))
        ):
            continue
        parts.append(text)
        total += len(text)
        if total >= LONG_CHARS.get(lang, LONG_CHARS["en"]):
            break
    return "\n\n".join(parts)


LONG = PAGE.key("long_on")  # the page runs on long_preset(lang) instead of the learner's sentence


def on_long_preset() -> None:
    """The long text for this page only: the learner's sentence stays in the box and on every other
    page (it is not written into the page's sentence, which the pages share)."""
    st.session_state[LONG] = True


def on_back() -> None:
    st.session_state[LONG] = False


def long_on(name: str) -> bool:
    return name == "gemma3" and st.session_state.get(LONG) is True


def long_notice(t, lang: str) -> None:
    """At the top of the page while the long text is shown: what it is, and the way back."""
    st.info(t("decoder.g_long_on", chars=f"{len(long_preset(lang)):,}"))
    st.button(t("decoder.g_back_button"), key=PAGE.key("back"), on_click=on_back, type="primary")


def layer_kind_note(t, layer) -> None:
    """Under the weight maps' heading: whether this layer is local (its window) or global."""
    if layer.window is None:
        st.markdown(t("decoder.g_layer_global", base=f"{layer.rope_base:,.0f}"))
    else:
        st.markdown(t("decoder.g_layer_local", window=layer.window, base=f"{layer.rope_base:,.0f}"))


def sections(t, trace, settings: DecoderSettings, hover) -> None:
    PAGE.section(section_qk_norm, t, trace, settings)
    PAGE.section(section_rope_bases, t)
    PAGE.section(section_local_global, t, trace, settings, hover)


def section_qk_norm(t, trace, settings: DecoderSettings) -> None:
    layer = trace.layers[settings.layer]
    head = settings.head
    kv = int(layer.kv_head_of[head])
    kit.opening(
        t("decoder.g_h_qk_norm"),
        t("decoder.g_explain_qk_norm", d=trace.config.head_dim),
        r"\hat q = g \odot \frac{q}{\sqrt{\tfrac{1}{256}\sum_k q_k^2 + \varepsilon}}",
        anchor="qk-norm",
    )
    c1, c2 = st.columns(2)
    labels = dict(axes=AxisText(t("decoder.axis_position"), t("decoder.g_axis_length")),
                before_name=t("decoder.g_before_norm"), after_name=t("decoder.g_after_norm"))  # fmt: skip
    with c1:
        st.markdown(t("decoder.g_q_lengths", h=head))
        fig = fdc.lengths_figure(layer.q_lengths_pre[head], layer.q_lengths[head], **labels)
        PAGE.chart(fig, "g_q_len", t("decoder.g_alt_lengths", what="q", n=trace.n))
    with c2:
        st.markdown(t("decoder.g_k_lengths", g=kv))
        fig = fdc.lengths_figure(layer.k_lengths_pre[kv], layer.k_lengths[kv], **labels)
        PAGE.chart(fig, "g_k_len", t("decoder.g_alt_lengths", what="k", n=trace.n))
    q0, q1 = layer.q_lengths_pre[head], layer.q_lengths[head]
    st.markdown(
        t("decoder.g_lengths_summary", qmin0=f"{q0.min():.1f}", qmax0=f"{q0.max():.1f}", qmin=f"{q1.min():.1f}",
          qmax=f"{q1.max():.1f}", kmin0=f"{layer.k_lengths_pre[kv].min():.1f}",
          kmax0=f"{layer.k_lengths_pre[kv].max():.1f}", kmin=f"{layer.k_lengths[kv].min():.1f}",
          kmax=f"{layer.k_lengths[kv].max():.1f}")
    )  # fmt: skip
    bound = lab_decoder.score_bound(
        layer.q_lengths[head : head + 1], layer.k_lengths[kv : kv + 1], layer.score_range[head], layer.divisor
    )
    lo, hi = (float(v) for v in layer.score_range[head])
    weights = cached.model(settings.model).weights.layers[settings.layer]
    qcap, kcap = lab_decoder.norm_length_cap(weights.q_norm), lab_decoder.norm_length_cap(weights.k_norm)
    key = "decoder.g_score_bound_holds" if bound.holds else "decoder.g_score_bound_broken"
    (st.markdown if bound.holds else st.error)(
        t(key, lo=f"{lo:.2f}", hi=f"{hi:.2f}", bound=f"{bound.bound:.2f}", divisor=f"{layer.divisor:g}",
          d=trace.config.head_dim, qcap=f"{qcap:.1f}", kcap=f"{kcap:.1f}", cap=f"{qcap * kcap / layer.divisor:.0f}")
    )  # fmt: skip


def section_rope_bases(t) -> None:
    config = gemma3.GEMMA3_270M
    st.header(t("decoder.g_h_rope_bases"), anchor="rope-bases")
    bases = sorted({float(b) for b in config.layer_rope_bases})
    globals_ = [lay for lay in range(config.n_layers) if config.window_of(lay) is None]
    d = config.head_dim
    # the slowest pair turns by base^(-(d-2)/d) per position: its period 2π / that
    periods = {b: 2 * np.pi * b ** ((d - 2) / d) for b in bases}
    st.markdown(
        t("decoder.g_explain_rope_bases", local=f"{bases[0]:,.0f}", glob=f"{bases[-1]:,.0f}",
          layers=", ".join(map(str, globals_)), d=d, p_local=f"{periods[bases[0]]:,.0f}",
          p_global=f"{periods[bases[-1]]:,.0f}")
    )  # fmt: skip


def section_local_global(t, trace, settings: DecoderSettings, hover) -> None:
    config = trace.config
    st.header(t("decoder.g_h_local_global"), anchor="local-global")
    window = next(w for w in config.layer_windows if w is not None)
    st.markdown(t("decoder.g_explain_local_global", window=window))
    if st.session_state.get(LONG) is True:
        st.button(t("decoder.g_back_button"), key=PAGE.key("back_below"), on_click=on_back)
    else:
        st.button(t("decoder.g_long_button"), key=PAGE.key("long"), on_click=on_long_preset)
    if trace.n <= window:
        st.info(t("decoder.g_short_text", n=trace.n, window=window))
    local = next(lay for lay in range(config.n_layers) if config.window_of(lay) is not None)
    glob = next(lay for lay in range(config.n_layers) if config.window_of(lay) is None)
    head = settings.head
    axes = dict(hover=hover, query_title=t("decoder.axis_query"), key_title=t("decoder.axis_key"))
    c1, c2 = st.columns(2)
    for column, lay, kind in ((c1, local, "local"), (c2, glob, "global")):
        layer = trace.layers[lay]
        with column:
            st.markdown(t(f"decoder.g_map_{kind}", layer=lay, h=head))
            fig = fdc.group_weight_maps(layer.weights, [head], trace.labels, layer.mask, title="", **axes)[0]
            PAGE.chart(fig, f"g_map_{kind}", t("decoder.alt_weights", h=head, n=trace.n))
            outside = lab_decoder.weight_outside_window(layer.weights, config.window_of(lay))
            if kind == "local":
                key = "decoder.g_band_holds" if outside == 0.0 else "decoder.g_band_broken"
                (st.markdown if outside == 0.0 else st.error)(t(key, window=window, w=f"{outside:.2e}"))
    counts = [lab_decoder.keys_read_per_query(trace.layers[lay].weights) for lay in (local, glob)]
    fig = fdc.keys_read_figure(
        counts, [t("decoder.layer_option_local", layer=local), t("decoder.layer_option_global", layer=glob)],
        window, axes=AxisText(t("decoder.axis_position"), t("decoder.g_axis_keys_read")),
        window_name=t("decoder.g_window_name", window=window),
    )  # fmt: skip
    PAGE.chart(fig, "g_keys_read", t("decoder.g_alt_keys_read", n=trace.n))
    n = trace.n
    by_kind = gemma3.start_state(trace).cache_bytes_by_kind
    st.markdown(
        t("decoder.g_cache_meaning", n=n, window=window, local=f"{by_kind['local']:,}", glob=f"{by_kind['global']:,}",
          kept=min(n, window))
    )  # fmt: skip


def compare_rows(t, text: str) -> list[dict]:
    """The table of the two decoders: one row per quantity, read from the two configs."""
    rows = []
    cfgs = [models.config(m) for m in models.MODELS]
    names = [t(f"decoder.model_{m}") for m in models.MODELS]

    def row(label: str, values) -> None:
        rows.append(
            {t("decoder.cmp_quantity"): label, **{nm: v for nm, v in zip(names, values, strict=True)}}
        )

    row(t("decoder.cmp_layers"), [f"{c.n_layers}" for c in cfgs])
    row(t("decoder.cmp_heads"), [f"{c.n_heads}" for c in cfgs])
    row(t("decoder.cmp_kv_heads"), [f"{c.n_kv_heads}" for c in cfgs])
    row(t("decoder.cmp_head_dim"), [f"{c.head_dim}" for c in cfgs])
    row(t("decoder.cmp_vocab"), [f"{c.vocab_size:,}" for c in cfgs])
    per_token = [2 * c.n_layers * c.n_kv_heads * c.head_dim * BYTES for c in cfgs]
    row(t("decoder.cmp_per_token"), [f"{b:,}" for b in per_token])
    full = [
        windowed_cache_bytes(COMPARE_TOKENS, (None,) * c.n_layers, c.n_kv_heads, c.head_dim, BYTES)
        for c in cfgs
    ]
    row(t("decoder.cmp_at_n", n=f"{COMPARE_TOKENS:,}"), [f"{b:,}" for b in full])
    windowed = [
        windowed_cache_bytes(COMPARE_TOKENS, c.layer_windows, c.n_kv_heads, c.head_dim, BYTES)
        if models.has_window(c) else None
        for c in cfgs
    ]  # fmt: skip
    row(t("decoder.cmp_at_n_window", n=f"{COMPARE_TOKENS:,}"),
        [t("decoder.cmp_no_window") if b is None else f"{b:,}" for b in windowed])  # fmt: skip
    return rows


def section_compare(t, settings: DecoderSettings) -> None:
    st.header(t("decoder.cmp_h"), anchor="two-decoders")
    st.markdown(t("decoder.cmp_explain", n=f"{COMPARE_TOKENS:,}"))
    PAGE.table(compare_rows(t, settings.text), "compare", always=True, hide_index=True)
    st.subheader(t("decoder.cmp_h_tokens"), anchor="two-tokenizers")
    for name in models.MODELS:
        core = models.module(name)
        st.markdown(t(f"decoder.model_{name}"))
        if not core.is_available():
            st.caption(t("decoder.cmp_missing"))
            continue
        # the tokenizer alone: the other model's weights (0.5-0.6 GB) are not needed to read a sentence
        enc = core.encode(
            settings.text, max_tokens=core.MAX_TOKENS, truncate=True, model=cached.tokenizer(name)
        )
        st.caption(t("decoder.cmp_count", n=f"{enc.n:,}", total=f"{enc.total_tokens:,}"))
        kit.show_tokens(enc.labels)
