"""Quiz: static questions from the bank plus computed ones from the core, shuffled by a seed.

Thin page: its settings (attention_ui/quiz/settings.py) -> ``attention_ui.quiz_bank`` (pure) -> widgets
through the page kit. Answers live in the session's ``answers`` (question id -> chosen display index), not
only in widget state, so they survive reruns, language switches and visits to other pages. The first
answer to a question counts; "retry the missed ones" clears just those and shows only them. The score
before the first retry round is kept (``first``) and shown beside the retry round's own score.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from attention_ui import kit, quiz_bank
from attention_ui.program import questions_view
from attention_ui.quiz.settings import PAGE, TABLE
from attention_ui.takehome import buttons as takehome

ROOT = Path(__file__).resolve().parents[1]
key = TABLE.key


@kit.cached
def cached_quiz(seed: int):
    return quiz_bank.build_quiz(seed)


def reset() -> None:
    s = st.session_state
    s[key("answers")] = {}
    s[key("retry")] = None
    s[key("first")] = None
    s[key("round")] += 1


def new_seed() -> None:
    st.session_state[key("seed")] = (int(st.session_state[key("seed")]) + 1) % (kit.SEED_RANGE[1] + 1)
    reset()


def start_retry(ids: list[str], first: tuple[int, int]) -> None:
    s = st.session_state
    if s.get(key("first")) is None:  # later retry rounds keep the first attempt's score
        s[key("first")] = tuple(first)
    s[key("retry")] = list(ids)
    s[key("answers")] = {q: a for q, a in s[key("answers")].items() if q not in ids}
    s[key("round")] += 1


def back_to_all() -> None:
    st.session_state[key("retry")] = None
    st.session_state[key("round")] += 1


def record(qid: str, radio: str) -> None:
    """Radio callback: keep the first answer to ``qid``."""
    value = st.session_state.get(radio)
    if value is not None and qid not in st.session_state[key("answers")]:
        st.session_state[key("answers")] = {**st.session_state[key("answers")], qid: int(value)}


def answered_choices(t, labels: list[str], correct: int, chosen: int) -> str:
    """The choices as a Markdown list: the right one marked ✅, a wrong pick marked ❌; small text, the
    size the radio showed them in, so answering does not change the options' font size."""
    lines = []
    for k, label in enumerate(labels):
        if k == correct:
            mark = "✅"
        elif k == chosen:
            mark = "❌"
        else:
            mark = "○"
        text = f"**{label}**" if k in (correct, chosen) else label
        if k == chosen:
            text += f" — {t('quiz.your_pick')}"
        lines.append(":small[" + f"{mark} {text}".replace("]", "\\]") + "]")
    return "  \n".join(lines)  # hard line breaks: one choice per line, no bullets beside the marks


def page_link(t, path: str) -> None:
    name = t(quiz_bank.PAGE_TITLE_KEYS[path])
    if (ROOT / path).exists():
        st.page_link(path, label=t("quiz.see_page", page=name), icon="👉")
    else:
        st.caption(t("quiz.page_not_ready", page=name))


def show_question(t, number: int, item, answers: dict) -> None:
    question = quiz_bank.worded(t, item)  # the words the SCORM and Moodle exports write, too
    labels = [choice.text for choice in question.choices]
    answered = item.qid in answers
    with st.container(border=True, key=key("box", item.qid)):
        # body text, not st.caption: the question number is content, and captions are 3.9:1 on white
        st.markdown(f"**{t('quiz.question_label', number=number)}** · {t('quiz.kind_' + item.kind)}")
        st.markdown(question.prompt)
        if not answered:
            radio = key("r", PAGE.value("round"), t.lang, item.qid)
            st.radio(
                t("quiz.your_answer"),
                list(range(item.n_choices)),
                index=None,
                format_func=lambda k: labels[k],
                key=radio,
                on_change=record,
                args=(item.qid, radio),
                label_visibility="collapsed",
            )
        else:  # answered: the choices become a fixed list, so no widget state can lose the answer
            st.markdown(answered_choices(t, labels, item.correct, answers[item.qid]))
        if answered:
            if answers[item.qid] == item.correct:
                st.success(t("quiz.correct"), icon="✅")
            else:
                st.error(t("quiz.wrong", answer=labels[item.correct]), icon="❌")
            st.markdown(question.explanation)
            page_link(t, item.link)


def main() -> None:
    t = PAGE.start()
    s = st.session_state
    s.setdefault(key("answers"), {})  # qid -> display index of the first answer (a new dict per session)
    with st.sidebar:
        st.header(t("quiz.settings"))
        PAGE.widget(t, "number_input", "seed", *kit.SEED_RANGE, step=1, helped=True, on_change=reset)
        st.button(t("quiz.new_seed"), key=key("new_seed"), on_click=new_seed)
        st.button(t("quiz.restart"), key=key("restart"), on_click=reset)
        # a teacher's files: the lesson and this quiz for a course platform (issue 45)
        with st.expander(t("takehome.course_files"), icon=":material/school:"):
            text, trace = takehome.learner_lesson(s, t)
            takehome.course_files(t, TABLE.key, trace, text, seed=int(s[key("seed")]), heading=False)

    PAGE.title(t)

    quiz = cached_quiz(int(s[key("seed")]))
    answers = s[key("answers")]
    retry = s[key("retry")]
    items = [it for it in quiz if retry is None or it.qid in retry]
    sc = quiz_bank.score(items, answers)
    missed = quiz_bank.missed_ids(quiz, answers)
    whole = quiz_bank.score(quiz, answers)

    first = s.get(key("first"))
    top = st.columns([1, 1, 1, 2] if first else [1, 1, 2], vertical_alignment="bottom")
    if first:
        top[0].metric(
            t("quiz.first_score"),
            t("quiz.score_value", correct=first[0], answered=first[1]),
            help=t("quiz.first_score_help"),
        )
        top = top[1:]
    score_label = t("quiz.retry_score") if retry is not None else t("quiz.score")
    top[0].metric(score_label, t("quiz.score_value", correct=sc.correct, answered=sc.answered))
    top[1].metric(t("quiz.answered"), t("quiz.answered_value", answered=sc.answered, total=sc.total))
    with top[2]:
        st.progress(
            sc.answered / sc.total if sc.total else 0.0,
            text=t("quiz.progress", answered=sc.answered, total=sc.total),
        )
    buttons = st.columns(2)
    buttons[0].button(
        t("quiz.retry", n=len(missed)),
        key=key("retry_btn"),
        on_click=start_retry,
        args=(missed, (whole.correct, whole.answered)),
        disabled=not missed,
        help=None if missed else t("quiz.retry_none"),
        width="stretch",
    )
    if retry is not None:
        buttons[1].button(t("quiz.back_to_all"), key=key("back"), on_click=back_to_all, width="stretch")
    if retry is not None:
        st.info(t("quiz.retry_mode", n=len(items)))
    if sc.total and sc.answered == sc.total:
        if sc.correct == sc.total:
            st.success(t("quiz.finished_all", total=sc.total))
        else:
            st.warning(t("quiz.finished", correct=sc.correct, total=sc.total))

    for number, item in enumerate(items, 1):
        show_question(t, number, item, answers)
    questions_view.quiz_section(t, TABLE)  # exam code questions on the learner's sentence, every option run


main()
