"""Token vectors are stable (across calls and processes), positions follow the sin/cos definition."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import PAD_TOKEN, AttentionConfig, embed, positional_encoding, token_embedding, trace_text

ROOT = Path(__file__).resolve().parent.parent
EPS = np.finfo(float).eps


def _hand_pe(n: int, d_model: int) -> np.ndarray:
    """The definition, one entry at a time: sin for even columns 2i, cos for odd columns 2i+1."""
    pe = np.zeros((n, d_model))
    for pos in range(n):
        for i in range((d_model + 1) // 2):
            freq = 10000.0 ** (2 * i / d_model)
            pe[pos, 2 * i] = math.sin(pos / freq)
            if 2 * i + 1 < d_model:
                pe[pos, 2 * i + 1] = math.cos(pos / freq)
    return pe


@pytest.mark.parametrize("d_model", [1, 2, 3, 7, 8, 16, 33])
@pytest.mark.parametrize("n", [1, 5, 64])
def test_positional_encoding_matches_the_definition(n, d_model):
    got = positional_encoding(n, d_model)
    assert got.shape == (n, d_model)
    np.testing.assert_allclose(got, _hand_pe(n, d_model), rtol=0, atol=1e-12)


def test_positional_encoding_first_row_and_known_values():
    pe = positional_encoding(3, 4)
    assert pe[0].tolist() == [0.0, 1.0, 0.0, 1.0]  # sin 0, cos 0, ...
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], atol=1e-15)


def test_same_token_same_vector_across_calls():
    a = token_embedding("cat", 16, 3)
    b = token_embedding("cat", 16, 3)
    assert np.array_equal(a, b)
    assert a.shape == (16,)
    assert not np.array_equal(a, token_embedding("cat", 16, 4))  # the seed matters
    assert not np.array_equal(a, token_embedding("cats", 16, 3))
    assert not np.array_equal(a, token_embedding("Cat", 16, 3))  # tokens keep their case


def test_token_vectors_are_standard_normal_ish():
    vecs = np.stack([token_embedding(f"w{i}", 64, 0) for i in range(200)])
    assert abs(vecs.mean()) < 0.05
    assert 0.95 < vecs.std() < 1.05


_CHILD = """
import sys
sys.path.insert(0, {root!r})
from attention_core import token_embedding, AttentionConfig, trace_text
print(token_embedding("猫", 8, 5).tobytes().hex())
print(token_embedding("the", 8, 5).tobytes().hex())
print(trace_text("the cat sat", AttentionConfig(d_model=8, heads=2, seed=5)).output.tobytes().hex())
"""


def _in_child(hash_seed: str) -> list[str]:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    res = subprocess.run(
        [sys.executable, "-c", _CHILD.format(root=str(ROOT))],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return res.stdout.split()


def test_same_token_same_vector_across_processes():
    first, second = _in_child("1"), _in_child("4242")
    assert first == second
    here = [
        token_embedding("猫", 8, 5).tobytes().hex(),
        token_embedding("the", 8, 5).tobytes().hex(),
        trace_text("the cat sat", AttentionConfig(d_model=8, heads=2, seed=5)).output.tobytes().hex(),
    ]
    assert first == here


def test_repeated_word_differs_only_by_position():
    cfg = AttentionConfig(d_model=8, heads=2)
    tr = trace_text("the cat sat on the mat", cfg)
    assert tr.tokens[0] == tr.tokens[4] == "the"
    pe = _hand_pe(6, 8)
    np.testing.assert_allclose(tr.X[0] - tr.X[4], pe[0] - pe[4], rtol=0, atol=8 * EPS)
    assert not np.allclose(tr.X[0], tr.X[4])


def test_without_positional_encoding_equal_tokens_give_equal_rows():
    cfg = AttentionConfig(d_model=8, heads=2, positional=False)
    tr = trace_text("the cat sat on the mat", cfg)
    assert np.array_equal(tr.X[0], tr.X[4])
    assert np.array_equal(tr.X[0], token_embedding("the", 8, 0))
    # equal rows in, equal rows out (mask none): the layer cannot tell the two "the" apart
    assert np.array_equal(tr.Q[:, 0], tr.Q[:, 4])
    np.testing.assert_allclose(tr.output[0], tr.output[4], rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2**63 - 1])
def test_pad_is_the_zero_vector(seed):
    assert np.array_equal(token_embedding(PAD_TOKEN, 5, seed), np.zeros(5))
    X = embed(("a", PAD_TOKEN, PAD_TOKEN), 5, seed, positional=False)
    assert np.array_equal(X[1:], np.zeros((2, 5)))
    Xp = embed(("a", PAD_TOKEN, PAD_TOKEN), 5, seed, positional=True)
    np.testing.assert_allclose(Xp[1:], _hand_pe(3, 5)[1:], rtol=0, atol=1e-12)  # a pad is only its position


def test_pad_typed_by_the_user_is_a_pad_only_when_it_is_the_exact_token():
    assert not np.array_equal(token_embedding("[pad]", 4, 0), np.zeros(4))
