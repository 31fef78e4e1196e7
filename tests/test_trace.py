"""The attention trace (attention_core/trace.py): what attend copies and fills in, the settings the
trace functions pass on, and the weight properties read through to the parameters."""

from __future__ import annotations

import numpy as np
import pytest


def _tiny_params(h=2, d=4, d_k=2):
    from attention_core.trace import AttentionParams

    rng = np.random.default_rng(5)
    return AttentionParams(
        rng.normal(size=(h, d, d_k)), rng.normal(size=(h, d, d_k)), rng.normal(size=(h, d, d_k)),
        rng.normal(size=(h * d_k, d)),
    )  # fmt: skip


def test_attend_copies_what_the_caller_hands_in():
    """The trace never aliases the caller's arrays, and never freezes them."""
    from attention_core.trace import AttentionParams, attend

    rng = np.random.default_rng(6)
    X = rng.normal(size=(3, 4))
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    W = [rng.normal(size=(2, 4, 2)) for _ in range(3)] + [rng.normal(size=(4, 4))]
    params = AttentionParams(*W)
    tr = attend(X, params, allowed, 2.0)
    assert X.flags.writeable and allowed.flags.writeable and all(w.flags.writeable for w in W)
    X_before, mask_before, WQ_before = tr.X.copy(), tr.mask.copy(), params.W_Q.copy()
    X[:] = 0.0
    allowed[:] = False
    W[0][:] = 0.0
    np.testing.assert_array_equal(tr.X, X_before)
    np.testing.assert_array_equal(tr.mask, mask_before)
    np.testing.assert_array_equal(params.W_Q, WQ_before)
    assert not params.W_Q.flags.writeable and not params.W_O.flags.writeable


def test_attend_takes_integer_inputs_and_fills_its_defaults():
    from attention_core.trace import attend

    X = np.array([[1, 0, 2, 0], [0, 1, 0, 3], [2, 2, 0, 1]])  # integers
    allowed = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 1]])  # 0/1 instead of bools
    tr = attend(X, _tiny_params(), allowed, 2)
    assert tr.X.dtype == np.float64 and tr.mask.dtype == np.bool_
    assert tr.tokens == ("0", "1", "2") and tr.n_pad == 0 and tr.config is None and tr.tokenization is None
    assert tr.divisor == 2.0 and isinstance(tr.divisor, float)
    assert np.all(tr.weights[:, 0, 1:] == 0.0)  # the 0/1 mask is applied as a mask
    np.testing.assert_allclose(tr.weights.sum(axis=-1), 1.0)


def test_trace_tokens_and_text_pass_their_settings_on():
    from attention_core import AttentionConfig
    from attention_core.embeddings import embed
    from attention_core.trace import trace_text, trace_tokens

    cfg = AttentionConfig(d_model=8, heads=2, positional=False, seed=3)
    tr = trace_tokens(("a", "b", "a"), cfg)
    np.testing.assert_array_equal(tr.X, embed(("a", "b", "a"), 8, 3, False))
    np.testing.assert_array_equal(tr.X[0], tr.X[2])  # no positions: the same word, the same row
    assert tr.config is cfg
    tt = trace_text("one two three four five", cfg, max_tokens=3)
    assert tt.tokens == ("one", "two", "three") and tt.config is cfg
    assert tt.tokenization is not None and tt.tokenization.tokens == ("one", "two", "three")


def test_a_weight_property_is_read_only_and_reads_the_parameters():
    from types import SimpleNamespace

    from attention_core import trace

    params = SimpleNamespace(W_Q=np.zeros((1, 2, 2)), W_K=np.ones((1, 2, 2)))
    holder = type("Holder", (), {"params": params, "W_K": trace._param("W_K")})()
    assert holder.W_K is params.W_K  # the very array, not W_Q's nor a copy
    assert type(holder).W_K.__doc__ == "``params.W_K``"
    with pytest.raises(AttributeError):
        holder.W_K = np.zeros((1, 2, 2))
