"""The training lab's model (attention_core/training/model.py): the whole model's gradient against
central finite differences in float64 (and a broken backward step that the check must catch), the
cross-entropy and accuracy from their definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.steps import build_mask
from attention_core.training import model as M

EPS = 1e-6
TOLERANCE = 1e-6


def _perturbed_model(shape: M.ModelShape, seed: int = 1) -> M.Params:
    params = M.init_model(shape, seed)
    # γ = 1 and zero biases at initialisation: nudge every entry, so no parameter sits at a special value
    params.flat[...] += 0.1 * np.random.default_rng(seed + 10).standard_normal(params.flat.size)
    return params


def model_fd_errors(shape: M.ModelShape, mask: str, divisor: float = 1.7) -> dict[str, float]:
    """Per parameter: ‖finite differences − backward‖ / max(‖·‖, ‖·‖, 1e-3) of the mean cross-entropy."""
    params = _perturbed_model(shape)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, shape.vocab_in, (3, shape.n))
    targets = rng.integers(0, shape.vocab_out, (3, shape.n))
    scored = rng.random((3, shape.n)) > 0.3
    allowed = build_mask(mask, shape.n)

    def loss() -> float:
        return M.cross_entropy(M.forward(params, tokens, allowed, divisor).logits, targets, scored)[0]

    fwd = M.forward(params, tokens, allowed, divisor)
    _, dlogits = M.cross_entropy(fwd.logits, targets, scored)
    grads = M.backward(params, fwd, dlogits, params.zeros_like())
    fd = params.zeros_like()
    for i in range(params.flat.size):
        old = params.flat[i]
        params.flat[i] = old + EPS
        up = loss()
        params.flat[i] = old - EPS
        down = loss()
        params.flat[i] = old
        fd.flat[i] = (up - down) / (2 * EPS)
    return {
        name: float(
            np.linalg.norm(fd[name] - grads[name])
            / max(np.linalg.norm(fd[name]), np.linalg.norm(grads[name]), 1e-3)
        )
        for name in M.parameter_shapes(shape)
    }


@pytest.mark.parametrize(
    "ffn, positions, mask", [(False, True, "causal"), (True, True, "none"), (True, False, "causal")]
)
def test_whole_model_gradient_matches_finite_differences(ffn, positions, mask):
    layers = 1 if ffn and not positions else 2  # fewer parameters where two layers add nothing new
    shape = M.ModelShape(
        vocab_in=5, vocab_out=4, n=4, d_model=6, heads=2, d_k=3, layers=layers, ffn=ffn, positions=positions
    )
    errors = model_fd_errors(shape, mask)
    assert ("P" in errors) == positions and ("0.W_in" in errors) == ffn and (f"{layers - 1}.W_Q" in errors)
    assert max(errors.values()) <= TOLERANCE, {k: v for k, v in errors.items() if v > TOLERANCE}


def test_the_model_check_fails_when_a_backward_step_is_wrong(monkeypatch):
    shape = M.ModelShape(
        vocab_in=5, vocab_out=4, n=4, d_model=6, heads=2, d_k=3, layers=1, ffn=True, positions=True
    )
    right = M.layer_norm_backward

    def no_spread_term(dy, cache, g):  # LayerNorm's backward without the x̂ · mean(ĝ x̂) term
        dx, dg, db = right(dy, cache, g)
        x_hat, std = cache
        return dx + x_hat * np.mean(dy * g * x_hat, axis=-1, keepdims=True) / std, dg, db

    monkeypatch.setattr(M, "layer_norm_backward", no_spread_term)
    errors = model_fd_errors(shape, "causal")
    assert errors["E"] > 1e-3 and errors["0.W_Q"] > 1e-3
    assert errors["W_U"] <= TOLERANCE  # read after the last norm's backward: untouched


def test_cross_entropy_and_accuracy_from_their_definitions():
    logits = np.array([[[2.0, 0.0, -1.0], [0.0, 3.0, 0.0]]])
    targets = np.array([[0, 2]])
    scored = np.array([[True, True]])
    loss, dlogits = M.cross_entropy(logits, targets, scored)
    p0 = np.exp(logits[0, 0]) / np.exp(logits[0, 0]).sum()
    p1 = np.exp(logits[0, 1]) / np.exp(logits[0, 1]).sum()
    assert loss == pytest.approx(-(math.log(p0[0]) + math.log(p1[2])) / 2, rel=1e-12)
    np.testing.assert_allclose(dlogits[0, 0], (p0 - [1, 0, 0]) / 2, rtol=1e-12)
    assert M.accuracy(logits, targets, scored) == 0.5
    assert M.accuracy(logits, targets, np.array([[True, False]])) == 1.0
    _, d = M.cross_entropy(logits, targets, np.array([[False, True]]))
    assert not d[0, 0].any()


# ------------------------------------------------------------------------------------------
# Tasks, against loops written from the definitions
# ------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------
# The loop
# ------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------
# The experiments (tiny step counts: structure and the computed facts, not the learning)
# ------------------------------------------------------------------------------------------
