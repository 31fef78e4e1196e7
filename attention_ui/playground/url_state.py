"""The playground's view in the URL: parse query parameters into session values and back (pure).

No Streamlit calls here. ``parse(params)`` turns a query-parameter mapping (values ``str`` or a list of
``str``, as ``st.query_params`` / ``AppTest.query_params`` hold them) into session-state values
plus the names of the parameters it had to ignore (unknown, malformed or out of range);
``serialise(state)`` is its inverse. A parameter never raises: a bad one is simply listed.

URL keys are short and stable; each is the ``url`` of a setting of the playground's table
(attention_ui/playground/settings.py), which names its session key; :func:`params_of` reads them there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from attention_ui.i18n import LANGUAGES
from attention_ui.kit import MAX_URL_TEXT, url_text
from attention_ui.language import LANG_KEY
from attention_ui.playground.settings import TABLE
from attention_ui.settings_table import Setting, Table

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


# How a setting's URL text is read, when its table entry does not tell (by its choices, its bounds or
# a True/False default): the sentence, and the presenter flag (the kit's key, with no default).
_READERS: dict[str, tuple[Callable[[str], object], Callable[[object], str]]] = {
    "text": (url_text, _str_out),
    "present": (_bool, _bool_out),
}


def _reader(s: Setting) -> tuple[Callable[[str], object], Callable[[object], str]]:
    if s.name in _READERS:
        return _READERS[s.name]
    if s.choices is not None:
        return _choice(s.choices), _str_out
    if s.bounds is not None and isinstance(s.default, float):
        return _float_in(*s.bounds), _float_out
    if s.bounds is not None:
        return _int_in(*map(int, s.bounds)), _int_out
    if isinstance(s.default, bool):
        return _bool, _bool_out
    raise ValueError(f"the URL code cannot read {s.name!r}: give it choices, bounds or a True/False default")


def params_of(table: Table) -> tuple[Param, ...]:
    """One :class:`Param` per setting of ``table`` with a URL name, in the table's order, and the
    language after the presenter's step (the app's key, not the page's)."""
    out = [Param(s.url, table.key(s.name), *_reader(s)) for s in table if s.url]
    at = next((i + 1 for i, p in enumerate(out) if p.url == "step"), len(out))
    return (*out[:at], Param("lang", LANG_KEY, _choice(LANGUAGES), _str_out), *out[at:])


PARAMS = params_of(TABLE)
BY_URL = {p.url: p for p in PARAMS}
key = TABLE.key


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
    pretrained = state.get(key("weights")) == "pretrained"
    example = state.get(key("preset")) == "example" and not pretrained
    for p in PARAMS:
        if p.state not in state:
            continue
        if p.url in ("d_k", "d_v") and state.get(key("auto_dims"), True):
            continue
        if p.url == "div" and state.get(key("scale")) != "custom":
            continue
        if p.url == "step" and not state.get(key("present")):
            continue
        if p.url == "present" and not state.get(key("present")):
            continue
        if p.url == "all_heads" and not state.get(key("all_heads")):
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
