"""The decoder page's two models: their core modules and configs, by the name the page and its URL use.

``smollm2``: SmolLM2-135M (English-trained, 30 layers, 9 query heads over 3 KV heads, 128 tokens).
``gemma3``: Gemma 3 270M (the base model google/gemma-3-270m under the Gemma Terms of Use; 18 layers,
4 query heads over 1 KV head, local and global layers, 1,024 tokens). Each is an optional package.
"""

from __future__ import annotations

from attention_core.models import gemma3, smollm2

MODELS = ("smollm2", "gemma3")
MODULES = {"smollm2": smollm2, "gemma3": gemma3}
CONFIGS = {"smollm2": smollm2.SMOLLM2_135M, "gemma3": gemma3.GEMMA3_270M}
MAX_LAYERS = max(c.n_layers for c in CONFIGS.values())
MAX_HEADS = max(c.n_heads for c in CONFIGS.values())


def module(name: str):
    """The core module of ``name`` (SmolLM2's for anything unknown)."""
    return MODULES.get(name, smollm2)


def config(name: str):
    return CONFIGS.get(name, smollm2.SMOLLM2_135M)


def max_tokens(name: str) -> int:
    return module(name).MAX_TOKENS


def run(name: str, text: str):
    """The prompt through every layer, cut to the model's limit (``trace.input`` says so)."""
    if name == "gemma3":
        return gemma3.run_text(text, max_tokens=gemma3.MAX_TOKENS, truncate=True)
    return smollm2.run_text(text, truncate=True)


def has_window(config) -> bool:
    """Whether any layer of ``config`` is local (has a sliding window); SmolLM2's has none."""
    return any(config.window_of(layer) is not None for layer in range(config.n_layers))
