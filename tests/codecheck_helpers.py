"""What the code check's tests share: a right implementation as a learner would write it, and a
sandbox per test module."""

from __future__ import annotations

import pytest

from attention_core.codecheck.sandbox import Sandbox

RIGHT = """import numpy as np

def attention(X, W_Q, W_K, W_V, mask, d_k):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = Q @ K.T / np.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    m = S.max(axis=-1, keepdims=True)
    E = np.exp(S - np.where(np.isfinite(m), m, 0.0))
    total = E.sum(axis=-1, keepdims=True)
    A = E / np.where(total == 0, 1.0, total)
    return A @ V
"""


@pytest.fixture(scope="module")
def sandbox():
    """A sandbox with a warm spare. Its wall clock is generous: on a loaded test machine 2 s of CPU can
    take many seconds of wall time, and the tests must see the CPU limit stop an endless loop."""
    box = Sandbox(wall_seconds=90)
    box.prestart()
    yield box
    box.close()
