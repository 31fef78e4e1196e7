"""How the numbers of a hand exercise are written on paper: exact fractions, fixed decimals, sums.

Shared by the command line (ASCII minus) and the worksheet PDF (the typographic minus U+2212).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

ASCII_MINUS = "-"
MINUS = "\u2212"
TIMES = "\u00b7"  # the middle dot between the factors of a product


def _sign(text: str, minus: str) -> str:
    return text.replace("-", minus)


def int_text(value: int, minus: str = ASCII_MINUS) -> str:
    return _sign(str(int(value)), minus)


def fraction_text(value: Fraction, minus: str = ASCII_MINUS) -> str:
    """A scaled score as a person writes it: ``3``, ``-1.5`` (halves are exact decimals), ``7/3``."""
    value = Fraction(value)
    if value.denominator == 1:
        text = str(value.numerator)
    elif value.denominator == 2:
        text = f"{float(value):.1f}"
    else:
        text = f"{value.numerator}/{value.denominator}"
    return _sign(text, minus)


def decimal_text(value: float, decimals: int, minus: str = ASCII_MINUS) -> str:
    """``value`` with a fixed number of decimals; a result that rounds to zero is written without sign."""
    text = f"{float(value):.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return _sign(text, minus)


def _factor(text: str, minus: str) -> str:
    """Negative factors in parentheses, so ``2·(−3)`` cannot be read as a subtraction."""
    return f"({text})" if text.startswith(minus) else text


def dot_product_text(q: np.ndarray, k: np.ndarray, minus: str = ASCII_MINUS) -> str:
    """The sum q·k term by term, products with a zero factor left out: ``1·2 + (-1)·3`` (or ``0``)."""
    terms = [
        f"{_factor(int_text(a, minus), minus)}{TIMES}{_factor(int_text(b, minus), minus)}"
        for a, b in zip(np.asarray(q).tolist(), np.asarray(k).tolist(), strict=True)
        if a != 0 and b != 0
    ]
    return " + ".join(terms) if terms else "0"


def weighted_sum_text(
    weights: np.ndarray, values: np.ndarray, decimals: int, minus: str = ASCII_MINUS
) -> str:
    """Σ_j w_j · v_j term by term with the weights as printed (``decimals``), zero terms left out."""
    terms = []
    for w, v in zip(np.asarray(weights).tolist(), np.asarray(values).tolist(), strict=True):
        w_text = decimal_text(w, decimals, minus)
        if float(w_text.replace(minus, "-")) == 0 or v == 0:
            continue
        terms.append(f"{w_text}{TIMES}{_factor(int_text(v, minus), minus)}")
    return " + ".join(terms) if terms else "0"
