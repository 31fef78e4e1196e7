"""What both decoders of the family share around the pass: the text checks, the tokens' labels, the
trace of a prompt, generation with the KV cache one token at a time, and the next token's candidates
(with what each adds in characters, or a special token's name).

SmolLM2 (:mod:`.smollm2`) and Gemma 3 (:mod:`.gemma3`) differ in their files, tokenizers, configs and
limits, not here. Everything here reads a model (or its tokenizer) through the same few fields:
``vocab`` (the token strings), ``token_bytes`` (the bytes of text each token stands for, None for a
special token), ``config`` and ``weights``. :class:`ModelFunctions` gives a model module these
functions with its own model as the default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from ..kv_cache import KVCache, LayerCache, keep_window
from . import byte_bpe
from .llama import (
    DecodeLayerStep,
    DecoderLayerTrace,
    LlamaConfig,
    decode_layers,
    next_token_probs,
    run_layers,
    top_indices,
)


class DecoderInputError(ValueError):
    """Text the decoder cannot take (empty, too long, not valid Unicode), said for a learner."""


def fields_of(instance) -> dict[str, object]:
    """A dataclass instance's fields by name, the objects themselves (not copies, unlike
    ``dataclasses.asdict``): how a loaded model takes over its tokenizer's fields."""
    return {f.name: getattr(instance, f.name) for f in fields(instance)}


def check_ids(ids: Sequence[int], config: LlamaConfig, max_tokens: int) -> np.ndarray:
    """``ids`` as an array ``[n]``, or :class:`DecoderInputError` (none, too many, outside the vocabulary)."""
    arr = np.asarray(ids, dtype=np.intp)
    if arr.ndim != 1 or arr.size == 0:
        raise DecoderInputError("At least one token is needed.")
    if arr.size > max_tokens:
        raise DecoderInputError(f"At most {max_tokens} tokens, got {arr.size}.")
    if arr.min() < 0 or arr.max() >= config.vocab_size:
        raise DecoderInputError("A token id is outside the vocabulary.")
    return arr


def cache_bytes_by_kind(cache: KVCache, config: LlamaConfig) -> dict[str, int]:
    """Bytes of K and V held by the local and by the global layers: ``{"local": ..., "global": ...}``.

    The local part stops growing once every local layer holds its window; the global part grows by
    ``2 · global layers · kv_heads · head_dim · 4`` bytes per token.
    """
    out = {"local": 0, "global": 0}
    for i, layer in enumerate(cache.layers):
        out[config.layer_kind(i)] += layer.nbytes
    return out


@dataclass(frozen=True, eq=False)
class DecodeState:
    """What generation carries from one token to the next: the ids so far, their KV cache (a local
    layer: at most its window's keys) and the logits of the token that comes next."""

    ids: tuple[int, ...]
    cache: KVCache
    logits: np.ndarray  # [vocab]
    config: LlamaConfig | None = None  # the model's numbers (for the bytes per layer kind)

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def cache_bytes(self) -> int:
        return self.cache.nbytes

    @property
    def cache_bytes_by_kind(self) -> dict[str, int]:
        return cache_bytes_by_kind(self.cache, self.config)


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """One generated token: which it was, each layer's new attention row, and the state after it."""

    token_id: int
    layers: tuple[DecodeLayerStep, ...]
    state: DecodeState

    @property
    def logits(self) -> np.ndarray:
        return self.state.logits

    @property
    def cache_bytes(self) -> int:
        return self.state.cache.nbytes

    @property
    def cache_bytes_by_kind(self) -> dict[str, int]:
        return self.state.cache_bytes_by_kind


def check_text(text: str) -> None:
    """Raise :class:`DecoderInputError` for text a learner cannot give as a prompt."""
    if not isinstance(text, str):
        raise DecoderInputError("The text must be a string.")
    if not text.strip():
        raise DecoderInputError("Type some text first: the text is empty (or only spaces).")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise DecoderInputError(
            "The text contains a character that is not valid Unicode (a lone surrogate)."
        ) from None


@dataclass(frozen=True)
class DecoderInput:
    """The text as the model reads it.

    ``ids`` and ``labels`` (one readable label per token, see :mod:`.byte_bpe`) are the tokens kept
    (Gemma's start with BOS); ``parts`` tells, per token, which characters (or which bytes of one) it
    holds, for figures that group the pieces of a character. ``total_tokens`` counts the tokens
    before any cut.
    """

    text: str  # the text read (after cutting at MAX_INPUT_CHARS)
    ids: tuple[int, ...]
    labels: tuple[str, ...]
    parts: tuple[tuple[byte_bpe.LabelPart, ...], ...]
    total_tokens: int
    max_tokens: int
    chars_cut: int
    removed_chars: int = 0  # characters the vocabulary cannot spell, removed before tokenizing

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def truncated(self) -> bool:
        return self.total_tokens > len(self.ids) or self.chars_cut > 0


def labels_for_ids(ids: Sequence[int], model) -> tuple[tuple[str, ...], tuple]:
    """Readable labels (and parts) of a token sequence, each read in the context of its neighbours.

    A special token (``<|im_end|>``, ``<bos>`` ...) is labelled with its name; runs of ordinary
    tokens between them are labelled by :func:`.byte_bpe.label_parts`. ``-> (labels, parts)``.
    """
    pieces = [model.token_bytes[i] for i in ids]
    labels: list[str] = [""] * len(ids)
    parts: list[tuple] = [()] * len(ids)
    run: list[int] = []

    def flush() -> None:
        if run:
            for k, p in zip(run, byte_bpe.label_parts([pieces[k] for k in run]), strict=True):  # type: ignore[misc]
                parts[k] = p
                labels[k] = byte_bpe.format_label(p)
            run.clear()

    for k, piece in enumerate(pieces):
        if piece is None:
            flush()
            labels[k] = model.vocab[ids[k]]
        else:
            run.append(k)
    flush()
    return tuple(labels), tuple(parts)


@dataclass(frozen=True, eq=False)
class DecoderTrace:
    """One prompt through all layers. ``layers[l]`` holds layer ``l``'s attention intermediates,
    ``logits [vocab]`` the scores of the token after the last position (float32). ``keep``: "all"
    (every intermediate) or "weights" (Gemma's long prompts: see ``gemma3.FULL_DETAIL_TOKENS``)."""

    ids: tuple[int, ...]
    labels: tuple[str, ...]
    layers: tuple[DecoderLayerTrace, ...]
    logits: np.ndarray
    config: LlamaConfig
    keep: str = "all"
    input: DecoderInput | None = None

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def kv_head_of(self) -> np.ndarray:
        return self.config.kv_head_of

    @property
    def attentions(self) -> np.ndarray:
        """All layers' weights stacked: ``[n_layers, h, n, n]`` (a new array on each access)."""
        return np.stack([t.weights for t in self.layers])

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays this trace holds (a mask shared by several layers counted once)."""
        seen: dict[int, int] = {}
        for t in self.layers:
            for name in t.__dataclass_fields__:
                value = getattr(t, name)
                if isinstance(value, np.ndarray):
                    seen[id(value)] = value.nbytes
        return sum(seen.values()) + self.logits.nbytes

    def cache(self) -> KVCache:
        """The KV cache this pass leaves behind: each layer's K (after RoPE) and V; a local layer
        keeps only its window's newest keys. No copy."""
        layers = []
        for i, t in enumerate(self.layers):
            layer = LayerCache(K=t.K, V=t.V)
            window = self.config.window_of(i)
            layers.append(layer if window is None else keep_window(layer, window))
        return KVCache(tuple(layers))


def forward(
    ids: Sequence[int], model, max_tokens: int, labels: Sequence[str] | None = None, keep: str = "all"
) -> DecoderTrace:
    """Run the token ids through all layers of ``model``, keeping every attention step (``keep``:
    see :class:`DecoderTrace`); labels from :func:`labels_for_ids` unless given."""
    arr = check_ids(ids, model.config, max_tokens)
    layers, logits = run_layers(arr, model.weights, keep=keep)
    if labels is None:
        labels = labels_for_ids(arr.tolist(), model)[0]
    return DecoderTrace(
        ids=tuple(int(i) for i in arr), labels=tuple(labels), layers=layers, logits=logits, config=model.config,
        keep=keep,
    )  # fmt: skip


def start_state(trace) -> DecodeState:
    """The state after a full pass: its ids, the cache it built and its next-token logits."""
    return DecodeState(ids=trace.ids, cache=trace.cache(), logits=trace.logits, config=trace.config)


def decode_step(state: DecodeState, token_id: int, model, max_tokens: int) -> DecodeStep:
    """Append one token: its q, k, v per layer, k and v into the cache (a local layer then drops the
    key its window no longer reaches), one query row against the cache. Same logits as the full pass
    on all ids (up to float32 rounding)."""
    if state.n >= max_tokens:
        raise DecoderInputError(f"The sequence has reached the limit of {max_tokens} tokens.")
    if not 0 <= token_id < model.config.vocab_size:
        raise DecoderInputError("The token id is outside the vocabulary.")
    layers, cache, logits = decode_layers(int(token_id), state.cache, model.weights)
    new_state = DecodeState(ids=(*state.ids, int(token_id)), cache=cache, logits=logits, config=model.config)
    return DecodeStep(token_id=int(token_id), layers=layers, state=new_state)


# --------------------------------------------------------------------------------------------
# The next token's candidates
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    id: int
    label: str  # language-free, as on an axis: ``猫 3/3``, ``ぁ…み 1–2/3``, ``<eos>``
    p: float
    reading: byte_bpe.TokenReading | None = None  # what it adds in characters; None: a special token
    special: str | None = None  # a special token's name (``<|im_end|>``, ``<start_of_image>``)


def context_bytes(context_ids: Sequence[int], model) -> bytes:
    """The last bytes of the context, enough for a character it started (at most three tokens' worth;
    a special token ends it)."""
    tail = b""
    for i in reversed(context_ids[-3:]):  # a started character has at most 3 bytes, one token or more each
        prev = model.token_bytes[i]
        if prev is None:
            break
        tail = prev + tail
        if len(tail) >= 3:
            break
    return tail


def read_candidate(context_ids: Sequence[int], token_id: int, model) -> byte_bpe.TokenReading | None:
    """What a candidate next token adds after ``context_ids``, in characters
    (:func:`.byte_bpe.read_token`); None for a special token."""
    piece = model.token_bytes[token_id]
    return None if piece is None else byte_bpe.read_token(context_bytes(context_ids, model), piece)


def candidate_label(context_ids: Sequence[int], token_id: int, model) -> str:
    """A candidate next token's label as it would read after ``context_ids`` (the last byte of a
    character the context started reads ``猫 3/3``; a started one ``ぁ…み 1–2/3``, never bytes alone;
    a special token its name)."""
    piece = model.token_bytes[token_id]
    if piece is None:
        return model.vocab[token_id]
    tail = byte_bpe.unfinished_tail(context_bytes(context_ids, model))
    parts = byte_bpe.label_parts([tail, piece] if tail else [piece])
    return byte_bpe.format_label(parts[-1])


def special_ids(model) -> np.ndarray:
    """The ids of the special tokens (those that stand for no text): ``[s]``, ascending."""
    found = getattr(model, "special_token_ids", None)
    if found is not None:
        return found
    return np.array([i for i, piece in enumerate(model.token_bytes) if piece is None], dtype=np.intp)


def without_special(logits: np.ndarray, model) -> np.ndarray:
    """``logits [vocab]`` with −∞ at every special token, so that the softmax renormalises the
    probability over the ordinary tokens alone (a new array)."""
    out = np.array(logits, dtype=np.float32, copy=True)
    out[special_ids(model)] = -np.inf
    return out


def special_probability(logits: np.ndarray, model, temperature: float = 1.0, top_k: int = 0) -> float:
    """The total probability of the special tokens under these settings (what :func:`without_special`
    takes away before the ordinary tokens are renormalised)."""
    probs = next_token_probs(logits, temperature, top_k)
    return float(probs[special_ids(model)].sum())


def top_candidates(
    logits: np.ndarray, k: int, context_ids: Sequence[int], temperature: float, top_k: int, model
) -> tuple[Candidate, ...]:
    """The ``k`` most probable next tokens with their labels, readings (or special names) and
    probabilities, most probable first."""
    probs = next_token_probs(logits, temperature, top_k)
    out = []
    for i in top_indices(probs, k):
        token = int(i)
        reading = read_candidate(context_ids, token, model)
        special = model.vocab[token] if reading is None else None
        label = candidate_label(context_ids, token, model)
        out.append(Candidate(id=token, label=label, p=float(probs[token]), reading=reading, special=special))
    return tuple(out)


@dataclass(frozen=True)
class ModelFunctions:
    """The family's functions for one model module, with that module's model as the default
    (``load_model`` is called only when no model is passed)."""

    load_model: Callable[[], object]
    max_tokens: int

    def model(self, model=None):
        return self.load_model() if model is None else model

    def functions(self) -> tuple[Callable, ...]:
        """``(labels_for_ids, read_candidate, candidate_label, top_candidates, decode_step)``, bound."""
        return (
            self.labels_for_ids,
            self.read_candidate,
            self.candidate_label,
            self.top_candidates,
            self.decode_step,
        )

    def labels_for_ids(self, ids: Sequence[int], model=None) -> tuple[tuple[str, ...], tuple]:
        return labels_for_ids(ids, self.model(model))

    def read_candidate(self, context_ids: Sequence[int], token_id: int, model=None):
        return read_candidate(context_ids, token_id, self.model(model))

    def candidate_label(self, context_ids: Sequence[int], token_id: int, model=None) -> str:
        return candidate_label(context_ids, token_id, self.model(model))

    def top_candidates(
        self, logits: np.ndarray, k: int, context_ids: Sequence[int] = (), temperature: float = 1.0,
        top_k: int = 0, model=None,
    ) -> tuple[Candidate, ...]:  # fmt: skip
        return top_candidates(logits, k, context_ids, temperature, top_k, self.model(model))

    def decode_step(self, state: DecodeState, token_id: int, model=None) -> DecodeStep:
        """Append one token with the KV cache (see :func:`decode_step`)."""
        return decode_step(state, token_id, self.model(model), self.max_tokens)
