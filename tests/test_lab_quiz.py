"""Quiz answers recomputed independently from the question parameters."""

from __future__ import annotations

import math

import pytest

from attention_core.labs.quiz import (
    QUIZ_KINDS,
    check_answer,
    generate_question,
    worked_numbers,
)

SEEDS = range(40)


def _independent_answer(q):
    p = q.params
    if q.kind == "causal_weight":
        Q, K, d = p["Q"], p["K"], p["d_k"]
        row, col = p["row"], p["col"]
        if col > row:
            return 0.0  # masked: the future key gets exactly zero weight
        s = [sum(Q[row][c] * K[j][c] for c in range(d)) / math.sqrt(d) for j in range(row + 1)]
        return math.exp(s[col]) / sum(math.exp(x) for x in s)
    if q.kind == "scores_shape":
        return (p["n"], p["n"])
    if q.kind == "attention_memory":
        return p["n"] ** 2 * {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}[p["dtype"]] / 1048576
    if q.kind == "dot_variance":
        return 1 if p["scaled"] else p["d_k"]
    if q.kind == "memory_ratio":
        return p["factor"] ** 2
    if q.kind == "head_dim":
        return p["d_model"] / p["heads"]
    if q.kind == "multihead_params":
        d = p["d_model"]
        return 3 * d * d + d * d  # W_Q, W_K, W_V are d x (h * d/h) = d x d each; W_O is d x d
    raise AssertionError(q.kind)


@pytest.mark.parametrize("kind", QUIZ_KINDS)
def test_answers_match_independent_computation(kind):
    for seed in SEEDS:
        q = generate_question(kind, seed)
        expected = _independent_answer(q)
        if isinstance(expected, tuple):
            assert q.answer == expected
        else:
            assert abs(q.answer - expected) < 1e-6
            assert abs(q.answer - expected) <= q.tolerance
        assert check_answer(q, expected)
        assert q.choices[q.answer_index] == q.answer
        assert len(q.choices) == 4
        wrong = [c for i, c in enumerate(q.choices) if i != q.answer_index]
        assert all(not check_answer(q, c) for c in wrong)  # no distractor is accepted as right
        assert len({str(c) for c in q.choices}) == 4


def test_deterministic_and_seed_dependent():
    assert [generate_question(k, 5) for k in QUIZ_KINDS] == [generate_question(k, 5) for k in QUIZ_KINDS]
    assert len({generate_question("causal_weight", s).params["Q"].__repr__() for s in range(10)}) > 5


def test_answer_position_varies():
    positions = {generate_question("head_dim", s).answer_index for s in range(30)}
    assert positions == {0, 1, 2, 3}


def test_check_answer_handles_junk():
    q = generate_question("scores_shape", 0)
    assert not check_answer(q, "abc") and not check_answer(q, None)
    m = generate_question("attention_memory", 0)
    assert not check_answer(m, "nan") and not check_answer(m, "x")
    assert check_answer(m, str(m.answer))


def test_bad_arguments():
    with pytest.raises(ValueError):
        generate_question("nope", 0)
    with pytest.raises(ValueError):
        generate_question("head_dim", -1)


def test_worked_numbers_by_hand():
    for seed in SEEDS:
        q = generate_question("causal_weight", seed)
        p, worked = q.params, worked_numbers(q)
        row = p["row"]
        s = [
            sum(a * b for a, b in zip(p["Q"][row], p["K"][j], strict=True)) / math.sqrt(p["d_k"])
            for j in range(2)
        ]
        assert worked["scores"][0] == pytest.approx(s[0], abs=1e-12)
        assert worked["scores"][1] == (-math.inf if row == 0 else pytest.approx(s[1], abs=1e-12))
        assert worked["weights"][p["col"]] == pytest.approx(q.answer, abs=1e-6)
        memory = generate_question("attention_memory", seed)
        n, b = memory.params["n"], memory.params["bytes_per_elem"]
        assert worked_numbers(memory) == {"elements": n * n, "bytes": n * n * b}
    assert worked_numbers(generate_question("head_dim", 0)) == {}
