"""Training lab: a tiny Transformer learns a task in NumPy while the learner watches.

Widgets (declared with their defaults and ranges in ``attention_ui.training.settings``) -> ``TrainSettings``
(the core checks them) -> a run in a worker process (``attention_ui.training.jobs``; finished runs
kept per settings) -> the sections of ``attention_ui.training.views`` and the experiments of
``attention_ui.training.experiments_view``. Every message comes from the ``training`` catalog.
"""

from __future__ import annotations

import streamlit as st

from attention_core.training.train import DEFAULT_STEPS
from attention_ui import kit
from attention_ui.training import cached, experiments_view, url, views
from attention_ui.training.jobs import TRAIN
from attention_ui.training.settings import (
    D_K_RANGE,
    D_MODEL_RANGE,
    DIVISOR_RANGE,
    HEADS_RANGE,
    LAYERS_RANGE,
    LR_RANGE,
    MASKS,
    MAX_TEXT_CHARS,
    PAGE,
    SCALES,
    STEPS_RANGE,
    TABLE,
    TASK_VALUES,
    TASKS,
    read_settings,
    uses_mask_choice,
)

key = TABLE.key
VALUE_KEYS = ("task", "text", "layers", "heads", "d_model", "d_k", "scale", "divisor", "mask", "positions", "ffn",
              "lr", "steps", "seed")  # fmt: skip


def task_changed() -> None:
    """A new task starts from its own number of steps (the one that reaches its targets)."""
    st.session_state[key("steps")] = DEFAULT_STEPS[PAGE.value("task")]


def controls(t) -> None:
    with st.sidebar:
        st.header(t("training.settings"))
        PAGE.widget(t, "selectbox", "task", list(TASKS), format_func=lambda k: t(f"training.task_{k}"),
                    on_change=task_changed, helped=True)  # fmt: skip
        st.caption(t(f"training.task_{PAGE.value('task')}_about", **TASK_VALUES[PAGE.value("task")]))
        if PAGE.value("task") == "text":
            PAGE.widget(t, "text_area", "text", height=80, max_chars=MAX_TEXT_CHARS,
                        help=t("training.text_help", limit=MAX_TEXT_CHARS))  # fmt: skip
            PAGE.sentence_origin(t, key("text"))
        else:
            st.caption(t("training.own_example"))
        c1, c2 = st.columns(2)
        PAGE.widget(t, "number_input", "layers", *LAYERS_RANGE, step=1, where=c1)
        PAGE.widget(t, "number_input", "heads", *HEADS_RANGE, step=1, where=c2)
        c1, c2 = st.columns(2)
        PAGE.widget(t, "number_input", "d_model", *D_MODEL_RANGE, step=4, label="d_model", where=c1)
        PAGE.widget(
            t, "number_input", "d_k", *D_K_RANGE, step=1, label="d_k", where=c2, help=t("training.d_k_help")
        )
        PAGE.widget(t, "selectbox", "scale", list(SCALES), format_func=lambda k: t(f"training.scale_{k}"))
        if PAGE.value("scale") == "custom":
            PAGE.widget(t, "number_input", "divisor", float(DIVISOR_RANGE[0]), float(DIVISOR_RANGE[1]), step=0.5,
                        format="%.3f")  # fmt: skip
        if uses_mask_choice(PAGE.value("task")):
            PAGE.widget(t, "selectbox", "mask", list(MASKS), format_func=lambda k: t(f"training.mask_{k}"),
                        helped=True)  # fmt: skip
        else:
            st.caption(t(f"training.mask_fixed_{PAGE.value('task')}"))
        PAGE.widget(t, "toggle", "positions", helped=True)
        PAGE.widget(t, "toggle", "ffn", helped=True)
        c1, c2 = st.columns(2)
        PAGE.widget(t, "number_input", "lr", float(LR_RANGE[0]), float(LR_RANGE[1]), step=0.001, format="%.4f",
                    where=c1)  # fmt: skip
        PAGE.widget(t, "number_input", "steps", *STEPS_RANGE, step=50, where=c2)
        PAGE.seed_input(t)


@PAGE.slides
def main() -> None:
    t = PAGE.start()
    ignored = url.read_url(st.session_state)
    controls(t)
    PAGE.title(t)
    if ignored:
        st.info(t("training.info_url_ignored", names=", ".join(kit.escape_markdown(n) for n in ignored)))
    values = {k: PAGE.value(k) for k in VALUE_KEYS}
    settings, problem = read_settings(values)
    if problem is not None:
        values = dict(problem.values)
        if "name" in values:
            values["name"] = t(f"training.name_{values['name']}")
        st.error(t(problem.key, **values))
    else:
        run = cached.result(TRAIN, settings)
        PAGE.section(views.section_predict, t, run)
        PAGE.section(views.section_train, t, settings, settings)
        if run is not None and run.steps_done > 0:
            PAGE.section(views.section_maps, t, run)
            PAGE.section(views.section_reveal, t, run)
            PAGE.section(views.section_quiz, t, run)
    PAGE.section(experiments_view.section_experiments, t)
    url.write_url(st.session_state)


main()
