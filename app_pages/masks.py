"""Lab "Masks": where the mask goes, the classic mistakes, and leakage measured.

Widgets (``masks_`` keys) -> :class:`MaskLabSettings` -> cached calls into ``attention_core.labs.masks``
(``mask_lab``, ``swap_leakage``, ``leakage_map``) -> builders in ``attention_ui.figures`` -> the
page kit's charts and tables. All text from the ``masks`` catalog.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from attention_core import PAD_TOKEN, tokenize
from attention_core.labs import masks as lab_masks
from attention_core.labs.masks import LAB_MASK_KINDS, METHODS, MaskLabSettings
from attention_ui import kit, practice, tables
from attention_ui.figures.base import AxisText
from attention_ui.masks import figures as fmk
from attention_ui.masks import lesson as masks_lesson
from attention_ui.masks.settings import MAX_TOKENS, PAD_RANGE, PAGE, TABLE, WINDOW_RANGE
from attention_ui.program import code_view
from attention_ui.takehome import buttons

THIRD = 185  # a map's plot width (px) in a third of 1366 px, bar below: 193 measured (a phone: 260)
key = TABLE.key

cached_lab = kit.cached(lab_masks.mask_lab)
cached_leakage = kit.cached(lab_masks.swap_leakage)
cached_leakage_map = kit.cached(lab_masks.leakage_map)


def kind_name(t, kind: str) -> str:
    return t("masks.kind_" + kind.replace("+", "_"))


def controls(t) -> None:
    st.header(t("masks.settings"))
    PAGE.widget(t, "text_area", "text", height=80, helped=True)
    PAGE.widget(t, "selectbox", "kind", LAB_MASK_KINDS, format_func=partial(kind_name, t), helped=True)
    c1, c2 = st.columns(2)
    PAGE.widget(t, "number_input", "pad", *PAD_RANGE, step=1, helped=True, where=c1)
    PAGE.widget(t, "number_input", "window", *WINDOW_RANGE, step=1, helped=True, where=c2)
    PAGE.seed_input(t)
    PAGE.widget(t, "toggle", "all", text="show_all")
    PAGE.tables_toggle(t)


def read_settings(t) -> MaskLabSettings | None:
    """The page's settings from the widgets, or None after saying what is wrong."""
    s = st.session_state
    tok = tokenize(s[key("text")] or "", max_tokens=MAX_TOKENS)
    if not tok.tokens:
        st.error(t("masks.err_empty"))
        return None
    PAGE.warn_truncated(t, tok)
    n_pad = PAGE.whole(t, key("pad"), t("masks.pad"), PAD_RANGE)
    if n_pad is None:
        return None
    if len(tok.tokens) + n_pad < 2:
        st.error(t("masks.err_short"))
        return None
    kit.show_tokens(tuple(tok.tokens) + (PAD_TOKEN,) * n_pad, n_pad)
    window = PAGE.whole(t, key("window"), t("masks.window"), WINDOW_RANGE)
    if window is None:
        return None
    seed = PAGE.whole(t, key("seed"), t("masks.seed"), kit.SEED_RANGE)
    if seed is None:
        return None
    kind = s[key("kind")] if s[key("kind")] in LAB_MASK_KINDS else "causal"
    return MaskLabSettings(tuple(tok.tokens), n_pad, kind, window, seed, int(s[key("head")]))


def section_masks(t, lab, hover) -> None:
    tokens, n, mask = lab.settings.tokens, len(lab.settings.tokens), lab.mask
    # three maps in a row (THIRD), colour bars below: every column named, cell numbers only where they fit
    axes = dict(hover=hover, query_title=t("masks.axis_query"), key_title=t("masks.axis_key"), plot_px=THIRD,
                colorbar_below=True)  # fmt: skip
    kit.opening(t("masks.h_mask"), t("masks.explain_mask"), masks_lesson.FORMULA)
    st.markdown(t("masks.allowed_set"))
    if PAGE.value("all"):
        names = [kind_name(t, m.kind) for m in lab.all_masks]
        fig = fmk.mask_panels_figure([m.allowed for m in lab.all_masks], names, tokens, hover=hover)
        PAGE.chart(fig, "all_masks", t("masks.alt_all_masks", n=n))
        st.caption(t("masks.caption_all", w=lab.settings.window, pads=lab.settings.n_pad))
        counts = {name: m.allowed_per_query for name, m in zip(names, lab.all_masks, strict=True)}
        PAGE.table(counts, index=tables.token_index(tokens), index_name=t("masks.col_visible"))
    st.markdown(masks_lesson.summary(t, lab, kind_name(t, mask.kind)))

    heads = {h: t("masks.head_name", h=h) for h in range(lab_masks.HEADS)}
    PAGE.widget(t, "radio", "head", list(heads), horizontal=True, format_func=heads.get, helped=True)
    if not practice.predict_view.masks_lab(t, lab):  # practice mode: predict before the maps
        return
    weights = lab.methods[0].effective_weights
    for column, (name, fig) in zip(st.columns(3), masks_lesson.maps(lab, **axes).items(), strict=True):
        column.markdown(f"**{t('masks.' + masks_lesson.TITLES[name])}**")
        with column:
            PAGE.chart(fig, name, t(f"masks.alt_{name}", n=n))
    PAGE.table(lambda: tables.mask_table(mask.allowed, tokens))
    PAGE.table(lambda: tables.attention_table(lab.masked_scores, tokens))
    PAGE.table(lambda: tables.attention_table(weights, tokens))
    code_view.masks_code(
        t, lab.settings, key("code")
    )  # the lines of these three maps, for the kinds the program writes


def section_mistakes(t, lab, hover) -> None:
    tokens, names = lab.settings.tokens, [t(f"masks.method_{m}") for m in METHODS]
    st.header(t("masks.h_mistakes"))
    st.markdown(t("masks.explain_mistakes"))
    if lab.mask.masked_cells == 0:
        st.info(t("masks.info_nothing_masked"))
    weights = [r.effective_weights for r in lab.methods]
    fig = fmk.panels_figure(weights, names, tokens, kind="weights", allowed=None, hover=hover, max_cols=2)
    PAGE.chart(fig, "methods", t("masks.alt_methods", n=len(tokens)))
    st.caption(t("masks.caption_methods"))
    for name, w in zip(names, weights, strict=True):
        if PAGE.tables_on:
            st.markdown(f"**{name}**")
        PAGE.table(lambda w=w: tables.attention_table(w, tokens))
    summary = {
        t("masks.col_row_sums"): [f"{r.row_sum_min:.4f} … {r.row_sum_max:.4f}" for r in lab.summary],
        t("masks.col_forbidden"): [fmk.sci(r.forbidden_weight, "0") for r in lab.summary],
        t("masks.col_diff"): [fmk.sci(r.max_diff, "0") for r in lab.summary],
    }
    PAGE.table(summary, index=names, index_name=t("masks.col_method"), always=True)
    st.markdown(t("masks.explain_zero_v"))
    st.latex(
        r"\sum_{j \in \mathcal{A}_i} \frac{e^{s_{ij}}}{Z_i}\, v_j"
        r"\;\ne\; \sum_{j \in \mathcal{A}_i} \frac{e^{s_{ij}}}{\sum_{j' \in \mathcal{A}_i} e^{s_{ij'}}}\, v_j"
    )
    st.markdown(t("masks.explain_renormalise"))
    st.latex(
        r"\frac{w_{ij}}{\sum_{j' \in \mathcal{A}_i} w_{ij'}}"
        r"= \frac{e^{s_{ij}}/Z_i}{\sum_{j' \in \mathcal{A}_i} e^{s_{ij'}}/Z_i}"
        r"= \frac{e^{s_{ij}}}{\sum_{j' \in \mathcal{A}_i} e^{s_{ij'}}},\qquad Z_i = \sum_{j'=0}^{n-1} e^{s_{ij'}}"
    )
    st.markdown(t("masks.renormalise_caveat"))


def section_leakage(t, settings: MaskLabSettings) -> None:
    tokens, n, leak_kind = settings.tokens, len(settings.tokens), settings.leak_kind
    names = {m: t(f"masks.method_{m}") for m in METHODS}
    st.header(t("masks.h_leak"))
    st.markdown(t("masks.explain_leak"))
    if leak_kind != settings.kind:
        st.info(t("masks.info_leak_causal", kind=kind_name(t, settings.kind)))
    if st.session_state[key("position")] not in range(1, n):
        st.session_state[key("position")] = min(3, n - 1)
    c1, c2 = st.columns(2)
    positions = {i: f"#{i} {tokens[i]}" for i in range(1, n)}
    PAGE.widget(t, "selectbox", "position", list(positions), format_func=positions.get, helped=True, where=c1)
    PAGE.widget(t, "text_input", "replacement", helped=True, where=c2)
    position = int(st.session_state[key("position")])
    replacement = (PAGE.value("replacement") or "").strip()
    if not replacement or len(replacement) > 40:
        st.error(t("masks.err_replacement"))
        return
    if replacement == tokens[position]:
        st.info(t("masks.info_same_token"))
    results = cached_leakage(settings, position, replacement)
    old, new = kit.escape_markdown(tokens[position]), kit.escape_markdown(replacement)
    st.markdown(t("masks.leak_setup", position=position, old=old, new=new, kind=kind_name(t, leak_kind)))
    fig = fmk.leakage_bars(
        {r.method: r.moved for r in results},
        names,
        tokens,
        position,
        zero_label=t("masks.zero_exact"),
        axes=AxisText(t("masks.axis_earlier"), t("masks.axis_moved"), t("masks.title_leak_bars")),
    )
    PAGE.chart(fig, "leak_bars", t("masks.alt_leak_bars", position=position))
    st.caption(t("masks.caption_leak_bars"))
    verdicts = {
        t("masks.col_max_earlier"): [fmk.sci(r.max_earlier, "0.0") for r in results],
        t("masks.col_exact"): [t("masks.yes") if r.earlier_unchanged else t("masks.no") for r in results],
        t("masks.col_verdict"): [t(f"masks.verdict_{r.verdict}") for r in results],
    }
    PAGE.table(verdicts, index=list(names.values()), index_name=t("masks.col_method"), always=True)
    moved = {names[r.method]: [fmk.sci(v, "0.0") for v in r.moved] for r in results}
    PAGE.table(moved, index=tables.token_index(tokens))
    st.markdown(t("masks.explain_leak_result"))

    st.subheader(t("masks.h_matrix"))
    st.markdown(t("masks.explain_matrix"))
    PAGE.widget(t, "selectbox", "matrix_method", METHODS, format_func=names.get)
    method = PAGE.value("matrix_method")
    with st.spinner(t("masks.computing")):
        lm = cached_leakage_map(settings, method)
    fig = fmk.leakage_heatmap(
        lm.moved,
        tokens,
        zero_label=t("masks.zero_cell"),
        changed_title=t("masks.axis_changed"),
        output_title=t("masks.axis_output"),
    )
    alt = t("masks.alt_leak_matrix", method=names[method], leaks=lm.total_leaks)
    PAGE.chart(fig, "leak_matrix", alt, width=kit.square_width(n))
    st.markdown(t("masks.matrix_summary", method=names[method], leaks=lm.total_leaks, cells=n * (n - 1) // 2))
    PAGE.table(lambda: tables.labelled_table(lm.moved, tokens, tokens, fmt=lambda v: fmk.sci(v, "0.0")))


@PAGE.slides
def main() -> None:
    t = PAGE.open(controls)
    settings = read_settings(t)
    if settings is None:
        return
    with PAGE.guard(t, "mask lab") as run:
        lab = cached_lab(settings)
        hover = PAGE.hover(t)
        PAGE.section(section_masks, t, lab, hover)
        PAGE.section(section_mistakes, t, lab, hover)
        PAGE.section(section_leakage, t, settings)
    if run.failed:
        return
    with st.sidebar:  # the lesson: this section, then every step on the learner's sentence (issue 45)
        section = lambda: masks_lesson.section(t, lab, hover, kind_name(t, lab.mask.kind))  # noqa: E731
        buttons.lab_lesson_button(t, key("dl_lesson"), "app.nav_masks", section)
    PAGE.section(PAGE.takeaway, t)


main()
