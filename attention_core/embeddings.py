"""Token vectors and positional encoding: how a sentence becomes the matrix X."""

from __future__ import annotations

import hashlib

import numpy as np

from .config import PAD_TOKEN


def token_seed(token: str, seed: int) -> int:
    """A 64-bit integer fixed by (token, seed), identical in every process.

    Python's built-in string hashing is salted per process, so it cannot be used here; BLAKE2b can.
    """
    digest = hashlib.blake2b(f"{seed}\x1f{token}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def token_embedding(token: str, d_model: int, seed: int) -> np.ndarray:
    """The vector of one token string, shape ``(d_model,)``, entries ~ N(0, 1).

    ``[PAD]`` is the zero vector, as a padding embedding usually is: pads carry no content.
    """
    if token == PAD_TOKEN:
        return np.zeros(d_model)
    return np.random.default_rng(token_seed(token, seed)).standard_normal(d_model)


def positional_encoding(n: int, d_model: int) -> np.ndarray:
    """Sinusoidal positional encoding, shape ``(n, d_model)``.

    Column 2i is sin(pos / 10000^(2i/d_model)) and column 2i+1 the cosine at the same
    frequency; an odd d_model simply ends on a sine column.
    """
    pos = np.arange(n)[:, None]  # [n, 1]
    two_i = np.arange(0, d_model, 2)[None, :]  # [1, ceil(d_model/2)]
    angle = pos / np.power(10000.0, two_i / d_model)  # [n, ceil(d_model/2)]
    pe = np.zeros((n, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe


def embed(
    tokens: tuple[str, ...] | list[str], d_model: int, seed: int, positional: bool = True
) -> np.ndarray:
    """X, shape ``(n, d_model)``: each token's vector, plus its position's encoding if asked."""
    X = np.stack([token_embedding(t, d_model, seed) for t in tokens]) if tokens else np.zeros((0, d_model))
    if positional:
        X = X + positional_encoding(len(tokens), d_model)
    return X
