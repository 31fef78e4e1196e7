"""Attention Lab's NumPy core: every step of multi-head self-attention, kept for teaching.

Imports only NumPy and the standard library.
"""

from .config import (
    MASK_KINDS,
    PAD_TOKEN,
    AttentionConfig,
    AttentionConfigError,
)
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

__all__ = [
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
