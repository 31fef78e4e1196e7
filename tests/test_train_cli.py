"""``python -m attention_core train``: the JSON contract, the text summary and bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import run_cli

from attention_core import cli
from attention_core.training import train as train_module
from attention_core.training.train import DEFAULT_STEPS, TrainSettings, train

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PY) if VENV_PY.exists() else sys.executable


def test_json_keys_shapes_and_the_same_run_as_the_core():
    out = subprocess.run(
        [PYTHON, "-m", "attention_core", "train", "--task", "induction", "--layers", "2", "--heads", "2",
         "--d-model", "16", "--steps", "6", "--lr", "0.01", "--seed", "3", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert list(data) == [
        "losses", "accuracy", "final_accuracy", "final_loss", "induction", "previous_token", "sample", "attention",
        "repeated", "repeated_attention", "config", "seconds",
    ]  # fmt: skip
    assert np.shape(data["losses"]) == np.shape(data["accuracy"]) == (6,)
    assert np.shape(data["induction"]) == np.shape(data["previous_token"]) == (2, 2)
    assert np.shape(data["attention"]) == (2, 2, 20, 20)
    assert data["config"]["mask"] == "causal" and data["config"]["steps"] == 6 and data["seconds"] > 0
    run = train(TrainSettings(task="induction", layers=2, heads=2, d_model=16, steps=6, lr=0.01, seed=3))
    assert data["losses"] == run.losses.tolist() and data["final_accuracy"] == run.final_accuracy


def _main(capsys, *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "train", *args)


def test_text_summary_and_japanese_text(capsys):
    code, out, _ = _main(capsys, "--task", "text", "--text", "ねこがねた。", "--steps", "3", "--no-positions")
    assert code == 0
    assert (
        "task text" in out
        and "3 steps" in out
        and "positions off" in out
        and "strongest induction head" in out
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--task", "nope"),
        ("--steps", "0"),
        ("--task", "text"),
        ("--task", "text", "--text", "   "),
        ("--d-model", "65"),
        ("--d-model", "2"),
        ("--heads", "5"),
        ("--layers", "3"),
        ("--lr", "0"),
        ("--scale", "-1"),
        ("--mask", "padding"),
        ("--seed", "-1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args):
    code, out, err = _main(capsys, *args, "--json")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err


# --------------------------------------------------------------------------------------------------
# ``python -m attention_core train`` in-process, option by option (issue 36, part 2, "A CLI command").
#
# Every run is tiny (a few steps, d_model 8) and seeded, so the file takes a few seconds. Text output
# is checked against a run of the core trainer with the same settings, formatted here. Checks that
# only need the parsed settings (the per-task defaults, both ends of every accepted range) stop the
# command when it calls the trainer, so no long run is started.

SAMPLE_N = {"previous": 12, "reverse": 8, "sort": 8, "induction": 20, "text": 16}  # the tasks' sample lengths


class _Reached(Exception):
    """Raised by the stand-in trainer: the command got as far as training with these settings."""

    def __init__(self, settings: TrainSettings) -> None:
        super().__init__("train() reached")
        self.settings = settings


@pytest.fixture
def settings_of(monkeypatch, capsys):
    """``settings_of(*args)``: the TrainSettings the command would train with (no training)."""

    def stand_in(settings, **_):
        raise _Reached(settings)

    monkeypatch.setattr(train_module, "train", stand_in)

    def parse(*args: str) -> TrainSettings:
        with pytest.raises(_Reached) as reached:
            cli.main(["train", *args])
        out = capsys.readouterr()
        assert out.out == "" and out.err == ""
        return reached.value.settings

    return parse


# --- defaults ----------------------------------------------------------------------------------


def test_defaults_without_options(settings_of):
    s = settings_of()
    assert (s.task, s.text, s.layers, s.heads, s.d_model) == ("previous", "", 1, 2, 32)
    assert (s.steps, s.total_steps, s.lr, s.seed) == (None, 150, 3e-3, 0)
    assert (s.scale, s.mask, s.mask_kind, s.positions, s.ffn) == ("sqrt", None, "causal", True, False)


@pytest.mark.parametrize(
    "task, steps, mask",
    [("previous", 150, "causal"), ("reverse", 400, "none"), ("sort", 800, "none"),
     ("induction", 500, "causal"), ("text", 500, "causal")],
)  # fmt: skip
def test_each_task_has_its_own_default_steps_and_mask(settings_of, task, steps, mask):
    extra = ("--text", "ねこがねた。") if task == "text" else ()
    s = settings_of("--task", task, *extra)
    assert s.task == task and s.steps is None and s.total_steps == steps == DEFAULT_STEPS[task]
    assert s.mask is None and s.mask_kind == mask
    assert s.to_dict()["steps"] == steps and s.to_dict()["mask"] == mask


def test_default_steps_really_run(capsys):
    code, out, err = _main(capsys, "--d-model", "4", "--heads", "1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["losses"]) == len(data["accuracy"]) == DEFAULT_STEPS["previous"] == 150
    assert data["config"]["steps"] == 150 and data["config"]["task"] == "previous"


# --- every option reaches the settings ----------------------------------------------------------


def test_numbers_are_parsed_as_numbers(settings_of):
    s = settings_of(
        "--layers", "2", "--heads", "4", "--d-model", "16", "--steps", "7", "--lr", "0.25", "--seed", "9"
    )
    assert (s.layers, s.heads, s.d_model, s.steps, s.seed) == (2, 4, 16, 7, 9)
    assert all(type(v) is int for v in (s.layers, s.heads, s.d_model, s.steps, s.seed))
    assert s.lr == 0.25 and type(s.lr) is float


@pytest.mark.parametrize(
    "scale, expected, divisor",
    [("sqrt", "sqrt", 2.0), ("none", "none", 1.0), ("2.5", 2.5, 2.5), ("3", 3.0, 3.0), ("1e-6", 1e-6, 1e-6),
     ("1e6", 1e6, 1e6)],
)  # fmt: skip
def test_scale_sqrt_none_or_a_divisor(settings_of, scale, expected, divisor):
    s = settings_of("--d-model", "8", "--heads", "2", "--scale", scale)  # d_k 4: sqrt(4) = 2
    assert s.scale == expected and type(s.scale) is type(expected)
    assert s.divisor == divisor


@pytest.mark.parametrize("task, mask", [("previous", "none"), ("reverse", "causal"), ("sort", "none")])
def test_mask_overrides_the_tasks_own(settings_of, task, mask):
    s = settings_of("--task", task, "--mask", mask)
    assert s.mask == mask and s.mask_kind == mask


def test_flags(settings_of):
    s = settings_of("--no-positions")
    assert s.positions is False and s.ffn is False
    s = settings_of("--ffn")
    assert s.positions is True and s.ffn is True
    s = settings_of("--task", "text", "--text", "abc abc", "--no-positions", "--ffn")
    assert (s.task, s.text, s.positions, s.ffn) == ("text", "abc abc", False, True)


@pytest.mark.parametrize(
    "args, field, value",
    [(("--layers", "1"), "layers", 1), (("--layers", "2"), "layers", 2),
     (("--heads", "1"), "heads", 1), (("--heads", "4"), "heads", 4),
     (("--d-model", "4", "--heads", "1"), "d_model", 4), (("--d-model", "64"), "d_model", 64),
     (("--steps", "1"), "steps", 1), (("--steps", "20000"), "steps", 20_000),
     (("--lr", "1e-5"), "lr", 1e-5), (("--lr", "1"), "lr", 1.0),
     (("--seed", "0"), "seed", 0), (("--seed", str(2**63 - 1)), "seed", 2**63 - 1)],
)  # fmt: skip
def test_both_ends_of_every_range_are_accepted(settings_of, args, field, value):
    assert getattr(settings_of(*args), field) == value


# --- bad input: one error line, exit 2 ---------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [("--task", "nope"), ("--task", "Previous"), ("--task", "text"), ("--task", "text", "--text", ""),
     ("--layers", "0"), ("--layers", "3"), ("--layers", "1.5"),
     ("--heads", "0"), ("--heads", "5"), ("--heads", "two"),
     ("--d-model", "3"), ("--d-model", "65"), ("--d-model", "10", "--heads", "4"),
     ("--steps", "0"), ("--steps", "20001"), ("--steps", "-3"),
     ("--lr", "9e-6"), ("--lr", "1.01"), ("--lr", "nan"), ("--lr", "fast"),
     ("--seed", "-1"), ("--seed", str(2**63)), ("--seed", "0.5"),
     ("--scale", "0"), ("--scale", "-2"), ("--scale", "inf"), ("--scale", "nan"), ("--scale", "root"),
     ("--scale", "SQRT"), ("--scale", "9e-7"), ("--scale", "1.1e6"),
     ("--mask", "padding"), ("--mask", "Causal"), ("--mask", "none", "--json", "extra")],
)  # fmt: skip
def test_bad_input_is_one_error_line_and_exit_2(capsys, args):
    code, out, err = _main(capsys, "--steps", "1", "--d-model", "8", *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), err


def test_an_unknown_task_is_refused_by_the_parser_with_the_choices(capsys):
    code, _, err = _main(capsys, "--task", "nope")
    assert code == 2
    assert "--task" in err and "invalid choice" in err  # argparse's words, not the trainer's
    assert all(task in err for task in ("previous", "reverse", "sort", "induction", "text"))


def test_an_unknown_mask_is_refused_by_the_parser_with_the_choices(capsys):
    code, _, err = _main(capsys, "--mask", "padding")
    assert code == 2 and "--mask" in err and "invalid choice" in err and "causal" in err


# --- help ----------------------------------------------------------------------------------------


def _help(capsys, monkeypatch, *argv: str) -> str:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")  # newer argparse colours help only when asked to
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    with pytest.raises(SystemExit) as exit_:
        cli.main(list(argv))
    assert exit_.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse's line wrapping does not matter


def test_train_help_shows_every_option_with_its_help(capsys, monkeypatch):
    text = _help(capsys, monkeypatch, "train", "--help")
    for line in (
        "--task {previous,reverse,sort,induction,text}",
        "--text TEXT the text for --task text (Japanese welcome)",
        "--layers LAYERS --heads HEADS --d-model D_MODEL",
        "--d-k D_K per head (d_v the same); default: d_model / heads",
        "--steps STEPS default: the task's own number",
        "--lr LR --seed SEED",
        "--scale SCALE sqrt, none or a divisor",
        "--mask {causal,none} default: the task's own",
        "--no-positions no position embedding",
        "--ffn add an FFN (Pre-LN) to every layer",
        "--json one JSON object instead of text",
    ):
        assert line in text, line


def test_main_help_lists_train_with_its_help(capsys, monkeypatch):
    text = _help(capsys, monkeypatch, "--help")
    assert "train train a tiny Transformer in NumPy and print its curves and maps" in text


# --- JSON ----------------------------------------------------------------------------------------

ARGS = {"layers": 2, "heads": 2, "d_model": 8, "steps": 5, "lr": 0.05, "seed": 2}


def _cli_args(task: str, **kw) -> list[str]:
    return ["--task", task] + [a for k, v in kw.items() for a in (f"--{k.replace('_', '-')}", str(v))]


@pytest.mark.parametrize("task", ["reverse", "induction"])
def test_json_in_process_keys_shapes_and_values(capsys, task):
    code, out, err = _main(capsys, *_cli_args(task, **ARGS), "--json")
    assert code == 0 and err == ""
    assert out.endswith("}\n") and out.count("\n") == 1
    data = json.loads(out)
    assert list(data) == [
        "losses", "accuracy", "final_accuracy", "final_loss", "induction", "previous_token", "sample", "attention",
        "repeated", "repeated_attention", "config", "seconds",
    ]  # fmt: skip
    n = SAMPLE_N[task]
    assert np.shape(data["losses"]) == np.shape(data["accuracy"]) == (5,)
    assert np.shape(data["induction"]) == np.shape(data["previous_token"]) == (2, 2)
    assert np.shape(data["attention"]) == (2, 2, n, n)
    run = train(TrainSettings(task=task, **ARGS))
    assert data["losses"] == run.losses.tolist() and data["accuracy"] == run.accuracy.tolist()
    assert data["final_accuracy"] == run.final_accuracy
    assert (
        data["induction"] == run.induction.tolist() and data["previous_token"] == run.previous_token.tolist()
    )
    assert np.array_equal(np.array(data["attention"]), run.attention)
    assert data["config"] == run.settings.to_dict()
    assert data["config"]["mask"] == {"reverse": "none", "induction": "causal"}[task]
    assert isinstance(data["seconds"], float) and data["seconds"] > 0


def test_json_config_carries_scale_mask_positions_and_ffn(capsys):
    code, out, _ = _main(
        capsys,
        *_cli_args("previous", **ARGS),
        "--scale",
        "none",
        "--mask",
        "none",
        "--no-positions",
        "--ffn",
        "--json",
    )
    assert code == 0
    c = json.loads(out)["config"]
    assert (c["scale"], c["divisor"], c["mask"], c["positions"], c["ffn"]) == (
        "none",
        1.0,
        "none",
        False,
        True,
    )
    code, out, _ = _main(capsys, *_cli_args("previous", **ARGS), "--scale", "2.5", "--json")
    c = json.loads(out)["config"]
    assert (c["scale"], c["divisor"], c["mask"], c["positions"], c["ffn"]) == (
        2.5,
        2.5,
        "causal",
        True,
        False,
    )


# --- text ----------------------------------------------------------------------------------------


def _strongest(grid: np.ndarray) -> tuple[int, int, float]:
    layer, head = np.unravel_index(np.argmax(grid), grid.shape)
    assert np.sum(grid == grid.max()) == 1  # one strongest head, so the test does not depend on ties
    return int(layer), int(head), float(grid.max())


def _check_text(out: str, run, header: str) -> None:
    assert out.endswith("\n")
    lines = out[:-1].split("\n")
    assert len(lines) == 4, lines
    assert lines[0] == header
    m = re.fullmatch(
        r"(\d+) steps in (\d+\.\d\d) s: loss (\S+) -> (\S+), held-out accuracy (\S+); final accuracy (\S+)",
        lines[1],
    )
    assert m, lines[1]
    assert int(m[1]) == len(run.losses)
    assert m[3] == f"{run.losses[0]:.4f}" and m[4] == f"{run.losses[-1]:.4f}"
    assert m[5] == f"{run.accuracy[-1]:.3f}" and m[6] == f"{run.final_accuracy:.4f}"
    for line, name, grid in (
        (lines[2], "induction", run.induction),
        (lines[3], "previous-token", run.previous_token),
    ):
        layer, head, score = _strongest(grid)
        assert line == f"strongest {name} head: layer {layer}, head {head} (score {score:.3f})"


def test_text_summary_numbers_come_from_the_run(capsys):
    code, out, err = _main(capsys, *_cli_args("reverse", **ARGS), "--mask", "causal")
    assert code == 0 and err == ""
    run = train(TrainSettings(task="reverse", mask="causal", **ARGS))
    # the values next to the ones printed differ, so printing a neighbour would show
    loss = [f"{x:.4f}" for x in run.losses]
    acc = [f"{x:.3f}" for x in run.accuracy]
    assert loss[0] != loss[1] and loss[-1] != loss[-2]
    assert acc[-1] not in (acc[1], acc[-2])
    _check_text(
        out, run,
        "task reverse: 2 layer(s), 2 head(s), d_model 8, d_k 4, mask causal, divisor 2, positions on, "
        "FFN off, lr 0.05, seed 2",
    )  # fmt: skip


def test_text_summary_positions_off_ffn_on_divisor_given(capsys):
    code, out, _ = _main(
        capsys, *_cli_args("previous", **ARGS), "--no-positions", "--ffn", "--scale", "2.5", "--mask", "none"
    )
    assert code == 0
    run = train(TrainSettings(task="previous", positions=False, ffn=True, scale=2.5, mask="none", **ARGS))
    _check_text(
        out, run,
        "task previous: 2 layer(s), 2 head(s), d_model 8, d_k 4, mask none, divisor 2.5, positions off, "
        "FFN on, lr 0.05, seed 2",
    )  # fmt: skip


def test_text_summary_scale_none_one_layer(capsys):
    args = {**ARGS, "layers": 1, "heads": 1, "seed": 4}
    code, out, _ = _main(capsys, *_cli_args("sort", **args), "--scale", "none")
    assert code == 0
    run = train(TrainSettings(task="sort", scale="none", **args))
    _check_text(
        out, run,
        "task sort: 1 layer(s), 1 head(s), d_model 8, d_k 8, mask none, divisor 1, positions on, "
        "FFN off, lr 0.05, seed 4",
    )  # fmt: skip


# --- issue 41: the scores can be computed again, --d-k, --text ignored aloud -------------------------


def test_json_holds_what_the_scores_are_computed_from(capsys):
    code, out, _ = _main(capsys, *_cli_args("induction", **ARGS), "--json")
    data = json.loads(out)
    rep, maps = data["repeated"], np.array(data["repeated_attention"])
    m = len(rep) // 2
    assert rep[:m] == rep[m:] and len(set(rep[:m])) == m  # a random segment of distinct letters, twice
    assert maps.shape == (2, 2, 2 * m, 2 * m)
    for layer in range(2):
        for h in range(2):
            induction = sum(maps[layer, h, i, i - m + 1] for i in range(m, 2 * m)) / m
            previous = sum(maps[layer, h, i, i - 1] for i in range(1, 2 * m)) / (2 * m - 1)
            assert data["induction"][layer][h] == pytest.approx(induction, rel=1e-12)
            assert data["previous_token"][layer][h] == pytest.approx(previous, rel=1e-12)
    run = train(TrainSettings(task="induction", **ARGS))
    assert data["sample"] == [run.task.labels_in[int(i)] for i in run.sample] and len(data["sample"]) == 20
    assert data["final_loss"] == run.final_loss


def test_d_k_is_an_option_and_the_error_names_it(settings_of, capsys):
    assert settings_of("--d-model", "30", "--heads", "4", "--d-k", "8").head_dim == 8
    assert settings_of("--d-model", "32", "--heads", "4").head_dim == 8  # d_model / heads
    code, out, err = _main(capsys, "--d-model", "30", "--heads", "4")
    assert code == 2 and "set d_k by hand (--d-k)" in err
    code, _, err = _main(capsys, "--d-k", "65")
    assert code == 2 and err.startswith("error: d_k must be a whole number from 1 to 64")


def test_text_with_another_task_is_ignored_with_a_warning(capsys, monkeypatch):
    seen = []
    monkeypatch.setattr(train_module, "train", lambda s, **_: seen.append(s) or train(s))
    code, out, err = _main(capsys, "--task", "previous", "--text", "hi", "--steps", "2", "--d-model", "8")
    assert code == 0 and seen[0].text == "" and seen[0].task == "previous"
    assert err == "warning: --text is used only by --task text; ignored for --task previous\n"
    code, _, err = _main(capsys, "--task", "text", "--text", "hi", "--steps", "2", "--d-model", "8")
    assert code == 0 and err == ""
