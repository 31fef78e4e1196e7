"""The guided path's Streamlit side: progress between session and URL, one stop, the summary.

The route, its questions and the URL format are in :mod:`attention_ui.path.path`; each
question is asked with :func:`attention_ui.practice.predict_view.ask` (asked whatever the
practice mode says). Its session keys are declared in :mod:`attention_ui.path.settings`.
"""

from __future__ import annotations

import streamlit as st

from attention_core import predict
from attention_core.exercise import generate_exercise
from attention_ui import kit
from attention_ui.figures import heatmaps
from attention_ui.path import path
from attention_ui.path.settings import TABLE
from attention_ui.practice import predict_view
from attention_ui.program import questions_view

STOP_KEY, SEED_KEY, URL_KEY = TABLE.key("stop"), TABLE.key("seed"), TABLE.key("url_seen")
MARK_ICONS = {"right": "✅", "wrong": "❌", "skipped": "⏭️", "open": "⬜"}


def sync_from_url() -> None:
    """On the first run, or when the URL changed under the page, take the progress the URL holds."""
    params = st.query_params.to_dict()
    if st.session_state.get(URL_KEY) == params:
        return
    progress = path.read_progress(params)
    st.session_state[SEED_KEY] = progress.seed
    st.session_state[STOP_KEY] = progress.stop
    for q, response in zip(path.all_questions(progress.seed), progress.responses, strict=True):
        if response is not None:
            predict_view.store(q, response)
    st.session_state[URL_KEY] = params


def current() -> path.Progress:
    seed = st.session_state.get(SEED_KEY, 0)
    seed = seed if isinstance(seed, int) and 0 <= seed <= kit.SEED_RANGE[1] else 0
    stop = st.session_state.get(STOP_KEY, 1)
    stop = stop if isinstance(stop, int) and 1 <= stop <= path.SUMMARY else 1
    responses = tuple(predict_view.stored(q) for q in path.all_questions(seed))
    return path.Progress(seed, stop, responses)


def sync_to_url(progress: path.Progress, lang: str) -> None:
    """The progress (and the language, so a reload keeps it) into the address."""
    params = path.write_params(progress) | {"lang": lang}
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
    st.session_state[URL_KEY] = params


def go(stop: int) -> None:
    st.session_state[STOP_KEY] = stop


def progress_line(t, progress: path.Progress) -> None:
    questions = path.all_questions(progress.seed)
    marks = path.marks(questions, progress.responses)
    right = marks.count("right")
    st.progress(
        min(progress.stop - 1, len(path.STOPS)) / len(path.STOPS),
        text=t("path.path_progress", right=right, total=len(questions)),
    )


def exercise_tables(t, ex) -> None:
    c1, c2 = st.columns(2)
    for column, name, matrix in ((c1, "Q", ex.Q), (c2, "K", ex.K)):
        with column:
            st.markdown(f"**{name}**")
            kit.table(
                {f"{c + path.FIRST_NUMBER}": [int(v) for v in matrix[:, c]] for c in range(matrix.shape[1])},
                index=path.key_labels(ex.n),
            )


def reveal(t, stop: path.Stop, ex) -> None:
    """The map the stop's questions were about, once they are answered."""
    labels = path.key_labels(ex.n)
    axes = dict(query_title=t("path.axis_query"), key_title=t("path.axis_key"))
    if stop.sid == "scores":
        fig = heatmaps.attention_heatmap(ex.scores, labels, show_text=True, **axes)
        kit.chart(
            fig, TABLE.key("chart", "scores"), t("path.alt_scores", n=ex.n), width=kit.square_width(ex.n)
        )
    elif stop.sid in ("softmax", "mask"):
        allowed = ex.allowed if stop.sid == "mask" else None
        fig = heatmaps.attention_heatmap(
            ex.weights, labels, kind="weights", allowed=allowed, show_text=True, **axes
        )
        kit.chart(
            fig, TABLE.key("chart", stop.sid), t("path.alt_weights", n=ex.n), width=kit.square_width(ex.n)
        )
    else:
        n = predict_view.COST_N
        st.markdown(
            t(
                "path.memory_reveal",
                n=n,
                n2=2 * n,
                before=predict.score_matrix_bytes(n),
                after=predict.score_matrix_bytes(2 * n),
            )
        )


def render_stop(t, progress: path.Progress) -> None:
    stop = path.STOPS[progress.stop - 1]
    st.header(
        t(
            "path.path_stop",
            number=progress.stop,
            total=len(path.STOPS),
            name=t(f"path.stop_{stop.sid}_title"),
        )
    )
    asked = len(stop.questions)
    st.caption(t("path.path_stop_questions", count=asked, all=sum(len(s.questions) for s in path.STOPS)))
    st.markdown(t(f"path.stop_{stop.sid}_goal"))
    ex = generate_exercise(progress.seed, "causal" if stop.sid == "mask" else "none")
    if stop.sid != "cost":
        st.caption(t("path.path_exercise", seed=progress.seed, n=ex.n, d_k=ex.d_k))
        exercise_tables(t, ex)
    if predict_view.ask_all(t, path.stop_questions(stop, progress.seed), always=True):
        reveal(t, stop, ex)
    if stop.sid == "mask":  # the same trap as code: where the mask goes, every fragment run
        questions_view.path_question(t, TABLE)
    st.page_link(stop.page, label=t(f"path.stop_{stop.sid}_link"), icon=":material/arrow_forward:")


def nav_buttons(t, progress: path.Progress) -> None:
    buttons = []
    if progress.stop > 1:
        buttons.append((TABLE.key("back"), "path.path_back", progress.stop - 1, "secondary"))
    if progress.stop < path.SUMMARY:
        label = "path.path_next" if progress.stop < len(path.STOPS) else "path.path_to_summary"
        buttons.append((TABLE.key("next"), label, progress.stop + 1, "primary"))
    for column, (key, label, stop, kind) in zip(st.columns(4), buttons, strict=False):
        column.button(t(label), key=key, on_click=go, args=(stop,), type=kind)


def render_summary(t, progress: path.Progress) -> None:
    st.header(t("path.summary_title"))
    questions = path.all_questions(progress.seed)
    marks = path.marks(questions, progress.responses)
    st.markdown(t("path.summary_line", right=marks.count("right"), total=len(questions)))
    stop_of = [s for s in path.STOPS for _ in s.questions]
    rows = {
        t("path.col_stop"): [t(f"path.stop_{s.sid}_title") for s in stop_of],
        t("path.col_question"): [t(f"path.short_{q.qid}") for q in questions],
        t("path.col_result"): [f"{MARK_ICONS[m]} {t(f'path.mark_{m}')}" for m in marks],
    }
    kit.table(rows, key=TABLE.key("table", "summary"), hide_index=True)
    st.markdown(t("path.summary_share"))
