"""The position-wise feed-forward network (FFN) of a Transformer block.

Each token vector goes through the same small network on its own (no token looks at another here):

- the classic FFN (original Transformer, BERT, GPT-2): ``act(x W_in + b_in) W_out + b_out`` with
  ``act`` = ReLU or GELU, ``d_model -> d_ff -> d_model``;
- SwiGLU (Llama, SmolLM2): ``(SiLU(x W_gate) ⊙ (x W_up)) W_down``, no biases: the SiLU branch
  decides, feature by feature, how much of the ``x W_up`` branch passes.

Matrices are ``[in, out]`` (``x @ W``); a model that stores PyTorch/GGUF ``[out, in]`` matrices
passes their transposes (``W.T`` is a view, no copy).
"""

from __future__ import annotations

import numpy as np

from .pretrained import gelu  # exact (erf) GELU; its home moves with the pretrained module

FFN_ACTIVATIONS = ("relu", "gelu")


def relu(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)``, elementwise. Any shape."""
    return np.maximum(x, 0)


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU (swish): ``x · sigmoid(x) = x / (1 + e^(-x))``, elementwise. Any shape.

    For a very negative ``x``, ``e^(-x)`` overflows to ∞ and the result is the correct limit 0
    (the overflow warning is silenced).
    """
    x = np.asarray(x)
    with np.errstate(over="ignore"):
        return x / (1 + np.exp(-x))


def swiglu(x: np.ndarray, W_gate: np.ndarray, W_up: np.ndarray, W_down: np.ndarray) -> np.ndarray:
    """SwiGLU FFN: ``(SiLU(x W_gate) ⊙ (x W_up)) W_down``.

    ``x [n, d_model]``, ``W_gate, W_up [d_model, d_ff]``, ``W_down [d_ff, d_model]`` ->
    ``[n, d_model]``.
    """
    return (silu(x @ W_gate) * (x @ W_up)) @ W_down


def mlp_ffn(
    x: np.ndarray,
    W_in: np.ndarray,
    b_in: np.ndarray | None,
    W_out: np.ndarray,
    b_out: np.ndarray | None,
    activation: str = "gelu",
) -> np.ndarray:
    """Classic FFN: ``act(x W_in + b_in) W_out + b_out`` with ``act`` = ``"relu"`` or ``"gelu"``.

    ``x [n, d_model]``, ``W_in [d_model, d_ff]``, ``W_out [d_ff, d_model]`` -> ``[n, d_model]``.
    """
    if activation not in FFN_ACTIVATIONS:
        raise ValueError(f"activation must be one of {FFN_ACTIVATIONS}, got {activation!r}")
    hidden = x @ W_in
    if b_in is not None:
        hidden = hidden + b_in
    hidden = relu(hidden) if activation == "relu" else gelu(hidden)
    out = hidden @ W_out
    if b_out is not None:
        out = out + b_out
    return out
