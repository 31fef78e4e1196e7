"""The training lab's plumbing without a page: settings read through the core, the job runner (a real
worker process, tiny runs), the pattern read-out and the questions computed from a run."""

from __future__ import annotations

import time

import numpy as np
import pytest

from attention_core.training.train import TrainSettings
from attention_ui.training import jobs, patterns, questions
from attention_ui.training.settings import DEFAULTS, read_settings

VALUES = {k.removeprefix("training_"): v for k, v in DEFAULTS.items()} | {"text": ""}
TINY = TrainSettings(task="previous", d_model=8, heads=1, d_k=8, steps=20, seed=1)


def test_defaults_are_accepted():
    settings, problem = read_settings(VALUES)
    assert problem is None and settings.task == "previous" and settings.mask is None  # the task's own mask


@pytest.mark.parametrize(
    "change, key",
    [
        ({"layers": 3}, "training.err_range"),
        ({"heads": 0}, "training.err_range"),
        ({"d_k": 65}, "training.err_range"),
        ({"steps": 0}, "training.err_range"),
        ({"lr": 5.0}, "training.err_lr"),
        ({"scale": "custom", "divisor": 0.0}, "training.err_divisor"),
        ({"task": "text", "text": "   "}, "training.err_text_empty"),
        ({"task": "text", "text": "x" * 401}, "training.err_text_long"),
        ({"task": "nonsense"}, "training.err_task"),
    ],
)
def test_each_refusal_names_its_reason(change, key):
    settings, problem = read_settings(VALUES | change)
    assert settings is None and problem.key == key


def test_mask_is_the_learners_only_on_next_token_tasks():
    settings, _ = read_settings(VALUES | {"task": "text", "text": "abcab", "mask": "none"})
    assert settings.mask == "none"
    settings, _ = read_settings(VALUES | {"task": "sort", "mask": "causal"})
    assert settings.mask is None and settings.mask_kind == "none"


def wait(job, until, limit: float = 60.0) -> None:
    end = time.monotonic() + limit
    while not until(job):
        if time.monotonic() > end:
            raise AssertionError(f"job {job.id} still {job.state}")
        time.sleep(0.05)


def test_a_run_in_a_worker_reports_progress_and_is_kept_per_settings():
    runner = jobs.Runner(max_finished=1)
    job = runner.start(jobs.TRAIN, TINY, TINY, total=20)
    assert runner.start(jobs.TRAIN, TINY, TINY, total=20) is job  # a second click joins the run
    wait(job, lambda j: j.finished)
    assert job.state == "done", job.error
    assert [r[0] for r in job.rows()] == list(range(1, 21))  # every step's row, in order
    np.testing.assert_array_equal([r[1] for r in job.rows()], job.result.losses)
    assert runner.result(TINY) is job.result
    other = TrainSettings(task="previous", d_model=8, heads=1, d_k=8, steps=5, seed=2)
    wait(runner.start(jobs.TRAIN, other, other, total=5), lambda j: j.finished)
    assert runner.result(other) is not None and runner.result(TINY) is None  # bounded: the oldest went


def test_stop_keeps_what_was_trained_and_caches_nothing():
    long = TrainSettings(task="previous", d_model=8, heads=1, d_k=8, steps=20_000, seed=3)
    runner = jobs.Runner()
    job = runner.start(jobs.TRAIN, long, long, total=20_000)
    wait(job, lambda j: bool(j.rows()))
    job.request_stop()
    wait(job, lambda j: j.finished)
    run = job.result
    assert job.state == "stopped" and run.stopped and 0 < run.steps_done < 20_000
    assert len(run.losses) == run.steps_done and run.snapshot_steps[-1] == run.steps_done
    assert runner.result(long) is None


def test_a_failing_job_says_so():
    runner = jobs.Runner()
    job = runner.start("no_such_experiment", "x", None)
    wait(job, lambda j: j.finished)
    assert job.state == "failed" and "unknown job kind 'no_such_experiment'" in job.error


def test_patterns_from_made_up_maps():
    n = 5
    prev = np.zeros((n, n))
    prev[0, 0] = 1
    prev[np.arange(1, n), np.arange(n - 1)] = 1  # every query on the token before it
    first = np.zeros((n, n))
    first[:, 0] = 1
    assert patterns.self_scores(np.eye(n)) == 1 and patterns.first_scores(first) == 1
    assert patterns.first_scores(prev) == pytest.approx(1 / (n - 1))  # only query 1's previous is key 0
    names, best = patterns.classify(
        {"previous": np.array([[0.9, 0.1]]), "self": np.array([[0.0, 0.3]]), "first": np.array([[0.1, 0.4]]),
         "induction": np.array([[0.0, 0.2]])}
    )  # fmt: skip
    assert names == (("previous", "spread"),) and best == ((0.9, 0.4),)


def test_questions_answer_from_the_numbers():
    q = questions.previous_question(np.array([[0.1, 0.7], [0.8, 0.2]]))
    assert q.choices[q.correct] == "1·0" and q.params["score"] == "0.800"
    assert questions.accuracy_question(0.95).correct == 0 and questions.accuracy_question(0.5).correct == 1
    assert questions.pattern_question("first", 1, 1).choices[
        questions.pattern_question("first", 1, 1).correct
    ] == ("training.pattern_first")


def test_a_percentage_never_breaks_from_its_number() -> None:
    from attention_ui.training.experiments_view import keep_units

    assert keep_units("100.0 % right, 2.0 % of it") == "100.0\u00a0% right, 2.0\u00a0% of it"
    assert keep_units("no unit here") == "no unit here"
