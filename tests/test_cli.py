"""``python -m attention_core`` run as a real subprocess, the way a learner or teacher would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import AttentionConfig, trace_text

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PY) if VENV_PY.exists() else sys.executable

KEYS = [
    "tokens",
    "config",
    "X",
    "W_Q",
    "W_K",
    "W_V",
    "W_O",
    "Q",
    "K",
    "V",
    "scores_raw",
    "scores_scaled",
    "mask",
    "scores_masked",
    "weights",
    "head_outputs",
    "concat",
    "output",
]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "attention_core", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def run_json(*args: str) -> dict:
    res = run_cli("trace", "--json", *args)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    return json.loads(res.stdout)


def _masked_array(nested) -> np.ndarray:
    """JSON null (a masked score) back to -inf."""
    a = np.array(nested, dtype=object)
    return np.where(a == None, -np.inf, a).astype(float)  # noqa: E711 (element-wise None test)


def test_example_prints_the_notes_lines():
    res = run_cli("example")
    assert res.returncode == 0 and res.stderr == ""
    lines = res.stdout.splitlines()
    assert "(4, 4) (4, 4) (4, 2)" in lines
    assert "[1. 0. 0. 0.]" in lines
    assert lines.index("(4, 4) (4, 4) (4, 2)") + 1 == lines.index("[1. 0. 0. 0.]")
    # the notes' weights[1][0] at full precision (from running the notes' code)
    assert "0.7606972104411948" in res.stdout


def test_trace_json_keys_and_round_trip():
    text = "the cat sat on the mat"
    data = run_json(
        "--text", text, "--mask", "causal+padding", "--pad", "2", "--d-model", "8", "--heads", "2"
    )
    assert list(data) == KEYS
    tr = trace_text(text, AttentionConfig(d_model=8, heads=2, mask="causal+padding", pad=2))
    assert data["tokens"] == ["the", "cat", "sat", "on", "the", "mat", "[PAD]", "[PAD]"]
    assert data["config"]["d_model"] == 8 and data["config"]["mask"] == "causal+padding"
    assert data["config"]["pad"] == 2 and data["config"]["d_k"] == 4
    # full precision: Python's float repr round-trips, so equality is exact
    for key in [
        "X",
        "W_Q",
        "W_K",
        "W_V",
        "W_O",
        "Q",
        "K",
        "V",
        "scores_raw",
        "scores_scaled",
        "weights",
        "head_outputs",
        "concat",
        "output",
    ]:
        got = np.array(data[key], dtype=float)
        want = getattr(tr, key)
        assert got.shape == want.shape, key
        assert np.array_equal(got, want), key
    assert np.array_equal(np.array(data["mask"], dtype=bool), tr.mask)
    assert all(isinstance(v, bool) for row in data["mask"] for v in row)
    # masked scores: null exactly where the mask forbids, the scaled score elsewhere
    sm = data["scores_masked"]
    for h in range(2):
        for i in range(8):
            for j in range(8):
                if tr.mask[i, j]:
                    assert sm[h][i][j] == tr.scores_scaled[h, i, j]
                else:
                    assert sm[h][i][j] is None


def test_per_head_arrays_have_the_head_first():
    data = run_json("--text", "a b c", "--d-model", "12", "--heads", "3", "--d-k", "5", "--d-v", "2")
    n, h = 3, 3
    shapes = {
        "X": (n, 12),
        "W_Q": (h, 12, 5),
        "W_K": (h, 12, 5),
        "W_V": (h, 12, 2),
        "W_O": (h * 2, 12),
        "Q": (h, n, 5),
        "K": (h, n, 5),
        "V": (h, n, 2),
        "scores_raw": (h, n, n),
        "scores_scaled": (h, n, n),
        "mask": (n, n),
        "scores_masked": (h, n, n),
        "weights": (h, n, n),
        "head_outputs": (h, n, 2),
        "concat": (n, h * 2),
        "output": (n, 12),
    }
    for key, shape in shapes.items():
        assert np.array(data[key], dtype=object).shape == shape, key


FLAG_SETS = [
    (
        [
            "--d-model",
            "12",
            "--heads",
            "3",
            "--d-k",
            "5",
            "--d-v",
            "2",
            "--mask",
            "causal+padding",
            "--pad",
            "2",
            "--scale",
            "2.5",
            "--seed",
            "7",
            "--no-pe",
        ],
        dict(
            d_model=12,
            heads=3,
            d_k=5,
            d_v=2,
            mask="causal+padding",
            pad=2,
            scale=2.5,
            seed=7,
            positional=False,
        ),
    ),
    (
        ["--mask", "causal", "--scale", "none", "--seed", str(2**63 - 1)],
        dict(mask="causal", scale="none", seed=2**63 - 1),
    ),
    (
        ["--mask", "padding", "--pad", "3", "--scale", "sqrt", "--heads", "4"],
        dict(mask="padding", pad=3, scale="sqrt", heads=4),
    ),
    (["--scale", "1e-6", "--d-model", "3", "--heads", "3"], dict(scale=1e-6, d_model=3, heads=3)),
]


@pytest.mark.parametrize(("flags", "kwargs"), FLAG_SETS, ids=["all", "causal-none", "padding-sqrt", "tiny"])
def test_every_flag_reaches_the_core(flags, kwargs):
    text = "猫がマットの上に座った。"
    data = run_json("--text", text, *flags)
    cfg = AttentionConfig(**kwargs)
    tr = trace_text(text, cfg)
    assert data["config"] == json.loads(json.dumps(cfg.to_dict()))
    assert data["tokens"] == list(tr.tokens)
    assert np.array_equal(np.array(data["output"]), tr.output)
    assert np.array_equal(np.array(data["weights"]), tr.weights)
    assert np.array_equal(np.array(data["mask"]), tr.mask)
    assert np.array_equal(_masked_array(data["scores_masked"]), tr.scores_masked)


def test_text_mode_prints_every_step():
    res = run_cli("trace", "--text", "the cat sat", "--heads", "2", "--mask", "causal")
    assert res.returncode == 0 and res.stderr == ""
    out = res.stdout
    assert "0:the | 1:cat | 2:sat" in out
    for word in ("head 0", "head 1", "softmax weights", "concat", "output"):
        assert word in out


def test_broken_pipe_is_quiet():
    proc = subprocess.Popen(
        [PYTHON, "-m", "attention_core", "example"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.readline()
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err


# Required cases run as real subprocesses; the rest call main() in-process (same code, faster).
BAD_SUBPROCESS = [
    ("bad-mask", ["trace", "--text", "a b", "--mask", "future"]),
    ("bad-scale", ["trace", "--text", "a b", "--scale", "log"]),
    ("heads>d_model", ["trace", "--text", "a b", "--d-model", "4", "--heads", "8"]),
    ("empty-text", ["trace", "--text", ""]),
    ("unknown-option", ["trace", "--text", "a", "--colour", "red"]),
    ("non-int-d-model", ["trace", "--text", "a", "--d-model", "abc"]),
]
BAD_IN_PROCESS = [
    ("zero-scale", ["trace", "--text", "a b", "--scale", "0"]),
    ("nan-scale", ["trace", "--text", "a b", "--scale", "nan"]),
    ("huge-scale", ["trace", "--text", "a b", "--scale", "1e9"]),
    ("indivisible", ["trace", "--text", "a b", "--d-model", "10", "--heads", "3"]),
    ("blank-text", ["trace", "--text", "  \t "]),
    ("float-d-model", ["trace", "--text", "a", "--d-model", "8.5"]),
    ("negative-seed", ["trace", "--text", "a", "--seed", "-1"]),
    ("pad-too-big", ["trace", "--text", "a", "--pad", "1000"]),
    ("no-text", ["trace"]),
    ("no-command", []),
    ("unknown-command", ["explain"]),
]


def _assert_one_error_line(code, out, err):
    assert code == 2, (out, err)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error:") and len(lines[0]) > len("error: ") + 5
    assert out == ""


@pytest.mark.parametrize("args", [a for _, a in BAD_SUBPROCESS], ids=[name for name, _ in BAD_SUBPROCESS])
def test_bad_arguments_give_one_line_and_exit_2(args):
    res = run_cli(*args)
    _assert_one_error_line(res.returncode, res.stdout, res.stderr)


@pytest.mark.parametrize("args", [a for _, a in BAD_IN_PROCESS], ids=[name for name, _ in BAD_IN_PROCESS])
def test_more_bad_arguments_in_process(args, capsys):
    from attention_core.cli import main

    try:
        code = main(args)
    except SystemExit as exc:  # argparse errors leave through SystemExit, as in the real program
        code = exc.code
    captured = capsys.readouterr()
    _assert_one_error_line(code, captured.out, captured.err)
