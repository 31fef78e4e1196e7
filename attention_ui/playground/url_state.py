"""The playground's view in the URL: parse query parameters into session values and back (pure).

No Streamlit calls here. ``parse(params)`` turns a query-parameter mapping (values ``str`` or a list of
``str``, as ``st.query_params`` / ``AppTest.query_params`` hold them) into session-state values
plus the names of the parameters it had to ignore (unknown, malformed or out of range);
``serialise(state)`` is its inverse. A parameter never raises: a bad one is simply listed.

URL keys are short and stable; session keys are the playground's ``pg_`` widget keys.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from attention_core import MASK_KINDS
from attention_ui.i18n import LANGUAGES
from attention_ui.kit import MAX_URL_TEXT, SEED_RANGE, url_text
from attention_ui.playground.settings import (
    D_MODEL_RANGE,
    DIVISOR_RANGE,
    HEAD_DIM_RANGE,
    HEADS_RANGE,
    MAX_TOKENS_RANGE,
    PAD_RANGE,
    PRESETS,
    PRETRAINED_LAYERS,
    SCALE_CHOICES,
    WEIGHTS,
)

STEP_COUNT = 11  # steps shown by the playground (attention_ui.playground.steps_view.STEPS)
MAX_VALUE_CHARS = 40  # a number or name longer than this is malformed
PRETRAINED_ONLY = ("layer", "hide")  # written only with weights=pretrained

_INT = re.compile(r"[0-9]{1,12}")
_FLOAT = re.compile(r"[0-9]{0,12}(\.[0-9]{0,17})?([eE][-+]?[0-9]{1,3})?")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _int_in(lo: int, hi: int):
    def parse(raw: str):
        if not _INT.fullmatch(raw):
            return None
        value = int(raw)
        return value if lo <= value <= hi else None

    return parse


def _float_in(lo: float, hi: float):
    def parse(raw: str):
        if not raw or not _FLOAT.fullmatch(raw) or not any(ch.isdigit() for ch in raw):
            return None
        value = float(raw)
        return value if math.isfinite(value) and lo <= value <= hi else None

    return parse


def _choice(options):
    def parse(raw: str):
        return raw if raw in options else None

    return parse


def _bool(raw: str):
    low = raw.lower()
    return True if low in _TRUE else False if low in _FALSE else None


def _int_out(v) -> str:
    return str(int(v))


def _float_out(v) -> str:
    return repr(float(v))


def _bool_out(v) -> str:
    return "1" if v else "0"


def _str_out(v) -> str:
    return str(v)


@dataclass(frozen=True)
class Param:
    """One query parameter: its URL name, the session key it sets, how to read and to write it."""

    url: str  # the query parameter's name
    state: str  # the session key (a playground widget's key)
    parse: Callable[[str], object]  # URL text -> value, None when malformed or out of range
    dump: Callable[[object], str]  # value -> URL text


PARAMS = (
    Param("preset", "pg_preset", _choice(PRESETS), _str_out),
    Param("text", "pg_text", url_text, _str_out),
    Param("max_tokens", "pg_max_tokens", _int_in(*MAX_TOKENS_RANGE), _int_out),
    Param("d_model", "pg_d_model", _int_in(*D_MODEL_RANGE), _int_out),
    Param("heads", "pg_heads", _int_in(*HEADS_RANGE), _int_out),
    Param("auto", "pg_auto_dims", _bool, _bool_out),
    Param("d_k", "pg_d_k", _int_in(*HEAD_DIM_RANGE), _int_out),
    Param("d_v", "pg_d_v", _int_in(*HEAD_DIM_RANGE), _int_out),
    Param("mask", "pg_mask", _choice(MASK_KINDS), _str_out),
    Param("pad", "pg_pad", _int_in(*PAD_RANGE), _int_out),
    Param("scale", "pg_scale", _choice(SCALE_CHOICES), _str_out),
    Param("div", "pg_divisor", _float_in(*DIVISOR_RANGE), _float_out),
    Param("seed", "pg_seed", _int_in(*SEED_RANGE), _int_out),
    Param("pos", "pg_positional", _bool, _bool_out),
    Param("tables", "pg_tables", _bool, _bool_out),
    Param("head", "pg_head", _int_in(0, HEADS_RANGE[1] - 1), _int_out),
    Param("all_heads", "pg_all_heads", _bool, _bool_out),
    Param("shared", "pg_shared_scale", _bool, _bool_out),
    Param("present", "pg_present", _bool, _bool_out),
    Param("step", "pg_step", _int_in(1, STEP_COUNT), _int_out),
    Param("lang", "lang", _choice(LANGUAGES), _str_out),
    Param("weights", "pg_weights", _choice(WEIGHTS), _str_out),
    Param("layer", "pg_pt_layer", _int_in(0, PRETRAINED_LAYERS - 1), _int_out),
    Param("hide", "pg_pt_hide_special", _bool, _bool_out),
)
BY_URL = {p.url: p for p in PARAMS}


@dataclass(frozen=True)
class Parsed:
    """Session values read from the URL and the URL keys that were ignored (in URL order)."""

    values: dict = field(default_factory=dict)
    ignored: tuple[str, ...] = ()


def _last(value) -> str | None:
    """The value of a parameter given once or several times (the last one wins, as in Streamlit)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return value[-1]
    return None


def parse(params: Mapping[str, object]) -> Parsed:
    values: dict = {}
    ignored: list[str] = []
    for key, raw in params.items():
        param = BY_URL.get(key) if isinstance(key, str) else None
        text = _last(raw)
        value = None
        if param is not None and text is not None:
            if param.url == "text" or len(text) <= MAX_VALUE_CHARS:
                value = param.parse(text)
        if value is None:
            ignored.append(printable_key(key))
        else:
            values[param.state] = value
    return Parsed(values, tuple(ignored))


def printable_key(key: object, limit: int = 30) -> str:
    """A parameter name fit to show in a notice: control characters dropped, length capped."""
    s = "".join(ch for ch in str(key) if ch.isprintable())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def serialise(state: Mapping[str, object]) -> dict[str, str]:
    """The URL parameters for a session state (only what matters for the current view).

    d_k/d_v only when they are set by hand, the divisor only for a custom scale, the step only in
    presenter mode; the sentence and its settings are left out for the worked example, whose
    settings are fixed (they stay in the session and come back when switching to "sentence").
    The weights switch, the pretrained layer and the [CLS]/[SEP] toggle only with pretrained
    weights (a random-weights URL stays as it was); pretrained mode always uses the sentence.
    """
    out: dict[str, str] = {}
    pretrained = state.get("pg_weights") == "pretrained"
    example = state.get("pg_preset") == "example" and not pretrained
    for p in PARAMS:
        if p.state not in state:
            continue
        if p.url in ("d_k", "d_v") and state.get("pg_auto_dims", True):
            continue
        if p.url == "div" and state.get("pg_scale") != "custom":
            continue
        if p.url == "step" and not state.get("pg_present"):
            continue
        if p.url == "present" and not state.get("pg_present"):
            continue
        if p.url == "all_heads" and not state.get("pg_all_heads"):
            continue  # written only when switched on: it matters for large all-heads figures only
        if p.url == "weights" and not pretrained:
            continue
        if p.url in PRETRAINED_ONLY and not pretrained:
            continue
        if example and p.url not in ("preset", "tables", "head", "present", "step", "lang"):
            continue
        value = state[p.state]
        text = p.dump(value)
        if p.url == "text":
            text = text[:MAX_URL_TEXT]
            if not text:
                continue
        if p.parse(text) is None:  # never write what could not be read back
            continue
        out[p.url] = text
    return out
