"""The settings a learner controls, checked once, with messages a learner understands."""

from __future__ import annotations

import math
from dataclasses import dataclass

MASK_KINDS = ("none", "causal", "padding", "causal+padding")
SCALE_MODES = ("sqrt", "none")

# Limits keep every matrix small enough to draw and every number finite.
MAX_D_MODEL = 1024
MAX_HEADS = 64
MAX_HEAD_DIM = 1024
MAX_PAD = 64
MAX_SEED = 2**63 - 1
# A divisor outside this range makes softmax a pure argmax (or pure uniform) long before it
# could overflow; refusing it keeps the maths finite.
MIN_DIVISOR = 1e-6
MAX_DIVISOR = 1e6

PAD_TOKEN = "[PAD]"


class AttentionConfigError(ValueError):
    """Raised for any setting the core refuses; ``str(err)`` is meant for the learner."""


class HeadWidth:
    """The per-head width and score divisor of settings with ``d_k`` (None: ``d_model // heads``),
    ``d_model``, ``heads`` and ``scale`` fields: one rule for :class:`AttentionConfig` and the
    training lab's settings."""

    @property
    def head_dim_k(self) -> int:
        """The d_k actually used."""
        return self.d_k if self.d_k is not None else self.d_model // self.heads

    @property
    def divisor(self) -> float:
        """What the raw scores are divided by."""
        return score_divisor(self.scale, self.head_dim_k)


@dataclass(frozen=True)
class AttentionConfig(HeadWidth):
    """One self-attention layer's settings.

    ``d_k`` and ``d_v`` default to ``d_model // heads`` (the usual split, which keeps the cost of
    multi-head attention equal to one big head); setting them by hand lets a learner break that
    rule on purpose.
    """

    d_model: int = 16
    heads: int = 2
    d_k: int | None = None  # per-head size of queries and keys; None = d_model // heads
    d_v: int | None = None  # per-head size of values; None = d_model // heads
    mask: str = "none"  # one of MASK_KINDS
    pad: int = 0  # number of [PAD] tokens appended after the sentence
    scale: str | float = "sqrt"  # "sqrt" (÷√d_k), "none" (÷1) or a positive divisor
    seed: int = 0  # drives the token vectors and all weight matrices
    positional: bool = True  # add sinusoidal positional encoding to the token vectors

    def __post_init__(self) -> None:
        _check_int("d_model", self.d_model, 1, MAX_D_MODEL)
        _check_int("heads", self.heads, 1, MAX_HEADS)
        if self.d_k is None or self.d_v is None:
            if self.heads > self.d_model:
                raise AttentionConfigError(
                    f"heads ({self.heads}) is larger than d_model ({self.d_model}): each head "
                    f"would get d_model / heads < 1 dimensions. Use at most {self.d_model} heads, "
                    "or set d_k and d_v by hand."
                )
            if self.d_model % self.heads != 0:
                raise AttentionConfigError(
                    f"d_model ({self.d_model}) is not divisible by heads ({self.heads}), so "
                    "d_k = d_model / heads is not a whole number. Pick a d_model that is a "
                    f"multiple of {self.heads} (e.g. {self.heads * max(1, self.d_model // self.heads)}), "
                    "or set d_k and d_v by hand."
                )
        if self.d_k is not None:
            _check_int("d_k", self.d_k, 1, MAX_HEAD_DIM)
        if self.d_v is not None:
            _check_int("d_v", self.d_v, 1, MAX_HEAD_DIM)
        if self.mask not in MASK_KINDS:
            raise AttentionConfigError(f"Unknown mask {self.mask!r}: choose one of {', '.join(MASK_KINDS)}.")
        _check_int("pad", self.pad, 0, MAX_PAD)
        if isinstance(self.scale, str):
            if self.scale not in SCALE_MODES:
                raise AttentionConfigError(
                    f"Unknown scale {self.scale!r}: use 'sqrt', 'none' or a positive number."
                )
        else:
            if isinstance(self.scale, bool) or not isinstance(self.scale, (int, float)):
                raise AttentionConfigError("The scale must be 'sqrt', 'none' or a positive number.")
            if not math.isfinite(self.scale) or not MIN_DIVISOR <= self.scale <= MAX_DIVISOR:
                raise AttentionConfigError(
                    f"The divisor must be a number between {MIN_DIVISOR:g} and {MAX_DIVISOR:g} "
                    f"(got {self.scale!r})."
                )
        _check_int("seed", self.seed, 0, MAX_SEED)
        if not isinstance(self.positional, bool):
            raise AttentionConfigError("positional must be True or False.")

    @property
    def head_dim_v(self) -> int:
        """The d_v actually used."""
        return self.d_v if self.d_v is not None else self.d_model // self.heads

    def to_dict(self) -> dict:
        """Plain values, with d_k / d_v resolved, for JSON and display."""
        return {
            "d_model": self.d_model,
            "heads": self.heads,
            "d_k": self.head_dim_k,
            "d_v": self.head_dim_v,
            "d_k_auto": self.d_k is None,
            "d_v_auto": self.d_v is None,
            "mask": self.mask,
            "pad": self.pad,
            "scale": self.scale,
            "divisor": self.divisor,
            "seed": self.seed,
            "positional": self.positional,
        }


def score_divisor(scale: str | float, d_k: int) -> float:
    """What raw scores are divided by under a (valid) ``scale`` setting: √d_k for ``"sqrt"``, 1 for
    ``"none"``, else the number itself. The attention layer's and the trainer's settings share it."""
    if scale == "sqrt":
        return math.sqrt(d_k)
    if scale == "none":
        return 1.0
    return float(scale)


def _check_int(name: str, value: object, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise AttentionConfigError(f"{name} must be a whole number (got {value!r}).")
    if not lo <= value <= hi:
        raise AttentionConfigError(f"{name} must be between {lo} and {hi} (got {value}).")
