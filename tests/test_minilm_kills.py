"""The MiniLM wrapper's edges, checked against hand-written expectations (issue 28: mutation testing
of attention_core/models/minilm.py). The real model is small (22 M parameters, loaded in well
under a second), so the view helpers run on one real sentence; everything else is by hand.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from attention_core.models import minilm as P

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
