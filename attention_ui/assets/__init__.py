"""The browser code the pages put on the page: JavaScript (``*.js``) and CSS (``*.css``) in files.

Each file is read once per process (:func:`text` is cached) and handed to ``st.html`` by the module
that owns it, as before, in a ``<script>`` or ``<style>`` element (:func:`script`, :func:`style`).
A file may hold placeholders, ``__NAME__``, that its module fills in with constants (a page's widget
prefix, a number, a selector from :mod:`attention_ui.st_structure`): never user text.

The names of Streamlit's own page structure that these files use (``data-testid`` values, its ``st*``
class names) are declared in :mod:`attention_ui.st_structure`; tests/test_st_structure.py checks every
file here against that module and the module against the installed Streamlit.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = (".js", ".css")


@cache
def text(name: str) -> str:
    """The file ``name`` of this folder (``touch.js``), read once per process."""
    path = HERE / name
    if path.parent != HERE or path.suffix not in KINDS:
        raise ValueError(f"an asset is a .js or .css file of {HERE}, not {name!r}")
    return path.read_text(encoding="utf-8")


def script(name: str) -> str:
    """``<script>`` around the JavaScript file ``name``."""
    return f"\n<script>\n{text(name)}</script>\n"


def style(name: str) -> str:
    """``<style>`` around the CSS file ``name``."""
    return f"\n<style>\n{text(name)}</style>\n"


def files() -> list[Path]:
    """Every asset file, sorted."""
    return sorted(p for p in HERE.iterdir() if p.suffix in KINDS)
