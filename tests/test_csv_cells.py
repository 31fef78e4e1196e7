"""The project's one CSV writer (attention_core/csv_cells.py; issue 42 point 1): no cell of any CSV the
app writes starts a spreadsheet formula, and numbers stay numbers. Core only (NumPy and the standard
library), so that mutation testing can run it on its own (scripts/mutate.py)."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from attention_core import AttentionConfig, trace_text

# Issue 42 point 1: one writer for every CSV; no cell starts a spreadsheet formula.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


@pytest.mark.parametrize("p", FORMULA_PREFIXES)
def test_the_one_csv_writer_quotes_text_that_would_start_a_formula(p):
    from attention_core.csv_cells import cell, csv_text, starts_formula

    spaced = (" " + p + "x", "\u3000" + p + "x") if p in "=+-@" else ()  # after white space too
    for text in (p + "1+1", p + "cmd|' /C calc'!A0", *spaced):
        assert cell(text) == "'" + text and not starts_formula(cell(text)), repr(text)
    assert [cell(c) for c in ("\uff1d1+1", "\uff0bx", "\uff20a", "\ufe62x")] == [
        "'\uff1d1+1",
        "'\uff0bx",
        "'\uff20a",
        "'\ufe62x",
    ]  # fmt: skip  (full-width and small forms NFKC-fold to = + @ +)
    assert [cell(c) for c in ("Ann", "1 =x", "", None, "x=1")] == ["Ann", "1 =x", "", "", "x=1"]
    # the first character is folded alone: "=" and a combining stroke fold to "≠" together; a
    # character that folds to several ("⩵": "==") counts by its first
    assert [cell(c) for c in ("=\u0338x", "\u2a75x")] == ["'=\u0338x", "'\u2a75x"]
    # numbers stay numbers: a negative one, -inf, NumPy's scalars and booleans
    assert [cell(v) for v in (-2, -0.5, float("-inf"), float("inf"), np.float64(-1.25), np.int64(-3), np.bool_(True),
                               False)] == ["-2", "-0.5", "-inf", "inf", "-1.25", "-3", "1", "0"]  # fmt: skip
    text = csv_text([["a", p + "b"], [1, "c\rd"]])
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows == [["a", "'" + p + "b"], ["1", "c\rd"]]  # a CR inside a cell stays in its cell


def test_no_cell_of_a_matrix_csv_starts_a_formula_but_its_numbers():
    """Tokens that start with each prefix (their labels start with the position), in every matrix
    the playground exports; the only cells that start with "-" are numbers the core computed."""
    from attention_core.csv_cells import starts_formula
    from attention_core.export import CSV_MATRICES, matrix_csv

    tr = trace_text("=a +b -c @d x", AttentionConfig(d_model=8, heads=2, mask="causal"))
    assert {t[:1] for t in tr.tokens} >= {"=", "+", "-", "@"}, tr.tokens
    for name in CSV_MATRICES:
        rows = list(csv.reader(io.StringIO(matrix_csv(tr, name).decode("utf-8-sig"), newline="")))
        for value in (v for row in rows for v in row):
            assert not starts_formula(value) or float(value) <= 0, (name, value)
