"""The hidden cases and their reference (attention_core/codecheck/cases.py): a query with no key left
reads zeros, and multi_head's reference is the one-head reference per head, concatenated, through W_O."""

from __future__ import annotations

import numpy as np

from attention_core.codecheck.cases import MULTI_STEPS, Case, hidden_cases, reference

MULTI = next(c for c in hidden_cases() if c.multi)
ONE = next(c for c in hidden_cases() if not c.multi)


def test_case_reference_of_a_fully_masked_row_is_zero():
    case = next(c for c in hidden_cases() if c.name == "masked_row")
    assert np.all(reference(case).output[2] == 0.0) and np.all(reference(case).weights[2] == 0.0)
    assert isinstance(case, Case) and case.d_k == 2 and case.n == 4


def test_multi_heads_reference_has_every_step_head_first():
    ref = reference(MULTI)
    assert ref.multi and ref.steps == MULTI_STEPS and not reference(ONE).multi
    for h in range(MULTI.W_Q.shape[0]):  # each head is the one-head reference on that head's weights
        one = reference(Case("h", MULTI.X, MULTI.W_Q[h], MULTI.W_K[h], MULTI.W_V[h], MULTI.mask, MULTI.d_k))
        for step in ("Q", "K", "V", "scores", "scaled", "masked", "weights"):
            np.testing.assert_allclose(ref.step(step)[h], one.step(step), rtol=0, atol=1e-12)
        np.testing.assert_allclose(ref.heads[h], one.output, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ref.concat, np.concatenate(list(ref.heads), axis=-1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ref.layer_output, ref.concat @ MULTI.W_O, rtol=0, atol=1e-12)
