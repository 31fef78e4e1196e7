"""Inference lab: decoding token by token with a KV cache equals the full causal pass (measured on the
learner's sentence); FLOPs per step with and without the cache; the cache-size calculator with
public model shapes and a slider from MHA through GQA to MQA; the grouped heads' weights; why the
causal mask is what makes caching valid.

Widgets (``inference_`` keys, declared in ``attention_ui.inference.settings``) -> a frozen ``InferenceSettings`` -> one cached ``inference_lab`` call (plus
the cheap counts ``flops_curve`` and ``cache_size``) -> builders in ``attention_ui.inference.figures``
-> the page kit. The calculator's section lives in ``attention_ui.inference.size_view``. All text comes
from the ``inference`` catalog.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import inference as lab_inference
from attention_core.labs.inference import D_MODEL_RANGE, HEADS_RANGE, InferenceSettings, kv_choices
from attention_ui import kit
from attention_ui.figures.base import AxisText
from attention_ui.inference import figures as figures_inference
from attention_ui.inference import size_view as inference_size
from attention_ui.inference.settings import PAGE, TABLE
from attention_ui.inference.size_view import fit_choice

ROUNDING_LIMIT = 1e-10  # a difference below this is floating-point rounding (float64, values ~1)
FLOPS_NS = tuple(2**k for k in range(0, 17))  # context lengths of the FLOPs chart: 1 … 65,536
FLOPS_N_BIG = 4096  # the n the text quotes
key = TABLE.key

cached_lab = kit.cached(lab_inference.inference_lab)
cached_flops = kit.cached(lab_inference.flops_curve)


def controls(t) -> None:
    PAGE.widget(t, "text_area", "text", height=80, helped=True)
    PAGE.widget(t, "number_input", "d_model", *D_MODEL_RANGE, step=1, label="d_model", helped=True)
    d_model = int(PAGE.value("d_model"))
    heads = tuple(h for h in range(HEADS_RANGE[0], HEADS_RANGE[1] + 1) if d_model % h == 0)
    fit_choice(key("heads"), heads)
    if len(heads) > 1:
        PAGE.widget(t, "select_slider", "heads", heads, helped=True)
    kvs = kv_choices(int(PAGE.value("heads")))
    fit_choice(key("kv_heads"), kvs)
    if len(kvs) > 1:
        PAGE.widget(t, "select_slider", "kv_heads", kvs, helped=True)
    PAGE.seed_input(t)
    PAGE.tables_toggle(t)


def load_lab(t):
    """The cached lab for the sentence, or None after saying why there is none."""
    names = ("d_model", "heads", "kv_heads", "seed")

    def compute(text: str):
        return cached_lab(InferenceSettings(text, **{name: int(PAGE.value(name)) for name in names}))

    return PAGE.sentence_lab(t, key("text"), "inference lab", compute)


def section_cache(t, lab) -> None:
    cfg, n = lab.settings, len(lab.tokens)
    st.header(t("inference.sec_cache"), anchor="cache")
    st.markdown(t("inference.explain_cache", n=n, h=cfg.heads, g=cfg.kv_heads, d_k=lab.d_k))
    diff = f"{lab.cache_gap:.3g}"
    st.metric(t("inference.cache_gap"), diff)
    if lab.cache_gap < ROUNDING_LIMIT:
        st.success(t("inference.cache_equal", n=n, h=cfg.heads, diff=diff))
    else:
        st.error(t("inference.cache_differs", diff=diff))
    steps = {
        t("inference.col_step"): list(range(n)),
        t("inference.col_token"): list(lab.tokens),
        t("inference.col_cache_len"): list(lab.cache_lengths),
        t("inference.col_new_row"): [1] * n,
    }
    PAGE.table(steps, "steps", hide_index=True)


def section_flops(t, lab) -> None:
    cfg = lab.settings
    kit.opening(
        t("inference.sec_flops"),
        t("inference.explain_flops", d_model=cfg.d_model, h=cfg.heads, g=cfg.kv_heads),
        r"\underbrace{2 d (h + 2g) d_k + 4 h\, n\, d_k}_{\text{"
        + t("inference.series_cached")
        + r"}} \qquad \underbrace{n \cdot 2 d (h + 2g) d_k + 4 h\, n^2 d_k}_{\text{"
        + t("inference.series_recompute")
        + "}}",
        anchor="flops",
    )
    curve = cached_flops(FLOPS_NS, cfg.d_model, cfg.heads, cfg.kv_heads)
    big = curve.ns.index(FLOPS_N_BIG)
    cached, recompute = curve.cached[big], curve.recompute[big]
    st.markdown(
        t(
            "inference.flops_note",
            n_big=f"{FLOPS_N_BIG:,}",
            cached=f"{cached:,}",
            recompute=f"{recompute:,}",
            ratio=f"{recompute / cached:,.0f}",
            knee=f"{lab_inference.flops_knee(cfg.d_model, cfg.heads, cfg.kv_heads):,.3g}",
        )
    )
    series = {t("inference.series_cached"): curve.cached, t("inference.series_recompute"): curve.recompute}
    fig = figures_inference.flops_figure(
        curve.ns, series, axes=AxisText(t("inference.axis_n"), t("inference.axis_flops"))
    )
    knee = f"{lab_inference.flops_knee(cfg.d_model, cfg.heads, cfg.kv_heads):,.3g}"
    PAGE.chart(fig, "flops", t("inference.alt_flops", n_max=f"{curve.ns[-1]:,}", knee=knee))
    PAGE.table(series, "flops", index=list(curve.ns), index_name="n", localized=list(series))


def section_groups(t, lab, hover) -> None:
    cfg = lab.settings
    st.header(t("inference.sec_groups"), anchor="groups")
    lines = " ".join(
        t("inference.group_line", kv=k, heads=", ".join(str(j) for j in heads))
        for k, heads in enumerate(lab.groups)
    )
    st.markdown(t("inference.explain_groups", h=cfg.heads, g=cfg.kv_heads, groups=lines))
    fig = figures_inference.grouped_heads_figure(
        lab.weights, lab.tokens, lab.kv_head_of, title=t("inference.head_title", h="{h}", kv="{kv}"),
        allowed=lab.causal_allowed, hover=hover,
    )  # fmt: skip
    PAGE.chart(fig, "groups", t("inference.alt_groups", h=cfg.heads, g=cfg.kv_heads))


def section_causal(t, lab) -> None:
    st.header(t("inference.sec_causal"), anchor="causal")
    st.markdown(t("inference.explain_causal"))
    if len(lab.tokens) < 2:
        st.info(t("inference.causal_one_token"))
        return
    causal, bidi = f"{lab.max_change_causal:.3g}", f"{lab.max_change_bidirectional:.3g}"
    c1, c2 = st.columns(2)
    c1.metric(t("inference.change_causal"), causal)
    c2.metric(t("inference.change_bidirectional"), bidi)
    st.markdown(t("inference.causal_note", causal=causal, bidi=bidi))
    changes = {
        t("inference.series_causal"): lab.change_causal,
        t("inference.series_bidirectional"): lab.change_bidirectional,
    }
    fig = figures_inference.prefix_change_figure(
        lab.tokens[:-1], changes, axes=AxisText(t("inference.axis_earlier"), t("inference.axis_change"))
    )
    PAGE.chart(fig, "causal", t("inference.alt_causal", n=len(lab.tokens) - 1, causal=causal, bidi=bidi))
    PAGE.table(changes, "causal", index=list(lab.tokens[:-1]))


@PAGE.slides
def main() -> None:
    t = PAGE.open(controls)
    lab = load_lab(t)
    if lab is not None:
        PAGE.section(section_cache, t, lab)
        PAGE.section(section_flops, t, lab)
    PAGE.section(inference_size.section_size, t, PAGE)
    if lab is not None:
        PAGE.section(section_groups, t, lab, PAGE.hover(t))
        PAGE.section(section_causal, t, lab)


main()
