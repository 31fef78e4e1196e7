"""``python -m attention_core exercise``: a hand-sized attention exercise and its worked solution."""

from __future__ import annotations

import argparse
import math

import numpy as np

from .config import MAX_SEED
from .exercise import EXERCISE_MASKS, WEIGHT_DECIMALS, Exercise, generate_exercise
from .exercise_text import (
    decimal_text,
    dot_product_text,
    fraction_text,
    int_text,
    weighted_sum_text,
)
from .export import print_result

JSON_KEYS = ("seed", "Q", "K", "V", "d_k", "mask", "scores", "scaled", "masked", "weights", "output")
OUTPUT_DECIMALS = 3


def _seed_arg(value: str) -> int:
    try:
        seed = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number from 0 to {MAX_SEED}, got {value!r}"
        ) from None
    if not 0 <= seed <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"the seed must be from 0 to {MAX_SEED}, got {value}")
    return seed


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``exercise`` subcommand on the main parser's subparsers."""
    ex = sub.add_parser(
        "exercise", help="an attention exercise small enough to do by hand, with its solution"
    )
    ex.add_argument(
        "--seed", type=_seed_arg, required=True, help="which exercise (the same seed, the same one)"
    )
    ex.add_argument("--mask", choices=EXERCISE_MASKS, default="none")
    ex.add_argument("--json", action="store_true", help="one JSON object instead of text")


def run(args: argparse.Namespace) -> int:
    exercise = generate_exercise(args.seed, args.mask)
    return print_result(args.json, lambda: exercise_to_json(exercise), lambda: format_exercise(exercise))


def exercise_to_json(ex: Exercise) -> dict:
    """Plain JSON values, keys exactly ``JSON_KEYS``: integers stay integers, masked scores are null."""
    masked = np.where(ex.allowed, ex.masked, np.nan).tolist()
    masked = [[None if math.isnan(v) else v for v in row] for row in masked]
    data = {
        "seed": ex.seed,
        "Q": ex.Q.tolist(),
        "K": ex.K.tolist(),
        "V": ex.V.tolist(),
        "d_k": ex.d_k,
        "mask": None if ex.mask == "none" else ex.allowed.tolist(),
        "scores": ex.scores.tolist(),
        "scaled": ex.scaled.tolist(),
        "masked": masked,
        "weights": ex.weights.tolist(),
        "output": ex.output.tolist(),
    }
    assert tuple(data) == JSON_KEYS
    return data


def _matrix(rows: list[list[str]], label: str) -> list[str]:
    """Right-aligned columns, rows numbered from 1 with ``label``."""
    width = max(len(cell) for row in rows for cell in row)
    return [
        f"  {label}{i + 1} | " + "  ".join(cell.rjust(width) for cell in row) for i, row in enumerate(rows)
    ]


def _ints(a) -> list[list[str]]:
    return [[int_text(v) for v in row] for row in a.tolist()]


def format_exercise(ex: Exercise) -> str:
    """The exercise, the e^x table and every step of the solution, as plain text."""
    n, root = ex.n, ex.root_d_k
    mask_line = (
        "Mask: causal. Query i may attend to keys j <= i; the cells with j > i are removed."
        if ex.mask == "causal"
        else "Mask: none. Every query may attend to every key."
    )
    table = ex.exp_table
    xs = [fraction_text(e.x) for e in table]
    vals = [f"{e.value:.4f}" for e in table]
    col = max(len(s) for s in xs + vals)
    lines = [
        f"Self-attention by hand: seed {ex.seed}, mask {ex.mask}",
        f"n = {n} tokens, d_k = {ex.d_k} (sqrt(d_k) = {root}), d_v = {ex.d_v}. Rows and columns count from 1.",
        "",
        f"Q ({n}x{ex.d_k})", *_matrix(_ints(ex.Q), "q"),
        f"K ({n}x{ex.d_k})", *_matrix(_ints(ex.K), "k"),
        f"V ({n}x{ex.d_v})", *_matrix(_ints(ex.V), "v"),
        mask_line,
        "",
        "Compute softmax(Q K^T / sqrt(d_k) + M) V. Before e^x, subtract each row's largest score",
        f"(softmax does not change); every e^x needed is in this table. Weights to {WEIGHT_DECIMALS} decimals.",
        "  x   | " + "  ".join(s.rjust(col) for s in xs),
        "  e^x | " + "  ".join(s.rjust(col) for s in vals),
        "",
        "Solution",
        "1. Raw scores S = Q K^T (dot products; products with a zero factor left out)",
    ]  # fmt: skip
    for i in range(n):
        for j in range(n):
            lines.append(
                f"  S[{i + 1},{j + 1}] = {dot_product_text(ex.Q[i], ex.K[j])} = {int(ex.scores[i, j])}"
            )
    lines += _matrix(_ints(ex.scores), "q")
    lines.append(f"2. Scaled scores S / sqrt(d_k) = S / {root}")
    lines += _matrix([[fraction_text(ex.scaled_exact(i, j)) for j in range(n)] for i in range(n)], "q")
    lines.append(
        "3. Masked scores (-inf = removed)" if ex.mask == "causal" else "3. Masked scores (nothing removed)"
    )
    lines += _matrix(
        [
            [fraction_text(ex.scaled_exact(i, j)) if ex.allowed[i, j] else "-inf" for j in range(n)]
            for i in range(n)
        ],
        "q",
    )
    lines.append("4. Softmax row by row: e^(x - row max) from the table, divided by the row sum")
    for i in range(n):
        top = fraction_text(max(ex.scaled_exact(i, j) for j in range(n) if ex.allowed[i, j]))
        terms = ", ".join(
            f"e^({fraction_text(ex.shifted_exact(i, j))}) = {ex.exp_terms[i, j]:.4f}"
            if ex.allowed[i, j]
            else "0"
            for j in range(n)
        )
        lines.append(f"  row {i + 1}: max = {top}; {terms}; sum = {ex.row_sums[i]:.4f}")
    lines.append(f"  weights ({WEIGHT_DECIMALS} decimals; each row sums to 1)")
    lines += _matrix([[decimal_text(v, WEIGHT_DECIMALS) for v in row] for row in ex.weights.tolist()], "q")
    lines.append(f"5. Output O = weights V ({n}x{ex.d_v}), with the {WEIGHT_DECIMALS}-decimal weights")
    rounded = ex.output_from_rounded_weights
    for i in range(n):
        for c in range(ex.d_v):
            terms = weighted_sum_text(ex.weights[i], ex.V[:, c], WEIGHT_DECIMALS)
            lines.append(f"  O[{i + 1},{c + 1}] = {terms} = {decimal_text(rounded[i, c], OUTPUT_DECIMALS)}")
    lines.append(f"  O from the unrounded weights ({OUTPUT_DECIMALS} decimals)")
    lines += _matrix([[decimal_text(v, OUTPUT_DECIMALS) for v in row] for row in ex.output.tolist()], "o")
    return "\n".join(lines)
