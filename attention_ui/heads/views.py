"""The heads page's sections, one per view (one presenter slide each): each reads cached core results
(:mod:`.cached`), draws with :mod:`attention_ui.heads.figures` and says what the numbers show."""

from __future__ import annotations

import math

import streamlit as st

from attention_core.labs import heads as H
from attention_ui import kit
from attention_ui.figures import decoder as fdc
from attention_ui.figures.base import AxisText
from attention_ui.heads import figures as fh

from . import cached, questions
from .settings import PAGE, TABLE

key = TABLE.key
ATTRIBUTION_TOL = 1e-4  # the parts must add up to the logit within this (float rounding only)


def _titles(t) -> dict:
    return dict(
        layer_title=t("heads.axis_layer"), head_title=t("heads.axis_head"), kv_title=t("heads.axis_kv")
    )


def pick_from(chart_key: str, n_layers: int, n_heads: int):
    """An on_select callback: a click on a head map selects that layer and head."""

    def pick() -> None:
        event = st.session_state.get(chart_key)
        try:
            points = event["selection"]["points"]
        except (KeyError, TypeError):
            return
        picked = fdc.picked_head(points[0], n_layers, n_heads) if points else None
        if picked is not None:
            st.session_state[key("layer")], st.session_state[key("head")] = picked

    return pick


def clickable_map(t, grid, name: str, value_title: str, config, *, signed: bool = False) -> None:
    sel = (int(st.session_state[key("layer")]), int(st.session_state[key("head")]))
    fig = fh.head_map(grid, sel, value_title=value_title, signed=signed, kv_head_of=config.kv_head_of.tolist(),
                      **_titles(t))  # fmt: skip
    PAGE.chart(fig, name, t("heads.alt_map", what=value_title), on_select=pick_from(key("chart", name),
               config.n_layers, config.n_heads), selection_mode="points")  # fmt: skip


def attribution_adds_up(att: H.Attribution, tol: float = ATTRIBUTION_TOL) -> bool:
    """The check the page states: the parts add up to the model's own logit."""
    return abs(att.total - att.model_logit) <= tol


def _tok(label: str) -> str:
    return kit.escape_markdown(label)


# --- 1. logit lens ----------------------------------------------------------------------------------


def section_lens(t, m, p, lens: H.LogitLens) -> None:
    st.header(t("heads.h_lens"))
    st.markdown(t("heads.explain_lens"))
    target = m.label(p.ids, lens.target)
    axes = AxisText(t("heads.axis_after_layer"), t("heads.axis_p", token=target))
    fig = fh.lens_figure(lens.target_p, axes=axes, name=target)
    PAGE.chart(fig, "lens", t("heads.alt_lens", token=target))
    last = m.config.n_layers - 1
    says = "heads.lens_summary_last" if lens.first_top_layer == last else "heads.lens_summary"
    st.markdown(t(says, token=_tok(target), layer=lens.first_top_layer, last=last,
                  p0=f"{lens.target_p[0]:.4f}", plast=f"{lens.target_p[-1]:.4f}", rank0=int(lens.target_rank[0])))  # fmt: skip
    rows = {
        t("heads.col_rank", r=r + 1): [m.label(p.ids, int(i)) for i in lens.top_ids[:, r]]
        for r in range(H.TOP_K)
    }
    rows[t("heads.col_p_top")] = [f"{v:.3f}" for v in lens.top_p[:, 0]]
    PAGE.table(kit.frame(rows, index=list(range(m.config.n_layers)), index_name=t("heads.axis_after_layer")),
               "lens", always=True)  # fmt: skip


# --- 2. attribution ---------------------------------------------------------------------------------


def section_attribution(t, m, p, att: H.Attribution) -> None:
    st.header(t("heads.h_dla"))
    st.markdown(t("heads.explain_dla"))
    if m.config.post_norms:  # Gemma: the post-attention and post-FFN norms, frozen too
        st.markdown(t("heads.dla_gemma", d=m.config.d_model))
    token = m.label(p.ids, att.token)
    clickable_map(t, att.heads, "dla", t("heads.value_dla", token=token), m.config, signed=True)
    best = H.top_head(att.heads)
    gap = abs(att.total - att.model_logit)
    says = "heads.dla_sum_ok" if attribution_adds_up(att) else "heads.dla_sum_bad"
    st.markdown(t(says, token=_tok(token), count=att.heads.size, heads=f"{att.heads.sum():.4f}", ffn=f"{att.ffn.sum():.4f}",
                  emb=f"{att.embedding:.4f}", total=f"{att.total:.4f}", logit=f"{att.model_logit:.4f}",
                  gap=f"{gap:.1e}", tol=f"{ATTRIBUTION_TOL:.0e}"))  # fmt: skip
    st.markdown(t("heads.dla_best", layer=int(best[0]), head=int(best[1]), value=f"{att.heads.max():.4f}",
                  ffn_layer=H.top_head(att.ffn[:, None])[0], ffn_value=f"{att.ffn.max():.4f}"))  # fmt: skip


# --- 3. ablation ------------------------------------------------------------------------------------


def section_ablation(t, m, p, ab: H.Ablation) -> None:
    st.header(t("heads.h_ablation", layer=ab.layer, head=ab.head))
    st.markdown(t(f"heads.explain_ablation_{ab.kind}"))
    if m.config.post_norms:  # Gemma: knocking a head out also rescales the others (post-attention norm)
        st.markdown(t("heads.ablation_gemma"))
    before = H.top_tokens(p.logits, p.ids, m)
    after = H.top_tokens(ab.logits, p.ids, m)
    ids = list(dict.fromkeys([c.id for c in before] + [c.id for c in after]))
    pb, pa = H.probabilities(p.logits), H.probabilities(ab.logits)
    fig = fh.before_after([m.label(p.ids, i) for i in ids], pb[ids], pa[ids], before_name=t("heads.before"),
                          after_name=t("heads.after"), axes=AxisText(t("heads.axis_prob"), t("heads.axis_candidate")))  # fmt: skip
    PAGE.chart(fig, "ablation", t("heads.alt_ablation", layer=ab.layer, head=ab.head))
    token = m.label(p.ids, ab.token)
    says = "heads.ablation_same" if before[0].id == after[0].id else "heads.ablation_changed"
    st.markdown(t(says, layer=ab.layer, head=ab.head, before=_tok(before[0].label), after=_tok(after[0].label),
                  kl=f"{ab.kl:.5f}", token=_tok(token), pb=f"{ab.p_before:.4f}", pa=f"{ab.p_after:.4f}",
                  dp=f"{ab.dp:+.4f}"))  # fmt: skip


def section_sweep(t, m, p, model_key: str, text: str, kind: str, token: int, att: H.Attribution) -> None:
    st.header(t("heads.h_sweep"))
    st.markdown(t("heads.explain_sweep", heads=m.config.n_layers * m.config.n_heads, n=p.n))
    PAGE.widget(t, "toggle", "sweep")
    if not PAGE.value("sweep"):
        return
    store_key = (model_key, text, kind, token)
    maps = cached.sweep_store().get(store_key)
    if maps is None:
        total = m.config.n_layers * m.config.n_heads
        results = kit.progress(
            H.sweep(p, m.weights, kind, token), total, running=t("heads.sweep_running"),
            step=lambda k, r: t("heads.sweep_step", k=k, total=total), done=t("heads.sweep_done"),
            failed=t("heads.sweep_failed"),
        )  # fmt: skip
        if len(results) != total:
            return
        maps = H.sweep_maps(results, m.config)
        cached.remember_sweep(store_key, maps)
    sharp = cached.sharpness(model_key, text)
    c1, c2, c3 = st.columns(3)
    with c1:
        clickable_map(t, maps.kl, "sweep", t("heads.value_kl"), m.config)
    with c2:
        clickable_map(t, sharp, "sharp", t("heads.value_sharp"), m.config)
    with c3:
        clickable_map(t, att.heads, "dla2", t("heads.value_dla_short"), m.config, signed=True)
    rho = H.spearman(sharp, maps.kl)
    best, sharpest = H.top_head(maps.kl), H.top_head(sharp)
    st.markdown(t("heads.sweep_summary", rho="—" if math.isnan(rho) else f"{rho:.2f}", n=p.n,
                  layer=int(best[0]), head=int(best[1]), kl=f"{maps.kl.max():.4f}", slayer=int(sharpest[0]),
                  shead=int(sharpest[1]), sharp=f"{sharp.max():.3f}", skl=f"{maps.kl[sharpest[0], sharpest[1]]:.4f}"))  # fmt: skip


# --- 4. induction -----------------------------------------------------------------------------------


def section_induction(t, m, model_key: str) -> H.Induction:
    st.header(t("heads.h_induction"))
    st.markdown(t("heads.explain_induction"))
    if m.bos_id is not None:
        st.markdown(t("heads.induction_bos"))
    c1, c2 = st.columns(2)
    lo, hi = H.INDUCTION_LENGTH
    PAGE.widget(t, "slider", "length", lo, hi, where=c1)
    PAGE.widget(t, "number_input", "seed", *kit.SEED_RANGE, step=1, where=c2)
    length, seed = int(st.session_state[key("length")]), int(st.session_state[key("seed")])
    res = cached.induction(model_key, length, seed)
    c1, c2 = st.columns(2)
    with c1:
        clickable_map(t, res.induction, "induction", t("heads.value_induction"), m.config)
    with c2:
        clickable_map(t, res.previous, "previous", t("heads.value_previous"), m.config)
    li, hi_ = H.top_head(res.induction)
    pl, ph = H.top_head(res.previous)
    # a uniform head's weight on one key of the second copy: 1/(keys it sees), <bos> among them if read
    bos = m.bos_id is not None
    st.markdown(t("heads.induction_summary_bos" if bos else "heads.induction_summary", layer=int(li),
                  head=int(hi_), score=f"{res.induction.max():.3f}", player=int(pl), phead=int(ph),
                  pscore=f"{res.previous.max():.3f}", m=length, uniform=f"{1 / (length + 1 + bos):.3f}"))  # fmt: skip
    causal = H.window_allowed(2 * length, 2 * length)
    fig = fdc.group_weight_maps(res.weights[li], [int(hi_)], m.labels(res.ids), causal, title="",
                                query_title=t("heads.axis_query"), key_title=t("heads.axis_key"))[0]  # fmt: skip
    PAGE.chart(fig, "stripe", t("heads.alt_stripe", layer=int(li), head=int(hi_)))
    series = {"first": res.losses[: length - 1], "second": res.losses[length:]}
    names = {"first": t("heads.copy_first"), "second": t("heads.copy_second")}
    fig = fh.loss_lines(
        series, names, axes=AxisText(t("heads.axis_in_copy"), t("heads.axis_loss")), x_start=1
    )
    PAGE.chart(fig, "copies", t("heads.alt_copies"))
    st.markdown(t("heads.copies_summary", first=f"{res.loss_first:.2f}", second=f"{res.loss_second:.2f}",
                  m=length, last=length - 1))  # fmt: skip
    return res


# --- 5. sinks ---------------------------------------------------------------------------------------


def section_sinks(t, m, p, model_key: str, text: str):
    st.header(t("heads.h_sinks"))
    st.markdown(t("heads.explain_sinks"))
    first = cached.first_token(model_key, text)
    clickable_map(t, first, "first", t("heads.value_first"), m.config)
    st.markdown(t("heads.sinks_summary", half=int((first > 0.5).sum()), total=first.size, n=p.n,
                  mean=f"{first.mean():.3f}", uniform=f"{H.uniform_first_weight(p.n):.3f}"))  # fmt: skip
    st.subheader(t("heads.h_masks"))
    st.markdown(t("heads.explain_masks", sinks=H.SINK_TOKENS))
    local = [w for w in m.config.layer_windows if w is not None] if m.config.layer_windows else []
    if local:  # Gemma's local layers: each run's mask AND the layer's own window
        n_long = cached.long_text_tokens(model_key)
        says = "heads.masks_gemma" if n_long <= min(local) else "heads.masks_gemma_long"
        st.markdown(t(says, local=len(local), layers=m.config.n_layers, window=min(local), n=n_long))
    lo, hi = H.WINDOW_RANGE
    PAGE.widget(t, "slider", "window", lo, hi, step=8)
    PAGE.widget(t, "toggle", "masks")
    if PAGE.value("masks"):
        window = int(st.session_state[key("window")])
        with st.spinner(t("heads.masks_running")):
            exp = cached.mask_experiment(model_key, window)
        names = {r: t(f"heads.run_{r}", w=window, s=H.SINK_TOKENS) for r in H.MASK_RUNS}
        axes = AxisText(t("heads.axis_position"), t("heads.axis_loss"))
        fig = fh.loss_lines({r: exp.losses[r] for r in H.MASK_RUNS}, names, axes=axes, marker_x=window,
                            marker_name=t("heads.marker_window"))  # fmt: skip
        PAGE.chart(fig, "masks", t("heads.alt_masks", w=window))
        means = {r: f"{exp.mean_beyond(r):.3f}" for r in H.MASK_RUNS}
        worse = exp.mean_beyond("window") > exp.mean_beyond("sinks")
        st.markdown(t("heads.masks_summary", w=window, n=len(exp.ids), last=len(exp.ids) - 2, **means,
                      verdict=t("heads.verdict_worse" if worse else "heads.verdict_not_worse")))  # fmt: skip
    st.markdown(t("heads.masks_honest"))
    return first


# --- 6. queries and keys ----------------------------------------------------------------------------


def section_qk(t, m, p, model_key: str, text: str, learner: dict) -> None:
    st.header(t("heads.h_qk"))
    st.markdown(t("heads.explain_qk"))
    sources = ["decoder", "random"]
    PAGE.widget(t, "radio", "qk_source", sources, format_func=lambda s: t(f"heads.qk_{s}"), horizontal=True)
    layer, head = int(st.session_state[key("layer")]), int(st.session_state[key("head")])
    if PAGE.value("qk_source") == "random":
        tokens, config, h, pic = cached.qk_random(
            text, learner["d_model"], learner["heads"], learner["seed"], head
        )
        st.markdown(
            t("heads.qk_random_note", d_model=config.d_model, heads=config.heads, seed=config.seed, h=h)
        )
        labels = tokens
    else:
        pic = cached.qk_decoder(model_key, text, layer, head)
        st.markdown(t("heads.qk_decoder_note", layer=layer, head=head, kv=int(m.config.kv_head_of[head])))
        labels = p.labels
    fig = fh.qk_scatter(pic.queries, pic.keys, pic.strongest, labels, query_name=t("heads.query_name"),
                        key_name=t("heads.key_name"), axes=AxisText(t("heads.axis_pc1"), t("heads.axis_pc2")))  # fmt: skip
    PAGE.chart(fig, "qk", t("heads.alt_qk"))
    # query 0's own key is the first token's: it is counted apart, so no query is counted twice
    later = [(i, int(j)) for i, j in enumerate(pic.strongest) if i > 0]
    own, first = sum(j == i for i, j in later), sum(j == 0 for _, j in later)
    st.markdown(t("heads.qk_summary", e1=f"{pic.explained[0] * 100:.0f}", e2=f"{pic.explained[1] * 100:.0f}",
                  own=own, rest=len(later), first=first))  # fmt: skip


# --- 7. questions -----------------------------------------------------------------------------------


def section_quiz(t, items: list[questions.Question]) -> None:
    st.header(t("heads.h_quiz"))
    kit.computed_quiz(t, "heads", TABLE.family("q"), items)
