"""The learner's view as a Jupyter notebook (nbformat 4): the generated program split by step, each
step explained by the message catalogs, and checked against the numbers the app showed.

Pure apart from ``nbformat`` (no Streamlit), so ``python -m attention_core code --notebook`` writes the
same file as the playground's download. The stored numbers are the trace's (the app's), written as
exact Python literals; an array larger than :data:`MAX_STORED` numbers is stored and checked on its
first :data:`CORNER` rows and columns only, which keeps a 256-token notebook small.
"""

from __future__ import annotations

from collections.abc import Callable

import nbformat
import numpy as np
from nbformat import v4

from attention_core import codegen

MAX_STORED = 4096  # numbers an array may have to be stored whole
CORNER = 16  # otherwise its first CORNER rows and columns
ATOL, RTOL = 1e-12, 1e-9  # a step matches the app's numbers this closely (BLAS may reorder sums)
# The names each block computes, checked at the end of its cell.
CHECKED = {
    "x": ("X",),
    "mask": ("allowed",),
    "qkv": ("Q", "K", "V"),
    "raw": ("scores",),
    "scaled": ("scaled",),
    "masked": ("masked",),
    "softmax": ("weights",),
    "head_out": ("out",),
    "concat": ("concat",),
    "output": ("output",),
}
# The markdown of each block: its title key and its explanation key in the catalogs.
TEXT = {
    "setup": ("code.nb_setup_title", "code.nb_setup"),
    "softmax_fn": ("code.nb_softmax_title", "code.nb_softmax"),
    "x": ("playground.step_x", "playground.explain_x"),
    "weights": ("code.nb_weights_title", "code.nb_weights"),
    "mask": ("playground.step_mask", "code.nb_mask"),
    "qkv": ("playground.step_qkv", "playground.explain_qkv"),
    "raw": ("playground.step_raw", "playground.explain_raw"),
    "scaled": ("playground.step_scaled", "playground.explain_scaled"),
    "masked": ("playground.step_masked", "playground.explain_masked"),
    "softmax": ("playground.step_softmax", "playground.explain_softmax"),
    "head_out": ("playground.step_head_out", "playground.explain_head_out"),
    "concat": ("playground.step_concat", "playground.explain_concat"),
    "output": ("playground.step_output", "playground.explain_output"),
    "print": ("code.nb_printout_title", "code.nb_printout"),
}
EXAMPLE_TEXT = {
    "x": ("playground.step_x", "code.nb_example_x"),
    "weights": ("code.nb_weights_title", "code.nb_example_weights"),
}


def _number(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "True" if x else "False"
    x = float(x)
    if np.isneginf(x):
        return "-np.inf"
    return repr(x)  # the shortest text that reads back as the same float


def literal(a: np.ndarray) -> str:
    """``a`` as a Python expression of nested lists that reads back exactly (−∞ as ``-np.inf``)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return _number(a)
    if a.ndim == 1:
        return "[" + ", ".join(_number(x) for x in a) + "]"
    return "[" + ",\n ".join(literal(row) for row in a) + "]"


def stored_slice(a: np.ndarray) -> str:
    """The index expression of the part of ``a`` that is stored: "" (all of it) or the corner."""
    if a.size <= MAX_STORED:
        return ""
    lead = ":, " * (a.ndim - 2)
    return f"[{lead}:{CORNER}, :{CORNER}]"


def program_arrays(program: codegen.Program, trace) -> dict[str, np.ndarray]:
    """The trace's arrays under the program's names, shaped as the program computes them (one head's
    program keeps 2-D arrays)."""
    out = {}
    for name, field in codegen.TRACE_NAMES.items():
        a = np.asarray(getattr(trace, field))
        if program.heads == 1 and name in codegen.PER_HEAD_NAMES:
            a = a[0]
        out[name] = a
    return out


def _check(name: str, cut: str) -> str:
    if name == "allowed":
        return f'assert np.array_equal(allowed{cut}, EXPECTED["allowed"]), "allowed differs from the app"'
    return (
        f'assert np.allclose({name}{cut}, EXPECTED["{name}"], rtol={RTOL}, atol={ATOL}), '
        f'"{name} differs from the app"'
    )


def _settings_text(t, trace) -> str:
    c = trace.config
    mask = t(f"playground.mask_{c.mask.replace('+', '_')}")
    divisor = f"√{c.head_dim_k}" if c.scale == "sqrt" else f"{c.divisor:g}"
    return t(
        "code.nb_settings",
        n=trace.n,
        pads=trace.n_pad,
        d_model=c.d_model,
        heads=c.heads,
        d_k=c.head_dim_k,
        d_v=c.head_dim_v,
        mask=mask,
        divisor=divisor,
        positions=t("code.nb_on") if c.positional else t("code.nb_off"),
        seed=c.seed,
    )


def _plot_cell(t, program: codegen.Program, example: bool) -> str:
    labels = "[str(i) for i in range(n)]" if example else '[f"{i} {token}" for i, token in enumerate(tokens)]'
    head0 = "weights[0]" if program.heads > 1 else "weights"
    return "\n".join(
        [
            "try:",
            "    import plotly.express as px",
            "except ImportError:",
            f"    print({t('code.nb_plot_missing')!r})",
            "else:",
            f"    labels = {labels}  # position + token: repeated words stay apart",
            f"    fig = px.imshow({head0}, x=labels, y=labels, zmin=0, zmax=1, color_continuous_scale='Blues',",
            f"                    title={t('code.nb_plot_chart')!r})",
            "    fig.show()",
        ]
    )


def build_notebook(program: codegen.Program, trace, t: Callable[..., str], example: bool = False):
    """The notebook of ``program`` (from :func:`codegen.layer_program` or :func:`codegen.example_program`)
    with the numbers of ``trace`` stored and checked; ``t`` translates catalog keys (the UI's language)."""
    arrays = program_arrays(program, trace)
    checked = [name for block in program.blocks for name in CHECKED.get(block, ()) if name in arrays]
    cuts = {name: stored_slice(arrays[name]) for name in checked}
    text = {**TEXT, **(EXAMPLE_TEXT if example else {})}

    intro = ["# " + t("code.nb_example_title" if example else "code.nb_title"), t("code.nb_intro")]
    intro.append(t("code.nb_example_settings") if example else _settings_text(t, trace))
    if any(cuts.values()):
        intro.append(t("code.nb_sliced", size=MAX_STORED, rows=CORNER))
    cells = [v4.new_markdown_cell("\n\n".join(intro))]
    for block, lines in program.blocks.items():
        title, explain = text[block]
        if block == "concat" and program.heads == 1:
            explain = "code.nb_concat_one"
        cells.append(v4.new_markdown_cell(f"## {t(title)}\n\n{t(explain)}"))
        source = list(lines) + [_check(name, cuts[name]) for name in CHECKED.get(block, ()) if name in cuts]
        cells.append(v4.new_code_cell("\n".join(source)))
        if block == "setup":  # the stored numbers, once numpy is imported
            stored = ",\n".join(
                f'    "{name}": np.array({literal(arrays[name][_index(cuts[name])])})' for name in checked
            )
            cells.append(v4.new_markdown_cell(f"## {t('code.nb_expected_title')}\n\n{t('code.nb_expected')}"))
            cells.append(v4.new_code_cell("EXPECTED = {\n" + stored + "\n}"))
    cells.append(v4.new_markdown_cell(f"## {t('code.nb_plot_title')}\n\n{t('code.nb_plot')}"))
    cells.append(v4.new_code_cell(_plot_cell(t, program, example)))
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def _index(cut: str):
    """The slice tuple that :func:`stored_slice`'s text stands for."""
    if not cut:
        return ...
    parts = cut.strip("[]").split(", ")
    return tuple(slice(None, int(p[1:])) if p != ":" else slice(None) for p in parts)


def notebook_bytes(program: codegen.Program, trace, t: Callable[..., str], example: bool = False) -> bytes:
    """The notebook as the bytes of an ``.ipynb`` file (UTF-8 JSON)."""
    return nbformat.writes(build_notebook(program, trace, t, example)).encode("utf-8")
