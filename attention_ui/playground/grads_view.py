"""The playground's optional gradients step: the backward pass of the layer on the learner's sentence.

Off by default (the switch ``pg_grads``), so a rerun costs what it did before: nothing is computed
until the learner asks. On, one cached call (:func:`grads_for`) runs ``attention_core.backward`` on
the trace the page already has, for the loss L = ½‖O − Y‖² with a target Y drawn at random from
``pg_target_seed``; the step shows d(weights) and d(scores) for every head, and three facts computed
from these numbers. The cell explainer (:mod:`.explain_view`) adds the chosen cell's arithmetic past
the softmax.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import streamlit as st

from attention_core.backward import attention_grads, explain_grad_cell, gradient_facts
from attention_ui import kit
from attention_ui.figures import heatmaps
from attention_ui.kit import SEED_RANGE

from .settings import PAGE, TABLE
from .steps_view import STEPS, View, chart

GRADS_KEY, TARGET_SEED_KEY = TABLE.key("grads"), TABLE.key("target_seed")
NUMBER = len(STEPS) + 1  # after the eleven forward steps
STORE_SIZE = 16  # traces whose gradients are kept (the traces themselves are cache_resource entries)
_store: OrderedDict = OrderedDict()
_lock = threading.Lock()


def grads_for(trace, target_seed: int):
    """``-> (grads, facts)`` for ``trace`` (a cached, frozen trace: one object per settings, so its
    identity is its key) and the target's seed; computed once, shared by every session."""
    key = (id(trace), int(target_seed))
    with _lock:
        hit = _store.get(key)
        if hit is not None and hit[0] is trace:
            _store.move_to_end(key)
            return hit[1], hit[2]
    grads = attention_grads(trace, target_seed=int(target_seed))
    facts = gradient_facts(trace, grads)
    with _lock:
        _store[key] = (trace, grads, facts)  # the trace is kept too, so its id is not reused meanwhile
        while len(_store) > STORE_SIZE:
            _store.popitem(last=False)
    return grads, facts


def is_on() -> bool:
    return bool(st.session_state.get(GRADS_KEY))


def target_seed() -> int:
    value = st.session_state.get(TARGET_SEED_KEY, 0)
    return value if isinstance(value, int) and SEED_RANGE[0] <= value <= SEED_RANGE[1] else 0


def _g(x: float) -> str:
    return f"{x:.4g}"


def section(view: View) -> None:
    """Step 12: the switch, and when it is on the gradients and the three facts."""
    t, tr = view.t, view.trace
    st.header(f"{NUMBER}. {t('playground.step_grads')}", anchor="step-grads")
    st.markdown(t("playground.explain_grads"))
    PAGE.widget(t, "toggle", "grads", text="grads_on", helped=True)
    if not is_on():
        return
    PAGE.widget(
        t, "number_input", "target_seed", *SEED_RANGE, step=1, helped=True, where=st.columns([1, 2])[0]
    )
    with PAGE.guard(t, "gradients") as g:
        grads, facts = grads_for(tr, target_seed())
    if g.failed:
        return
    st.info(t("playground.grads_invented", seed=target_seed()))
    st.latex(r"L = \tfrac{1}{2} \sum_{i,d} (O_{id} - Y_{id})^2,\qquad Y_{id} \sim \mathcal{N}(0, 1)")
    st.markdown(t("playground.grads_loss", loss=_g(grads.loss)))
    names = [t("playground.head_name", h=k) for k in range(tr.heads)]
    for key, values, allowed in (("dweights", grads.dweights, None), ("dscores", grads.dscores, tr.mask)):
        st.subheader(t(f"playground.grads_h_{key}"))
        st.latex(GRAD_LATEX[key])
        st.markdown(t(f"playground.grads_explain_{key}"))
        fig = heatmaps.heads_small_multiples(
            values, tr.tokens, allowed=allowed if allowed is not None and not allowed.all() else None,
            hover=view.hover, titles=names, signed=True,
        )  # fmt: skip
        chart(
            view, fig, f"grads_{key}", t("playground.alt_grads", what=t(f"playground.grads_h_{key}"), n=tr.n)
        )
    show_facts(view, facts)


GRAD_LATEX = {
    "dweights": r"g_{ij} = \frac{\partial L}{\partial A_{ij}} = \sum_{d} \frac{\partial L}{\partial \mathrm{head}_{id}}\, V_{jd}",
    "dscores": r"\frac{\partial L}{\partial S''_{ij}} = A_{ij} \Big( g_{ij} - \sum_{k} A_{ik}\, g_{ik} \Big)",
}


def mask_fact(facts) -> tuple[str, dict]:
    """The mask fact's catalog key and values: no masked cell, exactly 0 there, or the check failed."""
    if facts.masked_cells == 0:
        return "playground.grads_fact_mask_none", {}
    key = "grads_fact_mask" if facts.masked_max_abs_dscores == 0 else "grads_fact_mask_broken"
    return f"playground.{key}", dict(cells=facts.masked_cells, g=_g(facts.masked_max_abs_dweights),
                                     s=_g(facts.masked_max_abs_dscores))  # fmt: skip


def scale_fact(facts) -> tuple[str, dict]:
    """The scaling fact's catalog key and values: the undivided gradient is smaller (by how much), or not."""
    a, b = facts.scaled, facts.unscaled
    values = dict(d_k=facts.d_k, div=_g(a.divisor), with_=_g(a.dscores_norm), without=_g(b.dscores_norm),
                  wa=f"{a.mean_max_weight:.3f}", wb=f"{b.mean_max_weight:.3f}")  # fmt: skip
    if b.dscores_norm < a.dscores_norm:
        ratio = a.dscores_norm / b.dscores_norm if b.dscores_norm > 0 else float("inf")
        return "playground.grads_fact_scale_smaller", dict(values, ratio=_g(ratio))
    return "playground.grads_fact_scale_not_smaller", values


QUERY_TOL = 1e-6  # Σ_j c_j k_j and the backward pass's dQ row agree to rounding (float32 traces too)


def query_fact(facts) -> tuple[str, dict]:
    """The dQ fact's catalog key and values (``token`` is filled by the page): the sum of c_j k_j
    matches the backward pass's dQ row, or it does not."""
    q = facts.query
    key = "playground.grads_fact_query" if q.residual <= QUERY_TOL else "playground.grads_fact_query_broken"
    return key, dict(i=q.query, head=q.head, mean=_g(q.mean_g), residual=f"{q.residual:.1e}")


def show_facts(view: View, facts) -> None:
    """The three facts, each stated from this sentence's numbers (tests/test_app_grads.py)."""
    t = view.t
    st.subheader(t("playground.grads_h_facts"))
    for key, values in (mask_fact(facts), scale_fact(facts)):
        st.markdown(t(key, **values))
    # 3. dQ of one query
    q = facts.query
    key, values = query_fact(facts)
    st.markdown(t(key, token=kit.escape_markdown(view.trace.tokens[q.query]), **values))
    st.latex(
        rf"\frac{{\partial L}}{{\partial q_{{{q.query}}}}} = \sum_j c_j\, k_j,\qquad "
        rf"c_j = \frac{{A_{{{q.query}j}} \big( g_{{{q.query}j}} - \sum_k A_{{{q.query}k}}\, g_{{{q.query}k}} \big)}}{{{_g(view.trace.divisor)}}}"
    )
    tokens = view.trace.tokens
    PAGE.table(
        {
            t("playground.grads_col_p"): [float(x) for x in q.p],
            t("playground.grads_col_g"): [float(x) for x in q.g],
            t("playground.grads_col_g_centered"): [float(x) - q.mean_g for x in q.g],
            t("playground.grads_col_c"): [float(x) for x in q.coefficients],
        },
        "grads_query", always=True, index=[f"{j} {tok}" for j, tok in enumerate(tokens)],
        index_name=t("playground.axis_key"),
    )  # fmt: skip


def cell_panel(view: View, i: int, j: int) -> None:
    """In the cell explainer, while the gradients step is on: the chosen cell's gradient past the
    softmax, from its row's weights p, the row's g and Σ p g."""
    if not is_on():
        return
    t, tr = view.t, view.trace
    grads, _ = grads_for(tr, target_seed())
    c = explain_grad_cell(tr, grads, view.head, i, j)
    st.markdown(t("playground.cell_grad_intro", i=i, j=j, seed=target_seed()))
    kit.table(
        {t("playground.grads_col_p"): [float(x) for x in c.p], t("playground.grads_col_g"): [float(x) for x in c.g]},
        index=[f"{k} {tok}" for k, tok in enumerate(tr.tokens)], index_name=t("playground.axis_key"),
    )  # fmt: skip
    lines = [
        (t("playground.cell_grad_sum"), rf"\sum_k A_{{{i}k}}\, g_{{{i}k}} = {_g(c.sum_pg)}"),
        (
            t("playground.cell_grad_masked" if c.masked else "playground.cell_grad_dscore"),
            rf"\frac{{\partial L}}{{\partial S''_{{{i},{j}}}}} = A_{{{i},{j}}} (g_{{{i},{j}}} - \textstyle\sum_k A_{{{i}k}} g_{{{i}k}})"
            rf" = {_g(c.p_cell)} \times ({_g(c.g_cell)} - ({_g(c.sum_pg)})) = {_g(c.dscore)}",
        ),
    ]
    for label, formula in lines:
        st.markdown(f"- {label}: ${formula}$")
