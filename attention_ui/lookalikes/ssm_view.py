"""The look-alikes lab's state-space section (issue 29): attention, linear attention and a diagonal
state-space recurrence (fixed and selective decay) on the learner's sentence, compared by the
weights each output puts on the past inputs and by the state each keeps as n grows.

Called by ``app_pages/lookalikes.py`` with its page kit (its ``ssm_`` settings, declared in ``attention_ui.lookalikes.settings``; the sentence, d_model and
seed of the sidebar); text: the ``ssm`` catalog. Widgets -> ``attention_core.labs.ssm`` (cached) ->
``attention_ui.figures`` -> the page kit.
"""

from __future__ import annotations

import streamlit as st

from attention_core import AttentionConfigError
from attention_core.labs import ssm as lab_ssm
from attention_ui import kit, tables
from attention_ui.figures import cost as figures_cost
from attention_ui.figures import heatmaps
from attention_ui.figures.base import AxisText
from attention_ui.lookalikes import ssm_figures as figures_ssm
from attention_ui.lookalikes.settings import MAX_TOKENS, SSM_DELTA_CHOICES, SSM_N_CHOICES

TOLERANCE = 1e-12
SIGNED = ("ssm_fixed", "ssm_selective")

cached_ssm = kit.cached(lab_ssm.ssm_lab)


def section_ssm(t, page: kit.Page) -> None:
    kit.opening(
        t("ssm.title"),
        t("ssm.intro"),
        (
            r"h_t = a_t \odot h_{t-1} + b\,x_t,\qquad y_t = c \cdot h_t",
            r"\Longrightarrow\quad y_t = \sum_{s \le t} W_{ts}\, x_s,",
            r"W_{ts} = \sum_k c_k\, b_k \prod_{r=s+1}^{t} a_{r,k}",
        ),
        anchor="state-space",
    )
    kit.latex(
        r"a_{t,k} = e^{-\Delta \lambda_k}\ \ \text{(1)},",
        r"a_{t,k} = e^{-\Delta_t \lambda_k},\ \Delta_t = \operatorname{softplus}(w \cdot X_t / \sqrt{d} + \beta)\ \ \text{(2)}",
    )
    st.caption(t("ssm.formula_note"))
    c1, c2 = st.columns(2)
    names = dict(label=t("ssm.N"), help=t("ssm.N_help"), where=c1)
    page.widget(t, "select_slider", "ssm_n", SSM_N_CHOICES, **names)
    page.widget(
        t,
        "select_slider",
        "ssm_delta",
        SSM_DELTA_CHOICES,
        label=t("ssm.delta"),
        help=t("ssm.delta_help"),
        where=c2,
    )
    text = (page.value("text_a") or "").strip()
    if not text:
        st.info(t("ssm.err_empty"))
        return
    numbers = dict(
        d_model=int(page.value("d_model")), seed=int(page.value("seed")), N=int(page.value("ssm_n"))
    )
    with page.guard(
        t, "state-space comparison", known=[(AttentionConfigError, "lookalikes.err_config")]
    ) as run:
        lab = cached_ssm(text, **numbers, delta=float(page.value("ssm_delta")), max_tokens=MAX_TOKENS)
    if run.failed:
        return
    tokens, n = lab.tokens, len(lab.tokens)
    diffs = lab.recurrence_diffs
    worst = max(diffs.values())
    m = st.columns(3)
    m[0].metric(t("ssm.metric_diff"), f"{worst:.2e}")
    m[1].metric(t("ssm.metric_gap_fixed"), f"{lab.toeplitz_gaps['ssm_fixed']:.2e}")
    m[2].metric(t("ssm.metric_gap_selective"), f"{lab.toeplitz_gaps['ssm_selective']:.3f}")
    if worst <= TOLERANCE:
        st.success(t("ssm.ok", diff=f"{worst:.2e}", n=n))
    else:
        st.error(t("ssm.bad", diff=f"{worst:.2e}"))
    hover = page.hover(t)
    titles = dict(row_title=t("ssm.axis_output"), col_title=t("ssm.axis_input"), hover=hover)
    titles.update(row_hover=t("ssm.hover_output"), col_hover=t("ssm.hover_input"))
    for pair in (lab_ssm.MODELS[:2], lab_ssm.MODELS[2:]):
        for column, name in zip(st.columns(2), pair, strict=True):
            with column:
                st.markdown(f"**{t('ssm.model_' + name)}**")
                kind = "signed" if name in SIGNED else "weights"
                fig = heatmaps.matrix_heatmap(lab.weights[name], tokens, tokens, kind=kind, **titles)
                page.chart(fig, f"ssm_{name}", t(f"ssm.alt_{name}", n=n))
                page.table(lambda w=lab.weights[name]: tables.labelled_table(w, tokens, tokens))
    st.markdown(t("ssm.maps_note", gap=f"{lab.toeplitz_gaps['ssm_selective']:.3f}"))
    rows = list(range(n))
    if page.value("ssm_row") not in rows:  # a new sentence: show its last output
        st.session_state[page.key("ssm_row")] = n - 1
    page.widget(
        t,
        "selectbox",
        "ssm_row",
        rows,
        format_func=lambda i: f"{i}: {tokens[i]}",
        label=t("ssm.row"),
        help=t("ssm.row_help"),
    )
    row = int(page.value("ssm_row"))
    series = {t(f"ssm.model_{name}"): list(lab.weights[name][row, : row + 1]) for name in lab_ssm.MODELS}
    fig = figures_ssm.past_weights_figure(
        tokens[: row + 1], series, axes=AxisText(t("ssm.axis_input"), t("ssm.axis_weight"))
    )
    page.chart(fig, "ssm_row", t("ssm.alt_row", row=row))
    sums = {name: f"{lab.row_sums[name][row]:.3f}" for name in lab_ssm.MODELS}
    st.markdown(t("ssm.row_note", row=row, **sums))
    fig = figures_ssm.steps_figure(
        tokens,
        lab.steps,
        lab.delta,
        axes=AxisText(t("ssm.axis_token"), "Δ_t"),
        fixed_label=t("ssm.fixed_delta", delta=lab.delta),
    )
    page.chart(fig, "ssm_steps", t("ssm.alt_steps", n=n, delta=lab.delta))
    st.caption(t("ssm.steps_note"))
    section_state(t, page, lab)


def section_state(t, page: kit.Page, lab) -> None:
    st.subheader(t("ssm.state_title"), anchor="state-size")
    sizes, d, N = lab.sizes, lab.d, lab.N
    st.markdown(t("ssm.state_intro", d=d, N=N))
    series = {
        t("ssm.state_attention", d=d): list(sizes.attention),
        t("ssm.state_linear", d=d): list(sizes.linear),
        t("ssm.state_ssm", d=d, N=N): list(sizes.ssm),
    }
    fig = figures_cost.loglog_figure(
        sizes.ns, series, axes=AxisText(t("ssm.axis_n"), t("ssm.axis_state")), height=340
    )
    page.chart(fig, "ssm_state", t("ssm.alt_state", d=d, N=N))
    page.table(
        {"n": list(sizes.ns), **series}, "ssm_state", always=True, hide_index=True, localized=["n", *series]
    )
    st.info(t("ssm.simplified"))
