"""The playground's optional gradients step (issue 36, part 1): off by default, on it shows d(weights)
and d(scores) for every head, the three facts from the sentence's numbers, and the chosen cell's
arithmetic in the cell explainer. The facts' checks are fed broken numbers and must say so."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from apptest_pages import chart_spec, charts, open_page, texts

from attention_core import AttentionConfig, trace_text
from attention_core.backward import attention_grads, gradient_facts
from attention_ui.i18n import catalog
from attention_ui.playground import grads_view

TEXT = "the cat sat on the mat"  # 6 tokens
N, HEADS = 6, 2


def test_off_by_default_no_backward_pass():
    at = open_page()
    assert "pg_chart_grads_dweights" not in charts(at)
    assert any(t.key == "pg_grads" for t in at.toggle) and not at.toggle(key="pg_grads").value
    assert "Gradients: the backward pass" in [h.value.split(". ", 1)[-1] for h in at.header]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_on_shows_every_head_and_the_facts(lang):
    at = open_page(lang=lang, pg_text=TEXT, pg_mask="causal", pg_grads=True)
    msgs = catalog(lang)
    trace = trace_text(TEXT, AttentionConfig(d_model=16, heads=HEADS, seed=0, mask="causal"))
    grads = attention_grads(trace, target_seed=0)
    for name, values in (("dweights", grads.dweights), ("dscores", grads.dscores)):
        fig = chart_spec(at, f"pg_chart_grads_{name}")
        panels = [tr for tr in fig["data"] if tr.get("name") == "values"]
        assert len(panels) == HEADS
        z0 = np.array([[np.nan if v is None else v for v in row] for row in panels[1]["z"]], float)
        allowed = np.tril(np.ones((N, N), bool))
        shown = allowed if name == "dscores" else np.ones((N, N), bool)  # masked cells grey on d(scores)
        np.testing.assert_allclose(z0[shown], values[1][shown], rtol=1e-6)
        assert fig["layout"]["coloraxis"]["cmin"] == -fig["layout"]["coloraxis"]["cmax"]  # centred on 0
    page = texts(at)
    # 2 heads × 15 cells above the diagonal of a 6 × 6 causal mask, counted by hand
    cells = HEADS * (N * (N - 1) // 2)
    fact = next(line for line in page.splitlines() if line.startswith(msgs["playground.grads_fact_mask"][:8]))
    expected = msgs["playground.grads_fact_mask"].split("{g}")[0].format(cells=cells)  # up to the first value
    assert fact.startswith(expected), fact
    assert msgs["playground.grads_invented"].split("{seed}")[0].strip()[:20] in "\n".join(
        i.value for i in at.info
    )


def test_cell_explainer_gives_the_rows_arithmetic():
    at = open_page(
        pg_text=TEXT, pg_mask="causal", pg_grads=True, pg_explain_cell=True, pg_cell_q=3, pg_cell_k=1
    )
    trace = trace_text(TEXT, AttentionConfig(d_model=16, heads=HEADS, seed=0, mask="causal"))
    grads = attention_grads(trace, target_seed=0)
    p, g = trace.weights[0, 3], grads.dweights[0, 3]
    by_hand = p[1] * (g[1] - sum(p[k] * g[k] for k in range(N)))  # the softmax's Jacobian, cell by cell
    line = next(m.value for m in at.markdown if "the gradient at this cell's score" in m.value)
    assert line.endswith(f"= {by_hand:.4g}$")
    masked = open_page(pg_text=TEXT, pg_mask="causal", pg_grads=True, pg_explain_cell=True, pg_cell_q=1,
                       pg_cell_k=4)  # fmt: skip
    assert any("masked: its weight is 0" in m.value and m.value.endswith("= 0$") for m in masked.markdown)


def _facts(mask: str = "causal"):
    trace = trace_text(TEXT, AttentionConfig(d_model=16, heads=HEADS, seed=0, mask=mask, d_k=32))
    return gradient_facts(trace, attention_grads(trace))


def test_mask_fact_reports_a_broken_gradient():
    facts = _facts()
    assert grads_view.mask_fact(facts)[0] == "playground.grads_fact_mask"
    broken = dataclasses.replace(facts, masked_max_abs_dscores=1e-3)
    key, values = grads_view.mask_fact(broken)
    assert key == "playground.grads_fact_mask_broken" and values["s"] == "0.001"
    assert grads_view.mask_fact(_facts("none"))[0] == "playground.grads_fact_mask_none"


def test_scale_fact_says_when_the_undivided_gradient_is_not_smaller():
    facts = _facts()
    key, values = grads_view.scale_fact(facts)
    assert key == "playground.grads_fact_scale_smaller"  # d_k = 32: the undivided softmax saturates
    assert float(values["ratio"]) == pytest.approx(
        facts.scaled.dscores_norm / facts.unscaled.dscores_norm, rel=1e-3
    )
    swapped = dataclasses.replace(facts, scaled=facts.unscaled, unscaled=facts.scaled)
    assert grads_view.scale_fact(swapped)[0] == "playground.grads_fact_scale_not_smaller"


def test_query_fact_reports_a_sum_that_does_not_match():
    trace = trace_text(TEXT, AttentionConfig(d_model=16, heads=HEADS, seed=0, mask="causal"))
    grads = attention_grads(trace)
    facts = gradient_facts(trace, grads)
    assert facts.query.residual <= grads_view.QUERY_TOL
    broken = dataclasses.replace(facts, query=dataclasses.replace(facts.query, residual=0.5))
    assert grads_view.query_fact(broken)[0] == "playground.grads_fact_query_broken"
    assert grads_view.query_fact(facts)[0] == "playground.grads_fact_query"
