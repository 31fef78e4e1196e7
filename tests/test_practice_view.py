"""Predict-then-reveal questions and the guided path's URL format, without Streamlit.

Expected answers come from hand reasoning or naive loops written here (never from
``attention_core.predict``, which the questions use).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.exercise import generate_exercise
from attention_ui.path import path
from attention_ui.practice import predict_view as pv


def naive_best_keys(scores_row, allowed_row) -> set[int]:
    best = max(s for s, ok in zip(scores_row, allowed_row, strict=True) if ok)
    return {j for j, (s, ok) in enumerate(zip(scores_row, allowed_row, strict=True)) if ok and s == best}


def test_shape_question_right_and_wrong():
    Q, K = np.zeros((3, 5)), np.zeros((7, 5))
    q = pv.shape_question("s", Q, K)
    assert pv.is_right(q, (3, 7))
    assert not pv.is_right(q, (7, 3)) and not pv.is_right(q, (3, 5)) and not pv.is_right(q, (5, 5))


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("mask", ["none", "causal"])
def test_winner_and_mask_questions_match_naive_loops(seed, mask):
    ex = generate_exercise(seed, mask)
    n = ex.n
    labels = path.key_labels(n)
    for row in range(n):
        best = naive_best_keys(ex.scores[row].tolist(), ex.allowed[row].tolist())  # integer scores: exact
        q = pv.winner_question("w", ex.weights, row, labels)
        assert {j for j in range(n) if pv.is_right(q, j)} == best
        removed = {j for j in range(n) if mask == "causal" and j > row}
        qm = pv.masked_row_question("m", ex.allowed, row, labels)
        assert pv.is_right(qm, tuple(sorted(removed)))
        assert not pv.is_right(qm, tuple(sorted(removed ^ {0})))
        qs = pv.sums_question("s", ex.weights, row)
        assert pv.is_right(qs, abs(math.fsum(ex.weights[row].tolist()) - 1) < 1e-9)
        assert pv.is_right(qs, True)  # every exercise row keeps at least its own key


def test_sums_question_says_no_for_a_fully_masked_row():
    q = pv.sums_question("s", np.array([[0.0, 0.0], [0.5, 0.5]]), 0)
    assert pv.is_right(q, False) and not pv.is_right(q, True)


def test_memory_question_is_four_for_any_n():
    for n in (1, 3, 2048, 10**6):
        q = pv.memory_question("m", n)
        assert pv.is_right(q, 4) and not pv.is_right(q, 2) and not pv.is_right(q, 8)


def test_answer_text_escapes_token_labels():
    q = pv.winner_question("w", np.array([[0.1, 0.9]]), 0, pv.token_labels(["*a*", "[b](x)"]))
    text = pv.answer_text(lambda key, **v: key, q, 1)
    assert text == r"1 · \[b\]\(x\)"


def test_pick_row_skips_rows_without_a_winner():
    w = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 0.0]])
    assert pv.pick_row(w) == 1
    w[1] = 0
    w[0] = [1, 0, 0]
    assert pv.pick_row(w) == 0


def test_signature_changes_with_the_answer():
    a = pv.shape_question("s", np.zeros((2, 3)), np.zeros((2, 3)))
    b = pv.shape_question("s", np.zeros((3, 3)), np.zeros((3, 3)))
    assert a.signature != b.signature


# --- the path's URL --------------------------------------------------------------------------------


def test_route_covers_playground_and_labs_with_one_or_two_questions_each():
    assert [s.page for s in path.STOPS][:2] == [path.PLAYGROUND, path.PLAYGROUND]
    assert {path.MASKS, path.COST} <= {s.page for s in path.STOPS}
    assert all(1 <= len(s.questions) <= 2 for s in path.STOPS)


@pytest.mark.parametrize("seed", [0, 7, 123])
def test_progress_survives_the_url(seed):
    qs = path.all_questions(seed)
    ex = generate_exercise(seed)
    responses = ((ex.n, ex.n), 0, (ex.n - 1,), True, 4)
    progress = path.Progress(seed, 3, responses)
    params = path.write_params(progress)
    assert set(params) == {"seed", "stop", "answers"}
    back = path.read_progress(params)
    assert back == progress
    assert path.marks(qs, back.responses)[0] == "right"
    assert path.marks(qs, back.responses)[-1] == "right"


def test_skipped_and_open_questions_round_trip():
    progress = path.Progress(5, 5, (pv.SKIPPED, None, (), False, 8))
    back = path.read_progress(path.write_params(progress))
    assert back == progress
    assert path.marks(path.all_questions(5), back.responses) == ("skipped", "open", "wrong", "wrong", "wrong")


# (params, the seed and stop they must give, the responses they must give). Worked out by hand from
# the URL format: a malformed field is None (open), a well-formed one is read even when wrong.
MALFORMED = [
    ({"seed": "-1", "stop": "0", "answers": "x"}, 0, 1, (None,) * 5),
    ({"seed": "abc", "stop": "99", "answers": "~~~~~~~~~~~~"}, 0, 1, (None,) * 5),
    # 14 digits: longer than any seed, cut to 12 and still too long
    ({"seed": "99999999999999", "stop": "²", "answers": "0x0~9~.~maybe~3"}, 0, 1, (None,) * 5),
    ({"answers": "1" * 1000}, 0, 1, (None,) * 5),
    # seed 3: shape 4x4 (wrong but well-formed), "<script>" no key, "0.0" a key twice, "y", factor 4
    ({"seed": "3", "answers": "4x4~<script>~0.0~y~4"}, 3, 1, ((4, 4), None, None, True, 4)),
    # the seed bound: 2³¹ − 1 is the largest seed the app's inputs take, 2³¹ (ten digits) is refused
    ({"seed": str(2**31), "stop": "2"}, 0, 2, (None,) * 5),
    ({"seed": str(2**31 - 1), "stop": "5"}, 2**31 - 1, 5, (None,) * 5),  # stop 5: the summary
    ({"seed": "1", "stop": "6"}, 1, 1, (None,) * 5),  # one past the summary
]


@pytest.mark.parametrize("params,seed,stop,responses", MALFORMED)
def test_malformed_urls_fall_back_to_the_start(params, seed, stop, responses):
    progress = path.read_progress(params)
    assert (progress.seed, progress.stop) == (seed, stop)
    assert progress.responses == responses


def test_seed_bound_matches_the_apps_seed_inputs():
    from attention_ui.kit import SEED_RANGE

    assert path.MAX_SEED == max(SEED_RANGE)


def test_each_url_field_is_checked_on_its_own():
    back = path.read_progress({"seed": "3", "stop": "2", "answers": "4x4~<script>~0.0~y~4"})
    assert back.seed == 3 and back.stop == 2
    assert back.responses == ((4, 4), None, None, True, 4)
    assert path.read_progress({"seed": "3", "answers": "4x4~9~0.1~n~5"}).responses == (
        (4, 4),
        None,
        (0, 1),  # a valid (wrong) response for row 1 of a 3-token exercise
        False,
        None,
    )


def test_links_name_the_playground_steps_they_point_to():
    from attention_ui.i18n import translate
    from attention_ui.playground.steps_view import STEPS

    for lang in ("en", "ja"):
        assert f" {STEPS.index('raw') + 1} " in translate(lang, "path.stop_scores_link")
        assert f" {STEPS.index('softmax') + 1} " in translate(lang, "path.stop_softmax_link")


def test_which_keys_verdict_needs_exactly_the_removed_keys():
    """A subset or a superset of the removed keys is wrong; only the exact set is right."""
    allowed = np.tril(np.ones((4, 4), dtype=bool))  # causal: row 0 loses keys 1, 2, 3
    q = pv.masked_row_question("m", allowed, 0, pv.token_labels(["a", "b", "c", "d"]))
    assert q.answer == frozenset({1, 2, 3})
    assert pv.is_right(q, (1, 2, 3)) is True
    assert pv.is_right(q, (3, 1, 2)) is True  # order does not matter
    for wrong in ((), (1,), (1, 2), (2, 3), (0, 1, 2, 3), (0,)):
        assert pv.is_right(q, wrong) is False, wrong
    full = pv.masked_row_question("m", allowed, 3, pv.token_labels(["a", "b", "c", "d"]))
    assert full.answer == frozenset() and pv.is_right(full, ()) is True and pv.is_right(full, (0,)) is False
