"""Attention Lab's NumPy core: every step of multi-head self-attention, kept for teaching.

Imports only NumPy and the standard library.

The public names below load lazily, the way Scientific Python's SPEC 1 describes: ``import
attention_core`` costs a few milliseconds, and the submodule that defines a name (with NumPy)
is imported the first time the name is used. ``from attention_core import trace_text`` works as
usual. A command such as ``python -m attention_core.cli --help`` therefore starts without paying
for NumPy, and the import stays well under the 100 ms budget of issue 6 on machines where NumPy
alone takes longer than that (bench/core_overhead.py prints both).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# public name -> submodule that defines it
_EXPORTS = {
    "MASK_KINDS": "config",
    "PAD_TOKEN": "config",
    "AttentionConfig": "config",
    "AttentionConfigError": "config",
    "embed": "embeddings",
    "positional_encoding": "embeddings",
    "token_embedding": "embeddings",
    "worked_example_params": "example",
    "worked_example_trace": "example",
    "additive_mask": "steps",
    "apply_mask": "steps",
    "build_mask": "steps",
    "merge_heads": "steps",
    "output_projection": "steps",
    "project": "steps",
    "raw_scores": "steps",
    "scale": "steps",
    "softmax": "steps",
    "split_heads": "steps",
    "weighted_sum": "steps",
    "DEFAULT_MAX_TOKENS": "tokenizer",
    "Tokenization": "tokenizer",
    "tokenize": "tokenizer",
    "AttentionParams": "trace",
    "AttentionTrace": "trace",
    "attend": "trace",
    "init_params": "trace",
    "trace_text": "trace",
    "trace_tokens": "trace",
}
__all__ = [  # the same names as _EXPORTS (tests/test_core_package.py checks)
    "DEFAULT_MAX_TOKENS",
    "MASK_KINDS",
    "PAD_TOKEN",
    "AttentionConfig",
    "AttentionConfigError",
    "AttentionParams",
    "AttentionTrace",
    "Tokenization",
    "additive_mask",
    "apply_mask",
    "attend",
    "build_mask",
    "embed",
    "init_params",
    "merge_heads",
    "output_projection",
    "positional_encoding",
    "project",
    "raw_scores",
    "scale",
    "softmax",
    "split_heads",
    "token_embedding",
    "tokenize",
    "trace_text",
    "trace_tokens",
    "weighted_sum",
    "worked_example_params",
    "worked_example_trace",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly
    from .config import MASK_KINDS, PAD_TOKEN, AttentionConfig, AttentionConfigError
    from .embeddings import embed, positional_encoding, token_embedding
    from .example import worked_example_params, worked_example_trace
    from .steps import (
        additive_mask,
        apply_mask,
        build_mask,
        merge_heads,
        output_projection,
        project,
        raw_scores,
        scale,
        softmax,
        split_heads,
        weighted_sum,
    )
    from .tokenizer import DEFAULT_MAX_TOKENS, Tokenization, tokenize
    from .trace import AttentionParams, AttentionTrace, attend, init_params, trace_text, trace_tokens
