"""Lab "Why √d_k": measured score variance, score histograms, softmax saturation and its gradient.

Thin page: widgets (``sq_`` keys) -> cached calls into ``attention_core.labs.scaling`` -> pure figure
builders in ``attention_ui.figures.sqrt`` -> st.plotly_chart. All text from the ``sqrt`` catalog.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.labs.scaling import (
    MAX_DRAWS,
    dot_variance_experiment,
    one_row,
    score_samples,
    softmax_peakedness,
)
from attention_ui.figures import sqrt as fsq
from attention_ui.language import translator

log = logging.getLogger(__name__)

DK_OPTIONS = tuple(2**i for i in range(11))  # 1 … 1024
KEYS_RANGE = (2, 64)
SAMPLES_RANGE = (100, 20_000)
SEED_RANGE = (0, 2**31 - 1)
DIVISOR_RANGE = (0.25, 32.0)
# Random numbers one page run may draw for the softmax experiments (sum over d_k of
# samples·(n_keys+1)·d_k): about half a second on the shared server. MAX_DRAWS is the core's
# hard limit per call; this page budget stays well under it.
PAGE_DRAWS = min(MAX_DRAWS, 18_000_000)
MIN_SAMPLES = 50
KEEP = "session"

DK_DEFAULT = (1, 256)
DEFAULTS = {
    "sq_keys": 16,
    "sq_samples": 2000,
    "sq_seed": 0,
    "sq_hist_dk": 64,
    "sq_row": "8, 4, 2, 0, -2, -6",
    "sq_divisor": 1.0,
    "sq_tables": False,
}


def init_state() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


@st.cache_data(max_entries=32, show_spinner=False)
def cached_variance(d_ks: tuple[int, ...], samples: int, seed: int):
    return dot_variance_experiment(d_ks, samples=samples, seed=seed)


@st.cache_data(max_entries=32, show_spinner=False)
def cached_scores(d_k: int, n_keys: int, samples: int, seed: int):
    return (
        score_samples(d_k, n_keys=n_keys, samples=samples, seed=seed, scaled=False),
        score_samples(d_k, n_keys=n_keys, samples=samples, seed=seed, scaled=True),
    )


@st.cache_data(max_entries=32, show_spinner=False)
def cached_peakedness(d_ks: tuple[int, ...], n_keys: int, samples: int, seed: int):
    return softmax_peakedness(d_ks, n_keys=n_keys, samples=samples, seed=seed)


def bounded_samples(d_ks: tuple[int, ...], n_keys: int, samples: int) -> int:
    """The most samples (≤ requested) the softmax experiments may use within ``PAGE_DRAWS``."""
    per_sample = (n_keys + 1) * sum(d_ks)
    return max(MIN_SAMPLES, min(samples, PAGE_DRAWS // per_sample))


def controls(t) -> None:
    with st.sidebar:
        st.header(t("sqrt.settings"))
        # A range select_slider must get its default through ``value=``: Streamlit decides from the
        # default whether the widget is a range, and a value preset only in session_state comes
        # back from the browser as a single option on the next run.
        st.select_slider(
            t("sqrt.dk_range"), DK_OPTIONS, value=DK_DEFAULT, key="sq_dk_range", help=t("sqrt.dk_range_help"),
            persist_state=KEEP,
        )  # fmt: skip
        st.slider(t("sqrt.keys"), *KEYS_RANGE, key="sq_keys", help=t("sqrt.keys_help"), persist_state=KEEP)
        st.number_input(
            t("sqrt.samples"), *SAMPLES_RANGE, step=500, key="sq_samples", help=t("sqrt.samples_help"),
            persist_state=KEEP,
        )  # fmt: skip
        st.number_input(t("sqrt.seed"), *SEED_RANGE, step=1, key="sq_seed", persist_state=KEEP)
        st.toggle(t("sqrt.show_tables"), key="sq_tables", persist_state=KEEP)


def chart(fig, key: str, alt: str) -> None:
    st.plotly_chart(fig, key=f"sq_chart_{key}", alt=alt, width="stretch", config={"displaylogo": False})


def table(frame: pd.DataFrame) -> None:
    if st.session_state["sq_tables"]:
        st.dataframe(frame, width="stretch", height=min(420, 38 + 35 * len(frame)))


def read_settings(t):
    """(d_ks, n_keys, samples, seed) from the widgets, or None after saying what is wrong."""
    s = st.session_state
    chosen = s.get("sq_dk_range", DK_DEFAULT)
    lo, hi = chosen if isinstance(chosen, (tuple, list)) and len(chosen) == 2 else DK_DEFAULT
    d_ks = tuple(d for d in DK_OPTIONS if lo <= d <= hi)
    n_keys, samples, seed = s["sq_keys"], s["sq_samples"], s["sq_seed"]
    if not d_ks:
        st.error(t("sqrt.err_dk_range"))
        return None
    if not (isinstance(samples, int) and SAMPLES_RANGE[0] <= samples <= SAMPLES_RANGE[1]):
        st.error(t("sqrt.err_range", name=t("sqrt.samples"), lo=SAMPLES_RANGE[0], hi=SAMPLES_RANGE[1]))
        return None
    if not (isinstance(seed, int) and SEED_RANGE[0] <= seed <= SEED_RANGE[1]):
        st.error(t("sqrt.err_range", name=t("sqrt.seed"), lo=SEED_RANGE[0], hi=SEED_RANGE[1]))
        return None
    return d_ks, int(n_keys), int(samples), int(seed)


def section_variance(t, d_ks, samples, seed) -> None:
    st.header(t("sqrt.h_variance"))
    st.markdown(t("sqrt.explain_variance"))
    st.latex(
        r"\operatorname{Var}(q\cdot k) = \sum_{i=1}^{d_k} \operatorname{Var}(q_i k_i) = d_k,"
        r"\qquad \operatorname{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right) = 1"
    )
    res = cached_variance(d_ks, samples, seed)
    c1, c2 = st.columns(2)
    with c1:
        chart(
            fsq.variance_figure(
                d_ks, res.raw_variance, res.raw_standard_error, res.expected_raw,
                measured_name=t("sqrt.measured"), theory_name=t("sqrt.theory_dk"),
                y_title=t("sqrt.axis_var_raw"), title=t("sqrt.title_var_raw"), log_y=True,
                color=fsq.RAW_COLOR,
            ),
            "var_raw",
            t("sqrt.alt_var_raw", lo=d_ks[0], hi=d_ks[-1]),
        )  # fmt: skip
    with c2:
        chart(
            fsq.variance_figure(
                d_ks, res.scaled_variance, res.scaled_standard_error, res.expected_scaled,
                measured_name=t("sqrt.measured"), theory_name=t("sqrt.theory_one"),
                y_title=t("sqrt.axis_var_scaled"), title=t("sqrt.title_var_scaled"), log_y=False,
                color=fsq.SCALED_COLOR,
            ),
            "var_scaled",
            t("sqrt.alt_var_scaled", lo=d_ks[0], hi=d_ks[-1]),
        )  # fmt: skip
    st.caption(t("sqrt.caption_variance", samples=samples, k=f"{fsq.ERROR_BAR_SE:g}"))
    table(
        pd.DataFrame(
            {
                "d_k": list(d_ks),
                t("sqrt.col_var_raw"): res.raw_variance,
                t("sqrt.col_theory"): res.expected_raw,
                t("sqrt.col_se"): res.raw_standard_error,
                t("sqrt.col_var_scaled"): res.scaled_variance,
                t("sqrt.col_se_scaled"): res.scaled_standard_error,
            }
        )
    )


def section_histogram(t, d_ks, n_keys, samples, seed) -> None:
    st.header(t("sqrt.h_hist"))
    st.markdown(t("sqrt.explain_hist"))
    if st.session_state["sq_hist_dk"] not in d_ks:
        st.session_state["sq_hist_dk"] = d_ks[len(d_ks) // 2] if 64 not in d_ks else 64
    st.select_slider(t("sqrt.hist_dk"), d_ks, key="sq_hist_dk", persist_state=KEEP)
    d_k = int(st.session_state["sq_hist_dk"])
    # Histograms need far fewer numbers than the table of d_ks; keep them quick at any setting.
    hist_samples = max(MIN_SAMPLES, min(samples, PAGE_DRAWS // ((n_keys + 1) * d_k) // 2, 5000))
    raw, scaled = cached_scores(d_k, n_keys, hist_samples, seed)
    chart(
        fsq.score_histogram(
            raw.scores, scaled.scores, d_k,
            raw_name=t("sqrt.unscaled"), scaled_name=t("sqrt.scaled"), theory_name=t("sqrt.normal_curve"),
            x_title=t("sqrt.axis_score"), y_title=t("sqrt.axis_density"), title=t("sqrt.title_hist", d_k=d_k),
        ),
        "hist",
        t("sqrt.alt_hist", d_k=d_k),
    )  # fmt: skip
    raw_std, scaled_std = float(np.std(raw.scores)), float(np.std(scaled.scores))
    st.markdown(
        t(
            "sqrt.hist_summary",
            count=raw.scores.size,
            raw_std=f"{raw_std:.2f}",
            sqrt_dk=f"{math.sqrt(d_k):.2f}",
            scaled_std=f"{scaled_std:.2f}",
        )
    )
    table(
        pd.DataFrame(
            {
                "": [t("sqrt.unscaled"), t("sqrt.scaled")],
                t("sqrt.col_std"): [raw_std, scaled_std],
                t("sqrt.col_expected_std"): [raw.expected_std, scaled.expected_std],
                t("sqrt.col_min"): [float(raw.scores.min()), float(scaled.scores.min())],
                t("sqrt.col_max"): [float(raw.scores.max()), float(scaled.scores.max())],
            }
        ).set_index("")
    )


def section_peakedness(t, d_ks, n_keys, samples, seed) -> None:
    st.header(t("sqrt.h_peak"))
    st.markdown(t("sqrt.explain_peak"))
    used = bounded_samples(d_ks, n_keys, samples)
    if used < samples:
        st.info(t("sqrt.info_samples_reduced", used=used, asked=samples))
    with st.spinner(t("sqrt.computing")):
        res = cached_peakedness(d_ks, n_keys, used, seed)
    names = dict(raw_name=t("sqrt.unscaled"), scaled_name=t("sqrt.scaled"), x_title="d_k")
    c1, c2 = st.columns(2)
    with c1:
        chart(
            fsq.versus_dk_figure(
                d_ks, res.max_weight_raw, res.max_weight_scaled, y_title=t("sqrt.axis_max_weight"),
                title=t("sqrt.title_max_weight"), reference=1.0 / n_keys,
                reference_name=t("sqrt.uniform", n=n_keys), y_range=(0.0, 1.05), **names,
            ),
            "max_weight",
            t("sqrt.alt_max_weight", n=n_keys),
        )  # fmt: skip
    with c2:
        chart(
            fsq.versus_dk_figure(
                d_ks, res.normalised_entropy_raw, res.normalised_entropy_scaled,
                y_title=t("sqrt.axis_entropy"), title=t("sqrt.title_entropy"), y_range=(0.0, 1.05), **names,
            ),
            "entropy",
            t("sqrt.alt_entropy", n=n_keys),
        )  # fmt: skip
    st.latex(r"H(p) = -\sum_j p_j \log p_j,\qquad \tilde H = \frac{H(p)}{\log n}")
    table(
        pd.DataFrame(
            {
                "d_k": list(d_ks),
                t("sqrt.col_max_raw"): res.max_weight_raw,
                t("sqrt.col_max_scaled"): res.max_weight_scaled,
                t("sqrt.col_entropy_raw"): res.entropy_raw,
                t("sqrt.col_entropy_scaled"): res.entropy_scaled,
            }
        )
    )

    st.header(t("sqrt.h_grad"))
    st.markdown(t("sqrt.explain_grad"))
    st.latex(
        r"\frac{\partial p_i}{\partial s_j} = p_i(\delta_{ij} - p_j),\qquad "
        r"J = \operatorname{diag}(p) - p\,p^\top,\qquad \|J\|_F \to 0 \;\; (p \to \text{one-hot})"
    )
    # From 0, so the fall reads as "towards no gradient" rather than as a small wiggle.
    jac_top = float(max(np.max(res.jacobian_norm_raw), np.max(res.jacobian_norm_scaled)))
    chart(
        fsq.versus_dk_figure(
            d_ks, res.jacobian_norm_raw, res.jacobian_norm_scaled, y_title=t("sqrt.axis_jacobian"),
            title=t("sqrt.title_jacobian"), y_range=(0.0, 1.15 * jac_top), **names,
        ),
        "jacobian",
        t("sqrt.alt_jacobian", n=n_keys),
    )  # fmt: skip
    first, last = 0, len(d_ks) - 1
    st.markdown(
        t(
            "sqrt.grad_summary",
            lo=d_ks[first],
            hi=d_ks[last],
            raw_lo=f"{res.jacobian_norm_raw[first]:.3f}",
            raw_hi=f"{res.jacobian_norm_raw[last]:.3f}",
            scaled_lo=f"{res.jacobian_norm_scaled[first]:.3f}",
            scaled_hi=f"{res.jacobian_norm_scaled[last]:.3f}",
        )
    )
    st.caption(t("sqrt.caption_samples", samples=used, n=n_keys))
    table(
        pd.DataFrame(
            {
                "d_k": list(d_ks),
                t("sqrt.col_jac_raw"): res.jacobian_norm_raw,
                t("sqrt.col_jac_scaled"): res.jacobian_norm_scaled,
            }
        )
    )


def section_one_row(t) -> None:
    st.header(t("sqrt.h_row"))
    st.markdown(t("sqrt.explain_row"))
    c1, c2 = st.columns([3, 2])
    c1.text_input(t("sqrt.row_scores"), key="sq_row", help=t("sqrt.row_scores_help"), persist_state=KEEP)
    c2.slider(
        t("sqrt.divisor"), *DIVISOR_RANGE, step=0.25, key="sq_divisor", help=t("sqrt.divisor_help"),
        persist_state=KEEP,
    )  # fmt: skip
    scores, problem, values = fsq.parse_scores(st.session_state["sq_row"] or "")
    if problem is not None:
        st.error(t(f"sqrt.{problem}", **values))
        return
    divisor = float(st.session_state["sq_divisor"])
    row = one_row(scores, divisor)
    st.latex(rf"p = \operatorname{{softmax}}\!\left(\frac{{s}}{{{divisor:g}}}\right)")
    m1, m2, m3 = st.columns(3)
    m1.metric(t("sqrt.metric_max"), f"{row.max_weight:.3f}", help=t("sqrt.metric_max_help", n=len(scores)))
    m2.metric(
        t("sqrt.metric_entropy"),
        f"{row.entropy:.3f}",
        help=t("sqrt.metric_entropy_help", top=f"{math.log(len(scores)):.3f}"),
    )
    m3.metric(t("sqrt.metric_jacobian"), f"{row.jacobian_norm:.3g}", help=t("sqrt.metric_jacobian_help"))
    chart(
        fsq.weights_bar_figure(
            scores, row.weights, x_title=t("sqrt.axis_key"), y_title=t("sqrt.axis_weight"),
            title=t("sqrt.title_row", divisor=f"{divisor:g}"),
        ),
        "row",
        t("sqrt.alt_row", n=len(scores), divisor=f"{divisor:g}", best=f"{row.max_weight:.3f}"),
    )  # fmt: skip
    st.markdown(t("sqrt.row_hint"))
    table(
        pd.DataFrame(
            {
                t("sqrt.col_score"): row.scores,
                t("sqrt.col_scaled_score"): row.scaled,
                t("sqrt.col_weight"): row.weights,
            },
            index=[f"{j}" for j in range(len(scores))],
        )
    )


def main() -> None:
    t = translator()
    init_state()
    controls(t)
    st.title(t("sqrt.title"))
    st.markdown(t("sqrt.intro"))
    settings = read_settings(t)
    if settings is None:
        return
    d_ks, n_keys, samples, seed = settings
    try:
        section_variance(t, d_ks, samples, seed)
        section_histogram(t, d_ks, n_keys, samples, seed)
        section_peakedness(t, d_ks, n_keys, samples, seed)
    except ValueError as err:  # the core refuses an experiment that is too large
        st.error(t("sqrt.err_too_large", detail=str(err)))
    except Exception:  # a bug must not leave the learner with a traceback
        log.exception("scaling lab failed")
        st.error(t("sqrt.err_unexpected"))
    section_one_row(t)
    st.header(t("sqrt.h_takeaway"))
    st.markdown(t("sqrt.takeaway"))


main()
