"""A real decoder: SmolLM2-135M on the learner's sentence (causal attention, GQA, RoPE, the next-token
distribution and generation with the KV cache).

Widgets (``dc_`` keys) -> the sentence and choices -> cached core calls (``attention_ui.decoder.cached``:
one trace per sentence, one decode step per generated token) -> builders in
``attention_ui.figures.decoder`` -> charts and text from the ``decoder`` catalog. Without the model
package the page says how to install it and draws nothing else.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from attention_core.labs import decoder_view
from attention_core.models import smollm2
from attention_ui import kit
from attention_ui.decoder import cached, generation_view, url
from attention_ui.decoder.settings import CONFIG, GROUP, PAGE, DecoderSettings
from attention_ui.figures import decoder as fdc
from attention_ui.figures import heatmaps

ROPE_OFFSETS = 64  # the offset curve runs over at least 0 … 63
ROPE_STARTS = (0, 20, 100)  # key positions the same (q, k) pair is placed at


def controls(t) -> None:
    with st.sidebar:
        st.header(t("decoder.settings"))
        PAGE.widget(t, "text_area", "text", height=90, helped=True)
        PAGE.sentence_origin(t, "dc_text")
        layers = list(range(CONFIG.n_layers))
        PAGE.widget(t, "selectbox", "layer", layers, format_func=lambda x: t("decoder.layer_option", layer=x))
        heads = list(range(CONFIG.n_heads))
        fmt = partial(_head_option, t)
        PAGE.widget(t, "selectbox", "head", heads, format_func=fmt, helped=True)
        PAGE.seed_input(t)


def _head_option(t, h: int) -> str:
    return t("decoder.head_option", h=h, g=h // GROUP)


def read_settings(t) -> DecoderSettings | None:
    s = st.session_state
    text = s.get("dc_text") or ""
    if not text.strip():
        st.error(t("decoder.err_empty"))
        return None
    seed = PAGE.whole(t, "dc_seed", t("decoder.seed"), kit.SEED_RANGE)
    if seed is None:
        return None
    top_k = s.get("dc_top_k", 0)
    top_k = top_k if isinstance(top_k, int) and url.TOP_K_RANGE[0] <= top_k <= url.TOP_K_RANGE[1] else 0
    temperature = float(s.get("dc_temperature", 1.0))
    return DecoderSettings(text, int(s["dc_layer"]), int(s["dc_head"]), temperature, top_k, seed)


# --- generation state -------------------------------------------------------------------------------


def on_grid_pick() -> None:
    """A click on the overview grid selects that layer and head."""
    event = st.session_state.get("dc_chart_grid")
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return
    if points:
        picked = fdc.picked_head(points[0], CONFIG.n_layers, CONFIG.n_heads)
        if picked is not None:
            st.session_state["dc_layer"], st.session_state["dc_head"] = picked


# --- sections ---------------------------------------------------------------------------------------


def section_tokens(t, trace) -> None:
    enc = trace.input
    st.header(t("decoder.h_tokens"))
    st.markdown(t("decoder.explain_tokens", n=trace.n, limit=smollm2.MAX_TOKENS))
    kit.show_tokens(trace.labels)
    if enc.truncated:
        st.warning(
            t("decoder.warn_truncated", total=enc.total_tokens, kept=enc.n, limit=smollm2.MAX_TOKENS,
              cut=enc.chars_cut)
        )  # fmt: skip
    if enc.removed_chars:
        st.info(t("decoder.info_removed", removed=enc.removed_chars))


def section_overview(t, settings: DecoderSettings) -> None:

    st.header(t("decoder.h_overview"))
    st.markdown(t("decoder.explain_overview"))
    stats = list(decoder_view.HEAD_STATS)
    PAGE.widget(t, "selectbox", "stat", stats, format_func=lambda s: t(f"decoder.stat_{s}"), helped=True)
    stat = st.session_state["dc_stat"] if st.session_state["dc_stat"] in stats else "first"
    grid = cached.head_grid(settings.text, stat)
    fig = fdc.head_grid(
        grid, (settings.layer, settings.head), value_title=t(f"decoder.stat_{stat}"),
        layer_title=t("decoder.axis_layer"), head_title=t("decoder.axis_head"), kv_title=t("decoder.axis_kv"),
        kv_head_of=CONFIG.kv_head_of.tolist(),
    )  # fmt: skip
    PAGE.chart(
        fig, "grid", t("decoder.alt_grid", stat=t(f"decoder.stat_{stat}")),
        on_select=on_grid_pick, selection_mode="points",
    )  # fmt: skip
    st.caption(t(f"decoder.about_{stat}"))


def section_weights(t, trace, settings: DecoderSettings, hover) -> None:
    layer = trace.layers[settings.layer]
    kv = int(layer.kv_head_of[settings.head])
    group = [h for h in range(CONFIG.n_heads) if int(layer.kv_head_of[h]) == kv]
    st.header(t("decoder.h_weights", layer=settings.layer, head=settings.head))
    st.markdown(t("decoder.explain_causal"))
    st.subheader(t("decoder.h_gqa"))
    st.markdown(t("decoder.explain_gqa", h=CONFIG.n_heads, g=CONFIG.n_kv_heads, group=GROUP))
    fig = fdc.gqa_diagram(
        CONFIG.n_heads, CONFIG.n_kv_heads, settings.head,
        query_name=t("decoder.query_head_name"), kv_name=t("decoder.kv_head_name"),
    )  # fmt: skip
    PAGE.chart(fig, "gqa", t("decoder.alt_gqa", head=settings.head, kv=kv))
    heads_text = ", ".join(str(h) for h in group)
    st.markdown(t("decoder.group_summary", kv=kv, heads=heads_text, head=settings.head))
    axes = dict(hover=hover, query_title=t("decoder.axis_query"), key_title=t("decoder.axis_key"))
    figs = fdc.group_weight_maps(layer.weights, group, trace.labels, layer.mask, title="", **axes)
    for column, h, fig in zip(st.columns(len(group)), group, figs, strict=True):
        with column:
            if h == settings.head:
                st.markdown(t("decoder.selected_mark", h=h))
            else:
                st.markdown(t("decoder.shares_mark", h=h, kv=kv))
            PAGE.chart(fig, f"weights_{group.index(h)}", t("decoder.alt_weights", h=h, n=trace.n))
    mem = decoder_view.kv_memory(CONFIG, trace.n)
    st.markdown(
        t("decoder.gqa_memory", n=trace.n, gqa=f"{mem.gqa_bytes:,}", mha=f"{mem.mha_bytes:,}", ratio=f"{mem.ratio:g}",
          layers=CONFIG.n_layers, g=CONFIG.n_kv_heads, h=CONFIG.n_heads, d=CONFIG.head_dim)
    )  # fmt: skip


def section_rope(t, trace, settings: DecoderSettings, hover) -> None:
    layer = trace.layers[settings.layer]
    head, n = settings.head, trace.n
    kv = int(layer.kv_head_of[head])
    st.header(t("decoder.h_rope"))
    st.markdown(t("decoder.explain_rope", base=f"{CONFIG.rope_base:g}", pairs=CONFIG.head_dim // 2))
    st.latex(
        r"\begin{pmatrix} a' \\ b' \end{pmatrix} = \begin{pmatrix} \cos p\theta_i & -\sin p\theta_i \\"
        r" \sin p\theta_i & \cos p\theta_i \end{pmatrix} \begin{pmatrix} a \\ b \end{pmatrix},"
        r"\qquad \theta_i = 100000^{-2i/64}"
    )
    axes = dict(hover=hover, token_title=t("decoder.axis_token"), dim_title=t("decoder.axis_dim"))
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(t("decoder.q_before", h=head))
        PAGE.chart(heatmaps.feature_heatmap(layer.Q_pre[head], trace.labels, **axes), "q_pre",
                   t("decoder.alt_q", h=head, n=n))  # fmt: skip
    with c2:
        st.markdown(t("decoder.q_after", h=head))
        PAGE.chart(heatmaps.feature_heatmap(layer.Q[head], trace.labels, **axes), "q_post",
                   t("decoder.alt_q", h=head, n=n))  # fmt: skip
    change = decoder_view.max_pair_norm_change(layer.Q_pre[head], layer.Q[head])
    st.markdown(t("decoder.rope_norms", change=f"{change:.1e}"))

    st.subheader(t("decoder.h_offset"))
    # re-sent on every run: the options' labels change with the sentence, the browser would keep the old one
    st.session_state["dc_key"] = (
        st.session_state.get("dc_key") if st.session_state.get("dc_key") in range(n) else 0
    )
    keys = list(range(n))
    PAGE.widget(t, "selectbox", "key", keys, format_func=lambda j: f"#{j} {trace.labels[j]}", helped=True)
    j, i = int(st.session_state["dc_key"]), n - 1
    offsets = list(range(max(ROPE_OFFSETS, n)))
    curve = decoder_view.rope_offset_curve(
        layer.Q_pre[head, i], layer.K_pre[kv, j], offsets, ROPE_STARTS, CONFIG.rope_base, CONFIG.rope_layout
    )
    actual = (i - j, float(layer.scores_raw[head, i, j]))
    fig = fdc.rope_offset_figure(
        curve.offsets, curve.starts, curve.scores, actual=actual,
        x_title=t("decoder.axis_offset"), y_title=t("decoder.axis_score"),
        start_name=t("decoder.start_name"), actual_name=t("decoder.actual_name"),
    )  # fmt: skip
    PAGE.chart(fig, "rope", t("decoder.alt_rope", h=head, j=j))
    st.markdown(
        t("decoder.rope_offset_summary", i=i, j=j, offset=i - j, score=f"{actual[1]:.4f}",
          starts=", ".join(str(s) for s in ROPE_STARTS), spread=f"{curve.spread:.1e}", plain=f"{curve.unrotated:.4f}")
    )  # fmt: skip


def section_limits(t) -> None:
    st.header(t("decoder.h_limits"))
    st.markdown(t("decoder.limits"))


def not_installed(t) -> None:
    st.info(t("decoder.not_installed"))
    st.code(smollm2.INSTALL_COMMAND, language="bash")


@PAGE.slides
def main() -> None:
    t = PAGE.start()
    ignored = url.read_url(st.session_state, PAGE.shared)
    controls(t)
    PAGE.title(t)
    if ignored:
        st.info(t("decoder.info_url_ignored", names=", ".join(ignored)))
    if not smollm2.is_available():
        not_installed(t)
        return

    with st.spinner(t("decoder.loading")):
        with PAGE.guard(t, "decoder model load") as loading:
            cached.model()
    if loading.failed:
        not_installed(t)
        return
    settings = read_settings(t)
    if settings is None:
        url.write_url(st.session_state)
        return
    with PAGE.guard(t, "decoder page", known=((smollm2.DecoderInputError, "decoder.err_text"),)):
        trace = cached.trace(settings.text)
        hover = PAGE.hover(t)
        ids = generation_view.generated_ids(settings.text)
        steps = cached.chain(settings.text, ids)
        PAGE.section(section_tokens, t, trace)
        PAGE.section(section_overview, t, settings)
        PAGE.section(section_weights, t, trace, settings, hover)
        PAGE.section(section_rope, t, trace, settings, hover)
        PAGE.section(generation_view.section_next, t, trace, steps, ids, settings)
        PAGE.section(generation_view.section_generate, t, trace, steps, ids, settings)
        PAGE.section(section_limits, t)
    url.write_url(st.session_state)


main()
