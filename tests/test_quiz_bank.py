"""The quiz bank as data: enough questions of every kind, text in both languages, exactly one
right answer (computed answers re-derived here independently), links to real pages, seeded order."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from attention_core.labs.quiz import QUIZ_KINDS
from attention_ui import nav
from attention_ui.i18n import LANGUAGES, placeholders, translate
from attention_ui.quiz_bank import (
    PAGE_TITLE_KEYS,
    STATIC_QUESTIONS,
    build_quiz,
    explain_values,
    format_value,
    missed_ids,
    score,
)

ROOT = Path(__file__).resolve().parents[1]
CATALOG = {
    lang: json.loads((ROOT / f"attention_ui/locales/{lang}/quiz.json").read_text("utf-8"))
    for lang in LANGUAGES
}
SEEDS = range(12)


def app_pages() -> set[str]:
    """The page paths of the navigation (attention_ui/nav.py, which app.py registers with st.Page)."""
    return {p.script for p in nav.PAGES}


def test_at_least_24_questions_of_every_kind() -> None:
    quiz = build_quiz(0)
    assert len(quiz) >= 24
    assert {it.kind for it in quiz} == {"mc", "tf", "computed"}
    assert len({it.qid for it in quiz}) == len(quiz)
    assert {it.computed.kind for it in quiz if it.computed} == set(QUIZ_KINDS)


def test_every_static_question_has_text_choices_and_explanation_in_both_languages() -> None:
    for q in STATIC_QUESTIONS:
        keys = [f"q_{q.qid}", f"q_{q.qid}_why"]
        if q.kind == "mc":
            keys += [f"q_{q.qid}_c{k}" for k in range(q.n_choices)]
        for lang in LANGUAGES:
            for key in keys:
                assert CATALOG[lang].get(key, "").strip(), (lang, key)
            if q.kind == "mc":  # distinct choices, so only one of them can be the right one
                choices = [CATALOG[lang][f"q_{q.qid}_c{k}"] for k in range(q.n_choices)]
                assert len(set(choices)) == q.n_choices, (lang, q.qid)
        # no stray choice keys beyond n_choices (a fifth choice would never be shown)
        assert f"q_{q.qid}_c{q.n_choices}" not in CATALOG["en"]
        assert 0 <= q.correct < q.n_choices
        assert (q.kind, q.n_choices) in {("mc", 4), ("tf", 2)}


def test_true_false_questions_have_both_answers() -> None:
    tf = [q for q in STATIC_QUESTIONS if q.kind == "tf"]
    assert len(tf) >= 4
    assert {q.correct for q in tf} == {0, 1}  # not all "false"


def test_catalog_pairs_match() -> None:
    assert set(CATALOG["en"]) == set(CATALOG["ja"])
    for key, text in CATALOG["en"].items():
        assert text.strip() and CATALOG["ja"][key].strip(), key
        assert placeholders(text) == placeholders(CATALOG["ja"][key]), key


def test_every_link_points_to_a_page_the_app_registers() -> None:
    registered = app_pages()
    quiz = build_quiz(0)
    for it in quiz:
        assert it.link in registered, (it.qid, it.link)
        assert it.link in PAGE_TITLE_KEYS
        assert (ROOT / it.link).is_file(), (it.qid, it.link)


def test_display_order_keeps_the_right_answer() -> None:
    for seed in SEEDS:
        for it in build_quiz(seed):
            if it.computed is None:
                (q,) = [q for q in STATIC_QUESTIONS if q.qid == it.qid]
                right_key = (
                    f"quiz.q_{q.qid}_c{q.correct}"
                    if q.kind == "mc"
                    else ("quiz.true", "quiz.false")[q.correct]
                )
                assert it.choice_keys[it.correct] == right_key
                assert sorted(it.choice_keys) == sorted(set(it.choice_keys))


def _causal_weight_by_hand(Q, K, d_k, row, col) -> float:
    if col > row:
        return 0.0
    s = [sum(Q[row][c] * K[j][c] for c in range(d_k)) / math.sqrt(d_k) for j in range(row + 1)]
    e = [math.exp(x - max(s)) for x in s]
    return e[col] / sum(e)


def expected_answer(kind: str, p: dict):
    """Each computed answer from its definition, written out independently of the core."""
    if kind == "causal_weight":
        return _causal_weight_by_hand(p["Q"], p["K"], p["d_k"], p["row"], p["col"])
    if kind == "scores_shape":
        return (p["n"], p["n"])
    if kind == "attention_memory":
        return p["n"] * p["n"] * p["bytes_per_elem"] / 2**20
    if kind == "dot_variance":
        return 1 if p["scaled"] else p["d_k"]
    if kind == "memory_ratio":
        return p["factor"] ** 2
    if kind == "head_dim":
        return p["d_model"] // p["heads"]
    if kind == "multihead_params":
        return 4 * p["d_model"] ** 2
    if kind == "padding_cells":
        return (p["n"] + p["pads"]) * p["pads"]
    if kind == "softmax_shift":
        m = max(p["scores"])
        return math.exp(p["scores"][p["col"]] - m) / sum(math.exp(x - m) for x in p["scores"])
    if kind == "sqrt_divisor":
        return math.sqrt(p["d_k"])
    if kind == "kv_cache_size":  # K and V, per layer, token, KV head and coordinate
        return 2 * p["layers"] * p["n"] * p["kv_heads"] * p["d_k"] * p["bytes_per_value"] / 2**20
    if kind == "sinusoidal_value":
        angle = p["pos"] * math.exp(-math.log(10000.0) * (p["dim"] - p["dim"] % 2) / p["d_model"])
        return round((math.cos if p["dim"] % 2 else math.sin)(angle), 3)
    if kind == "window_scores":  # query i sees keys max(0, i − w + 1) … i
        return sum(i - max(0, i - p["w"] + 1) + 1 for i in range(p["n"]))
    if kind == "block_crossover":  # 4n²d + 6hn² = 8nd² + 4nd·d_ff, divided by n
        d, h, f = p["d_model"], p["heads"], p["d_ff"]
        return round((8 * d * d + 4 * d * f) / (4 * d + 6 * h))
    if kind == "ring_send_bytes":  # P − 1 hops, each device one K and one V block of n/P × d
        sizes = {"fp32": 4, "fp16": 2, "bf16": 2}
        per_hop = p["P"] * 2 * (p["n"] // p["P"]) * p["d"] * sizes[p["dtype"]]
        return (p["P"] - 1) * per_hop / 2**20
    if kind == "ssm_weight":  # run the recurrence on an impulse at s = 0 and read y at t = lag
        h = y = 0.0
        for t in range(p["lag"] + 1):
            h = p["a"] * h + p["b"] * (1.0 if t == 0 else 0.0)
            y = p["c"] * h
        return y
    raise AssertionError(kind)


@pytest.mark.parametrize("seed", SEEDS)
def test_computed_questions_have_exactly_one_right_choice(seed: int) -> None:
    for it in build_quiz(seed):
        if it.computed is None:
            continue
        q = it.computed
        want = expected_answer(q.kind, q.params)
        right = []
        for value in it.choice_values:
            if isinstance(want, tuple):
                right.append(tuple(value) == want)
            else:
                right.append(abs(float(value) - float(want)) <= max(q.tolerance, 1e-9))
        assert right.count(True) == 1, (q.kind, seed, it.choice_values, want)
        assert right.index(True) == it.correct
        # the shown labels are distinct too, so a learner can tell the choices apart
        labels = [format_value(v, q.unit) for v in it.choice_values]
        assert len(set(labels)) == len(labels), labels


@pytest.mark.parametrize("seed", SEEDS)
def test_computed_texts_fill_in_both_languages(seed: int) -> None:
    for it in build_quiz(seed):
        if it.computed is None:
            continue
        values = explain_values(it.computed)
        for lang in LANGUAGES:
            for key in (it.text_key, it.why_key):
                text = translate(lang, key, **values)
                assert "{" not in text and text.strip()
        why = translate("en", it.why_key, **values)
        assert format_value(it.computed.answer, it.computed.unit) in why


def test_causal_weight_explanation_shows_the_scores() -> None:
    for seed in SEEDS:
        it = next(i for i in build_quiz(seed) if i.qid == "comp_causal_weight")
        p = it.computed.params
        v = explain_values(it.computed)
        row = p["row"]
        s = [sum(a * b for a, b in zip(p["Q"][row], p["K"][j], strict=True)) / 2 for j in range(2)]
        first = v["scores"].strip("[]").split(", ")[0]
        assert float(first) == pytest.approx(s[0], abs=5e-4)
        assert ("−∞" in v["scores"]) == (row == 0)


def test_format_value() -> None:
    assert format_value((5, 7)) == "5 × 7"
    assert format_value(1048576) == "1,048,576"
    assert format_value(0.5) == "0.500"
    assert format_value(1.0) == "1.000"
    assert format_value(256.0, "MiB") == "256 MiB"
    assert format_value(0.0625, "MiB") == "0.0625 MiB"


def test_seed_fixes_the_order_without_touching_global_random_state() -> None:
    py_state, np_state = random.getstate(), np.random.get_state()
    a, b, c = build_quiz(3), build_quiz(3), build_quiz(4)
    assert random.getstate() == py_state
    assert all(
        np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        for x, y in zip(np.random.get_state(), np_state, strict=True)
    )
    assert [it.qid for it in a] == [it.qid for it in b]
    assert [it.choice_keys for it in a] == [it.choice_keys for it in b]
    assert [it.qid for it in a] != [it.qid for it in c]
    # the shuffle really moves the right answers around
    positions = {it.correct for it in a if it.kind == "mc"}
    assert len(positions) >= 3


def test_score_and_missed() -> None:
    quiz = build_quiz(0)
    a, b, c = quiz[:3]
    answers = {a.qid: a.correct, b.qid: (b.correct + 1) % b.n_choices}
    sc = score(quiz, answers)
    assert (sc.answered, sc.correct, sc.total) == (2, 1, len(quiz))
    assert missed_ids(quiz, answers) == [b.qid]
    assert score([c], answers).answered == 0  # answers to other questions are ignored


def test_the_reference_notes_topics_are_asked() -> None:
    """Issue 15's coverage list: padding mask, the row-max shift, the RNN's memory and training-speed
    rows, √128 ≈ 11.3, and the FAQ items (attention vs self-attention, the efficient variants)."""
    static = {q.qid for q in STATIC_QUESTIONS}
    assert {"padding_mask", "subtract_max", "rnn_memory", "rnn_training_speed"} <= static
    assert {"self_vs_attention", "linear_attention", "flash_attention", "gqa", "ring_linear"} <= static
    assert {"padding_cells", "softmax_shift", "sqrt_divisor"} <= set(QUIZ_KINDS)
    for seed in range(5):
        it = next(i for i in build_quiz(seed) if i.qid == "comp_sqrt_divisor")
        for lang in LANGUAGES:
            assert "√128 ≈ 11.3" in translate(lang, it.why_key, **explain_values(it.computed))
