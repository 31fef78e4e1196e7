"""``python -m attention_core train``: the JSON contract, the text summary and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import run_cli

from attention_core.training.train import TrainSettings, train

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
