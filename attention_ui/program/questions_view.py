"""Exam code questions on a page: the program with its blank, four fragments, and after the answer
every fragment's consequence side by side (two columns; one under the other on a phone).

The quiz draws them in a section of its own (:func:`quiz_section`), the guided path one of them
(:func:`show_question`). Questions are cached per settings and sentence: asking runs 48 programs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from attention_core import AttentionConfig, AttentionConfigError, tokenize
from attention_core import codegen_questions as cq
from attention_core.config import MASK_KINDS
from attention_ui import kit
from attention_ui.program.consequences import LETTERS, consequences, why
from attention_ui.settings_table import Table

MAX_TOKENS = 12  # a question's sentence: every option runs on it, and its maps stay readable


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_questions(config: AttentionConfig, tokens: tuple[str, ...], seed: int) -> list[cq.CodeQuestion]:
    return cq.code_questions(config, tokens, seed)


def learner_settings(
    state, default_text: str, mask: str, pad: int
) -> tuple[AttentionConfig, tuple[str, ...]]:
    """The learner's sentence, d_model, heads and seed (the playground's, shared through the kit's
    context) with the mask and pads chosen here; the playground's defaults for anything unusable."""
    text = state.get(kit.LEARNER_TEXT) or default_text
    tokens = (
        tokenize(text, max_tokens=MAX_TOKENS).tokens or tokenize(default_text, max_tokens=MAX_TOKENS).tokens
    )
    values = {
        "d_model": state.get(kit.LEARNER_D_MODEL, 16),
        "heads": state.get(kit.LEARNER_HEADS, 2),
        "seed": state.get(kit.LEARNER_SEED, 0),
    }
    try:
        config = AttentionConfig(mask=mask, pad=pad, **values)
    except (AttentionConfigError, TypeError):
        config = AttentionConfig(mask=mask, pad=pad)
    return config, tokens


def show_question(
    t, number: int, q: cq.CodeQuestion, chosen: int | None, on_pick: Callable, key: str
) -> None:
    """One question: before the answer the fragments and a radio, after it every fragment's run."""
    with st.container(border=True, key=f"{key}_box"):
        st.markdown(f"**{t('code.q_title', number=number)}** · {t('code.q_' + q.template)}")
        st.code(q.program_with_blank(), language="python", height="content")
        st.caption(t("code.q_context_note"))
        if chosen is None:
            for i, option in enumerate(q.options):
                st.markdown(f"**{t('code.q_option', letter=LETTERS[i])}**")
                st.code("\n".join(option.fragment), language="python", height="content")
            st.radio(
                t("code.q_pick"),
                list(range(len(q.options))),
                index=None,
                format_func=lambda i: t("code.q_option", letter=LETTERS[i]),
                key=key,
                on_change=on_pick,
                args=(key,),
                horizontal=True,
            )
            return
        right = LETTERS[q.answer_index]
        if chosen == q.answer_index:
            st.success(t("code.q_right", letter=right), icon="✅")
        else:
            st.error(t("code.q_wrong", letter=right), icon="❌")
        st.markdown(t("code.q_consequences"))
        show_consequences(t, q, chosen, key)


def show_consequences(t, q: cq.CodeQuestion, chosen: int | None, key: str) -> None:
    """Every option's fragment and what it did, two per row."""
    for start in range(0, len(q.options), 2):
        columns = st.columns(2)
        for i, column in zip(range(start, start + 2), columns, strict=False):
            option = q.options[i]
            with column.container(border=True, key=f"{key}_opt_{i}"):
                mark = "✅" if i == q.answer_index else "❌"
                title = f"{mark} **{t('code.q_option', letter=LETTERS[i])}**"
                if i == chosen:
                    title += f" — {t('code.q_your_pick')}"
                st.markdown(title)
                st.code("\n".join(option.fragment), language="python", height="content")
                st.markdown("\n".join(f"- {line}" for line in consequences(t, q, option)))
                reason = why(t, option)
                if reason is not None:
                    st.markdown(reason)


def _pick(table: Table, key: str) -> None:
    """Radio callback: keep the first answer (quiz rule: the first answer counts)."""
    answers = st.session_state.setdefault(table.key("code_answers"), {})
    value = st.session_state.get(key)
    template = key.removeprefix(table.family("code_q") + "_")
    if value is not None and template not in answers:
        st.session_state[table.key("code_answers")] = {**answers, template: int(value)}


def _new_settings(table: Table) -> None:
    """Other settings ask other questions: the answers start over."""
    st.session_state[table.key("code_answers")] = {}


def quiz_section(t, table: Table) -> None:
    """The quiz's code questions on the learner's sentence (mask and [PAD]s chosen here); their keys
    are the quiz's ``table``'s (attention_ui/quiz/settings.py)."""
    s, key = st.session_state, table.key
    st.header(t("code.q_section"), anchor="code-questions")
    st.markdown(t("code.q_section_intro"))
    with st.expander(t("code.q_settings"), icon=":material/tune:"):
        st.caption(t("code.q_uses_context"))
        c1, c2 = st.columns(2)
        names = {m: t(f"playground.mask_{m.replace('+', '_')}") for m in MASK_KINDS}
        c1.selectbox(
            t("playground.mask"),
            MASK_KINDS,
            format_func=names.get,
            key=key("code_mask"),
            on_change=_new_settings,
            args=(table,),
        )
        pads = table.setting("code_pad").choices
        c2.selectbox(t("playground.pad"), pads, key=key("code_pad"), on_change=_new_settings, args=(table,))
    config, tokens = learner_settings(
        s, t("playground.default_text"), s[key("code_mask")], int(s[key("code_pad")])
    )
    kit.show_tokens(tokens + ("[PAD]",) * config.pad, config.pad)
    questions = cached_questions(config, tokens, int(s.get(key("seed"), 0)))
    if not questions:
        st.info(t("code.q_none"))
        return
    st.caption(t("code.q_count", count=len(questions)))
    answers = s.setdefault(key("code_answers"), {})
    for number, q in enumerate(questions, 1):
        show_question(t, number, q, answers.get(q.template), partial(_pick, table), key("code_q", q.template))


PATH_TEMPLATE = "mask_place"  # the guided path's mask stop asks where the mask goes, in code


def _path_pick(table: Table, key: str) -> None:
    value = st.session_state.get(key)
    if value is not None and st.session_state.get(table.key("code_answer")) is None:
        st.session_state[table.key("code_answer")] = int(value)


def path_question(t, table: Table) -> None:
    """The guided path's code question on the learner's sentence (causal mask and one [PAD]); its keys
    are the path's ``table``'s (attention_ui/path/settings.py)."""
    config, tokens = learner_settings(st.session_state, t("playground.default_text"), "causal+padding", 1)
    questions = [q for q in cached_questions(config, tokens, 0) if q.template == PATH_TEMPLATE]
    if not questions:
        return
    st.subheader(t("code.path_code_title"), anchor="path-code")
    chosen = st.session_state.get(table.key("code_answer"))
    show_question(t, 1, questions[0], chosen, partial(_path_pick, table), table.key("code_q"))
