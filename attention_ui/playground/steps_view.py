"""The playground's steps, one function each, shared by the normal page and presenter mode.

``render_step(view, name, number)`` draws one step (heading, formula, shapes, chart, optional
table with CSV download); the normal page loops over :data:`STEPS`, presenter mode draws one.
Step bodies only read the trace; widgets that change state (head radio, cell selectors) are passed
in as callbacks by the page, so there is exactly one copy of each step's code.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from attention_ui import kit, tables
from attention_ui.figures import base, heatmaps
from attention_ui.playground import figures as playground_figures
from attention_ui.playground import projector
from attention_ui.playground.settings import TABLE
from attention_ui.practice import predict_view
from attention_ui.program import code_view

STEPS = (
    "x",
    "qkv",
    "raw",
    "scaled",
    "mask",
    "masked",
    "softmax",
    "head_out",
    "all_heads",
    "concat",
    "output",
)
PER_HEAD = ("qkv", "raw", "scaled", "masked", "softmax", "head_out")
NUMBERED = tuple(enumerate(STEPS, start=1))  # (step number, name)
# The block render_all draws as one fragment: the first to the last per-head step (the mask included).
_HEADS = slice(STEPS.index(PER_HEAD[0]), STEPS.index(PER_HEAD[-1]) + 1)
# Charts whose cells can be clicked to explain them (score/weight maps: query row, key column).
CELL_CHARTS = ("raw", "scaled", "masked", "weights")
CHART_PREFIX = TABLE.family("chart") + "_"
SHARED_SCALE_KEY = TABLE.key("shared_scale")  # raw and scaled scores on one colour scale
QKV_PLOT_PX = 200  # a low estimate of the plot area of Q, K and V, drawn in three columns
# The all-heads figure is drawn on request (View.all_heads_switch) when it has more cells than two
# heads at 128 tokens: its panels are then too small to read cell by cell, and at 256 tokens it was
# about a sixth of the page's drawing time (bench/page_latency.py, n256 vs n256all).
ALL_HEADS_ON_REQUEST_CELLS = 2 * 128 * 128


def all_heads_on_request(heads: int, n: int) -> bool:
    """Whether the all-heads figure (``heads`` maps of n×n) waits for its switch."""
    return heads * n * n > ALL_HEADS_ON_REQUEST_CELLS


@dataclass(frozen=True)
class StepText:
    """A caller's replacement for one step's heading, explanation and/or formula.

    ``title`` and ``explain`` are catalog keys (filled with ``values``); ``formula`` is LaTeX written
    by the caller, never user text. Fields left None keep the playground's own text.
    """

    title: str | None = None
    explain: str | None = None
    formula: str | None = None
    values: Mapping[str, object] = field(default_factory=dict)


@dataclass
class View:
    """What every step needs: the translator, the trace, the head shown and the page's hooks."""

    t: Callable
    trace: object
    example: bool
    head: int
    show_tables: bool
    on_cell: Callable[[str], None] | None = None  # called with the chart key after a click
    after: dict[str, Callable[[View], None]] = field(default_factory=dict)  # extra panel per step
    text: Mapping[str, StepText] = field(default_factory=dict)  # step id -> replacement text
    # Draws the "draw all heads" switch when the figure is large (all_heads_on_request) and returns
    # whether to draw it; None (figure tests, other callers) draws it at any size.
    all_heads_switch: Callable[[], bool] | None = None
    # Presenter mode: figures restyled for a projector (projector.projector_figure), drawn into
    # ``chart_slot`` (the slide's chart column) when one is set.
    present: bool = False
    text_after: str | None = None  # the explanation in an expander of this label, after the chart
    # With text_after: a step's notes (note()) wait here and are drawn right after its chart.
    notes: list[Callable[[], None]] = field(default_factory=list)
    chart_slot: object | None = None
    # Draws the "one colour scale for raw and scaled scores" switch and returns it; None: shared.
    shared_scale_switch: Callable[[], bool] | None = None
    # The cell the open cell explainer shows (query row, key column): framed on the score/weight maps.
    cell: tuple[int, int] | None = None
    # Step 1 draws the practice-mode switch in the sidebar (off: it comes with the sidebar's settings,
    # one run later, on the session's first view; first_screen.py).
    practice_switch: bool = True
    # Draws a step's body (step_body's signature) in its place: a student's phone replays one drawing
    # shared by every student following the same view (attention_ui/classroom/shared_slide.py).
    draw_body: Callable[[View, str, str], None] | None = None
    hover: base.HoverText = field(init=False)

    def __post_init__(self) -> None:
        t = self.t
        self.hover = kit.hover_text(t, "playground")

    @property
    def axes(self) -> dict:
        return dict(query_title=self.t("playground.axis_query"), key_title=self.t("playground.axis_key"))

    @property
    def feat(self) -> dict:
        t = self.t
        return dict(
            token_title=t("playground.axis_token"), dim_title=t("playground.axis_dim"), hover=self.hover
        )


def step_title(t, name: str, number: int, text: StepText | None = None) -> str:
    if text is not None and text.title:
        return f"{number}. {t(text.title, **text.values)}"
    return f"{number}. {t(f'playground.step_{name}')}"


def step_explain(t, name: str, text: StepText | None = None) -> str:
    if text is not None and text.explain:
        return t(text.explain, **text.values)
    return t(f"playground.explain_{name}")


def x_explanation(t, tokens, n_pad: int = 0) -> str:
    """Step 1's text about the learner's own sentence: the first token that occurs twice (before any
    [PAD]) is named, escaped for Markdown; without one, the general statement."""
    seen: dict[str, int] = {}
    for i, token in enumerate(tokens[: len(tokens) - n_pad]):
        if token in seen and token.strip():
            return t(
                "playground.explain_x_repeat", token=kit.escape_markdown(token), first=seen[token], second=i
            )
        seen.setdefault(token, i)
    return t("playground.explain_x")


def step_formula(view: View, name: str, default: str) -> str:
    text = view.text.get(name)
    return text.formula if text is not None and text.formula else default


def note(view: View, draw: Callable[[], None]) -> None:
    """A step's secondary line (a summary, a caption): drawn now, or after the chart when the step's
    text goes after it (a student's phone: its first screen is for the chart)."""
    if view.text_after is None:
        draw()
    else:
        view.notes.append(draw)


def shape_line(t, *parts: tuple[str, tuple[int, ...]]) -> None:
    """``Shapes: $Q \\in \\mathbb{R}^{6 \\times 8}$ …``; names are LaTeX written here, never user text.

    Set notation needs no colon, so the line reads the same in every language. Each formula is one
    group (braces), so a narrow screen breaks the line between formulas (at the em space), never
    inside one after its ∈.
    """
    spaces = (r"\mathbb{R}^{" + r" \times ".join(str(s) for s in shape) + "}" for _, shape in parts)
    text = "\u2003".join(f"${{{name} \\in {space}}}$" for (name, _), space in zip(parts, spaces, strict=True))
    st.markdown(t("playground.shapes", shapes=text))


def value_range(a: np.ndarray) -> str:
    finite = np.asarray(a)[np.isfinite(a)]
    if not finite.size:
        return "—"
    return f"[{finite.min():.3f}, {finite.max():.3f}]"


PLOTLY_CONFIG = {
    "displaylogo": False,
    # the camera button (PNG download) stays; the file is named after the chart
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


def chart(view: View, fig, key: str, alt: str, square: bool = False, selectable: bool = False) -> None:
    """One step's chart, keyed ``pg_chart_<key>``; ``square`` keeps an n×n map's cells square,
    ``selectable`` lets a click choose the cell the explainer shows."""
    width = kit.square_width(len(fig.data[0].y)) if square else "stretch"
    config = dict(
        PLOTLY_CONFIG, toImageButtonOptions={"format": "png", "scale": 2, "filename": f"attention_{key}"}
    )
    kwargs = {}
    if selectable and view.on_cell is not None:
        hook = view.on_cell
        chart_key = CHART_PREFIX + key
        kwargs = dict(on_select=lambda: hook(chart_key), selection_mode="points")
        heatmaps.add_click_targets(fig)
    if view.present:
        wide = key == "all_heads"
        tokens = view.trace.tokens if square or wide or key in SLIDE_TOKEN_ROWS else None
        fig = projector.projector_figure(fig, square=square, tokens=tokens, wide=wide)
        width = "stretch"  # the slide's chart box (presenter CSS) decides the height
        kwargs["height"] = "stretch"
    if view.chart_slot is not None:
        box = view.chart_slot
    elif view.present:  # a wide step's chart: a box whose height presenter mode's CSS ties to the window
        box = st.container(key=SLIDE_WIDE_KEY_PREFIX + key)
    else:
        box = contextlib.nullcontext()
    # theme=None: the figures carry base.PLAIN_TEMPLATE (Streamlit's look, without its per-rerun
    # rewrite of the whole figure in the browser).
    with box:
        kit.chart(fig, CHART_PREFIX + key, alt, width=width, config=config, theme=None, **kwargs)


# Feature maps whose rows get every token label on a slide (Q, K and V share a wide slide three ways).
SLIDE_TOKEN_ROWS = ("x", "head_out", "concat", "output")


def clickable_map(view: View, values, name: str, alt: str, bound: float | None = None, **kwargs) -> None:
    """An n×n score or weight map whose cells open the cell explainer, and its table (``kwargs``:
    kind, allowed for :func:`attention_ui.figures.heatmaps.attention_heatmap`; ``bound``: a signed
    map's colour scale runs from −bound to bound instead of its own largest |value|)."""
    tokens = view.trace.tokens
    if view.present and len(tokens) <= projector.SLIDE_TEXT_MAX_N:
        kwargs["show_text"] = True  # the projector keeps the numbers while they fit (projector.cell_font)
    fig = heatmaps.attention_heatmap(values, tokens, hover=view.hover, bound=bound, **view.axes, **kwargs)
    if view.cell is not None:
        playground_figures.outline_cell(fig, *view.cell)
    chart(view, fig, name, alt, square=True, selectable=True)
    table(view, lambda: tables.attention_table(values, tokens), name)


def table(view: View, make_frame: Callable[[], object], key: str) -> None:
    """The numbers behind a heatmap (the accessible alternative); files come from the page's one
    export menu (:mod:`attention_ui.playground.share`), not from a button per table.

    ``make_frame`` builds the DataFrame only when tables are shown (pandas is not even imported
    otherwise, which keeps the first page load ~0.4 s shorter).
    """
    if not view.show_tables:
        return
    kit.table(make_frame())


def _x(v: View) -> None:
    t, tr = v.t, v.trace
    no_position = tr.config is not None and not tr.config.positional and not v.example
    st.latex(step_formula(v, "x", step_latex(t, tr, "x", v.head, v.example)))
    if v.example:
        note(v, lambda: st.caption(t("playground.example_x_note")))
    elif no_position and "x" not in v.text:
        note(v, lambda: st.caption(t("playground.x_no_positional")))
    n, d_model = tr.X.shape
    shape_line(t, ("X", (n, d_model)))
    chart(
        v,
        heatmaps.feature_heatmap(tr.X, tr.tokens, **v.feat),
        "x",
        t("playground.alt_feature", name="X", n=n, d=d_model),
    )
    table(v, lambda: tables.feature_table(tr.X, tr.tokens), "x")


def _qkv(v: View) -> None:
    t, tr, k = v.t, v.trace, v.head
    n, d_model = tr.X.shape
    d_k, d_v = tr.Q.shape[2], tr.V.shape[2]
    st.latex(step_latex(t, tr, "qkv", k))
    shape_line(t, ("W^Q, W^K", (d_model, d_k)), ("W^V", (d_model, d_v)), ("Q, K", (n, d_k)), ("V", (n, d_v)))
    cols = st.columns(3)
    for col, (name, mat) in zip(cols, (("Q", tr.Q[k]), ("K", tr.K[k]), ("V", tr.V[k])), strict=True):
        with col:
            st.markdown(f"**{name}**")
            chart(
                v,
                heatmaps.feature_heatmap(mat, tr.tokens, plot_px=QKV_PLOT_PX, **v.feat),
                name.lower(),
                t(
                    "playground.alt_feature",
                    name=f"{name} ({t('playground.head_name', h=k)})",
                    n=n,
                    d=mat.shape[1],
                ),
            )
            table(v, lambda mat=mat: tables.feature_table(mat, tr.tokens), name.lower())


def _raw(v: View) -> None:
    t, tr, k = v.t, v.trace, v.head
    n, d_k = tr.n, tr.Q.shape[2]
    st.latex(step_latex(t, tr, "raw", k))
    shape_line(t, ("Q", (n, d_k)), ("K^\\top", (d_k, n)), ("QK^\\top", (n, n)))
    raw = tr.scores_raw[k]
    bound = shared_bound(v)
    clickable_map(v, raw, "raw", t("playground.alt_scores", what="QKᵀ", n=n), bound=bound)


def _scaled(v: View) -> None:
    t, tr, k = v.t, v.trace, v.head
    n = tr.n
    st.latex(step_formula(v, "scaled", step_latex(t, tr, "scaled", k, v.example)))
    shape_line(t, ("S'", (n, n)))
    raw, scaled = tr.scores_raw[k], tr.scores_scaled[k]
    summary = t("playground.scale_summary", divisor=f"{tr.divisor:.4g}", before=value_range(raw),
                after=value_range(scaled))  # fmt: skip
    note(v, lambda: st.markdown(summary))
    bound = shared_bound(v, draw_switch=False)
    if bound is not None:
        shared = t("playground.shared_scale_scaled", bound=f"{bound:.3g}", step=STEPS.index("raw") + 1)
        note(v, lambda: st.caption(shared))
    alt = t("playground.alt_scores", what=t("playground.step_scaled"), n=n)
    clickable_map(v, scaled, "scaled", alt, bound=bound)


def shared_bound(v: View, draw_switch: bool = True) -> float | None:
    """The colour bound raw and scaled scores share (the largest |score| of either, so neither map
    saturates), or None when the learner switched sharing off. Step 3 draws the switch."""
    shared = True
    if v.shared_scale_switch is not None:
        shared = (
            v.shared_scale_switch() if draw_switch else bool(st.session_state.get(SHARED_SCALE_KEY, True))
        )
    if not shared:
        return None
    k = v.head
    both = np.concatenate([v.trace.scores_raw[k].ravel(), v.trace.scores_scaled[k].ravel()])
    finite = np.abs(both[np.isfinite(both)])
    return float(finite.max()) if finite.size and finite.max() > 0 else None


def _mask(v: View) -> None:
    t, tr = v.t, v.trace
    n = tr.n
    st.latex(step_latex(t, tr, "mask", v.head))
    kind = tr.config.mask if tr.config is not None else "causal"
    summary = t("playground.mask_summary", kind=t(f"playground.mask_{kind.replace('+', '_')}"),
                masked=int((~tr.mask).sum()), total=n * n)  # fmt: skip
    if tr.mask.all():  # no chart below to wait for
        st.markdown(summary)
    else:
        note(v, lambda: st.markdown(summary))
    shape_line(t, ("M", (n, n)))
    if tr.mask.all() and v.present:  # a slide of its own: the map of zeros, said to be all zeros
        st.info(t("playground.present_mask_nothing_masked"))
    elif tr.mask.all():  # an all-zero map would look like a chart that failed to draw
        st.info(t("playground.mask_nothing_masked"))
        return
    chart(
        v,
        heatmaps.mask_heatmap(tr.mask, tr.tokens, hover=v.hover, **v.axes),
        "mask",
        t("playground.alt_mask", n=n),
        square=True,
    )
    table(v, lambda: tables.mask_table(tr.mask, tr.tokens), "mask")


def _masked(v: View) -> None:
    t, tr, k = v.t, v.trace, v.head
    n = tr.n
    st.latex(step_latex(t, tr, "masked", k))
    shape_line(t, ("S''", (n, n)))
    if tr.mask.all():  # the same map as the scaled scores: say so instead of drawing it twice
        st.info(t("playground.masked_nothing_masked", step=STEPS.index("scaled") + 1))
        if not v.present:  # a slide shows the (unchanged) map, so it is not empty
            return
    masked = tr.scores_masked[k]
    alt = t("playground.alt_scores", what=t("playground.step_masked"), n=n)
    clickable_map(v, masked, "masked", alt, allowed=tr.mask)


def _softmax(v: View) -> None:
    t, tr, k = v.t, v.trace, v.head
    n = tr.n
    st.latex(step_latex(t, tr, "softmax", k))
    shape_line(t, ("A", (n, n)))
    weights = tr.weights[k]
    if tr.fully_masked_rows.any():
        st.warning(
            t(
                "playground.warn_fully_masked",
                rows=", ".join(str(i) for i in np.flatnonzero(tr.fully_masked_rows)),
            )
        )
    clickable_map(
        v, weights, "weights", t("playground.alt_weights", head=k, n=n), kind="weights", allowed=tr.mask
    )


def _head_out(v: View) -> None:
    t, tr, k = v.t, v.trace, v.head
    n, d_v = tr.n, tr.V.shape[2]
    st.latex(step_latex(t, tr, "head_out", k))
    shape_line(t, ("A", (n, n)), ("V", (n, d_v)), (rf"\mathrm{{head}}_{{{k}}}", (n, d_v)))
    out = tr.head_outputs[k]
    chart(
        v,
        heatmaps.feature_heatmap(out, tr.tokens, **v.feat),
        "head_out",
        t("playground.alt_feature", name=t("playground.head_name", h=k), n=n, d=d_v),
        selectable=True,
    )
    table(v, lambda: tables.feature_table(out, tr.tokens), "head_out")


def _all_heads(v: View) -> None:
    t, tr = v.t, v.trace
    n, h = tr.n, tr.heads
    st.latex(step_latex(t, tr, "all_heads", v.head))
    shape_line(t, ("A", (h, n, n)))
    if all_heads_on_request(h, n) and v.all_heads_switch is not None and not v.all_heads_switch():
        st.caption(t("playground.all_heads_on_request", n=n, heads=h, step=STEPS.index("softmax") + 1))
        return
    chart(
        v,
        heatmaps.heads_small_multiples(
            tr.weights,
            tr.tokens,
            allowed=tr.mask,
            hover=v.hover,
            head_title=t("playground.head_name", h="{h}"),
        ),
        "all_heads",
        t("playground.alt_all_heads", heads=h, n=n),
    )
    if v.show_tables:
        for head in range(h):
            st.caption(t("playground.head_name", h=head))
            table(
                v, lambda head=head: tables.attention_table(tr.weights[head], tr.tokens), f"all_heads_{head}"
            )


def _concat(v: View) -> None:
    t, tr = v.t, v.trace
    n, h, d_v = tr.n, tr.heads, tr.V.shape[2]
    st.latex(step_latex(t, tr, "concat", v.head))
    shape_line(t, (r"\mathrm{Concat}", (n, h * d_v)))
    dim_names = [f"h{i}·{j}" for i in range(h) for j in range(d_v)]
    chart(
        v,
        heatmaps.feature_heatmap(tr.concat, tr.tokens, dim_names=dim_names, group_size=d_v, **v.feat),
        "concat",
        t("playground.alt_feature", name=t("playground.name_concat"), n=n, d=h * d_v),
    )
    table(v, lambda: tables.feature_table(tr.concat, tr.tokens, dim_names), "concat")


def _output(v: View) -> None:
    t, tr = v.t, v.trace
    n, h, d_v = tr.n, tr.heads, tr.V.shape[2]
    d_model = tr.X.shape[1]
    output = rf"\text{{{t('playground.name_output')}}}"
    st.latex(step_latex(t, tr, "output", v.head))
    shape_line(t, (r"\mathrm{Concat}", (n, h * d_v)), ("W^O", (h * d_v, d_model)), (output, (n, d_model)))
    chart(
        v,
        heatmaps.feature_heatmap(tr.output, tr.tokens, **v.feat),
        "output",
        t("playground.alt_feature", name=t("playground.name_output"), n=n, d=d_model),
    )
    table(v, lambda: tables.feature_table(tr.output, tr.tokens), "output")


BODIES: dict[str, Callable[[View], None]] = {
    "x": _x,
    "qkv": _qkv,
    "raw": _raw,
    "scaled": _scaled,
    "mask": _mask,
    "masked": _masked,
    "softmax": _softmax,
    "head_out": _head_out,
    "all_heads": _all_heads,
    "concat": _concat,
    "output": _output,
}


# Steps whose slide (presenter mode) keeps the page's layout: several charts, or one very wide one.
SLIDE_WIDE = ("qkv", "all_heads")
# their charts' boxes: the window's height less the text above
SLIDE_WIDE_KEY_PREFIX = TABLE.family("slide_wide") + "_"
SLIDE_CHART_KEY = TABLE.key("slide_chart")  # the slide's chart box, sized by presenter mode's CSS


def render_step(view: View, name: str, number: int, heading_level: str = "header") -> None:
    """One numbered step: heading, explanation, formula, shapes, chart, table, extra panel.

    ``heading_level``: ``"header"`` (the page, H2), ``"subheader"`` or ``"title"`` (a slide's H1).
    On a slide (``view.present``) the text sits left of a chart that fills the rest of the window.
    """
    title = step_title(view.t, name, number, view.text.get(name))
    getattr(st, heading_level)(title, anchor=f"step-{name}")
    if view.present and name not in SLIDE_WIDE:
        text_col, chart_col = st.columns([1, 1.9], gap="large")
        view = dataclasses.replace(view, chart_slot=chart_col.container(key=SLIDE_CHART_KEY))
    else:
        text_col = contextlib.nullcontext()
    with text_col:
        if name == "x" and name not in view.text and not view.example:
            explanation = x_explanation(view.t, view.trace.tokens, view.trace.n_pad)
        else:
            explanation = step_explain(view.t, name, view.text.get(name))
        if view.text_after is None:
            st.markdown(explanation)
        if not predict_view.before_step(view, name):  # practice mode: the learner predicts first
            return
        (view.draw_body or step_body)(view, name, explanation)


def step_body(view: View, name: str, explanation: str) -> None:
    """What follows a step's heading once it is shown: its formula, shapes, chart(s) and notes, the
    explanation when it goes after the chart, the page's extra panel and the step's code tab."""
    BODIES[name](view)
    for draw in view.notes:
        draw()
    view.notes.clear()
    if view.text_after is not None:  # a phone: the chart on the first screen, the text a tap away
        with st.expander(view.text_after, expanded=False):
            st.markdown(explanation)
    extra = view.after.get(name)
    if extra is not None:
        extra(view)
    code_view.step_code(view, name)  # the step's NumPy lines, made only while its tab is open


def render_all(
    make_view: Callable[[], View],
    head_selector: Callable[[], None],
    after_heads: Callable[[], None] | None = None,
    rest: Callable[[int, int], None] | None = None,
    tail: Callable[[View], None] | None = None,
) -> None:
    """Every step in computation order; the head selector sits before the first per-head step.

    With ``rest`` only the steps before the per-head block are drawn (step 1, the first screen) and
    ``rest(first, last)`` stands where steps ``first``–``last`` go (the playground's first view,
    :mod:`attention_ui.playground.first_screen`).

    The per-head steps (from Q/K/V to the head's output, the mask included) are one fragment:
    choosing another head or clicking a cell reruns only them, not the X, all-heads, concat and
    output charts, which do not depend on the head. ``make_view()`` builds the view for the head
    currently chosen; ``after_heads()`` runs at the end of the fragment (the page writes its URL).
    """
    view = make_view()
    for number, name in NUMBERED[: _HEADS.start]:
        render_step(view, name, number)
    if rest is not None:
        rest(NUMBERED[_HEADS.start][0], NUMBERED[-1][0])
        return
    _per_head_steps(make_view, head_selector, after_heads)
    for number, name in NUMBERED[_HEADS.stop :]:
        render_step(view, name, number)
    code_view.whole_program(view)
    if tail is not None:
        tail(view)


@st.fragment
def _per_head_steps(
    make_view: Callable[[], View], head_selector: Callable[[], None], after_heads: Callable[[], None] | None
) -> None:
    head_selector()
    view = make_view()  # after the selector: the head just chosen
    for number, name in NUMBERED[_HEADS]:
        render_step(view, name, number)
    if after_heads is not None:
        after_heads()


def step_latex(t, trace, name: str, head: int, example: bool = False) -> str:
    """The formula step ``name`` shows for ``head`` (LaTeX written here, numbers and catalog words;
    never user text): the page and the offline lesson (:mod:`attention_ui.takehome`) write the same."""
    k = head
    if name == "x":
        no_position = trace.config is not None and not trace.config.positional and not example
        return r"X \sim \mathcal{N}(0, 1)" if example else (r"X = E" if no_position else r"X = E + P")
    if name == "scaled":
        return scaled_latex(trace, example)
    if name == "mask":
        allowed, masked = t("playground.latex_allowed"), t("playground.latex_masked")
        return (
            rf"M_{{ij}} = \begin{{cases}} 0 & \text{{{allowed}}} \\ -\infty & \text{{{masked}}} \end{{cases}}"
        )
    if name == "output":
        return rf"\text{{{t('playground.name_output')}}} = \mathrm{{Concat}}(\dots)\, W^O"
    return {
        "qkv": rf"Q_{{{k}}} = X W^Q_{{{k}}},\quad K_{{{k}}} = X W^K_{{{k}}},\quad V_{{{k}}} = X W^V_{{{k}}}",
        "raw": rf"S = Q_{{{k}}} K_{{{k}}}^\top",
        "masked": r"S'' = S' + M",
        "softmax": r"A_{ij} = \frac{e^{S''_{ij}}}{\sum_{j'} e^{S''_{ij'}}}",
        "head_out": rf"\mathrm{{head}}_{{{k}}} = A V_{{{k}}}",
        "all_heads": r"A_0, A_1, \dots, A_{h-1}",
        "concat": r"\mathrm{Concat}(\mathrm{head}_0, \dots, \mathrm{head}_{h-1})",
    }[name]


def scaled_latex(trace, example: bool) -> str:
    """Step 4's formula: the rule with its symbol, then the value of the divisor on its own."""
    if example:
        return r"S' = \frac{S}{\sqrt{d_k}},\qquad \sqrt{d_k} = \sqrt{3} \approx 1.732"
    scale = trace.config.scale
    if scale == "sqrt":
        d_k = trace.config.head_dim_k
        shown = f"{trace.divisor:.4g}"
        rel = "=" if float(shown) == trace.divisor else r"\approx"  # √4 = 2, √8 ≈ 2.828
        return rf"S' = \frac{{S}}{{\sqrt{{d_k}}}},\qquad \sqrt{{d_k}} = \sqrt{{{d_k}}} {rel} {shown}"
    if scale == "none":
        return r"S' = \frac{S}{1} = S"
    return rf"S' = \frac{{S}}{{c}},\qquad c = {trace.divisor:g}"
