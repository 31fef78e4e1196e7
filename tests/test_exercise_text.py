"""How a hand exercise's numbers are written (attention_core/exercise_text.py): exact fractions, and
the term-by-term sums that add up to the printed numbers."""

from __future__ import annotations

from fractions import Fraction

import pytest

from attention_core.exercise import generate_exercise
from attention_core.exercise_text import (
    MINUS,
    decimal_text,
    dot_product_text,
    fraction_text,
    weighted_sum_text,
)


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


def test_decimals_keep_the_sign_except_on_a_printed_zero():
    assert decimal_text(-1.25, 2) == "-1.25" and decimal_text(-1.25, 2, MINUS) == "\u22121.25"
    assert decimal_text(-0.0004, 3) == "0.000" and decimal_text(0.0004, 3, MINUS) == "0.000"
    assert decimal_text(1.0, 1) == "1.0" and decimal_text(-1.0, 1) == "-1.0"


def test_a_negative_factor_is_put_in_parentheses_in_the_chosen_minus():
    assert dot_product_text([1, -2], [3, 4]) == "1\u00b73 + (-2)\u00b74"
    assert dot_product_text([-1, 2], [3, -4], MINUS) == "(\u22121)\u00b73 + 2\u00b7(\u22124)"
    assert dot_product_text([0, 2], [5, 0]) == "0"  # every product has a zero factor
    assert weighted_sum_text([-0.25, 0.5], [2, -3], 2, MINUS) == "\u22120.25\u00b72 + 0.50\u00b7(\u22123)"


def test_a_term_is_left_out_when_its_printed_weight_or_its_value_is_zero():
    assert weighted_sum_text([0.0004, 0.5], [2, 0], 3) == "0"
    assert weighted_sum_text([0.0004, 0.5, 0.25], [2, 0, 4], 2) == "0.25\u00b74"


def test_vectors_of_different_lengths_are_refused():
    with pytest.raises(ValueError):
        dot_product_text([1, 2], [1])
    with pytest.raises(ValueError):
        weighted_sum_text([0.5], [1, 2], 1)
