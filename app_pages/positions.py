"""Positions lab: attention without positions ignores word order (measured on the learner's sentence);
sinusoidal, learned-style and RoPE side by side; RoPE's turning pairs; extrapolation past the
longest seen position.

Widgets (``positions_`` keys) -> a frozen ``PositionsSettings`` -> one cached ``positions_lab`` call ->
builders in ``attention_ui.positions.figures`` -> the page kit. All text comes from the
``positions`` catalog.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import positions as lab_positions
from attention_core.labs.positions import D_MODEL_RANGE, OFFSET_RANGE, SCHEMES, SEEN_RANGE, PositionsSettings
from attention_ui import kit
from attention_ui.figures.base import AxisText
from attention_ui.positions import figures as figures_positions
from attention_ui.positions.settings import PAGE, TABLE

ROUNDING_LIMIT = 1e-10  # a difference below this is floating-point rounding (float64, values ~1)
key = TABLE.key

cached_lab = kit.cached(lab_positions.positions_lab)


def fmt(x: float) -> str:
    return f"{x:.3g}"


def controls(t) -> None:
    PAGE.widget(t, "text_area", "text", height=80, helped=True)
    if not PAGE.sentence_origin(t, key("text")):
        st.caption(t("positions.own_example"))
    PAGE.widget(t, "number_input", "d_model", *D_MODEL_RANGE, step=2, helped=True)
    PAGE.widget(t, "number_input", "seen", *SEEN_RANGE, step=1, helped=True)
    PAGE.seed_input(t)
    s = st.session_state
    # keep the dependent inputs inside their ranges after d_model or L changed
    s[key("pair")] = min(int(s[key("pair")]), int(s[key("d_model")]) // 2 - 1)
    s[key("offset")] = min(int(s[key("offset")]), int(s[key("seen")]) - 1, OFFSET_RANGE[1])
    max_offset = min(OFFSET_RANGE[1], int(s[key("seen")]) - 1)
    PAGE.widget(t, "number_input", "offset", OFFSET_RANGE[0], max_offset, step=1, helped=True)
    PAGE.widget(t, "number_input", "pair", 0, int(s[key("d_model")]) // 2 - 1, step=1, helped=True)
    PAGE.tables_toggle(t)


def load_lab(t):
    """The cached lab for the sentence, or None after saying why there is none."""
    s = st.session_state
    if int(s[key("d_model")]) % 2:  # (an empty sentence is said by sentence_lab)
        st.error(t("positions.err_range", name="d_model", lo=D_MODEL_RANGE[0], hi=D_MODEL_RANGE[1]))
        return None
    names = ("d_model", "seed", "seen", "offset", "pair")

    def compute(text: str):
        return cached_lab(PositionsSettings(text, **{name: int(s[key(name)]) for name in names}))

    return PAGE.sentence_lab(t, key("text"), "positions lab", compute)


def section_shuffle(t, lab) -> None:
    st.header(t("positions.sec_shuffle"), anchor="shuffle")
    st.markdown(t("positions.explain_shuffle"))
    n = len(lab.tokens)
    if n < 2:
        st.info(t("positions.gap_one_token"))
        return
    st.caption(t("positions.order_original"))
    st.text(kit.token_list_text(lab.tokens))
    st.caption(t("positions.order_shuffled"))
    st.text(" · ".join(f"{int(i)} {lab.tokens[int(i)]}" for i in lab.perm))
    off, on = fmt(lab.gap_plain), fmt(lab.gap_pos)
    c1, c2 = st.columns(2)
    c1.metric(t("positions.gap_off"), off)
    c2.metric(t("positions.gap_on"), on)
    if lab.gap_plain < ROUNDING_LIMIT:
        st.success(t("positions.gap_off_small", diff=off))
    else:
        st.error(t("positions.gap_off_large", diff=off))
    st.markdown(t("positions.gap_on_note", diff=on))
    gaps = {t("positions.series_off"): lab.rows_plain, t("positions.series_on"): lab.rows_pos}
    fig = figures_positions.row_gap_figure(
        lab.tokens, gaps, axes=AxisText(t("positions.axis_token"), t("positions.axis_gap"))
    )
    PAGE.chart(fig, "shuffle", t("positions.alt_shuffle", n=n, off=off, on=on))
    PAGE.table({**gaps}, "shuffle", index=list(lab.tokens))


def section_schemes(t, lab, names) -> None:
    cfg = lab.settings
    st.header(t("positions.sec_schemes"), anchor="schemes")
    st.markdown(t("positions.explain_schemes"))
    query, key = kit.escape_markdown(lab.query_token), kit.escape_markdown(lab.key_token)
    st.markdown(t("positions.explain_pair", query=query, key=key, offset=cfg.offset, last=cfg.seen - 1))
    count = len(lab.placements)
    cols = st.columns(len(SCHEMES))
    for col, scheme in zip(cols, SCHEMES, strict=True):
        col.metric(t("positions.spread_metric", name=names[scheme]), fmt(lab.spread[scheme]),
                   help=t("positions.spread_help"))  # fmt: skip
    if count < 2:
        st.info(t("positions.one_placement", seen=cfg.seen, offset=cfg.offset))
    else:
        if lab.spread["rope"] < ROUNDING_LIMIT:
            st.success(t("positions.rope_constant", spread=fmt(lab.spread["rope"]), count=count))
        else:
            st.error(t("positions.rope_not_constant", spread=fmt(lab.spread["rope"])))
        sin, learned = fmt(lab.spread["sinusoidal"]), fmt(lab.spread["learned"])
        st.markdown(t("positions.additive_vary", sin=sin, learned=learned))
    fig = figures_positions.scheme_lines_figure(
        lab.placements,
        lab.scores,
        names,
        axes=AxisText(t("positions.axis_position"), t("positions.axis_score")),
    )
    spreads = {k: fmt(v) for k, v in lab.spread.items()}
    alt = t("positions.alt_schemes", offset=cfg.offset, count=count, sin=spreads["sinusoidal"],
            learned=spreads["learned"], rope=spreads["rope"])  # fmt: skip
    PAGE.chart(fig, "schemes", alt)
    PAGE.table({names[k]: v for k, v in lab.scores.items()}, "schemes", index=lab.placements.tolist(),
               index_name=t("positions.col_position"))  # fmt: skip


def section_arrow(t, lab) -> None:
    cfg = lab.settings
    st.header(t("positions.sec_arrow"), anchor="rope")
    length = fmt(lab.arrow_length)
    theta = f"{lab.arrow_angle_step:.4g}"
    st.markdown(
        t(
            "positions.explain_arrow",
            pair=cfg.pair,
            query=kit.escape_markdown(lab.query_token),
            c0=2 * cfg.pair,
            c1=2 * cfg.pair + 1,
            d=cfg.d_model,
            theta=theta,
            length=length,
        )
    )
    coordinate = lambda c: t("positions.axis_coordinate", c=c)  # noqa: E731
    fig = figures_positions.rope_arrow_figure(
        lab.arrow_path, lab.arrow_positions.tolist(), position_label=t("positions.arrow_position", p="{p}"),
        axes=AxisText(coordinate(2 * cfg.pair), coordinate(2 * cfg.pair + 1)),
    )  # fmt: skip
    PAGE.chart(fig, "arrow", t("positions.alt_arrow", pair=cfg.pair, theta=theta, length=length), width=480)


def section_extrapolation(t, lab, names) -> None:
    cfg = lab.settings
    st.header(t("positions.sec_extrapolation"), anchor="extrapolation")
    query, key = kit.escape_markdown(lab.query_token), kit.escape_markdown(lab.key_token)
    end = int(lab.extrapolation_positions[-1])
    st.markdown(
        t("positions.explain_extrapolation", query=query, key=key, end=end, seen=cfg.seen, last=cfg.seen - 1)
    )
    fig = figures_positions.scheme_lines_figure(
        lab.extrapolation_positions,
        lab.extrapolation,
        names,
        axes=AxisText(t("positions.axis_query_position"), t("positions.axis_score")),
        seen=cfg.seen,
        seen_label=t("positions.seen_line", seen=cfg.seen),
    )
    alt = t(
        "positions.alt_extrapolation", query=lab.query_token, key=lab.key_token, end=end, last=cfg.seen - 1
    )
    PAGE.chart(fig, "extrapolation", alt)
    st.markdown(t("positions.extrap_learned", last=cfg.seen - 1))
    st.markdown(t("positions.extrap_sinusoidal"))
    st.markdown(t("positions.extrap_rope", pairs=cfg.d_model // 2, unseen=lab.unseen_pairs))


@PAGE.slides
def main() -> None:
    t = PAGE.open(controls)
    lab = load_lab(t)
    if lab is None:
        return
    names = {k: t(f"positions.scheme_{k}") for k in SCHEMES}
    PAGE.section(section_shuffle, t, lab)
    PAGE.section(section_schemes, t, lab, names)
    PAGE.section(section_arrow, t, lab)
    PAGE.section(section_extrapolation, t, lab, names)


main()
