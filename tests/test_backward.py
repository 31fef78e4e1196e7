"""The backward pass of the attention layer (attention_core/backward.py), checked three ways.

1. Central finite differences in float64 of the forward pass (the core's, itself checked against
   tests/reference_naive.py) for every weight, every bias and X: relative error <= 1e-6.
2. The softmax step against the full Jacobian built entry by entry in tests/reference_naive.py.
3. The finite-difference check is shown to fail when the Jacobian is broken (the - sum p g dropped).
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import grad_json_shapes, run_cli

from attention_core import backward as B
from attention_core import steps
from attention_core.config import AttentionConfig
from attention_core.trace import AttentionParams, attend, trace_text, trace_tokens
from tests.reference_naive import naive_softmax_backward_row, naive_softmax_jacobian_row

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PY) if VENV_PY.exists() else sys.executable

TOKENS = ("the", "cat", "sat", "on", "mats")
EPS = 1e-6  # central differences: truncation ~eps², rounding ~1e-16/eps, both far under the tolerance
TOLERANCE = 1e-6


def small_trace(mask: str, scale: str, seed: int = 3):
    # d_k != d_v != d_model / heads, so a transposed or mixed-up axis cannot go unnoticed
    pad = 2 if mask == "padding" else 0
    config = AttentionConfig(d_model=6, heads=2, d_k=3, d_v=4, mask=mask, pad=pad, scale=scale, seed=seed)
    return trace_tokens(TOKENS, config)


def fd_relative_errors(trace, target_seed: int = 0) -> dict[str, float]:
    """‖finite differences − backward‖ / max(‖·‖, ‖·‖) for every weight, bias and X of the trace."""
    grads = B.attention_grads(trace, target_seed)
    Y = grads.Y

    def loss(X, params) -> float:
        return B.half_squared_error(attend(X, params, trace.mask, trace.divisor).output, Y)

    inputs = {"X": np.array(trace.X)}
    for f in dataclasses.fields(AttentionParams):
        value = getattr(trace.params, f.name)
        if value is not None:
            inputs[f.name] = np.array(value)
    errors = {}
    for name, base in inputs.items():
        fd = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            plus, minus = base.copy(), base.copy()
            plus[idx] += EPS
            minus[idx] -= EPS
            if name == "X":
                fd[idx] = (loss(plus, trace.params) - loss(minus, trace.params)) / (2 * EPS)
            else:
                up = dataclasses.replace(trace.params, **{name: plus})
                down = dataclasses.replace(trace.params, **{name: minus})
                fd[idx] = (loss(trace.X, up) - loss(trace.X, down)) / (2 * EPS)
        analytic = np.asarray(getattr(grads, "d" + name))
        assert analytic.shape == base.shape, name
        # The floor: a gradient that is exactly 0 in theory (b_K: a key bias adds the same q·b to a
        # whole row, which the softmax ignores) would otherwise compare rounding noise with noise.
        scale = max(np.linalg.norm(fd), np.linalg.norm(analytic), 1e-3)
        errors[name] = float(np.linalg.norm(fd - analytic) / scale)
    return errors


@pytest.mark.parametrize("mask", ["none", "causal", "padding"])
@pytest.mark.parametrize("scale", ["sqrt", "none"])
def test_every_gradient_matches_finite_differences(mask, scale):
    trace = small_trace(mask, scale)
    errors = fd_relative_errors(trace, target_seed=1)
    assert set(errors) == {"X", "W_Q", "W_K", "W_V", "W_O"}
    assert max(errors.values()) <= TOLERANCE, errors


def test_biases_and_a_row_with_every_key_masked_match_finite_differences():
    rng = np.random.default_rng(7)
    h, d, d_k, d_v, n = 2, 4, 3, 2, 4
    params = AttentionParams(
        W_Q=rng.standard_normal((h, d, d_k)), W_K=rng.standard_normal((h, d, d_k)),
        W_V=rng.standard_normal((h, d, d_v)), W_O=rng.standard_normal((h * d_v, d)),
        b_Q=rng.standard_normal((h, d_k)), b_K=rng.standard_normal((h, d_k)),
        b_V=rng.standard_normal((h, d_v)), b_O=rng.standard_normal(d),
    )  # fmt: skip
    allowed = np.tril(np.ones((n, n), dtype=bool))
    allowed[2] = False  # query 2 may see no key: its weights and output are 0, whatever the weights
    trace = attend(rng.standard_normal((n, d)), params, allowed, 1.7)
    errors = fd_relative_errors(trace)
    assert set(errors) == {"X", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"}
    assert max(errors.values()) <= TOLERANCE, errors
    grads = B.attention_grads(trace)
    assert not grads.dscores[:, 2].any() and not grads.dQ[:, 2].any()
    assert np.abs(grads.db_K).max() < 1e-12 < np.abs(grads.db_Q).max()  # softmax ignores a row's shift


def test_the_check_fails_when_the_jacobian_drops_the_mean(monkeypatch):
    trace = small_trace("causal", "sqrt")
    monkeypatch.setattr(B, "softmax_backward", lambda g, p: p * g)  # g ↦ p ⊙ g: "− Σ p g" dropped
    errors = fd_relative_errors(trace, target_seed=1)
    assert errors["W_Q"] > 1e-2 and errors["W_K"] > 1e-2 and errors["X"] > 1e-3, errors
    assert errors["W_V"] <= TOLERANCE and errors["W_O"] <= TOLERANCE  # V and W_O bypass the softmax


def test_softmax_backward_equals_the_loop_jacobian():
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((3, 6)) * np.array([[1.0], [4.0], [30.0]])  # mild, sharp, saturated
    scores[0, [1, 4]] = -np.inf  # two masked keys
    p = steps.softmax(scores)
    g = rng.standard_normal((3, 6))
    got = B.softmax_backward(g, p)
    for r in range(3):
        want = naive_softmax_backward_row(p[r].tolist(), g[r].tolist())
        np.testing.assert_allclose(got[r], want, rtol=1e-12, atol=1e-15)
    assert got[0, 1] == 0.0 and got[0, 4] == 0.0
    # the loop Jacobian's rows sum to 0 (softmax's outputs always sum to 1), so the same holds here
    assert np.allclose(np.sum(naive_softmax_jacobian_row(p[1].tolist()), axis=1), 0.0)
    np.testing.assert_allclose(got.sum(axis=-1), 0.0, atol=1e-14)
    # a saturated row passes back much less than a mild one for the same g
    assert np.linalg.norm(got[2]) < 0.2 * np.linalg.norm(got[0])


def test_a_row_with_every_key_masked_passes_back_zeros():
    p = steps.softmax(np.full((1, 3), -np.inf))
    assert B.softmax_backward(np.ones((1, 3)), p).tolist() == [[0.0, 0.0, 0.0]]


def test_each_step_against_its_formula_with_batch_axes():
    rng = np.random.default_rng(2)
    b, h, n, d, d_k = 3, 2, 4, 5, 3
    X = rng.standard_normal((b, n, d))
    W = rng.standard_normal((h, d, d_k))
    dQ = rng.standard_normal((b, h, n, d_k))
    dX, dW, db = B.project_backward(dQ, X, W)
    np.testing.assert_allclose(dX, np.einsum("bhnk,hdk->bnd", dQ, W), rtol=1e-12)
    np.testing.assert_allclose(dW, np.einsum("bnd,bhnk->hdk", X, dQ), rtol=1e-12)
    np.testing.assert_allclose(db, dQ.sum(axis=(0, 2)), rtol=1e-12)
    W_O = rng.standard_normal((h * d_k, d))
    concat = rng.standard_normal((b, n, h * d_k))
    dO = rng.standard_normal((b, n, d))
    dconcat, dW_O, db_O = B.output_projection_backward(dO, concat, W_O)
    np.testing.assert_allclose(dconcat, dO @ W_O.T, rtol=1e-12)
    np.testing.assert_allclose(dW_O, np.einsum("bnr,bnm->rm", concat, dO), rtol=1e-12)
    np.testing.assert_allclose(db_O, dO.sum(axis=(0, 1)), rtol=1e-12)
    assert np.array_equal(B.merge_heads_backward(steps.merge_heads(dQ), h), dQ)
    Q, K = rng.standard_normal((2, b, h, n, d_k))
    draw = rng.standard_normal((b, h, n, n))
    dQ2, dK2 = B.raw_scores_backward(draw, Q, K)
    np.testing.assert_allclose(dQ2, np.einsum("bhij,bhjk->bhik", draw, K), rtol=1e-12)
    np.testing.assert_allclose(dK2, np.einsum("bhij,bhik->bhjk", draw, Q), rtol=1e-12)
    allowed = np.tril(np.ones((n, n), dtype=bool))
    kept = B.mask_backward(draw, allowed)
    assert not kept[..., ~allowed].any() and np.array_equal(kept[..., allowed], draw[..., allowed])
    assert np.array_equal(B.scale_backward(draw, 4.0), draw / 4.0)


def test_a_batch_gives_the_sum_of_its_examples():
    trace = small_trace("causal", "sqrt")
    rng = np.random.default_rng(5)
    X = np.stack([np.array(trace.X), rng.standard_normal(trace.X.shape)])  # [2, n, d_model]
    dO = rng.standard_normal((2, *trace.output.shape))
    batch = B.layer_backward(attend(X, trace.params, trace.mask, trace.divisor), dO)
    one = [B.layer_backward(attend(X[i], trace.params, trace.mask, trace.divisor), dO[i]) for i in range(2)]
    for name in ("dW_Q", "dW_K", "dW_V", "dW_O"):
        np.testing.assert_allclose(
            getattr(batch, name), getattr(one[0], name) + getattr(one[1], name), rtol=1e-12
        )
    for name in ("dX", "dscores", "dQ", "dV"):
        np.testing.assert_allclose(
            getattr(batch, name), np.stack([getattr(o, name) for o in one]), rtol=1e-12
        )


def test_default_target_seed_is_0_and_dO_is_taken_as_floats():
    trace = small_trace("none", "sqrt")
    assert np.array_equal(
        B.attention_grads(trace).Y, np.random.default_rng(0).standard_normal(trace.output.shape)
    )
    ints = np.ones(trace.output.shape, dtype=int).tolist()
    g = B.layer_backward(trace, ints)
    assert g.dO.dtype == np.float64 and np.array_equal(
        g.dX, B.layer_backward(trace, np.ones(trace.output.shape)).dX
    )


def test_facts_with_nothing_masked_and_with_everything_masked():
    none = small_trace("none", "sqrt")
    f = B.gradient_facts(none, B.attention_grads(none))
    assert (f.masked_cells, f.masked_max_abs_dscores, f.masked_max_abs_dweights) == (0, 0.0, 0.0)
    blocked = attend(none.X, none.params, np.zeros((5, 5), dtype=bool), none.divisor)
    f = B.gradient_facts(blocked, B.attention_grads(blocked))  # every row empty: weights and outputs 0
    assert f.scaled.mean_max_weight == 0.0 == f.unscaled.mean_max_weight
    assert f.scaled.dscores_norm == 0.0 and f.gradient_ratio == math.inf


def test_loss_and_target_are_the_ones_the_page_states():
    trace = small_trace("none", "sqrt")
    grads = B.attention_grads(trace, target_seed=4)
    Y = np.random.default_rng(4).standard_normal(trace.output.shape)
    assert np.array_equal(grads.Y, Y)
    assert grads.loss == pytest.approx(0.5 * np.sum((np.asarray(trace.output) - Y) ** 2), rel=1e-14)
    np.testing.assert_array_equal(grads.dO, np.asarray(trace.output) - Y)
    assert not grads.dW_Q.flags.writeable and not grads.Y.flags.writeable
    assert grads.db_Q is None and grads.db_K is None and grads.db_V is None and grads.db_O is None


def test_facts_masked_cells_get_exactly_zero():
    trace = small_trace("causal", "sqrt")
    facts = B.gradient_facts(trace, B.attention_grads(trace))
    assert facts.masked_cells == 2 * 10  # 5 tokens: 10 cells above the diagonal, per head
    assert facts.masked_max_abs_dscores == 0.0 and facts.masked_max_abs_draw_scores == 0.0
    assert facts.masked_max_abs_dweights > 0.1  # g itself is not 0 there: the softmax stops it
    none = small_trace("none", "sqrt")
    assert B.gradient_facts(none, B.attention_grads(none)).masked_cells == 0


def test_facts_compare_the_gradient_with_and_without_the_scaling():
    # d_k = 64: unscaled scores have a standard deviation near 8, so the softmax saturates
    text = "a b c d e f"
    config = AttentionConfig(d_model=64, heads=1, seed=1)
    trace = trace_text(text, config)
    facts = B.gradient_facts(trace, B.attention_grads(trace))
    assert facts.d_k == 64 and facts.scaled.divisor == 8.0 and facts.unscaled.divisor == 1.0
    # the same numbers as the whole pass with the other setting (the same weights, X and Y)
    for comparison, scale in ((facts.scaled, "sqrt"), (facts.unscaled, "none")):
        other = trace_text(text, dataclasses.replace(config, scale=scale))
        g = B.attention_grads(other)
        assert comparison.dscores_norm == pytest.approx(np.linalg.norm(g.dscores), rel=1e-12)
        assert comparison.draw_scores_norm == pytest.approx(np.linalg.norm(g.draw_scores), rel=1e-12)
        assert comparison.loss == pytest.approx(g.loss, rel=1e-12)
        assert comparison.mean_max_weight == pytest.approx(np.asarray(other.weights).max(axis=-1).mean())
    assert facts.unscaled.mean_max_weight > facts.scaled.mean_max_weight
    assert facts.gradient_ratio == facts.scaled.dscores_norm / facts.unscaled.dscores_norm > 1


def test_facts_decompose_dq_over_the_keys():
    trace = small_trace("causal", "sqrt")
    grads = B.attention_grads(trace)
    d = B.gradient_facts(trace, grads, head=1, query=2).query
    assert (d.head, d.query) == (1, 2)
    p, g, K = np.asarray(trace.weights[1, 2]), np.asarray(grads.dweights[1, 2]), np.asarray(trace.K[1])
    mean_g = sum(p[j] * g[j] for j in range(5))
    want = [p[j] * (g[j] - mean_g) / trace.divisor for j in range(5)]
    np.testing.assert_allclose(d.coefficients, want, rtol=1e-12, atol=1e-15)
    assert d.coefficients[3:].tolist() == [0.0, 0.0]  # keys 3, 4 are in query 2's future
    assert d.coefficients.sum() == pytest.approx(0.0, abs=1e-14)
    np.testing.assert_allclose(d.terms.sum(axis=0), grads.dQ[1, 2], rtol=1e-12)
    assert d.residual < 1e-12
    np.testing.assert_allclose(d.terms, np.asarray(want)[:, None] * K, rtol=1e-12, atol=1e-15)
    assert B.gradient_facts(trace, grads).query.query == 4  # the default: the last row
    assert np.array_equal(d.p, p) and np.array_equal(d.g, g) and np.array_equal(d.dQ_row, grads.dQ[1, 2])
    assert d.mean_g == pytest.approx(mean_g, rel=1e-12)
    assert not (d.p.flags.writeable or d.g.flags.writeable or d.dQ_row.flags.writeable)
    one = trace_tokens(("a",), AttentionConfig(d_model=4, heads=1))
    assert B.query_decomposition(one, B.attention_grads(one), 0, 0).coefficients.tolist() == [0.0]  # p = 1
    with pytest.raises(ValueError, match="^query must be between 0 and 4"):
        B.query_decomposition(trace, grads, 0, 5)


def test_one_cells_arithmetic():
    trace = small_trace("causal", "sqrt")
    grads = B.attention_grads(trace)
    c = B.explain_grad_cell(trace, grads, 0, 3, 1)
    assert c.sum_pg == pytest.approx(float(np.dot(c.p, c.g)), rel=1e-14)
    assert c.dscore == pytest.approx(c.p_cell * (c.g_cell - c.sum_pg), rel=1e-12)
    assert c.draw_score == pytest.approx(c.dscore / math.sqrt(3), rel=1e-12)
    assert (c.p_cell, c.g_cell) == (trace.weights[0, 3, 1], grads.dweights[0, 3, 1])
    assert not c.masked
    future = B.explain_grad_cell(trace, grads, 0, 1, 3)
    assert future.masked and future.p_cell == 0.0 and future.dscore == 0.0 and future.g_cell != 0.0
    assert (c.head, c.query, c.key, c.divisor) == (0, 3, 1, trace.divisor)
    assert np.array_equal(c.p, trace.weights[0, 3]) and np.array_equal(c.g, grads.dweights[0, 3])
    assert not (c.p.flags.writeable or c.g.flags.writeable)
    for bad, name in (((2, 0, 0), "head"), ((0, 5, 0), "query"), ((0, 0, -1), "key"), ((0, 0, 5), "key")):
        with pytest.raises(ValueError, match=f"^{name} must be between 0 and"):
            B.explain_grad_cell(trace, grads, *bad)


# ------------------------------------------------------------------------------------------
# python -m attention_core grad
# ------------------------------------------------------------------------------------------


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "attention_core", "grad", *args], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


def test_cli_json_keys_shapes_and_values():
    out = _run("--text", "the cat sat on", "--heads", "2", "--d-model", "8", "--d-v", "3", "--mask", "causal",
               "--target-seed", "5", "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    h, n, d, d_k, d_v = 2, 4, 8, 4, 3
    shapes = grad_json_shapes(h, n, d, d_k, d_v)
    assert list(data) == ["loss", "config", *shapes]
    assert {k: np.shape(data[k]) for k in shapes} == shapes
    trace = trace_text("the cat sat on", AttentionConfig(d_model=8, heads=2, d_v=3, mask="causal"))
    grads = B.attention_grads(trace, 5)
    assert data["loss"] == grads.loss and data["config"]["mask"] == "causal"
    for key in shapes:
        assert np.array_equal(np.array(data[key]), getattr(grads, key)), key


def _main(capsys, *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "grad", *args)


@pytest.mark.parametrize(
    "args",
    [
        ("--text", "   "),
        ("--text", "a b", "--target-seed", "-1"),
        ("--text", "a b", "--heads", "3"),
        ("--text", "a b", "--target-seed", "x"),
        ("--text", "a b", "--scale", "0"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(capsys, args):
    code, out, err = _main(capsys, *args, "--json")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err


def test_cli_text_names_the_loss_and_the_invented_target(capsys):
    code, out, _ = _main(capsys, "--text", "the cat", "--target-seed", "3")
    assert code == 0
    assert "Y invented" in out and "seed 3" in out and "p * (g - sum p g)" in out
