"""Normalisation of each token's vector before (pre-norm) or after (post-norm) a sub-layer.

Both work row by row: every token vector ``[d]`` is rescaled on its own, never mixed with others.
"""

from __future__ import annotations

import numpy as np


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """RMSNorm (Llama): divide each row by its root mean square, then scale per feature.

    ``x / sqrt(mean(x²) + eps) · weight``: ``[..., d], [d] -> [..., d]``. No mean is subtracted
    and there is no shift, unlike LayerNorm. Computed in ``x``'s dtype (float32 stays float32).
    """
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    mean_square = np.mean(x * x, axis=-1, keepdims=True)  # [..., 1]
    return x / np.sqrt(mean_square + x.dtype.type(eps)) * weight.astype(x.dtype, copy=False)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm: each row to mean 0 and (biased) variance 1, then scale by ``gamma`` and shift by ``beta``.

    ``(x - mean) / sqrt(var + eps) · gamma + beta``: ``[..., d], [d], [d] -> [..., d]``.
    """
    x_hat, _ = standardise(x, eps)
    return x_hat * gamma + beta


def standardise(x: np.ndarray, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    """LayerNorm's first half: ``x̂ = (x - mean) / std`` with ``std = sqrt(var + eps)`` (biased variance).

    ``[..., d] -> ([..., d], [..., 1])``; the training lab's backward pass needs both.
    """
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    mean = np.mean(x, axis=-1, keepdims=True)  # [..., 1]
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # [..., 1]
    std = np.sqrt(var + x.dtype.type(eps))
    return centred / std, std
