"""Heads at work: what a real decoder's heads do on the learner's sentence, tested (logit lens, direct
logit attribution, ablation and its sweep, induction and previous-token heads, attention sinks and
the StreamingLLM mask experiment, queries and keys in one picture, questions from these numbers).

Widgets (attention_ui/heads/settings.py) -> cached core calls (``attention_ui.heads.cached``: one pass per sentence,
everything else read from it or rerun from the ablated layer on) -> ``attention_ui.heads.views``
(one section per view) -> text from the ``heads`` catalog. A separate page, not sections of the
decoder page: that page is at its line budget and its rerun latency is measured against the
playground, and these views add a 30-second sweep and a 370-token experiment.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import heads as H
from attention_ui import kit
from attention_ui.heads import cached, questions, url, views
from attention_ui.heads.settings import PAGE, TABLE

DEFAULT_MODEL = {"ja": "gemma3"}  # by language, as on the decoder page; any other: "smollm2" (a URL's wins)
key = TABLE.key


def learner_settings() -> dict:
    """The random-weights playground's settings the learner has (its defaults otherwise)."""
    s = st.session_state
    return {
        "d_model": s.get(kit.LEARNER_D_MODEL, 16) if isinstance(s.get(kit.LEARNER_D_MODEL), int) else 16,
        "heads": s.get(kit.LEARNER_HEADS, 2) if isinstance(s.get(kit.LEARNER_HEADS), int) else 2,
        "seed": s.get(kit.LEARNER_SEED, 0) if isinstance(s.get(kit.LEARNER_SEED), int) else 0,
    }


def controls(t, config, p, m) -> None:
    with st.sidebar:
        st.header(t("heads.settings"))
        PAGE.widget(t, "text_area", "text", height=90, helped=True)
        if not PAGE.sentence_origin(t, key("text")):
            st.caption(t("heads.own_example"))
        fmt_layer = lambda x: t("heads.layer_option", layer=x)  # noqa: E731
        PAGE.widget(t, "selectbox", "layer", list(range(config.n_layers)), format_func=fmt_layer)
        fmt_head = lambda h: t("heads.head_option", h=h, g=int(config.kv_head_of[h]))  # noqa: E731
        PAGE.widget(t, "selectbox", "head", list(range(config.n_heads)), format_func=fmt_head, helped=True)
        PAGE.widget(
            t, "radio", "kind", list(H.ABLATIONS), format_func=lambda k: t(f"heads.kind_{k}"), helped=True
        )
        if p is not None:
            top = [c.id for c in H.top_tokens(p.logits, p.ids, m)]
            token = st.session_state.get(key("token"), -1)
            options = [-1, *top, *([token] if token not in (-1, *top) else [])]

            def fmt_tok(i: int) -> str:
                return (
                    t("heads.token_top")
                    if i == -1
                    else t("heads.token_option", label=m.label(p.ids, i), id=i)
                )

            PAGE.widget(t, "selectbox", "token", options, format_func=fmt_tok, helped=True)


def not_installed(t, model_key: str) -> None:
    st.info(t("heads.not_installed", model=H.MODEL_TITLES[model_key]))
    st.code(H.install_command(model_key), language="bash")


@PAGE.slides
def main() -> None:
    t = PAGE.start()
    st.session_state.setdefault(key("model"), DEFAULT_MODEL.get(t.lang, "smollm2"))
    ignored = url.read_url(st.session_state)
    with st.sidebar:
        PAGE.widget(t, "selectbox", "model", list(H.MODELS), format_func=H.MODEL_TITLES.get)
        # what is true of the model shown only (the page's intro names both)
        st.caption(t("heads.model_gemma3" if PAGE.value("model") == "gemma3" else "heads.model_smollm2"))
    PAGE.title(t)
    if ignored:
        st.info(t("heads.info_url_ignored", names=", ".join(ignored)))
    model_key = PAGE.value("model")
    if not H.is_available(model_key):
        not_installed(t, model_key)
        url.write_url(st.session_state)
        return
    with st.spinner(t("heads.loading")):
        with PAGE.guard(t, "heads model load") as loading:
            m = cached.model(model_key)
    if loading.failed:
        not_installed(t, model_key)
        return
    if st.session_state[key("token")] >= m.config.vocab_size:  # a Gemma token id kept after a switch
        st.session_state[key("token")] = -1
    text = PAGE.value("text") or ""
    p = None
    if text.strip():
        with PAGE.guard(t, "heads pass", known=((H.input_errors(), "heads.err_text"),)) as g:
            enc, p = cached.heads_pass(model_key, text)
        if g.failed:
            p = None
    controls(t, m.config, p, m)
    if not text.strip():
        st.error(t("heads.err_empty"))
    if p is None:
        url.write_url(st.session_state)
        return
    with PAGE.guard(t, "heads page", known=((H.input_errors(), "heads.err_text"),)):
        show(t, m, model_key, text, enc, p)
    url.write_url(st.session_state)


def show(t, m, model_key: str, text: str, enc, p) -> None:
    st.markdown(t("heads.tokens", n=p.n, limit=m.max_tokens))
    kit.show_tokens(p.labels)
    if enc.truncated:
        st.warning(t("heads.warn_truncated", total=enc.total_tokens, kept=enc.n))
    layer, head = int(st.session_state[key("layer")]), int(st.session_state[key("head")])
    kind, chosen = st.session_state[key("kind")], int(st.session_state[key("token")])
    lens = cached.lens(model_key, text)
    token = lens.target if chosen == -1 else chosen
    att = cached.attribution(model_key, text, token)
    ab = cached.ablation(model_key, text, layer, head, kind, token)
    # one section per presenter slide; the questions read the cached results, not the sections
    PAGE.section(views.section_lens, t, m, p, lens)
    PAGE.section(views.section_attribution, t, m, p, att)
    PAGE.section(views.section_ablation, t, m, p, ab)
    PAGE.section(views.section_sweep, t, m, p, model_key, text, kind, token, att)
    PAGE.section(views.section_induction, t, m, model_key)
    PAGE.section(views.section_sinks, t, m, p, model_key, text)
    PAGE.section(views.section_qk, t, m, p, model_key, text, learner_settings())
    ind = cached.induction(
        model_key, int(st.session_state[key("length")]), int(st.session_state[key("seed")])
    )
    first = cached.first_token(model_key, text)
    before = H.top_tokens(p.logits, p.ids, m, 1)[0]
    after = H.top_tokens(ab.logits, p.ids, m, 1)[0]
    esc = kit.escape_markdown
    items = [
        questions.lens_question(
            lens.first_top_layer, esc(m.label(p.ids, lens.target)), m.config.n_layers, seed=p.n
        ),
        questions.ablation_question(layer, head, before.id, after.id, esc(before.label), esc(after.label)),
        questions.induction_question(ind.loss_first, ind.loss_second),
        questions.sink_question(first, layer),
    ]
    PAGE.section(views.section_quiz, t, items)


main()
