"""Opening a page of the app with Streamlit's AppTest and reading what it drew (charts, texts).

Every AppTest-based test uses these; none writes its own. ``tests/conftest.py`` registers this
module for pytest's assertion rewriting.

A page opens *directly*: :func:`open_page` runs app.py with the page requested before the first
run, which is how AppTest starts a session at a page (before any run it identifies a page by its
file name, which app.py's ``st.Page`` url paths match, or, for the two pages with a dash in their
URL, the old file-name links app.py keeps, once). The playground, the default page, is simply app.py's
first run. Nothing renders the playground first, and the session language, widget values and URL
query parameters are set before that first run.
"""

from __future__ import annotations

import base64
import html
import json
import re
import string
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from attention_ui.i18n import catalog

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PLAYGROUND = "app_pages/playground.py"
TIMEOUT = 120  # seconds per run: generous, because CI shares two cores with the other test worker


def open_page(
    page: str = PLAYGROUND,
    *,
    lang: str | None = "en",
    params: dict[str, str] | None = None,
    check: bool = True,
    locale: str | None = None,
    **state,
) -> AppTest:
    """A new session opened at ``page`` (a path such as ``"app_pages/masks.py"``), run once.

    ``lang`` is the session language (None: from the URL or the browser locale, as for a new
    visitor), ``params`` the URL's query parameters, ``locale`` the browser's (``st.context.locale``,
    e.g. ``"en-US"``; None: a browser that sends none), ``state`` session values such as widget keys.
    With ``check`` the run must end without an exception.
    """
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if locale is not None:
        at.context = {"locale": locale}
    if lang is not None:
        at.session_state["lang"] = lang
    for key, value in state.items():
        at.session_state[key] = value
    if params:
        at.query_params.update(params)
    if page != PLAYGROUND:
        at.switch_page(page)
    at.run()
    if page != PLAYGROUND:
        # Resolved again now that app.py has registered its pages: later runs go straight to the page,
        # not through an old-URL redirect (which would drop the widget changes of the rerun).
        at.switch_page(page)
    if check:
        no_exception(at)
    return at


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def charts(at: AppTest, prefix: str = "") -> dict[str, dict]:
    """The Plotly figures on the page as JSON, by widget key without ``prefix``.

    ``charts(at)`` -> ``{"pg_chart_weights": {...}, ...}``; ``charts(at, "masks_chart_")`` -> ``{"mask": ...}``.
    """
    found = {}
    for el in at.get("plotly_chart"):
        key = el.proto.id.rsplit("-", 1)[-1]
        found[key.removeprefix(prefix)] = json.loads(el.proto.spec)
    return found


def chart_spec(at: AppTest, key: str) -> dict:
    """The figure JSON of the chart whose widget key is ``key``."""
    found = charts(at)
    if key not in found:
        raise AssertionError(f"no chart {key}; the page has {sorted(found)}")
    return found[key]


def _strings(value) -> list[str]:
    """Every string inside a JSON value (lists nested any depth; numbers and None are not text)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _unreadable(s: str) -> bool:
    """A label a reader cannot use: empty, blank, or with space at either end (the trace of a
    placeholder filled with nothing, such as ``"1 "`` or ``"the special token "``)."""
    plain = re.sub(r"<[^>]+>", "", s)  # Plotly's own markup (<br>, <b>) is not text
    return not plain.strip() or plain != plain.strip()


def chart_label_problems(fig: dict) -> list[str]:
    """What makes a chart's words unreadable: every tick label an axis sets (``ticktext``) and every
    string of hover text (``customdata``, ``hovertext``, ``text`` of a trace whose hover shows it)
    must be non-empty and have no space at either end. ``-> ["yaxis tick 3: '4 '", ...]``."""
    problems = []
    for name, axis in fig.get("layout", {}).items():
        if isinstance(axis, dict) and re.fullmatch(r"[xy]axis\d*", name):
            for k, s in enumerate(_strings(axis.get("ticktext"))):
                if _unreadable(s):
                    problems.append(f"{name} tick {k}: {s!r}")
    for n, tr in enumerate(fig.get("data", [])):
        if tr.get("hoverinfo") in ("skip", "none"):
            continue
        template = tr.get("hovertemplate") or ""
        shown = [f for f in ("customdata", "hovertext", "text") if f in template or f == "hovertext"]
        for field in shown:
            for k, s in enumerate(_strings(tr.get(field))):
                if _unreadable(s):
                    problems.append(f"trace {n} {field} {k}: {s!r}")
    return problems


def axes_without_words(at: AppTest, words_are_ticks: frozenset = frozenset()) -> list[str]:
    """Every drawn cartesian axis with tick labels has a title (issue 42, point 14), except
    ``words_are_ticks``, ``(chart key, axis)`` pairs whose tick labels are their words.
    ``-> ["chart_key.xaxis", ...]`` of those without."""
    missing = []
    for key, spec in charts(at).items():
        if {t.get("type", "scatter") for t in spec.get("data", [])} & {"pie", "table", "sankey"}:
            continue
        layout = spec.get("layout", {})
        for name in [k for k in layout if k.startswith(("xaxis", "yaxis"))] or ["xaxis", "yaxis"]:
            axis = layout.get(name, {})
            if axis.get("visible") is False or axis.get("showticklabels") is False:
                continue
            if (key, name) not in words_are_ticks and not (axis.get("title") or {}).get("text"):
                missing.append(f"{key}.{name}")
    return missing


def z(fig: dict, trace: int = 0) -> np.ndarray:
    """A heatmap trace's z as floats (None -> NaN), from a JSON list or Plotly's binary form."""
    data = fig["data"][trace]["z"]
    if isinstance(data, dict):  # Plotly's compact binary form: {"dtype", "bdata", "shape"}
        flat = np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).astype(float)
        shape = data.get("shape")
        if isinstance(shape, str):
            shape = [int(s) for s in shape.split(",")]
        return flat.reshape(shape)
    return np.array([[np.nan if v is None else v for v in row] for row in data], dtype=float)


def texts(at: AppTest) -> str:
    """Every Markdown block and error message on the page, one per line."""
    return "\n".join([m.value for m in at.markdown] + [e.value for e in at.error])


def messages(at: AppTest) -> dict[str, list[str]]:
    """The page's error, warning and info boxes."""
    return {
        "error": [e.value for e in at.error],
        "warning": [w.value for w in at.warning],
        "info": [i.value for i in at.info],
    }


# --- a page's messages read back by their templates (issue 28's page-number audit) ------------------

# placeholders that hold words, not numbers (every other placeholder must show a number or a list of them)
TEXT_FIELDS = {"stat", "what", "token", "path", "names", "reading", "char", "span", "name", "first", "last", "groups",
               "source", "norm", "ffn", "detail", "size", "saved", "dtype", "method", "mem", "per", "nbytes",
               "from_code", "to_code"}  # fmt: skip
_NUMBER = (
    r"-?[0-9][0-9,]*(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?(?:%| (?:[kKMGTPE]i?)?B)?"  # 1,024 · 2.4e-07 · 38% · 16 MiB
)
NUMBERS = rf"{_NUMBER}(?:, {_NUMBER})*"  # one number or a list of them ("5, 11, 17")


def pattern(template: str, text_fields=()) -> re.Pattern:
    """A message template as a regular expression: each ``{field}`` captures its text, a number (or
    a list of numbers) unless it is one of :data:`TEXT_FIELDS`; a field used twice must show the same
    text twice."""
    parts, seen = [], set()
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is None:
            continue
        body = ".+?" if name in TEXT_FIELDS or name in text_fields else NUMBERS
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>{body})")
        seen.add(name)
    return re.compile("".join(parts), re.S)


def page_strings(at: AppTest) -> list[str]:
    """Every string the page shows, in page order within each kind: texts, headings, widget options,
    chart alt texts, trace names, hover texts and subplot titles, metric labels and values, table cells."""
    out: list[str] = []
    for kind in (
        "title",
        "header",
        "subheader",
        "markdown",
        "caption",
        "info",
        "warning",
        "error",
        "success",
    ):
        out += [e.value for e in at.get(kind)]
    for box in at.selectbox:
        out += list(box.options)
    for el in at.get("plotly_chart"):
        out.append(el.proto.alt)
        for tr in json.loads(el.proto.spec)["data"]:
            out += [html.unescape(str(tr.get("name", "")))]
            out += [html.unescape(h) for h in tr.get("hovertext") or [] if isinstance(h, str)]
        layout = json.loads(el.proto.spec).get("layout", {})
        out += [
            html.unescape(str(a.get("text", ""))) for a in layout.get("annotations", [])
        ]  # subplot titles
    for m in at.metric:
        out += [m.label, m.value]
    for df in at.dataframe:
        out += [str(c) for c in df.value.columns] + [str(v) for v in df.value.to_numpy().ravel()]
    return out


def message_values(
    strings: list[str], lang: str, key: str, whole: bool = True, text_fields=()
) -> list[dict[str, str]]:
    """The placeholder values of every string in ``strings`` that is message ``key`` in ``lang``, in
    order (``whole=False``: strings that contain it, for a caption built from several messages;
    ``text_fields``: more fields that hold words here)."""
    rx = pattern(catalog(lang)[key], text_fields)
    if whole:
        return [m.groupdict() for s in strings if (m := rx.fullmatch(s))]
    return [m.groupdict() for s in strings for m in rx.finditer(s)]


class Near:
    """A shown number: equal when the shown text, read as a float, lies within half a unit of its last
    printed digit of ``value`` (float32 against float64 may round the last digit the other way), plus
    8 float32 steps of ``value`` (2**-20 of it): a model's float32 sums, in another order than the
    test's float64 ones, can differ by a few float32 steps, more than half a unit of the fourth decimal
    at 175 (one float32 step there is 1.5e-5)."""

    def __init__(self, value: float) -> None:
        self.value = float(value)

    def __eq__(self, shown: object) -> bool:
        text = str(shown).replace(",", "")
        mantissa = text.split("e")[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        unit = 10.0**-decimals * (10.0 ** int(text.split("e")[1]) if "e" in text else 1.0)
        return abs(float(text) - self.value) <= 0.5 * unit * 1.01 + abs(self.value) * 2.0**-20 + 1e-300

    def __repr__(self) -> str:
        return f"Near({self.value!r})"


def differences(shown: dict, expected: dict) -> dict:
    """The fields whose shown text is not the expected value: ``{field: (shown, expected)}``."""
    return {k: (shown.get(k), e) for k, e in expected.items() if not e == shown.get(k)}


def capture_downloads(monkeypatch) -> dict:
    """Keep every deferred download's callable (``st.download_button(data=callable)``) by its file id,
    so a test can make the file the button would give: AppTest's runtime, and with it the callables,
    is gone after each run. Use :func:`downloaded`."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    kept: dict = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, mimetype, coordinates, **kwargs):
        file_id = original(self, data_callable, mimetype, coordinates, **kwargs)
        kept[file_id] = (data_callable, mimetype, kwargs.get("file_name"))
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return kept


def downloaded(at: AppTest, kept: dict, key: str) -> tuple[bytes, str, str]:
    """(bytes, mime type, file name) of the download button keyed ``key``, as a press makes them."""
    (button,) = [b for b in at.get("download_button") if b.proto.id.endswith(key)]
    assert button.proto.ignore_rerun  # on_click="ignore": a press does not rerun the page
    data, mime, name = kept[button.proto.deferred_file_id]
    body = data()
    return (body.encode("utf-8") if isinstance(body, str) else body), mime, name


# --- the learner's sentence across pages (issue 24: a shared link's sentence goes on into the labs) ---

SENTENCES = {"en": "hello world again today", "ja": "先生の文がラボに届く"}


def go(at: AppTest, page: str) -> AppTest:
    """The learner clicks ``page`` in the sidebar: Streamlit's navigation drops the query string."""
    at.query_params.clear()
    at.switch_page(page).run()
    no_exception(at)
    return at


def box(at: AppTest, key: str):
    found = [w for w in (*at.text_area, *at.text_input) if w.key == key]
    assert found, f"no sentence box {key}"
    return found[0]


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def html_bodies(at) -> list[str]:
    return [el.proto.body for el in at.get("html")] + [el.proto.body for el in at.sidebar.get("html")]
