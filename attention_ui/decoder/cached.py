"""One cached core call per thing the decoder page shows (Streamlit resource caches, shared by every
session of the process; the core's results are frozen with read-only arrays).

Memory: the model holds ~0.5 GB once per process; a trace of 128 tokens ~98 MB, so only a few are
kept. A generated chain is keyed by the prompt and the generated ids, and extends the cached chain
one token shorter, so each click costs one cached step, never a full pass.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import decoder_view
from attention_core.models import smollm2


@st.cache_resource(max_entries=1, show_spinner=False)
def model() -> smollm2.SmolLM2:
    """The loaded model, once per server process (~2-3 s, ~0.5 GB)."""
    return smollm2.load_model()


@st.cache_resource(max_entries=4, show_spinner=False)
def trace(text: str) -> smollm2.DecoderTrace:
    """The prompt through all 30 layers (cut to ``smollm2.MAX_TOKENS`` tokens; ``trace.input`` says so)."""
    model()
    return smollm2.run_text(text, truncate=True)


@st.cache_resource(max_entries=16, show_spinner=False)
def head_grid(text: str, stat: str):
    """``decoder_view.layer_head_grid`` of the prompt: ``[30, 9]``."""
    return decoder_view.layer_head_grid(trace(text), stat)


@st.cache_resource(max_entries=64, show_spinner=False)
def chain(text: str, generated: tuple[int, ...]) -> tuple[smollm2.DecodeStep, ...]:
    """The decode steps that appended ``generated`` to the prompt, one KV-cache step per token."""
    if not generated:
        return ()
    before = chain(text, generated[:-1])
    state = before[-1].state if before else smollm2.start_state(trace(text))
    return (*before, smollm2.decode_step(state, generated[-1], model()))
