"""AttentionConfig refuses what the core cannot do, with a message a learner can act on."""

from __future__ import annotations

import math

import pytest

from attention_core import AttentionConfig, AttentionConfigError, trace_text

REFUSED = [
    # (kwargs, words the message must contain)
    ({"d_model": 4, "heads": 8}, ["heads", "8", "d_model", "4"]),
    ({"d_model": 10, "heads": 3}, ["divisible", "10", "3"]),
    ({"d_model": 0}, ["d_model", "between"]),
    ({"d_model": -4}, ["d_model"]),
    ({"d_model": 10**6}, ["d_model", "between"]),
    ({"heads": 0}, ["heads"]),
    ({"d_k": 0}, ["d_k", "between", "0"]),
    ({"d_v": 0}, ["d_v", "between"]),
    ({"d_k": -1, "d_v": 2}, ["d_k"]),
    ({"d_k": 2.0}, ["d_k", "whole number"]),
    ({"mask": "future"}, ["mask", "future", "causal"]),
    ({"mask": "Causal"}, ["mask", "causal"]),
    ({"mask": ""}, ["mask"]),
    ({"pad": -1}, ["pad", "-1"]),
    ({"pad": 65}, ["pad", "65"]),
    ({"pad": 1.5}, ["pad", "whole number"]),
    ({"seed": -1}, ["seed", "-1"]),
    ({"seed": 2**63}, ["seed", str(2**63)]),
    ({"seed": 2**200}, ["seed"]),
    ({"seed": "7"}, ["seed", "whole number"]),
    ({"seed": 1.0}, ["seed", "whole number"]),
    ({"d_model": True}, ["d_model", "whole number", "True"]),
    ({"heads": True}, ["heads", "whole number"]),
    ({"seed": False}, ["seed", "whole number"]),
    ({"pad": True}, ["pad", "whole number"]),
    ({"d_k": True, "d_v": 2}, ["d_k", "whole number"]),
    ({"scale": 0}, ["divisor", "0"]),
    ({"scale": 0.0}, ["divisor"]),
    ({"scale": -2.0}, ["divisor", "-2.0"]),
    ({"scale": math.nan}, ["divisor", "nan"]),
    ({"scale": math.inf}, ["divisor", "inf"]),
    ({"scale": -math.inf}, ["divisor"]),
    ({"scale": 1e-7}, ["divisor", "1e-06"]),
    ({"scale": 1e7}, ["divisor", "1e+06"]),
    ({"scale": True}, ["scale", "sqrt", "none"]),
    ({"scale": "log"}, ["scale", "log", "sqrt"]),
    ({"scale": "2.0"}, ["scale", "sqrt"]),
    ({"scale": None}, ["scale"]),
    ({"positional": 1}, ["positional"]),
]


@pytest.mark.parametrize(("kwargs", "words"), REFUSED, ids=[repr(k) for k, _ in REFUSED])
def test_refusals_raise_config_error_with_helpful_message(kwargs, words):
    with pytest.raises(AttentionConfigError) as info:
        AttentionConfig(**kwargs)
    message = str(info.value)
    assert len(message) > 15
    for word in words:
        assert word.lower() in message.lower(), (word, message)
    assert isinstance(info.value, ValueError)  # callers that catch ValueError keep working


def test_heads_larger_than_d_model_message_suggests_a_fix():
    with pytest.raises(AttentionConfigError) as info:
        AttentionConfig(d_model=4, heads=8)
    assert "at most 4 heads" in str(info.value)


def test_indivisible_message_suggests_a_multiple():
    with pytest.raises(AttentionConfigError) as info:
        AttentionConfig(d_model=10, heads=3)
    assert "multiple of 3" in str(info.value)


ACCEPTED = [
    {"d_model": 1, "heads": 1},
    {"d_model": 8, "heads": 8},  # heads = d_model: d_k = 1
    {"d_model": 6, "heads": 2, "d_k": 1, "d_v": 1},
    {"d_model": 4, "heads": 8, "d_k": 2, "d_v": 2},  # explicit sizes allow more heads than d_model
    {"d_model": 10, "heads": 3, "d_k": 3, "d_v": 5},
    {"seed": 0},
    {"seed": 2**63 - 1},
    {"pad": 64, "mask": "padding"},
    {"scale": 1e-6},
    {"scale": 1e6},
    {"scale": 3},  # an int divisor is fine
    {"scale": "none"},
    {"positional": False},
]


@pytest.mark.parametrize("kwargs", ACCEPTED, ids=[repr(k) for k in ACCEPTED])
def test_valid_extremes_are_accepted_and_run(kwargs):
    cfg = AttentionConfig(**kwargs)
    tr = trace_text("a b c", cfg)
    assert tr.n == 3 + cfg.pad
    assert tr.Q.shape == (cfg.heads, tr.n, cfg.head_dim_k)
    assert tr.V.shape == (cfg.heads, tr.n, cfg.head_dim_v)


def test_resolved_sizes_and_divisor():
    cfg = AttentionConfig(d_model=12, heads=3)
    assert (cfg.head_dim_k, cfg.head_dim_v) == (4, 4)
    assert cfg.divisor == 2.0
    assert AttentionConfig(d_model=12, heads=3, d_k=9).divisor == 3.0
    assert AttentionConfig(scale="none").divisor == 1.0
    assert AttentionConfig(scale=2.5).divisor == 2.5
    d = AttentionConfig(d_model=12, heads=3, d_v=5).to_dict()
    assert d["d_k"] == 4 and d["d_v"] == 5 and d["d_k_auto"] is True and d["d_v_auto"] is False


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", "\u200b\u200b", "\x00"])
def test_empty_text_is_refused_with_config_error(text):
    with pytest.raises(AttentionConfigError, match="empty"):
        trace_text(text, AttentionConfig())


def test_config_is_frozen():
    cfg = AttentionConfig()
    with pytest.raises(AttributeError):
        cfg.heads = 3  # type: ignore[misc]
