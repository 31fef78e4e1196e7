"""Block lab: the residual connections, normalisation (Pre-LN / Post-LN, LayerNorm / RMSNorm) and FFN
around attention on the learner's sentence; the stream's size with depth; where attention sits in
encoder, decoder and encoder–decoder models; FLOPs of projections and FFN beside the n² term.

Widgets (``block_`` keys, declared in ``attention_ui.block.settings``) -> ``attention_core.labs.block`` -> ``attention_ui.block.figures`` -> the page
kit. All text comes from the ``block`` catalog.
"""

from __future__ import annotations

import streamlit as st

from attention_core import AttentionConfigError
from attention_core.labs import block as lab_block
from attention_core.labs.multihead import valid_head_counts
from attention_ui import kit
from attention_ui.block import figures as figures_block
from attention_ui.block.settings import (
    D_MODELS,
    DEPTHS,
    FF_MULT_RANGE,
    FLOPS_D_RANGE,
    FLOPS_H_RANGE,
    MAX_HEADS,
    PAGE,
    TABLE,
)
from attention_ui.figures.base import AxisText

CHART_NS = tuple(2**k for k in range(5, 21))  # 32 … 1,048,576
ROUNDING_LIMIT = 1e-10  # a residual gap above this is not rounding: the page reports an error
ARCHITECTURES = ("encoder", "decoder", "encdec")
key = TABLE.key

cached_block = kit.cached(lab_block.block_lab)
cached_depth = kit.cached(lab_block.depth_run)
cached_flops = kit.cached(lab_block.flops_sweep)


def controls(t) -> None:
    PAGE.widget(t, "text_area", "text", height=70, helped=True)
    PAGE.widget(t, "select_slider", "d_model", D_MODELS, label="d_model")
    heads = [h for h in valid_head_counts(int(PAGE.value("d_model"))) if h <= MAX_HEADS]
    if PAGE.value("heads") not in heads:
        st.session_state[key("heads")] = heads[-1] if st.session_state.get(key("heads"), 1) > heads[-1] else 1
    PAGE.widget(t, "select_slider", "heads", heads)
    names = {k: t(f"block.ffn_{k}") for k in lab_block.FFNS}
    PAGE.widget(t, "selectbox", "ffn", lab_block.FFNS, format_func=names.get, helped=True)
    PAGE.seed_input(t)
    for name, options in (
        ("placement", lab_block.PLACEMENTS),
        ("norm", lab_block.NORMS),
        ("mask", lab_block.MASKS),
    ):
        labels = {k: t(f"block.{name}_{k}") for k in options}
        PAGE.widget(t, "radio", name, options, format_func=labels.get, horizontal=True, helped=True)
    PAGE.tables_toggle(t)


def read_config(t) -> lab_block.BlockConfig | None:
    v = PAGE.value
    try:
        return lab_block.BlockConfig(
            d_model=int(v("d_model")),
            heads=int(v("heads")),
            norm=v("norm"),
            placement=v("placement"),
            ffn=v("ffn"),
            mask=v("mask"),
            seed=int(v("seed")),
        )
    except (AttentionConfigError, TypeError, ValueError):
        st.error(t("block.err_config"))
        return None


def section_block(t, trace) -> None:
    cfg = trace.config
    st.header(t("block.sec_block"), anchor="block")
    st.markdown(t("block.explain_block"))
    n_name = t(f"block.norm_{cfg.norm}")
    if cfg.placement == "pre":
        st.latex(r"h = x + \mathrm{Attn}(N_1(x)),\qquad y = h + \mathrm{FFN}(N_2(h))")
    else:
        st.latex(r"h = N_1(x + \mathrm{Attn}(x)),\qquad y = N_2(h + \mathrm{FFN}(h))")
    st.caption(t("block.formula_note", norm=n_name))
    stats = lab_block.stage_stats(trace)
    stage_names = [t(f"block.stage_{row.name}") for row in stats]
    table = {
        t("block.col_stage"): stage_names,
        t("block.col_shape"): [f"{row.shape[0]} × {row.shape[1]}" for row in stats],
        t("block.col_rms"): [f"{row.mean_rms:.3f}" for row in stats],
        t("block.col_row_mean"): [f"{row.max_abs_row_mean:.2e}" for row in stats],
    }
    PAGE.table(table, "stages", always=True, hide_index=True)
    fig = figures_block.stage_figure(
        stage_names,
        [row.mean_rms for row in stats],
        [row.in_stream for row in stats],
        stream_name=t("block.series_stream"),
        sublayer_name=t("block.series_sublayer"),
        axes=AxisText(
            t("block.axis_mean_rms"), t("block.axis_stage")
        ),  # short: the names leave a narrow plot
    )
    PAGE.chart(fig, "stages", t("block.alt_stages", count=len(stats)))
    st.markdown(t("block.shapes_note", n=stats[0].shape[0], d=cfg.d_model, d_ff=cfg.d_ff, h=cfg.heads))
    gap_value = lab_block.residual_gap(trace)
    gap = f"{gap_value:.2e}"
    if gap_value <= ROUNDING_LIMIT:
        st.success(t(f"block.residual_{cfg.placement}", diff=gap))
    else:  # the page must not call a failed check a success
        st.error(t("block.residual_broken", diff=gap))
    st.markdown(t(f"block.ffn_about_{cfg.ffn}"))


def section_norms(t, trace) -> None:
    kit.opening(
        t("block.sec_norms"),
        t("block.explain_norms"),
        (
            r"\mathrm{LayerNorm}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta,",
            r"\mathrm{RMSNorm}(x) = \gamma \odot \frac{x}{\sqrt{\tfrac{1}{d}\sum_i x_i^2 + \varepsilon}}",
        ),
        anchor="norms",
    )
    c = lab_block.norm_comparison(trace.x)
    tokens = list(trace.tokens)
    table = {
        t("block.col_token"): tokens,
        t("block.col_ln_mean"): [f"{v:.2e}" for v in c.layer_mean],
        t("block.col_ln_rms"): [f"{v:.4f}" for v in c.layer_rms],
        t("block.col_rms_mean"): [f"{v:.3f}" for v in c.rms_mean],
        t("block.col_rms_rms"): [f"{v:.4f}" for v in c.rms_rms],
    }
    PAGE.table(table, "norms", always=True, hide_index=True)
    st.markdown(t("block.norms_lesson"))


def section_depth(t, text: str, cfg) -> None:
    st.header(t("block.sec_depth"), anchor="depth")
    st.markdown(t("block.explain_depth"))
    PAGE.widget(t, "slider", "depth", *DEPTHS, helped=True)
    depth = int(PAGE.value("depth"))
    with PAGE.guard(t, "depth run") as run:
        result = cached_depth(text, cfg, depth)
    if run.failed:
        return
    series = {
        t("block.placement_pre"): list(result.pre_rms),
        t("block.placement_post"): list(result.post_rms),
    }
    fig = figures_block.depth_figure(series, axes=AxisText(t("block.axis_layer"), t("block.axis_rms")))
    PAGE.chart(fig, "depth", t("block.alt_depth", depth=depth))
    PAGE.table({t("block.axis_layer"): list(range(depth + 1)), **series}, "depth", hide_index=True)
    values = dict(depth=depth, pre=f"{result.pre_rms[-1]:.2f}", post=f"{result.post_rms[-1]:.2f}")
    st.markdown(t("block.depth_lesson", start=f"{result.pre_rms[0]:.2f}", **values))


def section_architectures(t) -> None:
    st.header(t("block.sec_where"), anchor="where")
    st.markdown(t("block.explain_where"))
    table = {
        t("block.col_architecture"): [t(f"block.arch_{a}") for a in ARCHITECTURES],
        t("block.col_attention"): [t(f"block.arch_{a}_attention") for a in ARCHITECTURES],
        t("block.col_examples"): [t(f"block.arch_{a}_examples") for a in ARCHITECTURES],
    }
    PAGE.table(table, "where", always=True, hide_index=True)
    st.markdown(t("block.cross_note"))


def section_flops(t) -> None:
    st.header(t("block.sec_flops"), anchor="flops")
    st.markdown(t("block.explain_flops"))
    c1, c2, c3 = st.columns(3)
    PAGE.widget(t, "number_input", "flops_d", *FLOPS_D_RANGE, step=64, label="d_model", where=c1)
    PAGE.widget(t, "number_input", "flops_h", *FLOPS_H_RANGE, step=1, label="h", where=c2)
    PAGE.widget(t, "number_input", "ff_mult", *FF_MULT_RANGE, step=1, helped=True, where=c3)
    d = PAGE.whole(t, key("flops_d"), "d_model", FLOPS_D_RANGE)
    h = PAGE.whole(t, key("flops_h"), "h", FLOPS_H_RANGE)
    mult = PAGE.whole(t, key("ff_mult"), t("block.ff_mult"), FF_MULT_RANGE)
    if d is None or h is None or mult is None:
        return
    if d % h:
        st.error(t("block.err_heads", d=d, h=h))
        return
    kind = PAGE.value("ffn") if PAGE.value("ffn") in lab_block.FFNS else "gelu"
    rows = cached_flops(CHART_NS, d, h, mult * d, kind)
    series = {
        t("block.flops_projections"): [r.projections for r in rows],
        t("block.flops_ffn"): [r.ffn for r in rows],
        t("block.flops_linear"): [r.linear_in_n for r in rows],
        t("block.flops_n2"): [r.attention_n2 for r in rows],
    }
    cross = lab_block.crossover_n(d, h, mult * d, kind)
    label = t("block.crossover_label", n=f"{cross:,.0f}")
    axes = AxisText(t("block.axis_n"), t("block.axis_flops"))
    fig = figures_block.flops_figure(CHART_NS, series, cross, label, axes=axes)
    PAGE.chart(fig, "flops", t("block.alt_flops", d=d, h=h, d_ff=mult * d))
    PAGE.table({"n": list(CHART_NS), **series}, "flops", hide_index=True)
    st.latex(r"n^{*} = \frac{8d^2 + c\, d\, d_{ff}}{4d + 6h}")
    ffn_name = t(f"block.ffn_{kind}")
    limit = f"{lab_block.crossover_per_d_model(mult, kind):g}"
    st.markdown(
        t("block.crossover", n=f"{cross:,.0f}", d=d, h=h, d_ff=mult * d, ffn=ffn_name, mult=mult, limit=limit)
    )


@PAGE.slides
def main() -> None:
    t = PAGE.open(controls)
    cfg = read_config(t)
    text = PAGE.value("text") or ""
    if cfg is not None and not text.strip():
        st.error(t("block.err_empty"))
    elif cfg is not None:
        trace = None
        with PAGE.guard(t, "block", known=[(AttentionConfigError, "block.err_config")]) as run:
            trace = cached_block(text, cfg)
        if not run.failed and trace is not None:
            PAGE.warn_truncated(t, trace.tokenization)
            PAGE.section(section_block, t, trace)
            PAGE.section(section_norms, t, trace)
            PAGE.section(section_depth, t, text, cfg)
    PAGE.section(section_architectures, t)
    PAGE.section(section_flops, t)


main()
