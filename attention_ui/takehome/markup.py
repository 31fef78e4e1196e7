"""Text for the files that leave the app: the catalogs' Markdown as HTML and LaTeX formulas as MathML.

Why MathML from ``latex2mathml`` (and not SVG from ``ziamath``): the browser draws MathML itself
(Chromium since 109, Firefox, Safari), so a formula needs no script and no font download; the
Japanese words some formulas hold (``\\text{許可}``) are drawn in the page's own font, which
ziamath's bundled math font has no glyphs for; the text stays selectable and readable by a
screen reader; and the package is small and pure Python (ziamath itself builds on it).

Markdown goes through markdown-it-py (CommonMark) with raw HTML switched off, so text in a catalog or
typed by a learner can never become markup; ``$…$`` and ``$$…$$`` become MathML by the dollarmath
plugin. Streamlit's own directives (``:small[…]``, ``:blue[…]``) are reduced to their text.
"""

from __future__ import annotations

import html
import re
from functools import cache

from latex2mathml.converter import convert
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

# ":small[text]", ":red[text]" (Streamlit's text directives): the text alone.
_DIRECTIVE = re.compile(r":(?:small|red|blue|green|orange|violet|gray|grey|rainbow|primary)\[([^\]]*)\]")


def mathml(latex: str, display: bool = False) -> str:
    """One formula as a ``<math>`` element (``display``: a block of its own)."""
    return convert(latex, display="block" if display else "inline")


def _math(content: str, options: dict) -> str:
    return mathml(content.strip(), display=bool(options.get("display_mode")))


def _tex(content: str, options: dict) -> str:
    """A formula left as TeX between MathJax's delimiters (Moodle's MathJax filter draws it)."""
    left, right = (r"\[", r"\]") if options.get("display_mode") else (r"\(", r"\)")
    return html.escape(f"{left}{content.strip()}{right}", quote=False)


@cache
def _markdown(math: str) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.use(
        dollarmath_plugin,
        renderer=_math if math == "mathml" else _tex,
        allow_digits=False,
        double_inline=True,
    )
    return md


def markdown_html(text: str, math: str = "mathml") -> str:
    """Catalog Markdown (with ``$…$`` formulas) as HTML; raw HTML in it is shown as text. ``math``:
    ``"mathml"`` (the offline files) or ``"tex"`` (``\\(…\\)`` for a platform's MathJax: Moodle)."""
    return _markdown(math).render(_DIRECTIVE.sub(r"\1", str(text)))


def inline_html(text: str, math: str = "mathml") -> str:
    """Like :func:`markdown_html` for one line: without the surrounding paragraph."""
    out = markdown_html(text, math).strip()
    if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
        out = out[3:-4]
    return out


def plain(text: str) -> str:
    """User text (a sentence, a token) as HTML text: every character shown as typed."""
    return html.escape(str(text), quote=True)
