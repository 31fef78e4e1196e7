"""``python -m attention_core grad`` (issue 36, part 1): --help, the JSON contract, the text output
and bad input, all in this process through :func:`attention_core.cli.main` (fast, and a changed
grad_cli is what runs). Every expected number is computed here from the trace and the core's
gradients, never read back from the output."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest
from cli_run import grad_json_shapes, run_cli

from attention_core import cli, grad_cli
from attention_core.backward import attention_grads
from attention_core.config import MAX_SEED, AttentionConfig
from attention_core.trace import attend, init_params, trace_text

TEXT = "the cat sat on"
# h*d_v (4) != d_model (6) != n (4 tokens): a swapped shape in a heading shows
OPTS = ("--text", TEXT, "--heads", "2", "--d-model", "6", "--d-v", "2", "--mask", "causal")
CONFIG = AttentionConfig(d_model=6, heads=2, d_v=2, mask="causal")  # d_k = 3: divisor sqrt(3)


def _main(capsys, *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "grad", *args)


def _words(text: str) -> str:
    """argparse wraps help to the terminal's width: compare with the whitespace folded."""
    return " ".join(text.split())


def _loss(trace, target_seed: int) -> float:
    """L = 1/2 ||O - Y||^2 with Y = default_rng(target_seed).standard_normal, written out here."""
    Y = np.random.default_rng(target_seed).standard_normal(trace.output.shape)
    return 0.5 * float(((trace.output - Y) ** 2).sum())


# --------------------------------------------------------------------------------------------
# --help
# --------------------------------------------------------------------------------------------


def test_the_command_list_describes_grad(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    assert "grad the gradient of L = 1/2 ||O - Y||^2 through every step of the layer" in _words(
        capsys.readouterr().out
    )


def test_grad_help_names_the_target_seed_and_the_trace_options(capsys):
    code, out, _ = _main(capsys, "--help")
    assert code == 0
    words = _words(out)
    assert "--target-seed TARGET_SEED seed of the invented target Y (default 0)" in words
    for option in (
        "--text",
        "--d-model",
        "--heads",
        "--d-k",
        "--d-v",
        "--mask",
        "--scale",
        "--seed",
        "--json",
    ):
        assert option in words, option


# --------------------------------------------------------------------------------------------
# --json
# --------------------------------------------------------------------------------------------


def test_json_keys_shapes_and_the_cores_values(capsys):
    code, out, err = _main(capsys, *OPTS, "--target-seed", "5", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    h, n, d, d_k, d_v = 2, 4, 6, 3, 2
    shapes = grad_json_shapes(h, n, d, d_k, d_v)
    assert list(data) == ["loss", "config", *shapes]
    assert {k: np.shape(data[k]) for k in shapes} == shapes
    trace = trace_text(TEXT, CONFIG)
    grads = attention_grads(trace, 5)
    assert data["config"] == CONFIG.to_dict()
    assert data["loss"] == pytest.approx(_loss(trace, 5), rel=1e-12)
    for key in shapes:
        assert np.array_equal(np.array(data[key]), getattr(grads, key)), key
    # the target seed is used: seed 5 and seed 6 give different losses
    assert _loss(trace, 5) != pytest.approx(_loss(trace, 6), rel=1e-6)


def test_the_default_target_seed_is_0(capsys):
    code, out, _ = _main(capsys, *OPTS, "--json")
    assert code == 0
    trace = trace_text(TEXT, CONFIG)
    assert _loss(trace, 0) != pytest.approx(_loss(trace, 1), rel=1e-6)
    assert json.loads(out)["loss"] == pytest.approx(_loss(trace, 0), rel=1e-12)
    code, out, _ = _main(capsys, *OPTS)
    assert code == 0 and "(Y invented: standard normal, seed 0)" in out


def test_json_of_a_trace_without_a_config_gives_its_divisor():
    config = AttentionConfig(d_model=4, heads=1)
    X = np.random.default_rng(2).standard_normal((3, 4))
    trace = attend(X, init_params(config), np.ones((3, 3), bool), 2.5)
    assert trace.config is None
    grads = attention_grads(trace, 1)
    data = grad_cli.grads_to_json(trace, grads)
    assert list(data) == list(grad_cli.GRAD_JSON_KEYS)
    assert data["config"] == {"divisor": 2.5}
    assert data["loss"] == pytest.approx(_loss(trace, 1), rel=1e-12)
    assert np.array_equal(np.array(data["dX"]), grads.dX) and np.shape(data["dW_O"]) == (4, 4)
    json.dumps(data, allow_nan=False)  # plain lists and floats only


# --------------------------------------------------------------------------------------------
# the text output
# --------------------------------------------------------------------------------------------

NUMBER = re.compile(r"-?\d+\.\d*")


def _sections(out: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The text lines that are not matrices, and each matrix with the line just above it."""
    heads, blocks, current = [], [], None
    for line in out.splitlines():
        if line.startswith(("[", " ")):  # a matrix row (or its wrapped continuation)
            assert current is not None, line
            current[1].append(line)
        else:
            if line:
                heads.append(line)
            current = (line, [])
            blocks.append(current)
    return heads, [(head, "\n".join(rows)) for head, rows in blocks if rows]


def _check_matrix(block: str, expected: np.ndarray, where: str) -> None:
    """A 2-D matrix as ``[[a, b], [c, d]]``: four decimals at most, no exponent, each value within
    half a unit of the fourth decimal."""
    assert "e" not in block, where
    shape = re.sub(r"\s", "", NUMBER.sub("N", block))
    assert re.fullmatch(r"\[\[N(,N)*\](,\[N(,N)*\])*\]", shape), (where, block)
    numbers = NUMBER.findall(block)
    assert all(len(x.split(".")[1]) <= 4 for x in numbers), (where, block)
    values = np.array([float(x) for x in numbers])
    assert values.size == expected.size, (where, block)
    assert np.allclose(values.reshape(expected.shape), expected, rtol=0, atol=5.001e-5), (where, block)


def test_text_headings_and_numbers_match_the_gradients(capsys):
    code, out, err = _main(capsys, *OPTS, "--target-seed", "7")
    assert code == 0 and err == ""
    trace = trace_text(TEXT, CONFIG)
    g = attention_grads(trace, 7)
    heads, blocks = _sections(out)
    per_head = []
    for i in range(2):
        per_head += [
            f"===== head {i} =====",
            "dL/d(weights) (g)", "dL/d(scores), after the softmax Jacobian p * (g - sum p g)",
            "dL/d(Q K^T), divided by 1.732",  # sqrt(3) to 4 significant digits
            "dL/dQ", "dL/dK", "dL/dV", "dL/dW_Q", "dL/dW_K", "dL/dW_V",
        ]  # fmt: skip
    assert heads[0] == "tokens (4): 0:the | 1:cat | 2:sat | 3:on"
    loss_line = re.fullmatch(
        r"loss L = 1/2 \|\|O - Y\|\|\^2 = (\S+)  \(Y invented: standard normal, seed 7\)", heads[1]
    )
    assert loss_line and float(loss_line[1]) == pytest.approx(_loss(trace, 7), rel=1e-5)
    assert heads[2:] == ["dL/dW_O   4x6", *per_head, "dL/dX   4x6"]  # [h*d_v, d_model], [n, d_model]
    expected = [("dL/dW_O   4x6", g.dW_O)]
    for i in range(2):
        expected += [
            ("dL/d(weights) (g)", g.dweights[i]),
            ("dL/d(scores), after the softmax Jacobian p * (g - sum p g)", g.dscores[i]),
            ("dL/d(Q K^T), divided by 1.732", g.draw_scores[i]),
            ("dL/dQ", g.dQ[i]), ("dL/dK", g.dK[i]), ("dL/dV", g.dV[i]),
            ("dL/dW_Q", g.dW_Q[i]), ("dL/dW_K", g.dW_K[i]), ("dL/dW_V", g.dW_V[i]),
        ]  # fmt: skip
    expected.append(("dL/dX   4x6", g.dX))
    assert [head for head, _ in blocks] == [head for head, _ in expected]
    for (head, block), (_, array) in zip(blocks, expected, strict=True):
        _check_matrix(block, array, head)
    # the causal mask's cells are exactly 0 up to rounding error, and print as 0, not as 1e-17
    assert np.abs(g.dscores[0][0, 1:]).max() < 1e-12


def test_text_rows_fill_but_never_pass_120_columns():
    """Rows are wrapped so that no line passes 120 characters, and only then. Gradients that happen
    to be round to two decimals print five characters wide ("-0.25"): a row of 17 of them takes
    exactly 121 columns on one line, so it must wrap."""
    config = AttentionConfig(d_model=17, heads=1)
    trace = trace_text("a b c", config)
    g = attention_grads(trace, 0)
    dX = np.round(g.dX, 2)
    assert np.abs(dX).max() < 10 and (dX < 0).any()
    lines = grad_cli.format_grads(trace, dataclasses.replace(g, dX=dX), 0).splitlines()
    assert 100 < max(len(line) for line in lines) <= 120
    # dX [3, 17]: every row needs two lines
    dX_lines = lines[lines.index("dL/dX   3x17") + 1 :]
    assert len(dX_lines) == 6 and all(len(line) <= 120 for line in dX_lines)
    _check_matrix("\n".join(dX_lines), dX, "dX")


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, MAX_SEED])
def test_both_ends_of_the_target_seed_range_are_accepted(capsys, seed):
    code, out, err = _main(capsys, "--text", "a b", "--target-seed", str(seed), "--json")
    assert code == 0 and err == ""
    trace = trace_text("a b", AttentionConfig())
    assert json.loads(out)["loss"] == pytest.approx(_loss(trace, seed), rel=1e-12)


@pytest.mark.parametrize("seed", [-1, MAX_SEED + 1])
def test_a_target_seed_out_of_range_is_one_error_line_and_exit_2(capsys, seed):
    code, out, err = _main(capsys, "--text", "a b", "--target-seed", str(seed))
    assert code == 2 and out == ""
    assert err == f"error: --target-seed must be between 0 and {MAX_SEED}, got {seed}\n"


@pytest.mark.parametrize(
    "args",
    [
        ("--heads", "4", "--d-model", "6"),
        ("--d-k", "0"),
        ("--pad", "-1"),
        ("--seed", "-1"),
        ("--mask", "diagonal"),
        ("--scale", "-2"),
    ],
)
def test_a_bad_config_is_one_error_line_and_exit_2(capsys, args):
    for extra in ((), ("--json",)):
        code, out, err = _main(capsys, "--text", "a b", *args, *extra)
        assert code == 2 and out == "", args
        assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), err


def test_a_text_cut_to_the_first_tokens_says_so_on_stderr(capsys):
    """Issue 41: a long sentence keeps 64 tokens; stderr says so and stdout stays one JSON object."""
    code, out, err = run_cli(capsys, "grad", "--text", " ".join(f"w{i}" for i in range(100)), "--json")
    assert code == 0 and json.loads(out)["dX"] and len(json.loads(out)["dX"]) == 64
    assert err == "note: kept the first 64 of 100 tokens\n"
    code, out, err = run_cli(capsys, "grad", "--text", "word " * 5000, "--json")
    assert code == 0 and err == (
        "note: kept the first 64 of 4000 tokens; the 5000 characters after the first 20000 were not read\n"
    )
    words = " ".join(f"w{i}" for i in range(100))
    code, out, err = run_cli(capsys, "grad", "--text", words, "--pad", "3", "--json")
    assert code == 0 and len(json.loads(out)["dX"]) == 67  # the [PAD]s come after the 64 kept
    assert err == "note: kept the first 64 of 100 tokens\n"
    code, out, err = run_cli(capsys, "grad", "--text", "a short one", "--json")
    assert code == 0 and err == ""
