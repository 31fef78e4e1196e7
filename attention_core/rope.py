"""Rotary position embeddings (RoPE): turn each pair of coordinates of q and k by an angle that grows
with the token's position.

A head vector of ``d`` coordinates (``d`` even) is read as ``d/2`` pairs. At position ``p``, pair
``i`` (``i = 0 .. d/2-1``) turns by the angle ``p·θ_i`` with the frequency

    θ_i = base^(-2i/d)          (pair 0 turns fastest, by 1 radian per position)

so that ``(a, b) -> (a cos pθ_i - b sin pθ_i,  a sin pθ_i + b cos pθ_i)``. RoPE is applied to the
queries and keys only (never to the values), after the projections and before the scores. Because
a rotation by ``mθ`` followed by the inverse of one by ``nθ`` is a rotation by ``(m-n)θ``, the
score ``rope(q, m) · rope(k, n)`` depends on the positions only through the offset ``m - n``.

Which coordinates form a pair (``layout``):

- ``"interleaved"``: pair ``i`` is coordinates ``(2i, 2i+1)``. This is the layout of the RoFormer
  paper, of llama.cpp and therefore of every Llama-architecture GGUF file.
- ``"half"``: pair ``i`` is coordinates ``(i, i + d/2)``, the "rotate_half" layout of the
  Hugging Face Llama code and checkpoints.

The two are the same computation on reordered coordinates. When llama.cpp converts a Hugging Face
Llama checkpoint to GGUF it reorders the output rows of ``W_Q`` and ``W_K`` within each head
(:func:`half_to_interleaved_rows`): the row that produced coordinate ``s·d/2 + i`` (``s`` = 0 or
1) becomes row ``2i + s``. A file's ``W_Q``/``W_K`` therefore belong with ``"interleaved"``, and
Hugging Face's loader undoes the reordering (:func:`interleaved_to_half_rows`) before it uses
``"half"``. Scores and attention weights are identical either way, since a dot product does not
change when both vectors' coordinates are reordered the same way; only the order of the coordinates
of q and k differs. ``W_V`` and ``W_O`` are never reordered.
"""

from __future__ import annotations

import numpy as np

ROPE_LAYOUTS = ("interleaved", "half")


def _check_head_dim(head_dim: int) -> None:
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"RoPE needs an even head_dim of at least 2, got {head_dim}")


def _check_layout(layout: str) -> None:
    if layout not in ROPE_LAYOUTS:
        raise ValueError(f"layout must be one of {ROPE_LAYOUTS}, got {layout!r}")


def rope_frequencies(head_dim: int, base: float) -> np.ndarray:
    """θ_i = base^(-2i/d) for the ``d/2`` pairs: ``-> [d/2]`` (float64, θ_0 = 1, decreasing)."""
    _check_head_dim(head_dim)
    if not base > 1:
        raise ValueError(f"the RoPE base must be greater than 1, got {base}")
    return float(base) ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)


def rope_angles(positions: np.ndarray, head_dim: int, base: float) -> np.ndarray:
    """The angle of every pair at every position, ``p·θ_i``: ``[n] -> [n, d/2]`` (float64)."""
    positions = np.asarray(positions, dtype=np.float64)
    return positions[:, None] * rope_frequencies(head_dim, base)[None, :]


def rope_cos_sin(positions: np.ndarray, head_dim: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """The cos and sin tables of the angles: ``[n] -> ([n, d/2], [n, d/2])`` (float64)."""
    angles = rope_angles(positions, head_dim, base)
    return np.cos(angles), np.sin(angles)


def pair_indices(head_dim: int, layout: str = "interleaved") -> tuple[np.ndarray, np.ndarray]:
    """The coordinates that form pair ``i``: ``-> (first [d/2], second [d/2])``.

    ``"interleaved"``: ``(2i, 2i+1)``; ``"half"``: ``(i, i + d/2)``.
    """
    _check_head_dim(head_dim)
    _check_layout(layout)
    half = head_dim // 2
    i = np.arange(half)
    if layout == "interleaved":
        return 2 * i, 2 * i + 1
    return i, i + half


def rotate_pairs(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, layout: str = "interleaved") -> np.ndarray:
    """Turn every pair ``(a, b)`` of ``x`` to ``(a cos - b sin, a sin + b cos)``.

    ``x [..., n, d]``, ``cos, sin [n, d/2]`` -> ``[..., n, d]`` in ``x``'s dtype (the tables are
    cast to it). Leading axes (heads) share the same tables.
    """
    x = np.asarray(x)
    d = x.shape[-1]
    first, second = pair_indices(d, layout)
    if cos.shape != (x.shape[-2], d // 2) or sin.shape != cos.shape:
        raise ValueError(
            f"cos and sin must be [n, d/2] = {(x.shape[-2], d // 2)}, got {cos.shape}, {sin.shape}"
        )
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    c, s = cos.astype(dtype, copy=False), sin.astype(dtype, copy=False)
    a, b = x[..., first], x[..., second]  # [..., n, d/2] each
    out = np.empty(x.shape, dtype=dtype)
    out[..., first] = a * c - b * s
    out[..., second] = a * s + b * c
    return out


def apply_rope(x: np.ndarray, positions: np.ndarray, base: float, layout: str = "interleaved") -> np.ndarray:
    """RoPE at the given positions: ``x [..., n, d]``, ``positions [n]`` -> ``[..., n, d]``."""
    x = np.asarray(x)
    cos, sin = rope_cos_sin(positions, x.shape[-1], base)
    return rotate_pairs(x, cos, sin, layout)


def pair_norms(x: np.ndarray, layout: str = "interleaved") -> np.ndarray:
    """The length of each pair, which RoPE never changes: ``[..., d] -> [..., d/2]``."""
    x = np.asarray(x)
    first, second = pair_indices(x.shape[-1], layout)
    return np.hypot(x[..., first], x[..., second])


def half_to_interleaved_permutation(head_dim: int) -> np.ndarray:
    """Coordinate order that turns a "half" vector into an "interleaved" one: ``-> [d]``.

    ``x_interleaved = x_half[..., perm]``: new coordinate ``2i + s`` is old coordinate ``s·d/2 + i``.
    """
    first, second = pair_indices(head_dim, "half")
    perm = np.empty(head_dim, dtype=np.intp)
    perm[0::2], perm[1::2] = first, second
    return perm


def half_to_interleaved_rows(W: np.ndarray, heads: int) -> np.ndarray:
    """Reorder the output rows of a Hugging Face ``W_Q``/``W_K`` the way llama.cpp's converter does.

    ``W [heads·d, d_in]`` (PyTorch ``[out, in]`` layout) -> same shape: within each head, row
    ``s·d/2 + i`` moves to ``2i + s``.
    """
    W = np.asarray(W)
    if W.shape[0] % heads:
        raise ValueError("the number of rows must be a multiple of heads")
    d = W.shape[0] // heads
    perm = half_to_interleaved_permutation(d)
    return W.reshape(heads, d, *W.shape[1:])[:, perm].reshape(W.shape)


def interleaved_to_half_rows(W: np.ndarray, heads: int) -> np.ndarray:
    """Undo :func:`half_to_interleaved_rows` (what Hugging Face's GGUF loader does): same shapes."""
    W = np.asarray(W)
    if W.shape[0] % heads:
        raise ValueError("the number of rows must be a multiple of heads")
    d = W.shape[0] // heads
    inverse = np.argsort(half_to_interleaved_permutation(d))
    return W.reshape(heads, d, *W.shape[1:])[:, inverse].reshape(W.shape)
