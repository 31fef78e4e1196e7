"""Every intermediate of the core against the naive loop reference (tests/reference_naive.py)."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from reference_naive import (
    first_divergence,
    naive_attention,
    naive_mask,
    naive_positional_encoding,
)

from attention_core import (
    MASK_KINDS,
    PAD_TOKEN,
    AttentionConfig,
    AttentionParams,
    attend,
    build_mask,
    init_params,
    token_embedding,
    trace_text,
)

ATOL = 1e-10
RTOL = 1e-10

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "猫", "が", "ran", "42", "!", "and", "a", "red", "ball"]
SCALES = ("sqrt", "none", "float")


def _config_cases(count: int = 64) -> list[tuple[AttentionConfig, str]]:
    """Seeded random configs; the first 24 walk every (mask, scale mode, auto/explicit) combination."""
    rng = np.random.default_rng(20261130)
    combos = list(itertools.product(MASK_KINDS, SCALES, (True, False)))
    cases = []
    for idx in range(count):
        mask, scale_mode, auto = combos[idx % len(combos)]
        heads = int(rng.integers(1, 5))
        if auto:
            d_model = heads * int(rng.integers(1, 5))
            d_k = d_v = None
        else:
            d_model = int(rng.integers(1, 13))
            d_k, d_v = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        if scale_mode == "float":
            scale: str | float = float(rng.choice([0.25, 0.7, 1.0, 2.5, 3.0, 8.0]))
        else:
            scale = scale_mode
        pad = int(rng.integers(0, 4)) if "padding" in mask else int(rng.integers(0, 2))
        n_words = int(rng.integers(1, 9))
        text = " ".join(rng.choice(WORDS, size=n_words))
        cfg = AttentionConfig(
            d_model=d_model,
            heads=heads,
            d_k=d_k,
            d_v=d_v,
            mask=mask,
            pad=pad,
            scale=scale,
            seed=int(rng.integers(0, 2**31)),
            positional=bool(rng.integers(0, 2) or idx < 24),
        )
        cases.append((cfg, text))
    return cases


CASES = _config_cases()


def test_cases_cover_every_mask_and_scale_mode():
    seen = {(c.mask, "float" if isinstance(c.scale, float) else c.scale, c.d_k is None) for c, _ in CASES}
    assert seen == set(itertools.product(MASK_KINDS, SCALES, (True, False)))
    assert len(CASES) >= 50
    assert any(c.pad > 0 and "padding" in c.mask for c, _ in CASES)


def _assert_matches_reference(trace, ref):
    problem = first_divergence(trace, ref, atol=ATOL, rtol=RTOL)
    assert problem is None, problem


@pytest.mark.parametrize(("cfg", "text"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_trace_text_matches_naive_reference(cfg, text):
    tr = trace_text(text, cfg)
    n = tr.n
    # the mask from its definition, not from build_mask
    allowed = naive_mask(cfg.mask, n, cfg.pad)
    ref = naive_attention(tr.X, tr.W_Q, tr.W_K, tr.W_V, tr.W_O, allowed, _divisor(cfg))
    _assert_matches_reference(tr, ref)
    # shapes documented in the API
    h, dk, dv = cfg.heads, cfg.head_dim_k, cfg.head_dim_v
    assert tr.X.shape == (n, cfg.d_model)
    assert tr.W_Q.shape == tr.W_K.shape == (h, cfg.d_model, dk)
    assert tr.W_V.shape == (h, cfg.d_model, dv)
    assert tr.W_O.shape == (h * dv, cfg.d_model)
    assert tr.tokens[n - cfg.pad :] == (PAD_TOKEN,) * cfg.pad
    assert tr.n_pad == cfg.pad


def _divisor(cfg: AttentionConfig) -> float:
    """The divisor from the definition of each scale mode."""
    d_k = cfg.d_k if cfg.d_k is not None else cfg.d_model // cfg.heads
    if cfg.scale == "sqrt":
        return math.sqrt(d_k)
    if cfg.scale == "none":
        return 1.0
    return float(cfg.scale)


@pytest.mark.parametrize(("cfg", "text"), CASES[:24], ids=[f"case{i}" for i in range(24)])
def test_X_is_token_vectors_plus_naive_positional_encoding(cfg, text):
    tr = trace_text(text, cfg)
    pe = np.array(naive_positional_encoding(tr.n, cfg.d_model)).reshape(tr.n, cfg.d_model)
    tok = np.stack([token_embedding(t, cfg.d_model, cfg.seed) for t in tr.tokens])
    expected = tok + pe if cfg.positional else tok
    np.testing.assert_allclose(tr.X, expected, atol=1e-12, rtol=0)
    assert not tr.X[tr.n - cfg.pad :].any() or cfg.positional  # pads are zero without PE


@pytest.mark.parametrize(("cfg", "text"), CASES[:12], ids=[f"case{i}" for i in range(12)])
def test_init_params_follows_documented_draws(cfg, text):
    # documented: default_rng(seed) draws W_Q, W_K, W_V, W_O in that order, std 1/sqrt(fan_in)
    rng = np.random.default_rng(cfg.seed)
    h, d, dk, dv = cfg.heads, cfg.d_model, cfg.head_dim_k, cfg.head_dim_v
    want = [
        rng.standard_normal((h, d, dk)) / math.sqrt(d),
        rng.standard_normal((h, d, dk)) / math.sqrt(d),
        rng.standard_normal((h, d, dv)) / math.sqrt(d),
        rng.standard_normal((h * dv, d)) / math.sqrt(h * dv),
    ]
    p = init_params(cfg)
    for got, exp in zip((p.W_Q, p.W_K, p.W_V, p.W_O), want, strict=True):
        np.testing.assert_allclose(got, exp, rtol=1e-15, atol=0)


def _random_attend_case(seed: int):
    rng = np.random.default_rng(seed)
    n, d_model, h = int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.integers(1, 4))
    dk, dv = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    X = rng.normal(size=(n, d_model)) * rng.choice([0.1, 1.0, 3.0])
    params = AttentionParams(
        W_Q=rng.normal(size=(h, d_model, dk)),
        W_K=rng.normal(size=(h, d_model, dk)),
        W_V=rng.normal(size=(h, d_model, dv)),
        W_O=rng.normal(size=(h * dv, d_model)),
        b_Q=rng.normal(size=(h, dk)) if seed % 2 else None,
        b_K=rng.normal(size=(h, dk)) if seed % 2 else None,
        b_V=rng.normal(size=(h, dv)) if seed % 2 else None,
        b_O=rng.normal(size=d_model) if seed % 2 else None,
    )
    allowed = rng.random((n, n)) < rng.choice([0.3, 0.7, 1.0])
    if seed % 3 == 0:
        allowed[rng.integers(0, n)] = False  # at least one fully masked row
    divisor = float(rng.choice([0.5, 1.0, math.sqrt(dk), 4.0]))
    return X, params, allowed, divisor


@pytest.mark.parametrize("seed", range(30))
def test_attend_with_custom_masks_and_biases_matches_reference(seed):
    X, p, allowed, divisor = _random_attend_case(seed)
    tr = attend(X, p, allowed, divisor)
    ref = naive_attention(X, p.W_Q, p.W_K, p.W_V, p.W_O, allowed, divisor, p.b_Q, p.b_K, p.b_V, p.b_O)
    _assert_matches_reference(tr, ref)


@pytest.mark.parametrize("kind", MASK_KINDS)
@pytest.mark.parametrize(("n", "n_pad"), [(1, 0), (1, 1), (4, 0), (5, 2), (6, 6), (7, 1)])
def test_build_mask_matches_definition(kind, n, n_pad):
    want = np.array(naive_mask(kind, n, n_pad), dtype=bool).reshape(n, n)
    got = build_mask(kind, n, n_pad)
    assert got.dtype == bool
    assert np.array_equal(got, want)


def test_first_divergence_names_the_first_wrong_step():
    """The reference comparison itself must be able to fail, and point at the right step."""
    cfg, text = CASES[1]
    tr = trace_text(text, cfg)
    ref = naive_attention(
        tr.X, tr.W_Q, tr.W_K, tr.W_V, tr.W_O, naive_mask(cfg.mask, tr.n, cfg.pad), _divisor(cfg)
    )
    assert first_divergence(tr, ref, ATOL, RTOL) is None
    # a tiny error in the scaled scores is reported there, not in the later steps it also spoils
    broken = dict(ref, scores_scaled=ref["scores_scaled"] + 1e-6)
    assert "'scores_scaled'" in first_divergence(tr, broken, ATOL, RTOL)
    # a wrong divisor would show up at the scaled scores too
    wrong = dataclasses.replace(cfg, scale=_divisor(cfg) * 1.5)
    tr_wrong = trace_text(text, wrong)
    assert "'scores_scaled'" in first_divergence(tr_wrong, ref, ATOL, RTOL)
    # NaN is never "close"
    nan_ref = dict(ref, output=np.full_like(ref["output"], np.nan))
    assert "'output'" in first_divergence(tr, nan_ref, ATOL, RTOL)


def test_trace_arrays_are_read_only():
    cfg, text = CASES[0]
    tr = trace_text(text, cfg)
    for step in ("X", "W_Q", "W_O", "Q", "scores_masked", "mask", "weights", "head_outputs", "output"):
        with pytest.raises(ValueError):
            getattr(tr, step)[0] = 0  # a cached trace must not be editable by whoever reads it


def test_attend_refuses_a_mask_of_the_wrong_shape():
    X, p, _, divisor = _random_attend_case(1)
    n = X.shape[0]
    with pytest.raises(ValueError, match="mask"):
        attend(X, p, np.ones((n + 1, n + 1), dtype=bool), divisor)
