"""One cached core call per thing the decoder page shows, keyed by the model's name (``smollm2`` or
``gemma3``, :mod:`.models`) (Streamlit resource caches, shared by every session of the process; the
core's results are frozen with read-only arrays).

Memory: SmolLM2 holds ~0.5 GB and Gemma 3 ~0.63 GB once per process; a page that only tokenizes
with a model holds its tokenizer (~20-40 MB). A trace of 128 tokens is
~31-98 MB, but a Gemma trace of 1,024 tokens ~0.35-0.45 GB, so only two traces are kept. A generated
chain is keyed by the prompt and the generated ids, and extends the cached chain one token shorter,
so each click costs one cached step, never a full pass.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import decoder as lab_decoder
from attention_ui.decoder import models


@st.cache_resource(max_entries=2, show_spinner=False)
def model(name: str = "smollm2"):
    """The loaded model, once per server process (~2-3 s each)."""
    return models.module(name).load_model()


@st.cache_resource(max_entries=2, show_spinner=False)
def tokenizer(name: str = "smollm2"):
    """The model's tokenizer without its weights (~20-40 MB), once per server process: enough to read
    a sentence with the other model. ``model(name)`` later shares its objects."""
    return models.module(name).load_tokenizer()


@st.cache_resource(max_entries=2, show_spinner=False)
def trace(text: str, name: str = "smollm2"):
    """The prompt through all layers (cut to the model's ``MAX_TOKENS``; ``trace.input`` says so)."""
    model(name)
    return models.run(name, text)


@st.cache_resource(max_entries=16, show_spinner=False)
def head_grid(text: str, stat: str, name: str = "smollm2"):
    """``lab_decoder.layer_head_grid`` of the prompt: ``[layers, heads]``."""
    return lab_decoder.layer_head_grid(trace(text, name), stat)


@st.cache_resource(max_entries=64, show_spinner=False)
def chain(text: str, generated: tuple[int, ...], name: str = "smollm2") -> tuple:
    """The decode steps that appended ``generated`` to the prompt, one KV-cache step per token."""
    if not generated:
        return ()
    core = models.module(name)
    before = chain(text, generated[:-1], name)
    state = before[-1].state if before else core.start_state(trace(text, name))
    return (*before, core.decode_step(state, generated[-1], model(name)))
