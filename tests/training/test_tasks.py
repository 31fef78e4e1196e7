"""The training tasks (attention_core/training/tasks.py): each task's rows against loops written from
their definitions, answers worked by hand on given sequences (and their dtypes), the whole range of random draws
(token 0, every start of the text, every segment length up to n/2), the held-out and sample windows,
the repeated sample, each task's sizes and labels, and the limits and reasons of the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.training import tasks as T

# ------------------------------------------------------------------------------------------
# Answers of given sequences, worked by hand
# ------------------------------------------------------------------------------------------


def _check_dtypes(b: T.Batch) -> None:
    assert b.tokens.dtype == np.intp and b.targets.dtype == np.intp and b.scored.dtype == np.bool_


def test_previous_answers_by_hand_with_unscored_targets_zero():
    tokens = np.array(
        [[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8], [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4]], dtype=np.int8
    )
    b = T.make_task("previous", offset=2).answer(tokens)
    _check_dtypes(b)  # int8 ids in, intp ids out
    assert b.tokens.tolist() == tokens.tolist()
    assert b.targets.tolist() == [
        [0, 0, 3, 1, 4, 1, 5, 9, 2, 6, 5, 3],
        [0, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6],
    ]
    assert b.scored.tolist() == [[False, False] + [True] * 10] * 2
    # the largest offset, 4: four positions without an answer
    b4 = T.make_task("previous", offset=4).answer(tokens[:1])
    assert b4.targets.tolist() == [[0, 0, 0, 0, 3, 1, 4, 1, 5, 9, 2, 6]]
    assert b4.scored.tolist() == [[False] * 4 + [True] * 8]


def test_reverse_sort_and_pair_answers_by_hand():
    row = np.array([[7, 0, 15, 3, 3, 9, 12, 1]], dtype=np.int8)
    rev = T.make_task("reverse").answer(row)
    srt = T.make_task("sort").answer(row)
    for b in (rev, srt):
        _check_dtypes(b)
        assert b.scored.tolist() == [[True] * 8]
        assert b.tokens.tolist() == row.tolist()
    assert rev.targets.tolist() == [[1, 12, 9, 3, 3, 15, 0, 7]]
    assert rev.targets.flags.c_contiguous  # a copy, not a reversed view
    assert srt.targets.tolist() == [[0, 1, 3, 3, 7, 9, 12, 15]]

    task = T.make_task("previous_first")
    b = task.answer(np.array([[2, 5, 0, 1, 3, 4, 4, 0, 2, 1]], dtype=np.int8))
    _check_dtypes(b)
    # class of position i = 6·token[i−1] + token[0] (token 0 is 2); position 0 has no answer
    assert b.targets.tolist() == [[0, 14, 32, 2, 8, 20, 26, 26, 2, 14]]
    assert b.scored.tolist() == [[False] + [True] * 9]
    assert [task.labels_out[t] for t in b.targets[0, 1:]] == [
        "CC",
        "FC",
        "AC",
        "BC",
        "DC",
        "EC",
        "EC",
        "AC",
        "CC",
    ]


def test_induction_batch_by_hand_from_int32_rows_and_float_lengths():
    task = T.make_task("induction")
    segments = np.array([list(range(23, 3, -1)), list(range(4, 24))], dtype=np.int32)
    m = np.array([task.n / 2, 4.0])  # 10.0 and 4.0: whole numbers held as floats
    b = task.induction_batch(segments, m)
    _check_dtypes(b)
    # row 0, m = 10: no filler, the segment 23 … 14, then again
    assert b.tokens[0].tolist() == list(range(23, 13, -1)) * 2
    assert b.targets[0].tolist() == list(range(22, 13, -1)) + [23] + list(range(22, 13, -1)) + [0]
    assert b.scored[0].tolist() == [False] * 10 + [True] * 9 + [False]
    # row 1, m = 4: filler 4 … 15, the segment 16 … 19, then 16 … 19 again
    assert b.tokens[1].tolist() == list(range(4, 20)) + [16, 17, 18, 19]
    assert b.targets[1].tolist() == list(range(5, 20)) + [16, 17, 18, 19, 0]
    assert b.scored[1].tolist() == [False] * 16 + [True] * 3 + [False]


# ------------------------------------------------------------------------------------------
# Random batches cover the whole range
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["previous", "reverse", "sort"])
def test_synthetic_batches_use_every_token_including_0(name):
    task = T.make_task(name)
    b = task.batch(np.random.default_rng(5), 50)
    _check_dtypes(b)
    assert b.tokens.shape == (50, task.n)
    assert set(b.tokens.ravel().tolist()) == set(range(16))


def test_induction_segment_lengths_run_from_4_to_n_over_2():
    task = T.make_task("induction")
    b = task.batch(np.random.default_rng(3), 400)
    _check_dtypes(b)
    assert b.tokens.shape == (400, 20)
    # m − 1 scored positions per row (the repeat after its first token)
    lengths = b.scored.sum(axis=1) + 1
    assert set(lengths.tolist()) == set(range(4, 11))


def test_text_batches_start_at_every_character_and_score_everything():
    task = T.make_task("text", text="abc")  # ids a 0, b 1, c 2
    b = task.batch(np.random.default_rng(7), 60)
    assert b.tokens.shape == b.targets.shape == b.scored.shape == (60, 16)
    _check_dtypes(b)
    assert b.scored.all()
    starts = b.tokens[:, 0].tolist()
    assert set(starts) == {0, 1, 2}  # the start of the text included
    for s, row, target in zip(starts, b.tokens.tolist(), b.targets.tolist(), strict=True):
        assert row == [(s + j) % 3 for j in range(16)]
        assert target == [(s + j + 1) % 3 for j in range(16)]


def test_text_ids_of_any_integer_type_give_intp_batches():
    labels = ("a", "b", "c")
    ids = tuple(np.array([2, 0, 1, 0], dtype=np.int32))
    task = T.Task("text", 3, 3, 4, labels, labels, text_ids=ids)
    b = task.held_out(np.random.default_rng(0), 5)
    _check_dtypes(b)
    assert b.tokens.tolist() == [[2, 0, 1, 0]] and b.targets.tolist() == [[0, 1, 0, 2]]


# ------------------------------------------------------------------------------------------
# Held-out, sample and repeated sample
# ------------------------------------------------------------------------------------------


def test_text_held_out_windows_start_at_0_n_2n():
    text = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"  # 40 distinct characters
    task = T.make_task("text", text=text)
    ids = [task.labels_in.index(c) for c in text]
    held = task.held_out(np.random.default_rng(0), 99)
    _check_dtypes(held)
    assert held.tokens.tolist() == [[ids[(s + j) % 40] for j in range(16)] for s in (0, 16, 32)]
    assert held.targets.tolist() == [[ids[(s + j + 1) % 40] for j in range(16)] for s in (0, 16, 32)]
    assert held.scored.all()


def test_samples_are_one_example():
    text_task = T.make_task("text", text="hello")
    s = text_task.sample(np.random.default_rng(0))
    assert s.tokens.shape == (1, 16)
    assert s.tokens[0].tolist() == [[1, 0, 2, 2, 3][j % 5] for j in range(16)]  # e 0, h 1, l 2, o 3
    p = T.make_task("previous").sample(np.random.default_rng(0))
    assert p.tokens.shape == p.targets.shape == p.scored.shape == (1, 12)


@pytest.mark.parametrize("name, n, vocab", [("previous", 12, 16), ("induction", 20, 24)])
def test_repeated_sample_is_distinct_tokens_twice(name, n, vocab):
    r = T.make_task(name).repeated_sample(np.random.default_rng(2))
    assert r.shape == (1, n) and r.dtype == np.intp
    first = r[0, : n // 2].tolist()
    assert r[0, n // 2 :].tolist() == first
    assert len(set(first)) == n // 2 and 0 <= min(first) and max(first) < vocab


def test_repeated_sample_when_the_vocabulary_is_just_large_enough_or_too_small():
    exact = T.make_task("text", text="abcdefgh")  # 8 characters, m = 16 // 2 = 8
    for seed in range(3):
        r = exact.repeated_sample(np.random.default_rng(seed))
        assert r.shape == (1, 16) and r.dtype == np.intp
        assert sorted(r[0, :8].tolist()) == list(range(8)) and r[0, 8:].tolist() == r[0, :8].tolist()
    small = T.make_task("text", text="abab")  # 2 characters: repeats are unavoidable
    seen = set()
    for seed in range(5):
        r = small.repeated_sample(np.random.default_rng(seed))
        assert r.shape == (1, 16) and r.dtype == np.intp
        assert r[0, 8:].tolist() == r[0, :8].tolist()
        seen |= set(r[0].tolist())
    assert seen == {0, 1}


# ------------------------------------------------------------------------------------------
# Sizes, labels and refusals
# ------------------------------------------------------------------------------------------


def test_each_task_has_its_sizes_labels_and_mask():
    letters16, letters24 = tuple("ABCDEFGHIJKLMNOP"), tuple("ABCDEFGHIJKLMNOPQRSTUVWX")
    for name, n, mask in (("previous", 12, "causal"), ("reverse", 8, "none"), ("sort", 8, "none")):
        t = T.make_task(name)
        assert (t.vocab_in, t.vocab_out, t.n, t.offset, t.default_mask) == (16, 16, n, 1, mask)
        assert t.labels_in == t.labels_out == letters16
    t = T.make_task("induction")
    assert (t.vocab_in, t.vocab_out, t.n, t.default_mask) == (24, 24, 20, "causal")
    assert t.labels_in == t.labels_out == letters24
    t = T.make_task("previous_first")
    assert (t.vocab_in, t.vocab_out, t.n, t.default_mask) == (6, 36, 10, "causal")
    assert t.labels_in == tuple("ABCDEF") and len(t.labels_out) == 36
    assert (t.labels_out[0], t.labels_out[1], t.labels_out[6], t.labels_out[14], t.labels_out[35]) == (
        "AA", "AB", "BA", "CC", "FF",
    )  # fmt: skip
    t = T.make_task("text", text="hello")
    assert (t.vocab_in, t.vocab_out, t.n, t.default_mask) == (4, 4, 16, "causal")
    assert t.labels_in == t.labels_out == ("e", "h", "l", "o") and t.text_ids == (1, 0, 2, 2, 3)
    assert T.text_vocabulary("banana") == ("a", "b", "n")


@pytest.mark.parametrize("offset", [1, 2, 3, 4])
def test_offsets_1_to_4_are_taken(offset):
    assert T.make_task("previous", offset=offset).offset == offset


@pytest.mark.parametrize("offset", [0, 5, -1, True, False, 2.0, "2", None])
def test_other_offsets_are_refused_with_the_limit(offset):
    with pytest.raises(T.TaskError) as err:
        T.make_task("previous", offset=offset)
    assert err.value.key == "offset" and err.value.values == {"limit": 4} and "1 to 4" in str(err.value)


def test_text_of_400_characters_is_taken_and_401_refused():
    task = T.make_task("text", text="ab" * 200)
    assert len(task.text_ids) == 400 and task.vocab_in == 2
    with pytest.raises(T.TaskError) as err:
        T.make_task("text", text="ab" * 200 + "a")
    assert err.value.key == "text_long" and err.value.values == {"limit": 400} and "400" in str(err.value)


def test_refusals_carry_their_key_message_and_values():
    with pytest.raises(T.TaskError) as err:
        T.make_task("nope")
    assert err.value.key == "task" and err.value.values == {"task": "nope"} and "'nope'" in str(err.value)
    with pytest.raises(T.TaskError) as err:
        T.make_task("text", text=" \n")
    assert err.value.key == "text_empty" and err.value.values == {} and "empty" in str(err.value)
    e = T.TaskError("some_key", "What went wrong.", lo=1, hi=2)
    assert isinstance(e, ValueError) and str(e) == "What went wrong."
    assert e.key == "some_key" and e.values == {"lo": 1, "hi": 2}


def test_the_text_task_without_a_text_is_refused_as_empty():
    with pytest.raises(T.TaskError) as err:
        T.make_task("text")
    assert err.value.key == "text_empty"


def test_previous_reverse_sort_and_pairs_answers():
    rng = np.random.default_rng(0)
    for name, offset in (
        ("previous", 1),
        ("previous", 3),
        ("reverse", 1),
        ("sort", 1),
        ("previous_first", 1),
    ):
        task = T.make_task(name, offset=offset)
        b = task.batch(rng, 4)
        assert b.tokens.shape == b.targets.shape == b.scored.shape == (4, task.n)
        assert b.tokens.min() >= 0 and b.tokens.max() < task.vocab_in
        for row, target, scored in zip(b.tokens.tolist(), b.targets.tolist(), b.scored.tolist(), strict=True):
            n = len(row)
            for i in range(n):
                if name == "previous":
                    assert scored[i] == (i >= offset)
                    if i >= offset:
                        assert target[i] == row[i - offset]
                elif name == "reverse":
                    assert scored[i] and target[i] == row[n - 1 - i]
                elif name == "sort":
                    assert scored[i] and target[i] == sorted(row)[i]
                else:
                    assert scored[i] == (i >= 1)
                    if i >= 1:
                        assert target[i] == row[i - 1] * T.PAIR_VOCAB + row[0]
                        assert (
                            task.labels_out[target[i]] == task.labels_in[row[i - 1]] + task.labels_in[row[0]]
                        )


def test_induction_rows_are_filler_segment_segment():
    task = T.make_task("induction")
    b = task.batch(np.random.default_rng(1), 64)
    n = task.n
    lengths = set()
    for row, target, scored in zip(b.tokens.tolist(), b.targets.tolist(), b.scored.tolist(), strict=True):
        # the segment length m: the shortest period of the tail that matches the text before it
        m = next(
            m
            for m in range(T.INDUCTION_SEGMENT[0], T.INDUCTION_SEGMENT[1] + 1)
            if row[n - m :] == row[n - 2 * m : n - m]
        )
        lengths.add(m)
        assert len(set(row[: n - m])) == n - m  # filler and segment: no token twice
        for i in range(n):
            assert scored[i] == (n - m <= i <= n - 2)
            if scored[i]:
                assert target[i] == row[i + 1]
                j = row.index(row[i])  # the earlier occurrence of this token ...
                assert j == i - m and row[j + 1] == target[i]  # ... and what followed it is the answer
    assert len(lengths) >= 4  # the segment length varies, so no fixed offset finds the answer


def test_text_task_wraps_round_and_takes_japanese():
    text = "ねこがねた。"
    task = T.make_task("text", text=text)
    assert task.labels_in == tuple(sorted(set(text))) and task.vocab_in == 5
    b = task.batch(np.random.default_rng(0), 3)
    ids = [task.labels_in.index(c) for c in text]
    for row, target in zip(b.tokens.tolist(), b.targets.tolist(), strict=True):
        start = next(
            s for s in range(len(text)) if all(row[i] == ids[(s + i) % len(text)] for i in range(task.n))
        )
        assert target == [ids[(start + i + 1) % len(text)] for i in range(task.n)]
    held = task.held_out(np.random.default_rng(0), 99)
    # every character of the text is predicted once: windows start 0, n, 2n, ...
    assert held.tokens.shape == (math.ceil(len(text) / task.n), task.n)
    sample = task.sample(np.random.default_rng(0))
    assert "".join(task.labels_in[i] for i in sample.tokens[0][: len(text)]) == text
