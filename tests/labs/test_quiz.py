"""Quiz answers recomputed independently from the question parameters."""

from __future__ import annotations

import math

import numpy as np
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
    if q.kind == "padding_cells":
        total, n = p["total"], p["n"]
        return sum(1 for _ in range(total) for key in range(total) if key >= n)  # every [PAD] column
    if q.kind == "softmax_shift":
        s = p["scores"]
        e = [math.exp(x - max(s)) for x in s]
        return e[p["col"]] / sum(e)
    if q.kind == "sqrt_divisor":
        return p["d_k"] ** 0.5
    if q.kind == "kv_cache_size":
        per_layer = 0
        for _kv in ("K", "V"):  # one tensor of n x kv_heads x d_k values each
            per_layer += p["n"] * p["kv_heads"] * p["d_k"] * {"fp32": 4, "fp16": 2, "bf16": 2}[p["dtype"]]
        return p["layers"] * per_layer / 1048576
    if q.kind == "sinusoidal_value":
        i, pos = p["dim"] // 2, p["pos"]
        angle = pos / 10000 ** (2 * i / p["d_model"])
        return round(math.sin(angle) if p["dim"] % 2 == 0 else math.cos(angle), 3)
    if q.kind == "window_scores":  # count the allowed (query, key) pairs one by one
        n, w = p["n"], p["w"]
        return sum(1 for i in range(n) for j in range(i - 2 * w, i + 2) if 0 <= j and i - w < j <= i)
    if q.kind == "block_crossover":  # the smallest n where attention's n² FLOPs reach the rest, ±1
        d, h, f = p["d_model"], p["heads"], p["d_ff"]
        first = next(
            n for n in range(1, 10**6) if 4 * n * n * d + 6 * h * n * n >= 8 * n * d * d + 4 * n * d * f
        )
        exact = (8 * d * d + 4 * d * f) / (4 * d + 6 * h)
        assert first - 1 < exact <= first
        return round(exact)
    if (
        q.kind == "ring_send_bytes"
    ):  # walk the ring: at each of P steps but the last, every device sends K and V
        bytes_per = {"fp32": 4, "fp16": 2, "bf16": 2}[p["dtype"]]
        sent = 0
        for step in range(p["P"]):
            if step < p["P"] - 1:
                sent += sum(2 * (p["n"] // p["P"]) * p["d"] * bytes_per for _device in range(p["P"]))
        return sent / 1048576
    if q.kind == "ssm_weight":  # y for an impulse x_0 = 1 at t = lag: c·b·a^lag
        return p["c"] * p["b"] * p["a"] ** p["lag"]
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


def test_worked_numbers_of_the_shift_by_hand():
    for seed in SEEDS:
        q = generate_question("softmax_shift", seed)
        worked, scores = worked_numbers(q), q.params["scores"]
        top = max(scores)
        assert worked["max"] == top
        assert list(worked["shifted"]) == [float(x - top) for x in scores]
        assert list(worked["exps"]) == pytest.approx([math.exp(x - top) for x in scores], abs=1e-15)
    assert worked_numbers(generate_question("sqrt_divisor", 0))["sqrt128"] == pytest.approx(
        11.3137085, abs=1e-7
    )


def test_softmax_shift_premise_holds():
    """The question says e^s overflows in float64 unless the maximum is subtracted: check it does."""
    import numpy as np

    for seed in SEEDS:
        q = generate_question("softmax_shift", seed)
        with np.errstate(over="ignore", invalid="ignore"):
            naive = np.exp(np.asarray(q.params["scores"], dtype=float))
            assert np.isinf(naive).all() and np.isnan(naive / naive.sum()).all()
        assert len(set(q.params["scores"])) == 3 and min(q.params["scores"]) > 709.8


def test_sqrt_divisor_asks_about_d_k_128():
    """√128 ≈ 11.3 (the reference notes' figure) is among the questions asked."""
    questions = [generate_question("sqrt_divisor", s) for s in SEEDS]
    at_128 = [q for q in questions if q.params["d_k"] == 128]
    assert at_128 and all(round(q.answer, 1) == 11.3 for q in at_128)


# --- the choices are the named mistakes, the values asked stay in the bank's ranges -------------

MIB = 2**20
BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}
SPEC_SEEDS = range(200)


def _r6(x):
    return round(x, 6)


def _softmax(xs):
    top = max(xs)
    e = [math.exp(x - top) for x in xs]
    return [v / sum(e) for v in e]


def _pe(pos, dim, d_model, exponent=2):
    """PE(pos, dim): sine in even columns, cosine in odd ones, angle pos / 10000^(exponent·i / d)."""
    i = dim // 2
    angle = pos / 10000 ** (exponent * i / d_model)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def _mistakes(kind, p, a):
    """The wrong answers each question offers, in the order offered, then the fallbacks used when a
    named mistake happens to equal the answer (written from the question texts, not the code)."""
    if kind == "causal_weight":
        Q, K, d, row, col = p["Q"], p["K"], p["d_k"], p["row"], p["col"]
        dots = [sum(x * y for x, y in zip(Q[row], K[j], strict=True)) for j in range(2)]
        unmasked = _softmax([s / math.sqrt(d) for s in dots])[col]  # the mask forgotten
        unscaled = 0.0 if col > row else _softmax(dots[: row + 1])[col]  # the √d_k forgotten
        named = [_r6(unmasked), _r6(unscaled), _r6(1 - a), 0.5]
        return named, [0.0, 1.0, 0.25, 0.75, 0.1]
    if kind == "scores_shape":
        n, d = p["n"], p["d_k"]
        return [(n, d), (d, d), (d, n)], [(n, 1), (1, n)]
    if kind == "attention_memory":
        n, b = p["n"], BYTES[p["dtype"]]
        linear = n * 1024 * b / MIB  # linear in n
        return [linear, 2 * a, a / 2, n * n / MIB], [4 * a, a / 4, 8 * a]  # and the dtype slips
    if kind == "dot_variance":
        d = p["d_k"]
        return [d if p["scaled"] else 1, math.isqrt(d), d * d], [2 * d, 0, d + 1]
    if kind == "memory_ratio":
        f = p["factor"]
        return [f, 2 * f, f**3], [f + 1, f * f + f]
    if kind == "head_dim":
        d, h = p["d_model"], p["heads"]
        return [d * h, d, h], [2 * a, a // 2]
    if kind == "multihead_params":
        d, h = p["d_model"], p["heads"]
        return [4 * d * d // h, 4 * d * d * h, 3 * d * d], [2 * d * d, d * d]
    if kind == "padding_cells":
        n, k, t = p["n"], p["pads"], p["total"]
        return [n * k, k * k, t * t - n * n, k], [t, t * (k + 1)]
    if kind == "softmax_shift":
        s, col = p["scores"], p["col"]
        w = _softmax(s)
        others = [_r6(w[j]) for j in range(3) if j != col]
        unnormalised = _r6(math.exp(s[col] - max(s)))  # e^(s − m) without dividing by the sum
        return [unnormalised, _r6(1 / 3), *others], [0.5, 0.25, 0.1, 0.9, 0.75]
    if kind == "sqrt_divisor":
        d = p["d_k"]
        return [float(d), d / 2, math.log2(d)], [2 * a, a / 2, float(d * d)]
    if kind == "kv_cache_size":
        group = p["heads"] // p["kv_heads"]
        return [a / 2, a * group, a / p["layers"]], [2 * a, 4 * a]  # K or V only, MHA, one layer
    if kind == "sinusoidal_value":
        pos, dim, d = p["pos"], p["dim"], p["d_model"]
        swapped = _pe(pos, dim + 1 if dim % 2 == 0 else dim - 1, d)  # sine and cosine swapped
        slip = _pe(pos, dim, d, exponent=1)  # exponent i/d instead of 2i/d
        return [round(swapped, 3), round(slip, 3), round(-a, 3)], [0.0, 1.0, -1.0, 0.5, -0.5]
    if kind == "window_scores":
        n, w = p["n"], p["w"]
        return [n * w, n * n, n * (n + 1) // 2], [2 * n * w, a + w]
    if kind == "block_crossover":
        d = p["d_model"]
        return [d, d * d, 4 * d], [2 * a, a // 2]
    if kind == "ring_send_bytes":
        hop = a / (p["P"] - 1)
        return [hop * p["P"], a / 2, hop], [2 * a]  # a send at every step, K only, one hop only
    if kind == "ssm_weight":
        ab, bb, cb, lag = p["a"], p["b"], p["c"], p["lag"]
        named = [cb * bb * ab ** (lag + 1), cb * bb * ab ** (lag - 1), ab**lag, cb * bb]
        return named, [cb * ab**lag, bb * ab**lag, 2 * a, a / 2, 3 * a, a + 0.25]
    raise AssertionError(kind)


def _offered(a, named, fallbacks, tol):
    """Three wrong answers: the named mistakes, then the fallbacks, each kept when it differs from the
    answer and from those kept before (shapes exactly; numbers by more than twice the tolerance)."""
    kept = []
    for x in [*named, *fallbacks]:
        if len(kept) == 3:
            break
        if all(x != y if isinstance(a, tuple) else abs(x - y) > max(2 * tol, 1e-9) for y in [a, *kept]):
            kept.append(x)
    return kept


# Typed answers: counts exactly, three-decimal values to ±0.005, MiB to ±0.5 %, the SSM weight ±0.0005.
TOLERANCE = {"causal_weight": 0.005, "softmax_shift": 0.005, "sqrt_divisor": 0.005, "sinusoidal_value": 0.005,
             "ssm_weight": 0.0005}  # fmt: skip
IN_MIB = ("attention_memory", "kv_cache_size", "ring_send_bytes")
WHOLE = ("dot_variance", "memory_ratio", "head_dim", "multihead_params", "padding_cells", "window_scores",
         "block_crossover")  # fmt: skip
ROUNDED_6 = ("causal_weight", "softmax_shift", "sqrt_divisor", "ssm_weight")  # answers shown to 6 decimals


@pytest.mark.parametrize("kind", QUIZ_KINDS)
def test_choices_are_the_named_mistakes(kind):
    for seed in SPEC_SEEDS:
        q = generate_question(kind, seed)
        a = _independent_answer(q)
        if kind in ROUNDED_6:
            a = _r6(a)
            assert q.answer == pytest.approx(a, abs=1e-9), seed
        tol = q.answer * 0.005 if kind in IN_MIB else TOLERANCE.get(kind, 0.0)
        assert q.tolerance == pytest.approx(tol, rel=1e-12, abs=0), seed
        assert q.unit == ("MiB" if kind in IN_MIB else None)
        if kind in WHOLE:  # counts: whole numbers, shown without a decimal point
            assert all(type(c) is int for c in q.choices), (seed, q.choices)
        wrong = [c for i, c in enumerate(q.choices) if i != q.answer_index]
        expected = _offered(a, *_mistakes(kind, q.params, a), tol)
        if kind == "scores_shape":
            assert sorted(wrong) == sorted(expected), seed
        else:
            assert sorted(wrong) == pytest.approx(sorted(expected), abs=1e-9, rel=1e-12), seed


def _seen(kind, key):
    return {generate_question(kind, s).params[key] for s in SPEC_SEEDS}


def test_softmax_shift_offers_the_undivided_exponential():
    """The explanation's last step divides e^(s − m) by the sum: forgetting it is a choice whenever
    it is far enough from the answer to be told apart (a small weight barely changes)."""
    offered = 0
    for seed in SPEC_SEEDS:
        q = generate_question("softmax_shift", seed)
        s, col = q.params["scores"], q.params["col"]
        undivided = round(math.exp(s[col] - max(s)), 6)
        if abs(undivided - q.answer) > 2 * q.tolerance:
            assert undivided in q.choices, seed
            offered += 1
    assert offered > len(SPEC_SEEDS) / 2


def test_the_values_asked_stay_in_the_banks_ranges():
    """What the question texts are written for: realistic sizes (powers of two, head counts of real
    models), perfect squares where √d_k is asked, small integer matrices, every case reached."""
    pow2 = lambda lo, hi: {2**k for k in range(20) if lo <= 2**k <= hi}  # noqa: E731
    assert _seen("attention_memory", "n") == pow2(512, 16384)
    assert _seen("dot_variance", "d_k") == {k * k for k in (2, 3, 4, 5, 6, 8, 10, 12, 16)}
    scaled = [generate_question("dot_variance", s).params["scaled"] for s in SPEC_SEEDS]
    assert 0.35 < sum(scaled) / len(scaled) < 0.65  # scaled and unscaled asked about equally often
    assert _seen("memory_ratio", "factor") == {2, 3, 4, 8, 10}
    assert _seen("head_dim", "heads") == {2, 4, 8, 12, 16}
    assert _seen("multihead_params", "heads") == {2, 4, 8}
    assert _seen("padding_cells", "n") == set(range(3, 9)) and _seen("padding_cells", "pads") == {1, 2, 3, 4}
    assert _seen("scores_shape", "n") == set(range(3, 13))
    assert _seen("scores_shape", "d_k") == pow2(2, 64)
    assert _seen("sqrt_divisor", "d_k") == {16, 32, 64, 96, 128, 256}
    for key, values in (("layers", {12, 24, 32, 40}), ("kv_heads", {1, 2, 4, 8}), ("d_k", {64, 128}),
                        ("n", {1024, 2048, 4096, 8192, 32768})):  # fmt: skip
        assert _seen("kv_cache_size", key) == values, key
    kv = [generate_question("kv_cache_size", s).params for s in SPEC_SEEDS]
    groups = {p["heads"] / p["kv_heads"] for p in kv}
    assert groups == {2, 4, 8}
    assert _seen("sinusoidal_value", "d_model") == {4, 8, 16}
    assert _seen("sinusoidal_value", "dim") == {0, 1, 2, 3}
    assert _seen("sinusoidal_value", "pos") == set(range(1, 21))
    for s in SPEC_SEEDS:
        p = generate_question("sinusoidal_value", s).params
        angle = p["pos"] / 10000 ** (2 * (p["dim"] // 2) / p["d_model"])
        assert p["i"] == p["dim"] // 2 and p["angle"] == round(angle, 4)
        w = generate_question("window_scores", s).params
        assert w["n"] > w["w"]
        r = generate_question("softmax_shift", s).params["scores"]
        assert sorted(x - max(r) for x in r)[-1] == 0 and min(x - max(r) for x in r) >= -4
        c = generate_question("causal_weight", s).params
        assert all(-2 <= v <= 2 for m in (c["Q"], c["K"]) for row in m for v in row)
        dots = [sum(x * y for x, y in zip(c["Q"][1], c["K"][j], strict=True)) for j in range(2)]
        assert dots[0] != dots[1]  # never the 0.5 / 0.5 row
    tops = {max(generate_question("softmax_shift", s).params["scores"]) for s in SPEC_SEEDS}
    assert tops == {720, 800, 1000, 1200}
    c_seen = [generate_question("causal_weight", s).params for s in SPEC_SEEDS]
    assert {(p["row"], p["col"]) for p in c_seen} == {(1, 0), (1, 1), (0, 1)}
    for m in ("Q", "K"):
        assert {v for p in c_seen for row in p[m] for v in row} == {-2, -1, 0, 1, 2}, m
    assert _seen("window_scores", "w") == pow2(4, 64) and _seen("window_scores", "n") == pow2(64, 1024)
    assert _seen("block_crossover", "d_model") == {256, 512, 768, 1024, 2048, 4096}
    assert _seen("block_crossover", "heads") == {4, 8, 12, 16, 32}
    assert _seen("ring_send_bytes", "P") == {4, 8, 16} and _seen("ring_send_bytes", "d") == {64, 128}
    assert _seen("ring_send_bytes", "n") == {8192, 32768, 131072}
    for key, values in (("a", {0.5, 0.6, 0.8, 0.9}), ("b", {0.5, 1.0, 2.0}), ("c", {1.0, 2.0, 3.0}),
                        ("lag", {1, 2, 3})):  # fmt: skip
        assert _seen("ssm_weight", key) == values, key


def test_quiz_distinct_build_and_seed_checks():
    from attention_core.labs import quiz as qz

    assert qz._distinct((1, 2), 3.0, 0.0) and not qz._distinct((2, 3), (2, 3), 0.0)
    assert not qz._distinct(1.0, 1.5, 0.25)  # exactly 2·tol apart: too close to tell apart
    assert qz._distinct(1.0, 1.625, 0.25)  # 0.625 > 2·tol
    rng = np.random.default_rng(0)
    q = qz._build("k", 7, rng, {}, 1.0, 0.0, [2.0, 3.0], [4.0], unit="MiB")
    assert (q.seed, q.unit, sorted(q.choices)) == (7, "MiB", [1.0, 2.0, 3.0, 4.0]) and q.choices[
        q.answer_index
    ] == 1.0
    with pytest.raises(RuntimeError):
        qz._build("k", 7, np.random.default_rng(0), {}, 1.0, 0.0, [2.0, 3.0], [1.0])  # only two distinct
    for bad in (-1, True, 1.5, "3"):
        with pytest.raises(ValueError):
            qz.generate_question("kv_cache_size", bad)
    assert qz.generate_question("kv_cache_size", np.int64(3)).seed == 3


def test_quiz_worked_numbers_of_the_kv_cache_by_hand():
    from attention_core.labs import quiz as qz

    q = qz.generate_question("kv_cache_size", 5)
    p = q.params
    assert q.unit == "MiB"
    assert qz.worked_numbers(q) == {
        "bytes": 2 * p["layers"] * p["n"] * p["kv_heads"] * p["d_k"] * p["bytes_per_value"]
    }
