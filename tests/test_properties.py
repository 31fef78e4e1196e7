"""Property tests (hypothesis): invariants of attention that must hold for every input in range.

Default: a quick profile (~60 examples per test). ``ATTENTION_LAB_HYPOTHESIS=thorough`` runs 2000.
The profiles are applied per test (not loaded globally) so other test files keep their own settings.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_core import (
    MASK_KINDS,
    AttentionConfig,
    AttentionParams,
    attend,
    build_mask,
    softmax,
    trace_tokens,
)

_COMMON = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("attention-lab-default", max_examples=60, **_COMMON)
settings.register_profile("attention-lab-thorough", max_examples=2000, **_COMMON)
PROFILE = settings.get_profile(
    "attention-lab-thorough"
    if os.environ.get("ATTENTION_LAB_HYPOTHESIS") == "thorough"
    else "attention-lab-default"
)

EPS = np.finfo(float).eps
MIN_DIVISOR, MAX_DIVISOR = 1e-6, 1e6  # the range AttentionConfig accepts
VOCAB = ["the", "cat", "sat", "on", "mat", "猫", "が", "座", "😀", "42", "!", "dog", "a", "[PAD]"]

divisors = st.one_of(
    st.floats(MIN_DIVISOR, MAX_DIVISOR, allow_nan=False, allow_infinity=False),
    st.sampled_from([MIN_DIVISOR, 1.0, 2.0, MAX_DIVISOR]),
)
values = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False),
    st.sampled_from([-1e6, 0.0, 1e6]),
)


@st.composite
def attention_inputs(draw, extreme: bool = True):
    """(X, params, allowed, divisor): random sizes, any mask (named kinds or random, fully masked rows too)."""
    n = draw(st.integers(1, 48))
    d_model = draw(st.integers(1, 12))
    heads = draw(st.integers(1, 4))
    d_k = draw(st.integers(1, 6))
    d_v = draw(st.integers(1, 6))
    if extreme:
        X = draw(hnp.arrays(float, (n, d_model), elements=values))
    else:
        X = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).normal(size=(n, d_model))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    params = AttentionParams(
        W_Q=rng.normal(size=(heads, d_model, d_k)) / np.sqrt(d_model),
        W_K=rng.normal(size=(heads, d_model, d_k)) / np.sqrt(d_model),
        W_V=rng.normal(size=(heads, d_model, d_v)) / np.sqrt(d_model),
        W_O=rng.normal(size=(heads * d_v, d_model)) / np.sqrt(heads * d_v),
    )
    kind = draw(st.sampled_from([*MASK_KINDS, "random"]))
    if kind == "random":
        allowed = draw(hnp.arrays(bool, (n, n)))
        for i in draw(st.lists(st.integers(0, n - 1), max_size=3)):
            allowed[i] = False  # fully masked rows
    else:
        allowed = build_mask(kind, n, draw(st.integers(0, n)))
    return X, params, allowed, draw(divisors)


def _assert_weights_valid(tr, allowed):
    w = tr.weights
    assert np.isfinite(w).all()
    assert (
        np.isfinite(tr.head_outputs).all() and np.isfinite(tr.concat).all() and np.isfinite(tr.output).all()
    )
    assert np.all(w[:, ~allowed] == 0.0)  # masked weights are exactly zero
    assert np.all(w >= 0.0)
    sums = w.sum(axis=-1)  # [h, n]
    empty = ~allowed.any(axis=1)
    assert np.array_equal(tr.fully_masked_rows, empty)
    assert np.all(w[:, empty, :] == 0.0)  # all zero exactly when every key is masked ...
    np.testing.assert_allclose(sums[:, ~empty], 1.0, rtol=0, atol=1e-12)  # ... otherwise the row sums to 1
    assert np.all(tr.head_outputs[:, empty, :] == 0.0)


@PROFILE
@given(attention_inputs())
def test_weights_are_finite_normalised_and_respect_the_mask(case):
    X, params, allowed, divisor = case
    with np.errstate(
        over="raise", invalid="raise", divide="raise", under="ignore"
    ):  # no overflow, 0/0 or x/0
        tr = attend(X, params, allowed, divisor)
    _assert_weights_valid(tr, allowed)


@PROFILE
@given(
    scores=hnp.arrays(float, hnp.array_shapes(min_dims=2, max_dims=3, max_side=12), elements=values),
    data=st.data(),
)
def test_softmax_of_extreme_scores_scaled_by_tiny_or_huge_divisors(scores, data):
    divisor = data.draw(divisors)
    allowed = data.draw(hnp.arrays(bool, scores.shape[-2:]))
    masked = np.where(allowed, scores / divisor, -np.inf)
    w = softmax(masked)
    assert np.isfinite(w).all() and np.all(w >= 0)
    assert np.all(w[..., ~allowed] == 0.0)
    has_key = allowed.any(axis=1)
    np.testing.assert_allclose(w.sum(axis=-1)[..., has_key], 1.0, rtol=0, atol=1e-12)
    assert np.all(w[..., ~has_key, :] == 0.0)


@PROFILE
@given(
    scores=hnp.arrays(
        float, st.tuples(st.integers(1, 4), st.integers(1, 12), st.integers(1, 12)), elements=values
    ),
    data=st.data(),
)
def test_adding_a_constant_to_a_row_leaves_its_weights_unchanged(scores, data):
    h, n_q, n_k = scores.shape
    allowed = data.draw(hnp.arrays(bool, (n_q, n_k)))
    const = data.draw(hnp.arrays(float, (h, n_q, 1), elements=st.floats(-1e6, 1e6, allow_nan=False)))
    masked = np.where(allowed, scores, -np.inf)
    shifted = masked + const  # -inf stays -inf
    # s + c is rounded to the float grid near |s| + |c|: that rounding, not softmax, bounds the change
    row_scale = np.max(np.where(allowed, np.abs(scores), 0.0), axis=-1, keepdims=True) + np.abs(const)
    tol = 1e-12 + 8 * EPS * row_scale
    assert np.all(np.abs(softmax(shifted) - softmax(masked)) <= tol)


@PROFILE
@given(
    scores=hnp.arrays(float, st.tuples(st.integers(1, 12), st.integers(1, 12)), elements=st.floats(-50, 50)),
    const=st.floats(-1e3, 1e3),
)
def test_shift_invariance_is_tight_for_ordinary_scores(scores, const):
    np.testing.assert_allclose(softmax(scores + const), softmax(scores), rtol=0, atol=1e-12)


@st.composite
def token_lists(draw, min_size=1, max_size=48):
    return draw(st.lists(st.sampled_from(VOCAB), min_size=min_size, max_size=max_size))


@st.composite
def configs(draw, **fixed):
    heads = draw(st.integers(1, 4))
    kw = {
        "d_model": heads * draw(st.integers(1, 4)),
        "heads": heads,
        "seed": draw(st.integers(0, 2**63 - 1)),
        "scale": draw(st.one_of(st.sampled_from(["sqrt", "none"]), divisors)),
    }
    if draw(st.booleans()):
        kw["d_k"], kw["d_v"] = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    kw.update(fixed)
    return AttentionConfig(**kw)


@PROFILE
@given(tokens=token_lists(), cfg=configs(mask="none", pad=0, positional=False), data=st.data())
def test_without_positions_permuting_tokens_permutes_outputs(tokens, cfg, data):
    perm = data.draw(st.permutations(range(len(tokens))))
    a = trace_tokens(tuple(tokens), cfg)
    b = trace_tokens(tuple(tokens[p] for p in perm), cfg)
    assert list(b.tokens) == [a.tokens[p] for p in perm]
    inv = np.argsort(perm)  # row k of b is row perm[k] of a
    # The same products summed in another order: equal up to rounding. A score error of
    # ~d_k * eps * |q| |k| / divisor moves a weight by at most about that much (softmax is 1-Lipschitz
    # here), and an output by that times n * max|V|.
    d_k = a.Q.shape[2]
    q, k = np.abs(a.Q).max(), np.abs(a.K).max()
    score_err = 8 * d_k * EPS * q * k / a.divisor + 8 * EPS * np.abs(a.scores_scaled).max()
    tol_w = 1e-12 + 4 * score_err
    np.testing.assert_allclose(b.weights, a.weights[:, perm][:, :, perm], rtol=0, atol=tol_w)
    tol_head = (tol_w * len(tokens) + 1e-12) * (1.0 + np.abs(a.V).max())
    np.testing.assert_allclose(b.head_outputs[:, inv], a.head_outputs, rtol=0, atol=tol_head)
    tol_out = tol_head * (1.0 + np.abs(a.W_O).sum(axis=0).max())
    np.testing.assert_allclose(b.output[inv], a.output, rtol=0, atol=tol_out)


@PROFILE
@given(
    tokens=token_lists(min_size=2),
    cfg=configs(mask="causal", pad=0),
    positional=st.booleans(),
    data=st.data(),
)
def test_causal_outputs_ignore_later_tokens(tokens, cfg, positional, data):
    cfg = dataclasses.replace(cfg, positional=positional)
    i = data.draw(st.integers(0, len(tokens) - 2))
    tail = data.draw(token_lists(min_size=1, max_size=48 - i - 1))
    changed = tokens[: i + 1] + tail
    assume(changed != tokens)
    a = trace_tokens(tuple(tokens), cfg)
    b = trace_tokens(tuple(changed), cfg)
    keep = slice(0, i + 1)
    np.testing.assert_allclose(b.weights[:, keep, keep], a.weights[:, keep, keep], rtol=1e-12, atol=1e-12)
    assert np.all(b.weights[:, keep, i + 1 :] == 0.0)
    np.testing.assert_allclose(b.head_outputs[:, keep], a.head_outputs[:, keep], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.output[: i + 1], a.output[: i + 1], rtol=1e-12, atol=1e-12)


@PROFILE
@given(attention_inputs(), st.data())
def test_causal_prefix_with_extreme_inputs(case, data):
    X, params, _, divisor = case
    n = X.shape[0]
    assume(n >= 2)
    i = data.draw(st.integers(0, n - 2))
    X2 = X.copy()
    X2[i + 1 :] = data.draw(hnp.arrays(float, (n - i - 1, X.shape[1]), elements=values))
    causal = build_mask("causal", n)
    a = attend(X, params, causal, divisor)
    b = attend(X2, params, causal, divisor)
    big = 1e-12 * (1.0 + np.abs(a.V[:, : i + 1]).max())
    np.testing.assert_allclose(b.head_outputs[:, : i + 1], a.head_outputs[:, : i + 1], rtol=1e-12, atol=big)
    np.testing.assert_allclose(
        b.weights[:, : i + 1, : i + 1], a.weights[:, : i + 1, : i + 1], rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(b.output[: i + 1], a.output[: i + 1], rtol=1e-12, atol=big * 10)
