"""The notebook download (attention_ui/program/notebook.py), also as ``python -m attention_core code --notebook``
writes it.

A few notebooks are executed for real with nbclient and ipykernel (a kernel start costs a few seconds):
they must run clean, and the numbers they assert must be the trace's. The rest is checked by running
the code cells in this process, which is fast enough to cover more settings and a notebook whose stored
numbers were tampered with (its check must fail)."""

from __future__ import annotations

import contextlib
import io
import json

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

from attention_core import AttentionConfig, codegen, trace_text, worked_example_trace
from attention_ui.i18n import Translator, translate
from attention_ui.program import notebook
from tests.cli_run import run_cli

# Hide Plotly from the kernel: `import plotly` then raises ImportError, as on a machine without it.
NO_PLOTLY = "import sys\nsys.modules['plotly'] = None"


def _notebook(text, config, lang="en"):
    trace = trace_text(text, config)
    program = codegen.layer_program(config, trace.tokens[: trace.n - trace.n_pad])
    return notebook.build_notebook(program, trace, Translator(lang)), trace


def _run_in_process(nb) -> dict:
    """Every code cell but the plot, in one namespace, as a kernel would run them top to bottom."""
    ns: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nb.cells[:-1]:
            if cell.cell_type == "code":
                exec(cell.source, ns)  # noqa: S102 - generated here
    return ns


def _execute(nb) -> None:
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=False).execute()
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", output


KERNEL_CASES = [
    ("en", "the cat sat on the mat", AttentionConfig()),
    (
        "ja",
        "猫がマットの上に座った。",
        AttentionConfig(d_model=6, heads=1, mask="causal+padding", pad=2, scale=2.5),
    ),
]


@pytest.mark.parametrize(("lang", "text", "config"), KERNEL_CASES, ids=["en_default", "ja_one_head"])
def test_the_notebook_runs_clean_in_a_kernel(lang, text, config):
    nb, trace = _notebook(text, config, lang)
    _execute(nb)
    plot = nb.cells[-1]
    assert any("plotly" in json.dumps(o.get("data", {})) for o in plot.outputs)  # Plotly is installed here
    # what the cells asserted is what the app showed: the stored numbers are the trace's
    stored = _run_in_process(nb)["EXPECTED"]
    for name, value in notebook.program_arrays(
        codegen.layer_program(config, trace.tokens[: trace.n - trace.n_pad]), trace
    ).items():
        if name in stored:
            np.testing.assert_array_equal(stored[name], value, err_msg=name)


def test_without_plotly_the_plot_cell_says_how_to_install_it_and_ends_clean():
    nb, _ = _notebook("a b c", AttentionConfig(d_model=4, heads=2, mask="causal"), "ja")
    nb.cells.insert(0, nbformat.v4.new_code_cell(NO_PLOTLY))
    _execute(nb)
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert printed.strip() == translate("ja", "code.nb_plot_missing")


def test_the_example_notebook_prints_what_the_notes_print():
    program = codegen.example_program()
    nb = notebook.build_notebook(program, worked_example_trace(), Translator("en"), example=True)
    _execute(nb)
    printed = [o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert "(4, 4) (4, 4) (4, 2)\n[1. 0. 0. 0.]\n" in printed


IN_PROCESS = [
    (
        "en",
        "Attention is all you need",
        AttentionConfig(d_model=12, heads=3, d_k=5, d_v=2, mask="padding", pad=1),
    ),
    ("ja", "私はコードを読む", AttentionConfig(d_model=8, heads=4, scale="none", positional=False, seed=9)),
    ("en", " ".join(f"w{i}" for i in range(40)), AttentionConfig(d_model=64, heads=8, mask="causal")),
]


@pytest.mark.parametrize(("lang", "text", "config"), IN_PROCESS, ids=["padding", "ja_no_scale", "sliced"])
def test_every_step_checks_itself_and_a_wrong_number_fails(lang, text, config):
    nb, trace = _notebook(text, config, lang)
    ns = _run_in_process(nb)  # every assert passes
    np.testing.assert_allclose(ns["output"], trace.output, rtol=0, atol=1e-12)
    # tamper with one stored number: the step that checks it fails
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("EXPECTED = {"))
    stored = {}
    exec("import numpy as np\n" + cell.source, stored)  # noqa: S102
    weights = stored["EXPECTED"]["weights"]
    first = float(weights.flat[0])
    start = cell.source.index('"weights": np.array(')
    cell.source = cell.source[:start] + cell.source[start:].replace(repr(first), repr(first + 1e-6), 1)
    with pytest.raises(AssertionError, match="weights differs from the app"):
        _run_in_process(nb)


def test_large_arrays_are_stored_by_their_corner():
    nb, trace = _notebook(
        " ".join(f"w{i}" for i in range(40)), AttentionConfig(d_model=64, heads=8, mask="causal")
    )
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert 'assert np.allclose(weights[:, :16, :16], EXPECTED["weights"]' in source  # 8 x 40 x 40 > 4096
    assert 'assert np.allclose(X, EXPECTED["X"]' in source  # 40 x 64 = 2560 numbers: stored whole
    stored = _run_in_process(nb)["EXPECTED"]
    assert stored["weights"].shape == (8, 16, 16)
    np.testing.assert_array_equal(stored["weights"], trace.weights[:, :16, :16])
    intro = nb.cells[0].source
    assert translate("en", "code.nb_sliced", size=notebook.MAX_STORED, rows=notebook.CORNER) in intro


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_markdown_comes_from_the_catalogs(lang):
    nb, _ = _notebook("the cat", AttentionConfig(mask="causal"), lang)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for key in (
        "playground.explain_qkv",
        "playground.explain_softmax",
        "code.nb_mask",
        "code.nb_intro",
        "code.nb_plot",
    ):
        assert translate(lang, key) in markdown
    assert translate(lang, "playground.mask_causal") in nb.cells[0].source
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    program = codegen.layer_program(AttentionConfig(mask="causal"), ("the", "cat"))
    for block, lines in program.blocks.items():  # the program, split by step, in order
        assert any(source.startswith("\n".join(lines)) for source in code), block
    assert nb.nbformat == 4
    nbformat.validate(nb)


def test_user_text_reaches_the_notebook_only_as_a_string_literal():
    text = '# Title <script>alert(1)</script> $x$ ``` """'
    nb, trace = _notebook(text, AttentionConfig(d_model=4, heads=1))
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for word in ("Title", "script", "alert"):
        assert word in trace.tokens and word not in markdown
    assert _run_in_process(nb)["tokens"] == list(trace.tokens)


# The notebook as `python -m attention_core code --notebook` writes it (in-process, tests/cli_run.py;
# the rest of the command is tested in test_code_cli.py).


def test_code_notebook_writes_the_playgrounds_notebook(capsys, tmp_path):
    path = tmp_path / "layer.ipynb"
    code, out, err = run_cli(
        capsys, "code", "--text", "the cat", "--mask", "causal", "--notebook", str(path), "--lang", "ja"
    )
    assert code == 0 and out == "" and str(path) in err
    nb = nbformat.read(path, as_version=4)
    expected, _ = _notebook("the cat", AttentionConfig(mask="causal"), "ja")
    assert [c.source for c in nb.cells] == [c.source for c in expected.cells]
    code, _, err = run_cli(capsys, "code", "--example", "--notebook", str(tmp_path / "no" / "x.ipynb"))
    assert code == 2 and err.startswith("error: cannot write") and err.count("\n") == 1
