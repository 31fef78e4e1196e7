"""The decoder page's last two sections: the next-token distribution (temperature, top-k, the token
the next step will draw) and generation token by token with the KV cache.

The generated ids live in the session (``GENERATED``, for the prompt in ``GENERATED_FOR``: attention_ui/decoder/settings.py);
each click appends one token chosen by :func:`attention_core.labs.decoder.choose_next` and the
page reads the decode steps from :func:`attention_ui.decoder.cached.chain`.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import decoder as lab_decoder
from attention_core.models import decoding
from attention_ui import kit
from attention_ui.decoder import cached, models, sequence_text, token_words, url
from attention_ui.decoder.settings import (
    GENERATED,
    GENERATED_FOR,
    N_CANDIDATES,
    PAGE,
    DecoderSettings,
    model_text,
)
from attention_ui.figures import decoder as fdc
from attention_ui.figures.base import AxisText


def generated_ids(text: str) -> tuple[int, ...]:
    """The tokens generated after this prompt (forgotten when the prompt changes)."""
    if st.session_state.get(GENERATED_FOR) != text:
        st.session_state[GENERATED_FOR] = text
        st.session_state[GENERATED] = []
    return tuple(st.session_state.get(GENERATED, []))


def next_logits(trace, steps, settings: DecoderSettings):
    """The logits the next token is drawn from: after the last generated token (or the prompt), with
    the special tokens at −∞ when the learner leaves them out (the softmax then renormalises)."""
    logits = steps[-1].logits if steps else trace.logits
    if settings.no_special:
        return decoding.without_special(logits, cached.model(settings.model))
    return logits


def on_next(settings: DecoderSettings) -> None:
    """The "next token" button: append the token :func:`lab_decoder.choose_next` picks."""
    ids = generated_ids(settings.text)
    trace = cached.trace(settings.text, settings.model)
    if trace.n + len(ids) >= models.max_tokens(settings.model):
        return
    steps = cached.chain(settings.text, ids, settings.model)
    logits = next_logits(trace, steps, settings)
    token = lab_decoder.choose_next(logits, settings.temperature, settings.top_k, settings.seed, len(ids))
    st.session_state[GENERATED] = [*ids, token]


def on_reset(text: str) -> None:
    st.session_state[GENERATED] = []
    st.session_state[GENERATED_FOR] = text


def section_next(t, trace, steps, ids: tuple[int, ...], settings: DecoderSettings) -> None:
    core, config = models.module(settings.model), models.config(settings.model)
    model = cached.model(settings.model)
    kit.opening(
        t("decoder.h_next"),
        t("decoder.explain_next", vocab=f"{config.vocab_size:,}"),
        r"p_i = \frac{\exp(z_i / T)}{\sum_{j \in \mathcal{K}} \exp(z_j / T)}\quad (i \in \mathcal{K}),\qquad p_i = 0\ (i \notin \mathcal{K})",
        anchor="next-token",
    )
    c1, c2 = st.columns(2)
    PAGE.widget(t, "slider", "temperature", *url.TEMPERATURE_RANGE, step=0.05, helped=True, where=c1)
    PAGE.widget(t, "number_input", "top_k", *url.TOP_K_RANGE, step=1, helped=True, where=c2)
    PAGE.widget(t, "toggle", "no_special", helped=True)
    raw = steps[-1].logits if steps else trace.logits
    logits = next_logits(trace, steps, settings)
    context = (*trace.ids, *ids)
    cands = core.top_candidates(logits, N_CANDIDATES, context, settings.temperature, settings.top_k, model)
    upcoming = lab_decoder.choose_next(logits, settings.temperature, settings.top_k, settings.seed, len(ids))
    chosen = next((k for k, c in enumerate(cands) if c.id == upcoming), None)
    fig = fdc.next_token_bars(
        [token_words.short_label(t, c.reading, c.special) for c in cands], [c.p for c in cands], chosen=chosen,
        axes=AxisText(t("decoder.axis_probability"), t("decoder.axis_next")),
        hovers=[token_words.long_label(t, c.reading, c.special) for c in cands],
    )  # fmt: skip
    PAGE.chart(fig, "next", t("decoder.alt_next", n=len(cands)))
    if settings.no_special:
        gone = decoding.special_probability(raw, model, settings.temperature, settings.top_k)
        st.markdown(t("decoder.no_special_on", p=f"{gone:.3f}", rest=f"{1 - gone:.3f}"))
    elif any(c.special for c in cands):
        st.markdown(
            t(
                "decoder.about_special",
                names=", ".join(f"«{kit.escape_markdown(c.special)}»" for c in cands if c.special),
            )
        )
    if any(token_words.in_parts(c.reading) for c in cands):
        st.caption(model_text(t, settings.model, "about_bytes"))
    if settings.temperature == 0:
        st.markdown(t("decoder.about_greedy"))
    else:
        st.markdown(t("decoder.about_temperature", temp=f"{settings.temperature:g}"))
    if settings.top_k:
        st.markdown(t("decoder.about_top_k", k=settings.top_k))
    else:
        st.markdown(t("decoder.about_all_tokens", vocab=f"{config.vocab_size:,}"))
    reading = core.read_candidate(context, upcoming, model)
    special = model.vocab[upcoming] if reading is None else None
    label = token_words.short_label(t, reading, special)
    st.markdown(t("decoder.upcoming", token=kit.escape_markdown(label), seed=settings.seed, step=len(ids)))
    if token_words.in_parts(reading):
        st.markdown(
            t("decoder.upcoming_reading", reading=kit.escape_markdown(token_words.long_label(t, reading)))
        )


def section_generate(t, trace, steps, ids: tuple[int, ...], settings: DecoderSettings) -> None:
    core, config = models.module(settings.model), models.config(settings.model)
    model = cached.model(settings.model)
    limit = core.MAX_TOKENS
    st.header(t("decoder.h_generate"), anchor="generate")
    st.markdown(model_text(t, settings.model, "explain_generate"))
    total = trace.n + len(ids)
    full = trace.n >= limit or total >= limit
    c1, c2 = st.columns(2)
    c1.button(t("decoder.next_button"), key=PAGE.key("next"), on_click=on_next, args=(settings,), disabled=full,
              type="primary")  # fmt: skip
    c2.button(t("decoder.reset_button"), key=PAGE.key("reset"), on_click=on_reset, args=(settings.text,),
              disabled=not ids)  # fmt: skip
    if full:
        st.info(t("decoder.info_full", limit=f"{limit:,}"))
    if not ids:
        st.markdown(t("decoder.nothing_generated"))
        return
    labels, _ = core.labels_for_ids(list(trace.ids) + list(ids), model)
    kit.show_tokens(labels)
    text, unfinished = sequence_text(model, (*trace.ids, *ids))
    st.markdown(t("decoder.continuation"))
    st.text(text)
    if unfinished:
        st.caption(t("decoder.unfinished"))
    cache_now = steps[-1].cache_bytes
    per_token = lab_decoder.kv_memory(config, 1)
    gemma = settings.model == "gemma3"
    st.markdown(
        t("decoder.g_cache_now" if gemma else "decoder.cache_now", tokens=total, bytes=f"{cache_now:,}", kib=f"{cache_now / 1024:,.0f}",
          per_token=f"{per_token.gqa_bytes:,}", mha_per_token=f"{per_token.mha_bytes:,}")
    )  # fmt: skip
    sizes = [trace.n, *(trace.n + s + 1 for s in range(len(ids)))]
    stored = [core.start_state(trace).cache_bytes, *(s.cache_bytes for s in steps)]
    mha = [lab_decoder.kv_memory(config, n).mha_bytes for n in sizes]
    series = (
        ("decoder.g_series_gqa", "decoder.g_series_mha")
        if gemma
        else ("decoder.series_gqa", "decoder.series_mha")
    )
    fig = fdc.cache_growth_figure(
        sizes, stored, mha, gqa_name=t(series[0]), mha_name=t(series[1]),
        axes=AxisText(t("decoder.axis_tokens"), t("decoder.axis_bytes")),
    )  # fmt: skip
    PAGE.chart(fig, "cache", t("decoder.alt_cache", tokens=total, bytes=f"{cache_now:,}"))
    st.markdown(t("decoder.explain_rows", layer=settings.layer, head=settings.head))
    rows = [step.layers[settings.layer].weights[settings.head, 0] for step in steps]
    fig = fdc.generated_rows(
        rows, labels, trace.n, query_title=t("decoder.axis_new"), key_title=t("decoder.axis_cached"),
        value_title=t("decoder.hover_value"),
    )  # fmt: skip
    PAGE.chart(fig, "rows", t("decoder.alt_rows", steps=len(ids)))
