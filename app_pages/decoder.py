"""A real decoder: SmolLM2-135M or Gemma 3 270M (the ``model`` setting) on the learner's sentence (causal attention, GQA, RoPE, the next-token
distribution and generation with the KV cache).

Widgets (``decoder_`` keys, declared in ``attention_ui.decoder.settings``) -> the sentence and choices -> cached core calls (``attention_ui.decoder.cached``:
one trace per sentence, one decode step per generated token) -> builders in
``attention_ui.figures.decoder`` -> charts and text from the ``decoder`` catalog. Without the model
package the page says how to install it and draws nothing else.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from attention_core.labs import decoder as lab_decoder
from attention_core.models import gemma3, smollm2
from attention_ui import kit
from attention_ui.decoder import cached, gemma_view, generation_view, models, sections, url
from attention_ui.decoder.settings import DEFAULT_MODEL, PAGE, DecoderSettings, model_text
from attention_ui.figures import decoder as fdc


def chosen_model() -> str:
    """The chosen model's name; anything else in the session becomes the default (SmolLM2)."""
    if PAGE.value("model") not in models.MODELS:
        st.session_state[PAGE.key("model")] = models.MODELS[0]
    return PAGE.value("model")


def clamp_choices(name: str) -> None:
    """Layer and head within the chosen model's (a URL or the other model may hold larger ones)."""
    config, s = models.config(name), st.session_state
    for key, n in ((PAGE.key("layer"), config.n_layers), (PAGE.key("head"), config.n_heads)):
        if not (isinstance(s.get(key), int) and 0 <= s[key] < n):
            s[key] = 0


def controls(t, name: str) -> None:
    config = models.config(name)
    with st.sidebar:
        st.header(t("decoder.settings"))
        fmt_model = lambda m: t(f"decoder.model_{m}")  # noqa: E731
        PAGE.widget(t, "radio", "model", list(models.MODELS), format_func=fmt_model, helped=True)
        if name == "gemma3":
            st.caption(t("decoder.gemma_licence", terms_url=gemma3.TERMS_URL))
        PAGE.widget(t, "text_area", "text", height=90, helped=True, on_change=gemma_view.on_back)
        if not PAGE.sentence_origin(t, PAGE.key("text")):
            st.caption(t("decoder.own_example"))
        layers = list(range(config.n_layers))
        fmt_layer = partial(_layer_option, t, config)
        PAGE.widget(t, "selectbox", "layer", layers, format_func=fmt_layer)
        heads = list(range(config.n_heads))
        fmt = partial(_head_option, t, config.n_heads // config.n_kv_heads)
        PAGE.widget(t, "selectbox", "head", heads, format_func=fmt, helped=True)
        PAGE.seed_input(t)


def _layer_option(t, config, layer: int) -> str:
    if not models.has_window(config):
        return t("decoder.layer_option", layer=layer)
    kind = config.layer_kind(layer)
    return t(f"decoder.layer_option_{kind}", layer=layer)


def _head_option(t, group: int, h: int) -> str:
    return t("decoder.head_option", h=h, g=h // group)


def read_settings(t) -> DecoderSettings | None:
    v = PAGE.value
    text = gemma_view.long_preset(t.lang) if gemma_view.long_on(chosen_model()) else v("text") or ""
    if not text.strip():
        st.error(t("decoder.err_empty"))
        return None
    seed = PAGE.whole(t, PAGE.key("seed"), t("decoder.seed"), kit.SEED_RANGE)
    if seed is None:
        return None
    top_k = st.session_state.get(PAGE.key("top_k"), 0)
    top_k = top_k if isinstance(top_k, int) and url.TOP_K_RANGE[0] <= top_k <= url.TOP_K_RANGE[1] else 0
    temperature = float(st.session_state.get(PAGE.key("temperature"), 1.0))
    return DecoderSettings(
        text, int(v("layer")), int(v("head")), temperature, top_k, seed, chosen_model(),
        no_special=v("no_special") is True,
    )  # fmt: skip


# --- generation state -------------------------------------------------------------------------------


def on_grid_pick() -> None:
    """A click on the overview grid selects that layer and head."""
    event = PAGE.value("chart", "grid")
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return
    if points:
        config = models.config(chosen_model())
        picked = fdc.picked_head(points[0], config.n_layers, config.n_heads)
        if picked is not None:
            st.session_state[PAGE.key("layer")], st.session_state[PAGE.key("head")] = picked


# --- sections ---------------------------------------------------------------------------------------


def section_tokens(t, trace, name: str) -> None:
    enc, limit = trace.input, models.max_tokens(name)
    st.header(t("decoder.h_tokens"), anchor="tokens")
    st.markdown(
        t(
            "decoder.g_explain_tokens" if name == "gemma3" else "decoder.explain_tokens",
            n=trace.n,
            limit=f"{limit:,}",
        )
    )
    kit.show_tokens(trace.labels)
    if enc.truncated:
        st.warning(
            t("decoder.warn_truncated", total=f"{enc.total_tokens:,}", kept=f"{enc.n:,}", limit=f"{limit:,}",
              cut=f"{enc.chars_cut:,}")
        )  # fmt: skip
    if enc.removed_chars:
        st.info(t("decoder.info_removed", removed=enc.removed_chars))


def section_overview(t, settings: DecoderSettings) -> None:

    st.header(model_text(t, settings.model, "h_overview"), anchor="overview")
    st.markdown(model_text(t, settings.model, "explain_overview"))
    stats = list(lab_decoder.HEAD_STATS)
    PAGE.widget(t, "selectbox", "stat", stats, format_func=lambda s: t(f"decoder.stat_{s}"), helped=True)
    stat = PAGE.value("stat") if PAGE.value("stat") in stats else "first"
    config = models.config(settings.model)
    grid = cached.head_grid(settings.text, stat, settings.model)
    fig = fdc.head_grid(
        grid, (settings.layer, settings.head), value_title=t(f"decoder.stat_{stat}"),
        layer_title=t("decoder.axis_layer"), head_title=t("decoder.axis_head"), kv_title=t("decoder.axis_kv"),
        kv_head_of=config.kv_head_of.tolist(),
    )  # fmt: skip
    if models.has_window(config):
        globals_ = [lay for lay in range(config.n_layers) if config.window_of(lay) is None]
        fig = fdc.mark_layers(fig, globals_, t("decoder.global_mark"))
        st.markdown(t("decoder.g_overview_globals", layers=", ".join(map(str, globals_)), n=config.n_layers))
    PAGE.chart(
        fig, "grid",
        t("decoder.alt_grid", stat=t(f"decoder.stat_{stat}"), layers=config.n_layers, heads=config.n_heads),
        on_select=on_grid_pick, selection_mode="points",
    )  # fmt: skip
    st.caption(t(f"decoder.about_{stat}"))


@PAGE.slides
def main() -> None:
    t = PAGE.start()
    st.session_state.setdefault(PAGE.key("model"), DEFAULT_MODEL.get(t.lang, models.MODELS[0]))
    ignored = url.read_url(st.session_state, PAGE.shared)
    name = chosen_model()
    clamp_choices(name)
    controls(t, name)
    PAGE.title(t)
    if not PAGE.presenting:  # the page's intro says nothing of either model; this is the one shown
        st.markdown(t("decoder.g_intro" if name == "gemma3" else "decoder.intro_smollm2"))
    if ignored:
        st.info(t("decoder.info_url_ignored", names=", ".join(ignored)))
    core = models.module(name)
    if not core.is_available():
        sections.not_installed(t, name)
        url.write_url(st.session_state)
        return

    with st.spinner(t("decoder.loading")):
        with PAGE.guard(t, "decoder model load") as loading:
            cached.model(name)
    if loading.failed:
        sections.not_installed(t, name)
        return
    settings = read_settings(t)
    if settings is None:
        url.write_url(st.session_state)
        return
    if gemma_view.long_on(name):
        gemma_view.long_notice(t, t.lang)
    with PAGE.guard(t, "decoder page", known=((smollm2.DecoderInputError, "decoder.err_text"),)):
        core.check_text(settings.text)
        running = t("decoder.g_long_running") if gemma_view.long_on(name) else t("decoder.running")
        with st.spinner(running, show_time=True):
            trace = cached.trace(settings.text, name)
        hover = PAGE.hover(t)
        ids = generation_view.generated_ids(settings.text)
        steps = cached.chain(settings.text, ids, name)
        PAGE.section(section_tokens, t, trace, name)
        PAGE.section(section_overview, t, settings)
        PAGE.section(sections.section_weights, t, trace, settings, hover)
        PAGE.section(sections.section_rope, t, trace, settings, hover)
        PAGE.section(generation_view.section_next, t, trace, steps, ids, settings)
        PAGE.section(generation_view.section_generate, t, trace, steps, ids, settings)
        if name == "gemma3":
            gemma_view.sections(t, trace, settings, hover)
        PAGE.section(gemma_view.section_compare, t, settings)
        PAGE.section(sections.section_limits, t, name)
    url.write_url(st.session_state)


main()
