"""Pure helpers behind the playground's controls: settings -> config or catalog-keyed problems.

No Streamlit here, so the checks are testable without a browser. A :class:`Problem` names a
message-catalog key and its placeholder values; the page translates and shows it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from attention_core import AttentionConfig, AttentionConfigError
from attention_core.config import MAX_D_MODEL, MAX_DIVISOR, MAX_HEAD_DIM, MAX_HEADS, MAX_PAD, MIN_DIVISOR

SCALE_CHOICES = ("sqrt", "none", "custom")

# The widget ranges: generous enough to experiment, small enough to draw.
D_MODEL_RANGE = (1, min(MAX_D_MODEL, 256))
HEADS_RANGE = (1, min(MAX_HEADS, 16))
HEAD_DIM_RANGE = (1, min(MAX_HEAD_DIM, 128))
PAD_RANGE = (0, min(MAX_PAD, 16))
SEED_RANGE = (0, 2**31 - 1)
DIVISOR_RANGE = (MIN_DIVISOR, MAX_DIVISOR)


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


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:&\"'=^")


def escape_markdown(text: str) -> str:
    """Backslash-escape every ASCII punctuation mark Markdown, LaTeX (``$``) or directives
    (``:``, ``[``, ``]``) could act on, so user text shows exactly as typed."""
    return "".join(f"\\{ch}" if ch in _MD_SPECIAL else ch for ch in str(text))


CHIP_MAX_TOKENS = 48  # beyond this, tokens are listed as plain text (steps_view.show_tokens)


def token_list_text(tokens: Sequence[str], n_pad: int = 0) -> str:
    """``0 the · 1 cat · …`` as plain text (shown with st.text: never parsed as Markdown)."""
    first_pad = len(tokens) - n_pad
    return " · ".join(f"{i} {tok}" if i < first_pad else f"{i} {tok} (pad)" for i, tok in enumerate(tokens))


def token_chips_markdown(tokens: Sequence[str], n_pad: int = 0) -> str:
    """Numbered chips as Streamlit Markdown badges: blue for words, grey for [PAD]s."""
    chips = []
    first_pad = len(tokens) - n_pad
    for i, tok in enumerate(tokens):
        color = "gray" if i >= first_pad else "blue"
        chips.append(f":{color}-badge[{i} · {escape_markdown(tok)}]")
    return " ".join(chips)


def refresh_translated_choices(session_state, keys: Sequence[str], lang: str, marker: str) -> bool:
    """Re-send the values of choice widgets after a language switch; True if it did.

    Streamlit 1.67 sends a selectbox/radio value to the browser as its *formatted* label. When
    the language changes, the labels change but the browser keeps the old label, which no longer
    matches any option (a radio then shows nothing selected, a selectbox the old language).
    Assigning each value to itself before the widget is drawn makes Streamlit send it again,
    formatted in the new language. ``marker`` is the session key remembering the last language.
    """
    if session_state.get(marker) == lang:
        return False
    for key in keys:
        if key in session_state:
            session_state[key] = session_state[key]
    session_state[marker] = lang
    return True
