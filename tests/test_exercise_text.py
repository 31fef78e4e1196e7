"""How a hand exercise's numbers are written (attention_core/exercise_text.py): exact fractions, and
the term-by-term sums that add up to the printed numbers."""

from __future__ import annotations

from fractions import Fraction

import pytest

from attention_core.exercise import generate_exercise
from attention_core.exercise_text import MINUS, dot_product_text, fraction_text, weighted_sum_text


def test_fraction_text():
    assert fraction_text(Fraction(3)) == "3"
    assert fraction_text(Fraction(-3, 2)) == "-1.5"
    assert fraction_text(Fraction(7, 3)) == "7/3"
    assert fraction_text(Fraction(-8, 3), MINUS) == "\u22128/3"
    assert fraction_text(Fraction(0, 3)) == "0"


def test_expansions_add_up_to_the_printed_numbers():
    for seed in range(100):
        ex = generate_exercise(seed, "causal")
        for i in range(ex.n):
            for j in range(ex.n):
                text = dot_product_text(ex.Q[i], ex.K[j], MINUS)
                assert "0\u00b7" not in text.replace(".0", "")
                assert eval(text.replace(MINUS, "-").replace("\u00b7", "*")) == ex.scores[i, j]  # noqa: S307
            for c in range(ex.d_v):
                text = weighted_sum_text(ex.weights[i], ex.V[:, c], 3)
                value = eval(text.replace("\u00b7", "*"))  # noqa: S307
                assert value == pytest.approx(ex.output_from_rounded_weights[i, c], abs=1e-12)
