"""What both decoders of the family share around the pass: token-id checks, and generation with
the KV cache one token at a time (the state carried between tokens, one step, the step itself).

SmolLM2 (:mod:`.smollm2`) and Gemma 3 (:mod:`.gemma3`) differ in their files, tokenizers and limits,
not here; a model module passes its model and its token limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from ..kv_cache import KVCache
from .llama import DecodeLayerStep, LlamaConfig, decode_layers


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
