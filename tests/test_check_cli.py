"""``python -m attention_core check FILE.py`` (attention_core/check_cli.py), in-process through the real
worker: exit code 0 when the file passes, 1 for a known trap, 2 when no verdict can be given."""

from __future__ import annotations

from tests.cli_run import run_cli
from tests.codecheck_helpers import attention

RIGHT = attention()


def test_the_command_line_exit_codes(tmp_path, capsys):
    right, wrong, bad = tmp_path / "right.py", tmp_path / "wrong.py", tmp_path / "bad.py"
    right.write_text(RIGHT)
    wrong.write_text(attention(scale="S = Q @ K.T / d_k"))
    bad.write_text("import os\n")
    code, out, _ = run_cli(capsys, "check", str(right), "--mask", "causal")
    assert code == 0 and out.rstrip().endswith("PASS")
    code, out, _ = run_cli(capsys, "check", str(wrong), "--text", "a b c d")
    assert (
        code == 1 and "the same numbers as a known trap: divide_by_d_k." in out and "your variable S" in out
    )
    code, out, _ = run_cli(capsys, "check", str(bad))
    assert code == 2 and "import os is not allowed" in out
    code, _, err = run_cli(capsys, "check", str(tmp_path / "missing.py"))
    assert code == 2 and "cannot read" in err
    code, _, err = run_cli(capsys, "check", str(right), "--heads", "3")
    assert code == 2 and "divisible" in err
