"""The one CSV writer of the project: every cell of every CSV file the app writes goes through
:func:`cell`, so that no cell starts a spreadsheet formula.

A spreadsheet (Excel, LibreOffice Calc, Google Sheets) reads a cell that starts with ``=``, ``+``,
``-`` or ``@`` as a formula, and a tab or a carriage return before one does not stop it (the OWASP
"CSV Injection" list). A nickname such as ``=HYPERLINK("//e.vl","é")`` would then become a link in
the teacher's spreadsheet. So a text cell whose first character after any white space is one of
those four, or any character that NFKC folds to one of them (the full-width ``＝`` a Japanese
keyboard types, the small and superscript forms), or whose first character is a tab or a carriage
return, is written with a leading apostrophe: the spreadsheet shows it as text.

Numbers the app computed are written as numbers (``int`` and ``float``, NumPy's too): a negative
number starts with ``-`` and every spreadsheet reads it as a number; the masked score −∞ is
written ``-inf``, which Python, NumPy and pandas read back as −∞ (a spreadsheet has no infinite
number and shows it as an error, ``#NAME?`` in Excel; the cell calls nothing and holds no one's
text). The core's exports and the live class's results share it.
"""

from __future__ import annotations

import csv
import io
import numbers
import unicodedata
from collections.abc import Iterable

import numpy as np

FORMULA_CHARS = frozenset("=+-@")
CONTROL_START = ("\t", "\r")


def starts_formula(text: str) -> bool:
    """Whether a spreadsheet could take ``text`` for a formula (see the module docstring). The first
    character alone is folded: "=" with a combining stroke after it folds to "≠", and still starts
    a formula."""
    if text.startswith(CONTROL_START):
        return True
    first = text.lstrip()[:1]
    return bool(first) and unicodedata.normalize("NFKC", first)[:1] in FORMULA_CHARS


def cell(value: object) -> str:
    """One cell's text: a number as a number, anything else as text that starts no formula."""
    if isinstance(value, bool | np.bool_):  # (NumPy's bool is no Integral)
        return "1" if value else "0"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))  # reads back exactly; −∞ is "-inf"
    text = "" if value is None else str(value)
    return "'" + text if starts_formula(text) else text


def csv_text(rows: Iterable[Iterable[object]]) -> str:
    """The rows as CSV text, every value through :func:`cell`. Rows end in CR LF (RFC 4180, the csv
    module's own default): the writer then quotes a cell holding either, where with LF alone a lone
    CR in a cell ended its row for a reader."""
    out = io.StringIO()
    writer = csv.writer(out)
    for row in rows:
        writer.writerow([cell(v) for v in row])
    return out.getvalue()
