"""``python -m attention_core exercise`` (attention_core/cli_exercise.py): the same seed gives the same
exercise in two processes, the JSON contract, the text, and bad arguments refused with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core.cli_exercise import JSON_KEYS, exercise_to_json, format_exercise
from attention_core.exercise import generate_exercise

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PY) if VENV_PY.exists() else sys.executable


def _cli(*args: str, env_hash: str = "0") -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "PYTHONHASHSEED": env_hash}
    return subprocess.run(
        [PYTHON, "-m", "attention_core", "exercise", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip


def test_same_seed_same_exercise_in_two_processes_and_json_contract():
    first = _cli("--seed", "123456789", "--mask", "causal", "--json", env_hash="1")
    second = _cli("--seed", "123456789", "--mask", "causal", "--json", env_hash="2")
    assert first.returncode == second.returncode == 0 and first.stderr == second.stderr == ""
    assert first.stdout == second.stdout
    data = json.loads(first.stdout)
    assert tuple(data) == JSON_KEYS
    ex = generate_exercise(123456789, "causal")
    assert data == json.loads(json.dumps(exercise_to_json(ex)))  # the same in this process too
    assert data["seed"] == 123456789 and data["d_k"] == ex.d_k
    assert data["Q"] == ex.Q.tolist() and all(isinstance(v, int) for row in data["Q"] for v in row)
    assert data["mask"] == [[j <= i for j in range(ex.n)] for i in range(ex.n)]
    for i in range(ex.n):
        for j in range(ex.n):
            assert (data["masked"][i][j] is None) == (j > i)
            if j <= i:
                assert data["masked"][i][j] == data["scaled"][i][j]
    np.testing.assert_array_equal(np.array(data["weights"]), ex.weights)  # full precision round trip
    np.testing.assert_array_equal(np.array(data["output"]), ex.output)


def test_cli_text_and_no_mask_json():
    res = _cli("--seed", "7")
    assert res.returncode == 0 and res.stderr == ""
    assert res.stdout.startswith("Self-attention by hand: seed 7, mask none")
    assert res.stdout.strip() == format_exercise(generate_exercise(7))
    data = json.loads(_cli("--seed", "7", "--json").stdout)
    assert data["mask"] is None and all(v is not None for row in data["masked"] for v in row)


@pytest.mark.parametrize(
    "args, fragment",
    [
        ((), "--seed"),
        (("--seed", "-1"), "--seed"),
        (("--seed", "x"), "--seed"),
        (("--seed", str(2**63)), "--seed"),
        (("--seed", "1", "--mask", "padding"), "--mask"),
    ],
)
def test_cli_bad_arguments_exit_2_with_one_line(args, fragment):
    res = _cli(*args)
    assert res.returncode == 2
    assert res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1 and fragment in res.stderr
    assert "Traceback" not in res.stderr
