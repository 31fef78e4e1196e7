"""The playground's settings: its widgets' defaults and ranges, and their values -> an AttentionConfig.

No Streamlit calls, so the checks are testable without a browser. :func:`read_config` returns
the config or every :class:`Problem` found; a problem names a message-catalog key and its
placeholder values, and the page translates and shows it. The URL state (url_state.py) accepts
exactly these ranges. :data:`PAGE` binds the playground to the page kit (prefix ``pg``, catalog
``playground``); the pretrained view's widgets use it too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from attention_core import AttentionConfig, AttentionConfigError
from attention_core.config import MAX_D_MODEL, MAX_DIVISOR, MAX_HEAD_DIM, MAX_HEADS, MAX_PAD, MIN_DIVISOR
from attention_core.tokenizer import DEFAULT_MAX_TOKENS
from attention_ui import kit
from attention_ui.kit import SEED_RANGE

SCALE_CHOICES = ("sqrt", "none", "custom")
PRESETS = ("sentence", "example")  # the user's sentence, or the reference notes' worked example
WEIGHTS = ("random", "pretrained")  # seeded random matrices, or all-MiniLM-L6-v2's
PRETRAINED_LAYERS = 6  # all-MiniLM-L6-v2's encoder layers

# The widget ranges: generous enough to experiment, small enough to draw.
D_MODEL_RANGE = (1, min(MAX_D_MODEL, 256))
HEADS_RANGE = (1, min(MAX_HEADS, 16))
HEAD_DIM_RANGE = (1, min(MAX_HEAD_DIM, 128))
PAD_RANGE = (0, min(MAX_PAD, 16))
DIVISOR_RANGE = (MIN_DIVISOR, MAX_DIVISOR)
MAX_TOKENS_RANGE = (4, 256)  # 256-token maps stay interactive (bench/page_latency.py)

# The playground's widgets and their first values (all state in ``pg_`` keys).
DEFAULTS = {
    "pg_preset": "sentence",
    "pg_d_model": 16,
    "pg_heads": 2,
    "pg_auto_dims": True,
    "pg_d_k": 8,
    "pg_d_v": 8,
    "pg_mask": "none",
    "pg_pad": 0,
    "pg_scale": "sqrt",
    "pg_divisor": 2.0,
    "pg_seed": 0,
    "pg_max_tokens": DEFAULT_MAX_TOKENS,
    "pg_positional": True,
    "pg_tables": False,
    "pg_head": 0,
    "pg_all_heads": False,  # draw a large all-heads figure (steps_view.all_heads_on_request)
    "pg_shared_scale": True,  # raw and scaled scores on one colour scale (steps 3 and 4)
    "pg_grads": False,  # the gradients step (grads_view): off, so a rerun computes no backward pass
    "pg_target_seed": 0,  # the seed of the invented target Y of that step
}
CHOICE_KEYS = ("pg_preset", "pg_mask", "pg_scale", "pg_head")  # widgets whose labels are translated
# the sentence a learner starts with is in the page's language
PAGE = kit.Page(
    "pg",
    "playground",
    DEFAULTS,
    CHOICE_KEYS,
    {"pg_text": "playground.default_text"},
    # the learner's context (kit.share_context): what the labs set carries back here, if it fits
    {
        "pg_text": kit.LEARNER_TEXT,
        "pg_d_model": kit.LEARNER_D_MODEL,
        "pg_heads": kit.LEARNER_HEADS,
        "pg_mask": kit.LEARNER_MASK,
        "pg_seed": kit.LEARNER_SEED,
    },
    {
        "pg_d_model": lambda v: isinstance(v, int) and D_MODEL_RANGE[0] <= v <= D_MODEL_RANGE[1],
        "pg_heads": lambda v: isinstance(v, int) and HEADS_RANGE[0] <= v <= HEADS_RANGE[1],
    },
    url_context=False,  # its URL holds the whole view (url_state)
)
# The keys read_config reads, each from the widget ``pg_<key>``.
CONFIG_KEYS = (
    "d_model",
    "heads",
    "auto_dims",
    "d_k",
    "d_v",
    "mask",
    "pad",
    "scale",
    "divisor",
    "seed",
    "positional",
)


@dataclass(frozen=True)
class Problem:
    """Something wrong with the settings: a catalog key plus its placeholder values."""

    key: str
    values: dict = field(default_factory=dict)


def _whole(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def read_config(v: Mapping[str, object]) -> tuple[AttentionConfig | None, list[Problem]]:
    """Build an :class:`AttentionConfig` from plain widget values, or say what is wrong.

    ``v`` has the keys d_model, heads, auto_dims, d_k, d_v, mask, pad, scale, divisor, seed,
    positional. Every problem found is returned (not just the first), each as a catalog key.
    """
    problems: list[Problem] = []
    d_model, heads = _whole(v.get("d_model")), _whole(v.get("heads"))
    auto = bool(v.get("auto_dims", True))
    if d_model is None or not D_MODEL_RANGE[0] <= d_model <= D_MODEL_RANGE[1]:
        problems.append(
            Problem(
                "playground.err_range", {"name": "d_model", "lo": D_MODEL_RANGE[0], "hi": D_MODEL_RANGE[1]}
            )
        )
    if heads is None or not HEADS_RANGE[0] <= heads <= HEADS_RANGE[1]:
        problems.append(
            Problem("playground.err_range", {"name": "heads", "lo": HEADS_RANGE[0], "hi": HEADS_RANGE[1]})
        )
    d_k = d_v = None
    if not auto:
        d_k, d_v = _whole(v.get("d_k")), _whole(v.get("d_v"))
        for name, dim in (("d_k", d_k), ("d_v", d_v)):
            if dim is None or not HEAD_DIM_RANGE[0] <= dim <= HEAD_DIM_RANGE[1]:
                problems.append(
                    Problem(
                        "playground.err_range",
                        {"name": name, "lo": HEAD_DIM_RANGE[0], "hi": HEAD_DIM_RANGE[1]},
                    )
                )
    elif d_model is not None and heads is not None and heads >= 1 and d_model % heads:
        lower = heads * max(1, d_model // heads)
        problems.append(
            Problem("playground.err_divisible", {"d_model": d_model, "heads": heads, "suggest": lower})
        )
    pad = _whole(v.get("pad"))
    if pad is None or not PAD_RANGE[0] <= pad <= PAD_RANGE[1]:
        problems.append(
            Problem("playground.err_pad", {"lo": PAD_RANGE[0], "hi": PAD_RANGE[1], "value": v.get("pad")})
        )
    mode = v.get("scale", "sqrt")
    scale: str | float = "sqrt"
    if mode == "custom":
        divisor = v.get("divisor")
        ok = isinstance(divisor, (int, float)) and not isinstance(divisor, bool) and math.isfinite(divisor)
        if not ok or not DIVISOR_RANGE[0] <= float(divisor) <= DIVISOR_RANGE[1]:
            problems.append(
                Problem(
                    "playground.err_divisor", {"lo": f"{DIVISOR_RANGE[0]:g}", "hi": f"{DIVISOR_RANGE[1]:g}"}
                )
            )
        else:
            scale = float(divisor)
    elif mode in ("sqrt", "none"):
        scale = str(mode)
    else:
        problems.append(Problem("playground.err_config", {"detail": f"scale {mode!r}"}))
    seed = _whole(v.get("seed"))
    if seed is None or not SEED_RANGE[0] <= seed <= SEED_RANGE[1]:
        problems.append(
            Problem("playground.err_range", {"name": "seed", "lo": SEED_RANGE[0], "hi": SEED_RANGE[1]})
        )
    if problems:
        return None, problems
    try:
        config = AttentionConfig(
            d_model=d_model,
            heads=heads,
            d_k=d_k,
            d_v=d_v,
            mask=str(v.get("mask", "none")),
            pad=pad,
            scale=scale,
            seed=seed,
            positional=bool(v.get("positional", True)),
        )
    except AttentionConfigError as err:  # anything the core refuses that we did not foresee
        return None, [Problem("playground.err_config", {"detail": str(err)})]
    return config, []
