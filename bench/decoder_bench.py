"""The timing harness the two decoder benches share (``decoder_time.py``: SmolLM2, ``gemma3_time.py``:
Gemma 3): the resident memory, one load measured in this process or in a fresh one, the cached
next-token step against the output logits, and the figures' print format.

A model module ``M`` here is one of ``attention_core.models.smollm2`` / ``gemma3``: both have
``load_model``, ``start_state``, ``pick_token``, ``next_token_probs``, ``decode_step`` and
``output_logits``.
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psutil
from timing import timed  # (bench/ is on sys.path when a script runs)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the scripts import attention_core after this module

# The English sample both benches encode (Gemma's adds a Japanese sentence).
SAMPLE_TEXT = (
    "Attention lets every token look back at the tokens before it. In a decoder the mask is causal, "
    "so each word can only use what came earlier, and the last position predicts the next word. "
)


def rss() -> int:
    """This process's resident memory in bytes, after a garbage collection."""
    gc.collect()
    return psutil.Process().memory_info().rss


def load_once(load_model: Callable[[], object]) -> dict:
    """Load once in this process: seconds and the RSS it adds (import the readers' libraries first)."""
    before = rss()
    t0 = time.perf_counter()
    model = load_model()
    load_s = time.perf_counter() - t0
    return {
        "load_s": load_s,
        "rss_model_mb": (rss() - before) / 1e6,
        "weights_mb": model.weights.nbytes / 1e6,
    }


def child(script: str, flag: str, timeout: float) -> dict:
    """Run ``script flag`` in a fresh interpreter and read the JSON it prints."""
    out = subprocess.run(
        [sys.executable, script, flag], capture_output=True, text=True, check=True, timeout=timeout
    )
    return json.loads(out.stdout)


def fmt(times: list[float], unit: float = 1000.0, label: str = "ms") -> str:
    return f"median {statistics.median(times) * unit:.0f} {label}  min {min(times) * unit:.0f} {label}  ({len(times)} runs)"


def load_line(loads: list[dict]) -> str:
    """The printed line of the load times, one entry per process."""
    load_s = [entry["load_s"] for entry in loads]
    return (
        f"load (read + dequantize + tokenizer)   median {statistics.median(load_s):.2f} s  min {min(load_s):.2f} s"
        f"  ({len(loads)} processes)"
    )


def step_times(M, trace, model, repeats: int):
    """The cached step after ``trace`` and the output logits alone: (state, step times, logits times)."""
    state = M.start_state(trace)
    token = M.pick_token(M.next_token_probs(state.logits))
    step = timed(lambda: M.decode_step(state, token, model), repeats)
    x = np.ones(model.config.d_model, dtype=np.float32)
    logits = timed(lambda: M.output_logits(x, model.weights), repeats)
    return state, step, logits
