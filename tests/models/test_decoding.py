"""Decoding (attention_core/models/decoding.py) on the tiny Gemma-like model of tests/test_gemma_family.py:
the token-id checks, the decode state, and one decode step against its plain-Python reference pass."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.models import decoding as D
from attention_core.models import gemma3 as G
from attention_core.models import llama as L
from tests.test_gemma_family import IDS, naive_gemma_logits, tiny_gemma


def test_check_ids_limits():
    c = tiny_gemma().config  # vocabulary 29
    got = D.check_ids([0, 28, 5], c, max_tokens=3)
    assert got.dtype == np.intp and got.tolist() == [0, 28, 5]
    for bad, why in (([], "At least one"), ([[1, 2]], "At least one"), ([1, 2, 3, 4], "At most 3 tokens, got 4"),
                     ([-1], "outside"), ([29], "outside")):  # fmt: skip
        with pytest.raises(D.DecoderInputError, match=why):
            D.check_ids(bad, c, max_tokens=3)


def test_decode_step_equals_the_reference_pass_and_counts_its_bytes():
    w = tiny_gemma(seed=7)
    model = type("Model", (), {"config": w.config, "weights": w})()
    traces, logits = L.run_layers(IDS[:-2], w)
    trace = G.DecoderTrace(tuple(int(i) for i in IDS[:-2]), (), traces, logits, w.config)
    state = D.start_state(trace)
    assert state.ids == trace.ids and state.logits is logits and state.config is w.config and state.n == 7
    for token in IDS[-2:]:
        step = D.decode_step(state, np.int64(token), model, max_tokens=9)
        assert step.token_id == int(token) and type(step.token_id) is int
        assert step.state.ids == (*state.ids, int(token)) and step.state.config is w.config
        assert len(step.layers) == 6 and step.logits is step.state.logits
        state = step.state
    np.testing.assert_allclose(state.logits, naive_gemma_logits(IDS, w), atol=1e-10)
    # bytes: a local layer holds its window's 3 tokens, the global one all 9; K and V, 1 KV head,
    # head_dim 8, float64 (8 bytes)
    per_token = 2 * 1 * 8 * 8
    assert state.cache_bytes_by_kind == {"local": 5 * 3 * per_token, "global": 9 * per_token}
    assert state.cache_bytes == 24 * per_token == step.cache_bytes
    assert step.cache_bytes_by_kind == state.cache_bytes_by_kind
    assert D.cache_bytes_by_kind(state.cache, w.config) == state.cache_bytes_by_kind
    with pytest.raises(D.DecoderInputError, match="limit of 9 tokens"):
        D.decode_step(state, 1, model, max_tokens=9)
    assert D.decode_step(state, 28, model, max_tokens=10).state.n == 10
    for bad in (-1, 29):
        with pytest.raises(D.DecoderInputError, match="outside the vocabulary"):
            D.decode_step(state, bad, model, max_tokens=10)
    assert D.decode_step(state, 0, model, max_tokens=10).token_id == 0


def test_check_ids_gives_index_integers_whatever_the_input_type():
    c = tiny_gemma().config
    for ids in (np.array([3, 4], np.int32), np.array([3, 4], np.uint8), (3, 4)):
        got = D.check_ids(ids, c, max_tokens=4)
        assert got.dtype == np.intp and got.tolist() == [3, 4]
