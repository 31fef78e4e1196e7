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
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

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

    ``charts(at)`` -> ``{"pg_chart_weights": {...}, ...}``; ``charts(at, "mk_chart_")`` -> ``{"mask": ...}``.
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
