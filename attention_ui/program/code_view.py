"""The code tab beside a step, the whole program, the notebook download and the reference example.

Every box is an expander that tracks its state (``on_change="rerun"``): its content, the program
included, is made only while it is open, so a closed tab costs a rerun nothing (bench/code_tab.py).
Programs are cached per settings and sentence; a program is a few dozen lines, so the cache is small.
"""

from __future__ import annotations

import streamlit as st

from attention_core import codegen
from attention_core.config import MASK_KINDS, AttentionConfig
from attention_ui import kit
from attention_ui.playground.settings import TABLE

CODE_HEIGHT = 420  # px: a long program scrolls inside its box, never the page
# The score and weight maps, their step's variable and the line that makes it.
CELL_NAMES = {"raw": "scores", "scaled": "scaled", "masked": "masked", "softmax": "weights"}
EXAMPLE_STEP_NAMES = {"softmax": "weights"}


@kit.cached
def cached_program(config: AttentionConfig, tokens: tuple[str, ...]) -> codegen.Program:
    return codegen.layer_program(config, tokens)


@st.cache_resource(max_entries=1, show_spinner=False)
def cached_example() -> codegen.Program:
    return codegen.example_program()


def program_for(trace, example: bool) -> codegen.Program | None:
    """The program of a trace the playground shows (None for weights that no seed draws: pretrained)."""
    if example:
        return cached_example()
    if trace.config is None:
        return None
    return cached_program(trace.config, tuple(trace.tokens[: trace.n - trace.n_pad]))


def _box(t, key: str, label: str | None = None):
    """An expander that tracks its state; its ``.open`` says whether to draw what is inside."""
    return st.expander(label or t("code.tab_label"), key=key, on_change="rerun", icon=":material/code:")


def step_code(view, name: str) -> None:
    """The code tab under one playground step (not on a slide, nor on a student's phone)."""
    if view.present or view.text_after is not None:
        return
    trace = view.trace
    if not view.example and trace.config is None:
        return
    box = _box(view.t, TABLE.key("code", name))
    if not box.open:
        return
    program = program_for(trace, view.example)
    t = view.t
    with box:
        st.caption(t("code.tab_caption"))
        st.code(program.step_source(name), language="python", height="content")
        variable = CELL_NAMES.get(name)
        if variable is not None and view.cell is not None:
            row, col = view.cell
            index = f"{view.head}, {row}, {col}" if program.heads > 1 else f"{row}, {col}"
            line = program.lines(codegen.STEP_BLOCKS[name][-1])[0]
            st.caption(t("code.tab_cell", row=row, col=col, name=variable, index=index, line=line))


def whole_program(view) -> None:
    """The whole program once (copy button, .py and notebook downloads) and the notes' example."""
    if view.present or view.text_after is not None:
        return
    t, trace = view.t, view.trace
    program = None
    if view.example or trace.config is not None:
        box = _box(t, TABLE.key("code", "all"), t("code.whole_program"))
        if box.open:
            program = program_for(trace, view.example)
            with box:
                st.caption(t("code.whole_caption"))
                st.code(program.source, language="python", height=CODE_HEIGHT)
                st.caption(t("code.comments_note"))
                _downloads(t, program, trace, view.example)
    box = _box(t, TABLE.key("code", "example"), t("code.example_button"))
    if box.open:
        with box:
            st.caption(t("code.example_caption"))
            st.code(cached_example().source, language="python", height=CODE_HEIGHT)


def _downloads(t, program: codegen.Program, trace, example: bool) -> None:
    from attention_ui.program import notebook  # nbformat: only once the box is open

    c1, c2 = st.columns(2)
    c1.download_button(
        t("code.download_py"),
        data=program.source.encode("utf-8"),
        file_name="attention_program.py",
        mime="text/x-python",
        key=TABLE.key("dl", "code_py"),
        icon=":material/download:",
        on_click="ignore",
    )
    c2.download_button(
        t("code.download_nb"),
        data=lambda: notebook.notebook_bytes(program, trace, t, example=example),
        file_name="attention_steps.ipynb",
        mime="application/x-ipynb+json",
        key=TABLE.key("dl", "code_nb"),
        icon=":material/description:",
        help=t("code.download_nb_help"),
        on_click="ignore",  # deferred data: a rerun could drop the callable before it is read
    )


def lab_code(
    t, config: AttentionConfig | None, tokens: tuple[str, ...], steps: tuple[str, ...], key: str
) -> None:
    """A lab's code tab: the program's lines of ``steps`` for the lab's own settings (None: the lab's
    setting has no program, e.g. a sliding-window mask)."""
    if config is None:
        return
    box = _box(t, key)
    if not box.open:
        return
    program = cached_program(config, tokens)
    with box:
        st.caption(t("code.lab_caption"))
        st.code("\n\n".join(program.step_source(s) for s in steps), language="python", height="content")


def masks_code(t, settings, key: str) -> None:
    """The masks lab's code tab: its layer (the lab's d_model, heads and seed) with its mask, when the
    mask is one the program writes (not the sliding window nor the others the lab adds)."""
    from attention_core.labs import masks as lab_masks

    config = None
    if settings.kind in MASK_KINDS:
        config = AttentionConfig(
            d_model=lab_masks.D_MODEL,
            heads=lab_masks.HEADS,
            mask=settings.kind,
            pad=settings.n_pad,
            seed=settings.seed,
        )
    lab_code(t, config, settings.sentence, ("mask", "masked", "softmax"), key)


def trace_code(t, trace, steps: tuple[str, ...], key: str) -> None:
    """:func:`lab_code` for a lab whose trace came from a config (the multi-head lab)."""
    lab_code(t, trace.config, tuple(trace.tokens[: trace.n - trace.n_pad]), steps, key)
