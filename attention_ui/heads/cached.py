"""One cached core call per view of the heads page (Streamlit resource caches shared by every session;
the core's results are frozen with read-only arrays).

The pass keeps the residual stream (``HeadsPass.extra_bytes``: 31 × n × 576 float32 for the stream
plus 30 × n × 576 for the FFN outputs, 2.2 MB at 16 tokens, 9 MB at 64) beside the attention trace.
A sweep is kept per (model, sentence, ablation, token) in a small store filled while the page shows
its progress bar.
"""

from __future__ import annotations

import streamlit as st

from attention_core import AttentionConfig, AttentionConfigError, trace_text
from attention_core.labs import heads as H

MAX_SWEEPS = 8


@st.cache_resource(max_entries=2, show_spinner=False)
def model(key: str) -> H.HeadsModel:
    return H.load_model(key)


@st.cache_resource(max_entries=4, show_spinner=False)
def heads_pass(key: str, text: str):
    """``-> (the encoded text, the pass)``; the text is cut at the model's token limit."""
    m = model(key)
    enc = m.encode(text, True)
    return enc, H.run_pass(enc.ids, m, enc.labels)


@st.cache_resource(max_entries=8, show_spinner=False)
def lens(key: str, text: str) -> H.LogitLens:
    return H.logit_lens(heads_pass(key, text)[1], model(key).weights)


@st.cache_resource(max_entries=16, show_spinner=False)
def attribution(key: str, text: str, token: int) -> H.Attribution:
    return H.attribution(heads_pass(key, text)[1], model(key).weights, token)


@st.cache_resource(max_entries=64, show_spinner=False)
def ablation(key: str, text: str, layer: int, head: int, kind: str, token: int) -> H.Ablation:
    return H.ablate(heads_pass(key, text)[1], model(key).weights, layer, head, kind, token)


@st.cache_resource(max_entries=1, show_spinner=False)
def sweep_store() -> dict:
    """Finished sweeps, ``(model, text, kind, token) -> SweepMaps`` (at most :data:`MAX_SWEEPS`)."""
    return {}


def remember_sweep(key: tuple, maps: H.SweepMaps) -> None:
    store = sweep_store()
    while len(store) >= MAX_SWEEPS:
        store.pop(next(iter(store)))
    store[key] = maps


@st.cache_resource(max_entries=16, show_spinner=False)
def sharpness(key: str, text: str):
    return H.sharpness_map(heads_pass(key, text)[1])


@st.cache_resource(max_entries=16, show_spinner=False)
def first_token(key: str, text: str):
    return H.first_token_weights(heads_pass(key, text)[1])


@st.cache_resource(max_entries=8, show_spinner=False)
def induction(key: str, length: int, seed: int) -> H.Induction:
    return H.induction(model(key), length, seed)


@st.cache_resource(max_entries=4, show_spinner=False)
def long_text_tokens(key: str) -> int:
    """How many tokens the mask experiment's text is for this model."""
    return len(model(key).tokenize(H.LONG_TEXT))


@st.cache_resource(max_entries=4, show_spinner=False)
def mask_experiment(key: str, window: int) -> H.MaskExperiment:
    m = model(key)
    return H.mask_experiment(m.tokenize(H.LONG_TEXT), m.weights, window)


@st.cache_resource(max_entries=32, show_spinner=False)
def qk_decoder(key: str, text: str, layer: int, head: int) -> H.QKPicture:
    return H.decoder_qk_picture(heads_pass(key, text)[1], layer, head, model(key).config)


@st.cache_resource(max_entries=32, show_spinner=False)
def qk_random(text: str, d_model: int, heads: int, seed: int, head: int):
    """The random-weights playground's attention on ``text`` (causal mask): ``-> (tokens, picture)``.
    Settings the core refuses fall back to its defaults with the same seed."""
    try:
        config = AttentionConfig(d_model=d_model, heads=heads, seed=seed, mask="causal")
    except AttentionConfigError:
        config = AttentionConfig(seed=seed, mask="causal")
    trace = trace_text(text, config)
    h = head % config.heads
    return trace.tokens, config, h, H.qk_picture(trace.Q[h], trace.K[h], trace.weights[h])
