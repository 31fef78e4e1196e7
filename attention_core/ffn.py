"""The position-wise feed-forward network (FFN) of a Transformer block.

Each token vector goes through the same small network on its own (no token looks at another here):

- the classic FFN (original Transformer, BERT, GPT-2): ``act(x W_in + b_in) W_out + b_out`` with
  ``act`` = ReLU or GELU, ``d_model -> d_ff -> d_model``;
- SwiGLU (Llama, SmolLM2): ``(SiLU(x W_gate) ⊙ (x W_up)) W_down``, no biases: the SiLU branch
  decides, feature by feature, how much of the ``x W_up`` branch passes;
- GeGLU (Gemma): the same gate with GELU's tanh approximation in place of SiLU.

Matrices are ``[in, out]`` (``x @ W``); a model that stores PyTorch/GGUF ``[out, in]`` matrices
passes their transposes (``W.T`` is a view, no copy).
"""

from __future__ import annotations

import math

import numpy as np

FFN_ACTIVATIONS = ("relu", "gelu")
FFN_GATES = ("silu", "gelu_tanh")  # the gate of a gated FFN: SwiGLU or GeGLU

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# Taylor coefficients of erf(x) / (x 2/√π): sum_k (-1)^k x^(2k) / (k! (2k+1)). For |x| <= 3 the
# terms fall below 1e-16 by k = 47, so 48 of them reach double precision.
_ERF_TAYLOR = np.array([(-1) ** k / (math.factorial(k) * (2 * k + 1)) for k in range(48)])
_ERF_SWITCH = 3.0


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, to about 1e-14 (no SciPy).

    ``|x| <= 3``: the Taylor series, summed in Horner form. ``|x| > 3``: 1 - erfc(x) with the
    continued fraction erfc(x) = exp(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
    evaluated from the tail; there erfc < 2.3e-5, so its small relative error vanishes.
    """
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    a = np.abs(x)
    small = a <= _ERF_SWITCH

    xs = x[small]
    z = xs * xs
    acc = np.full_like(xs, _ERF_TAYLOR[-1])
    for c in _ERF_TAYLOR[-2::-1]:  # Horner, in place: this loop is most of GELU's cost
        acc *= z
        acc += c
    out[small] = _TWO_OVER_SQRT_PI * xs * acc

    xl = a[~small]
    frac = np.zeros_like(xl)
    for k in range(60, 0, -1):
        frac = (k / 2.0) / (xl + frac)
    erfc = np.exp(-xl * xl) / math.sqrt(math.pi) / (xl + frac)
    out[~small] = np.sign(x[~small]) * (1.0 - erfc)
    return out


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU: ``x · Φ(x) = x/2 · (1 + erf(x/√2))`` (not the tanh approximation). Any shape."""
    x = np.asarray(x, dtype=float)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


_SQRT_TWO_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU's tanh approximation (Gemma's ``gelu_pytorch_tanh``), elementwise, in ``x``'s dtype:

    ``x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))``. Differs from exact GELU by less than 1e-3.
    """
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    t = x.dtype.type
    return t(0.5) * x * (t(1.0) + np.tanh(t(_SQRT_TWO_OVER_PI) * (x + t(0.044715) * x * x * x)))


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


def gated_ffn(
    x: np.ndarray, W_gate: np.ndarray, W_up: np.ndarray, W_down: np.ndarray, gate: str = "silu"
) -> np.ndarray:
    """A gated FFN: ``(act(x W_gate) ⊙ (x W_up)) W_down`` with ``act`` = SiLU (``"silu"``: SwiGLU)
    or GELU-tanh (``"gelu_tanh"``: GeGLU).

    ``x [n, d_model]``, ``W_gate, W_up [d_model, d_ff]``, ``W_down [d_ff, d_model]`` -> ``[n, d_model]``.
    """
    if gate == "silu":
        return swiglu(x, W_gate, W_up, W_down)
    if gate != "gelu_tanh":
        raise ValueError(f"gate must be one of {FFN_GATES}, got {gate!r}")
    return (gelu_tanh(x @ W_gate) * (x @ W_up)) @ W_down


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
