"""``python -m attention_core code`` (attention_core/code_cli.py), run in-process (tests/cli_run.py): the
program it prints is the code generator's, with a trap when asked, and bad input ends with one error
line. (The notebook it writes with ``--notebook`` is tested in test_notebook.py.)"""

from __future__ import annotations

import pytest

from attention_core import AttentionConfig, codegen
from tests.cli_run import run_cli


def test_code_help_names_the_options(capsys):
    code, out, _ = run_cli(capsys, "code", "--help")
    assert code == 0
    for option in ("--example", "--trap", "--notebook", "--lang", "--text", "--mask"):
        assert option in out


def test_code_prints_the_program(capsys):
    code, out, err = run_cli(
        capsys, "code", "--text", "猫が座った", "--heads", "1", "--d-model", "4", "--mask", "causal"
    )
    assert code == 0 and err == ""
    config = AttentionConfig(d_model=4, heads=1, mask="causal")
    assert out == codegen.layer_program(config, ("猫", "が", "座", "っ", "た")).source


def test_code_example_prints_the_example_program(capsys):
    code, out, _ = run_cli(capsys, "code", "--example")
    assert code == 0 and out == codegen.example_program().source


def test_code_with_a_trap(capsys):
    code, out, _ = run_cli(
        capsys, "code", "--text", "a b c", "--mask", "causal", "--trap", "triu_k0_masks_diagonal"
    )
    assert code == 0 and "k=0)" in out
    config = AttentionConfig(mask="causal")
    assert out == codegen.layer_program(config, ("a", "b", "c"), "triu_k0_masks_diagonal").source


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["code"], "either --text TEXT or --example"),
        (["code", "--example", "--text", "a"], "either --text TEXT or --example"),
        (["code", "--text", "   "], "empty"),
        (["code", "--text", "a", "--heads", "3"], "not divisible"),
        (["code", "--text", "a", "--trap", "pad_off_by_one"], "changes nothing"),
        (["code", "--text", "a", "--trap", "nope"], "invalid choice"),
        (["code", "--text", "a", "--lang", "fr"], "invalid choice"),
        (["code", "--text", "a", "--scale", "-1"], "positive"),
    ],
)
def test_bad_input_is_one_error_line(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
