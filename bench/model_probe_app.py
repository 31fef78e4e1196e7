"""Probe page for bench/model_memory.py: loads pretrained models into this Streamlit process.

Each model is loaded the way the app loads it, once per process through the core's own
``functools.lru_cache`` loaders (MiniLM: ``minilm.load_weights()`` / ``load_tokenizer()``, as the
playground's pretrained view does; SmolLM2: ``smollm2.load_model()``, as the decoder page will), then
one short sentence is run through it (the first forward pass allocates its working arrays).

    streamlit run bench/model_probe_app.py   then open  /?load=smollm2   (or minilm, gemma3, smollm2,gemma3 ...)
"""

from __future__ import annotations

import time

import streamlit as st

SENTENCE = "the students read the notes together"

loaded = []
for name in [m for m in st.query_params.get("load", "").split(",") if m]:
    t0 = time.perf_counter()
    if name == "minilm":
        from attention_core.models import minilm

        minilm.load_weights()
        minilm.load_tokenizer()
        minilm.run_text(SENTENCE)
    elif name == "smollm2":
        from attention_core.models import smollm2

        smollm2.load_model()
        smollm2.run_text(SENTENCE)
    elif name == "gemma3":  # as the decoder page does for Gemma 3 (issue 25)
        from attention_core.models import gemma3

        gemma3.load_model()
        gemma3.run_text(SENTENCE, truncate=True)
    else:
        st.error(f"unknown model {name!r}")
        continue
    loaded.append(f"{name} {time.perf_counter() - t0:.1f} s")
st.text("probe done: " + (", ".join(loaded) or "nothing loaded"))
