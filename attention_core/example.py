"""The worked example of the reference notes, rebuilt from the same random draws.

The notes draw, from ``default_rng(0)``: X ``(4, 6)``, then W_Q ``(6, 3)``, W_K ``(6, 3)`` and
W_V ``(6, 2)``, all standard normal (no 1/√fan_in scaling), and apply one causal head with the
√d_k divisor. The notes stop at the head output; to show the W^O step as well, W_O ``(2, 6)`` is
drawn *after* the other three, so none of the notes' numbers move.
"""

from __future__ import annotations

import math

import numpy as np

from . import steps
from .trace import AttentionParams, AttentionTrace, attend

N, D_MODEL, D_K, D_V, SEED = 4, 6, 3, 2, 0
TOKENS = ("x0", "x1", "x2", "x3")


def worked_example_params() -> tuple[np.ndarray, AttentionParams]:
    """X ``[4, 6]`` and the single-head parameters, drawn in the notes' order."""
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(N, D_MODEL))
    W_Q = rng.normal(size=(D_MODEL, D_K))
    W_K = rng.normal(size=(D_MODEL, D_K))
    W_V = rng.normal(size=(D_MODEL, D_V))
    W_O = rng.normal(size=(D_V, D_MODEL))  # extra draw, after the notes' three
    params = AttentionParams(W_Q=W_Q[None], W_K=W_K[None], W_V=W_V[None], W_O=W_O)
    return X, params


def worked_example_trace() -> AttentionTrace:
    """The notes' example as a trace: n=4, d_model=6, d_k=3, d_v=2, causal, ÷√3."""
    X, params = worked_example_params()
    return attend(X, params, steps.build_mask("causal", N), math.sqrt(D_K), tokens=TOKENS)
