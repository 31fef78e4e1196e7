"""Lab "Why √d_k": measured score variance, score histograms, softmax saturation and its gradient.

Widgets (``scaling_`` keys) -> cached calls into ``attention_core.labs.scaling`` -> builders in
``attention_ui.scaling.figures`` -> the page kit. All text from the ``scaling`` catalog.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import scaling as lab_scaling
from attention_core.labs.scaling import one_row, parse_scores, samples_within
from attention_ui import kit
from attention_ui.figures.base import AxisText
from attention_ui.scaling import figures as fsq
from attention_ui.scaling import lesson as sqrt_lesson
from attention_ui.scaling.settings import (
    DIVISOR_RANGE,
    DK_DEFAULT,
    DK_OPTIONS,
    HIST_MAX_SAMPLES,
    KEYS_RANGE,
    PAGE,
    PAGE_DRAWS,
    SAMPLES_RANGE,
    TABLE,
)
from attention_ui.takehome import buttons

key = TABLE.key

cached_variance = kit.cached(lab_scaling.dot_variance_experiment)
cached_scores = kit.cached(lab_scaling.score_samples)
cached_peakedness = kit.cached(lab_scaling.softmax_peakedness)


def controls(t) -> None:
    st.header(t("scaling.settings"))
    # A range select_slider must get its default through ``value=``: Streamlit decides from the
    # default whether the widget is a range, and a value preset only in session_state comes
    # back from the browser as a single option on the next run.
    PAGE.widget(t, "select_slider", "dk_range", DK_OPTIONS, value=DK_DEFAULT, helped=True)
    PAGE.widget(t, "slider", "keys", *KEYS_RANGE, helped=True)
    PAGE.widget(t, "number_input", "samples", *SAMPLES_RANGE, step=500, helped=True)
    PAGE.seed_input(t)
    PAGE.tables_toggle(t)


def read_settings(t):
    """(d_ks, n_keys, samples, seed) from the widgets, or None after saying what is wrong."""
    s = st.session_state
    chosen = s.get(key("dk_range"), DK_DEFAULT)
    lo, hi = chosen if isinstance(chosen, (tuple, list)) and len(chosen) == 2 else DK_DEFAULT
    d_ks = tuple(d for d in DK_OPTIONS if lo <= d <= hi)
    if not d_ks:
        st.error(t("scaling.err_dk_range"))
        return None
    samples = PAGE.whole(t, key("samples"), t("scaling.samples"), SAMPLES_RANGE)
    seed = None if samples is None else PAGE.whole(t, key("seed"), t("scaling.seed"), kit.SEED_RANGE)
    if seed is None:
        return None
    return d_ks, int(s[key("keys")]), samples, seed


def section_variance(t, d_ks, samples, seed) -> None:
    kit.opening(t("scaling.h_variance"), t("scaling.explain_variance"), sqrt_lesson.FORMULA)
    res = cached_variance(d_ks, samples=samples, seed=seed)
    figures = sqrt_lesson.variance_figures(t, res)
    for column, (kind, fig) in zip(st.columns(2), figures.items(), strict=True):
        with column:
            PAGE.chart(fig, f"var_{kind}", t(f"scaling.alt_var_{kind}", lo=d_ks[0], hi=d_ks[-1]))
    st.caption(t("scaling.caption_variance", samples=samples, k=f"{fsq.ERROR_BAR_SE:g}"))
    PAGE.table(
        {
            "d_k": list(d_ks),
            t("scaling.col_var_raw"): res.raw_variance,
            t("scaling.col_theory"): res.expected_raw,
            t("scaling.col_se"): res.raw_standard_error,
            t("scaling.col_var_scaled"): res.scaled_variance,
            t("scaling.col_se_scaled"): res.scaled_standard_error,
        }
    )


def section_histogram(t, d_ks, n_keys, samples, seed) -> None:
    st.header(t("scaling.h_hist"))
    st.markdown(t("scaling.explain_hist"))
    if st.session_state[key("hist_dk")] not in d_ks:
        st.session_state[key("hist_dk")] = d_ks[len(d_ks) // 2] if 64 not in d_ks else 64
    PAGE.widget(t, "select_slider", "hist_dk", d_ks)
    d_k = int(st.session_state[key("hist_dk")])
    # Histograms need far fewer numbers than the table of d_ks; keep them quick at any setting.
    used = samples_within((d_k,), n_keys, min(samples, HIST_MAX_SAMPLES), PAGE_DRAWS // 2)
    raw, scaled = (
        cached_scores(d_k, n_keys=n_keys, samples=used, seed=seed, scaled=s) for s in (False, True)
    )
    names = dict(
        raw_name=t("scaling.unscaled"), scaled_name=t("scaling.scaled"), theory_name=t("scaling.normal_curve")
    )
    axes = AxisText(t("scaling.axis_score"), t("scaling.axis_density"), t("scaling.title_hist", d_k=d_k))
    fig = fsq.score_histogram(raw.scores, scaled.scores, d_k, **names, axes=axes)
    PAGE.chart(fig, "hist", t("scaling.alt_hist", d_k=d_k))
    spread = dict(
        raw_std=f"{raw.measured_std:.2f}",
        sqrt_dk=f"{raw.expected_std:.2f}",
        scaled_std=f"{scaled.measured_std:.2f}",
    )
    st.markdown(t("scaling.hist_summary", count=raw.scores.size, **spread))
    both = (raw, scaled)
    PAGE.table(
        {
            t("scaling.col_std"): [x.measured_std for x in both],
            t("scaling.col_expected_std"): [x.expected_std for x in both],
            t("scaling.col_min"): [float(x.scores.min()) for x in both],
            t("scaling.col_max"): [float(x.scores.max()) for x in both],
        },
        index=[t("scaling.unscaled"), t("scaling.scaled")],
        index_name="",
    )


def section_peakedness(t, d_ks, n_keys, samples, seed) -> None:
    st.header(t("scaling.h_peak"))
    st.markdown(t("scaling.explain_peak"))
    used = samples_within(d_ks, n_keys, samples, PAGE_DRAWS)
    if used < samples:
        st.info(t("scaling.info_samples_reduced", used=used, asked=samples))
    with st.spinner(t("scaling.computing")):
        res = cached_peakedness(d_ks, n_keys=n_keys, samples=used, seed=seed)
    names = dict(raw_name=t("scaling.unscaled"), scaled_name=t("scaling.scaled"))
    uniform = dict(reference=1.0 / n_keys, reference_name=t("scaling.uniform", n=n_keys))
    c1, c2 = st.columns(2)
    for column, quantity, raw, scaled, extra in (
        (c1, "max_weight", res.max_weight_raw, res.max_weight_scaled, uniform),
        (c2, "entropy", res.normalised_entropy_raw, res.normalised_entropy_scaled, {}),
    ):
        axes = AxisText("d_k", t(f"scaling.axis_{quantity}"), t(f"scaling.title_{quantity}"))
        fig = fsq.versus_dk_figure(d_ks, raw, scaled, y_range=(0.0, 1.05), axes=axes, **names, **extra)
        with column:
            PAGE.chart(fig, quantity, t(f"scaling.alt_{quantity}", n=n_keys))
    st.latex(r"H(p) = -\sum_j p_j \log p_j,\qquad \tilde H = \frac{H(p)}{\log n}")
    PAGE.table(
        {
            "d_k": list(d_ks),
            t("scaling.col_max_raw"): res.max_weight_raw,
            t("scaling.col_max_scaled"): res.max_weight_scaled,
            t("scaling.col_entropy_raw"): res.entropy_raw,
            t("scaling.col_entropy_scaled"): res.entropy_scaled,
        }
    )

    kit.opening(
        t("scaling.h_grad"),
        t("scaling.explain_grad"),
        (
            r"\frac{\partial p_i}{\partial s_j} = p_i(\delta_{ij} - p_j),",
            r"J = \operatorname{diag}(p) - p\,p^\top,",
            r"\|J\|_F \to 0 \;\; (p \to \text{one-hot})",
        ),
    )
    # From 0, so the fall reads as "towards no gradient" rather than as a small wiggle.
    axes = AxisText("d_k", t("scaling.axis_jacobian"), t("scaling.title_jacobian"))
    y_range = (0.0, 1.15 * res.jacobian_norm_max)
    fig = fsq.versus_dk_figure(
        d_ks, res.jacobian_norm_raw, res.jacobian_norm_scaled, y_range=y_range, axes=axes, **names
    )
    PAGE.chart(fig, "jacobian", t("scaling.alt_jacobian", n=n_keys))
    raw, scaled = res.jacobian_norm_raw, res.jacobian_norm_scaled
    ends = dict(
        raw_lo=f"{raw[0]:.3f}",
        raw_hi=f"{raw[-1]:.3f}",
        scaled_lo=f"{scaled[0]:.3f}",
        scaled_hi=f"{scaled[-1]:.3f}",
    )
    st.markdown(t("scaling.grad_summary", lo=d_ks[0], hi=d_ks[-1], **ends))
    st.caption(t("scaling.caption_samples", samples=used, n=n_keys))
    PAGE.table({"d_k": list(d_ks), t("scaling.col_jac_raw"): raw, t("scaling.col_jac_scaled"): scaled})


def section_one_row(t) -> None:
    st.header(t("scaling.h_row"))
    st.markdown(t("scaling.explain_row"))
    c1, c2 = st.columns([3, 2])
    PAGE.widget(t, "text_input", "row", text="row_scores", helped=True, where=c1)
    PAGE.widget(t, "slider", "divisor", *DIVISOR_RANGE, step=0.25, helped=True, where=c2)
    scores, problem, values = parse_scores(st.session_state[key("row")] or "")
    if problem is not None:
        st.error(t(f"scaling.err_{problem}", **values))
        return
    divisor = float(PAGE.value("divisor"))
    row = one_row(scores, divisor)
    st.latex(rf"p = \operatorname{{softmax}}\!\left(\frac{{s}}{{{divisor:g}}}\right)")
    m1, m2, m3 = st.columns(3)
    m1.metric(
        t("scaling.metric_max"), f"{row.max_weight:.3f}", help=t("scaling.metric_max_help", n=len(scores))
    )
    top = f"{row.max_entropy:.3f}"
    m2.metric(
        t("scaling.metric_entropy"), f"{row.entropy:.3f}", help=t("scaling.metric_entropy_help", top=top)
    )
    m3.metric(
        t("scaling.metric_jacobian"), f"{row.jacobian_norm:.3g}", help=t("scaling.metric_jacobian_help")
    )
    axes = AxisText(
        t("scaling.axis_key"), t("scaling.axis_weight"), t("scaling.title_row", divisor=f"{divisor:g}")
    )
    fig = fsq.weights_bar_figure(scores, row.weights, axes=axes)
    alt = t("scaling.alt_row", n=len(scores), divisor=f"{divisor:g}", best=f"{row.max_weight:.3f}")
    PAGE.chart(fig, "row", alt)
    st.markdown(t("scaling.row_hint"))
    numbers = {
        t("scaling.col_score"): row.scores,
        t("scaling.col_scaled_score"): row.scaled,
        t("scaling.col_weight"): row.weights,
    }
    PAGE.table(numbers, index=[f"{j}" for j in range(len(scores))])


@PAGE.slides
def main() -> None:
    t = PAGE.open(controls)
    if (settings := read_settings(t)) is None:
        return
    d_ks, n_keys, samples, seed = settings
    known = [(ValueError, "scaling.err_too_large")]  # the core refuses an experiment that is too large
    with PAGE.guard(t, "scaling lab", known):
        PAGE.section(section_variance, t, d_ks, samples, seed)
        PAGE.section(section_histogram, t, d_ks, n_keys, samples, seed)
        PAGE.section(section_peakedness, t, d_ks, n_keys, samples, seed)
    PAGE.section(section_one_row, t)
    PAGE.section(PAGE.takeaway, t)
    with st.sidebar:  # the lesson: the variance section, then every step on the learner's sentence (issue 45)
        res = cached_variance(d_ks, samples=samples, seed=seed)  # cached: the section above made it
        buttons.lab_lesson_button(
            t, key("dl_lesson"), "app.nav_scaling", lambda: sqrt_lesson.section(t, res, d_ks, samples)
        )


main()
