"""Adam (Kingma & Ba 2015) on one flat parameter vector.

    m ← β₁ m + (1 − β₁) g,   v ← β₂ v + (1 − β₂) g²
    θ ← θ − lr · m̂ / (√v̂ + ε),   m̂ = m / (1 − β₁ᵗ),  v̂ = v / (1 − β₂ᵗ)

Each parameter gets its own step size from its own gradient history, which is why one learning
rate suits embeddings and attention matrices alike.
"""

from __future__ import annotations

import numpy as np


class Adam:
    """Adam's state for a flat vector of ``size`` parameters (mutable; :meth:`step` updates in place)."""

    def __init__(
        self, size: int, lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8
    ) -> None:
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = np.zeros(size)
        self.v = np.zeros(size)
        self.t = 0

    def step(self, theta: np.ndarray, grad: np.ndarray) -> None:
        """One update of ``theta`` (in place) from ``grad`` (both ``[size]``)."""
        self.t += 1
        self.m *= self.beta1
        self.m += (1.0 - self.beta1) * grad
        self.v *= self.beta2
        self.v += (1.0 - self.beta2) * (grad * grad)
        m_hat = self.m / (1.0 - self.beta1**self.t)  # early steps: undo the bias towards 0
        v_hat = self.v / (1.0 - self.beta2**self.t)
        theta -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
