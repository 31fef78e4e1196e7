"""The training lab's sections (one presenter slide each): predict, train live, watch the maps form,
the reveal and the questions. Each reads the run (:mod:`.cached`) and draws with :mod:`.figures`.

While a run goes on, only the live box reruns: a fragment that polls the worker's progress every
:data:`POLL_S` seconds (progress bar, curves, *Stop*) and asks for one full run when the job ends.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attention_core.training.experiments import tail_mean
from attention_core.training.verdicts import diverged
from attention_ui import assets, kit
from attention_ui.st_structure import key_class
from attention_ui.training import cached, patterns, questions
from attention_ui.training import figures as ftr
from attention_ui.training.jobs import TRAIN, Job
from attention_ui.training.settings import PAGE, TABLE, TRAIN_VALUES

POLL_S = 0.4  # the live box's refresh: at least twice a second, as the issue asks
# Streamlit fades a fragment's elements while it reruns; the live box reruns every POLL_S, so it
# would stay faded the whole run. Constant CSS: its elements keep full opacity.
LIVE_CSS = assets.style("training_live.css").replace("__LIVE__", key_class(TABLE.key("live")))
GUESS_KEY = TABLE.key("guess")


def pct(x: float) -> str:
    return f"{100 * float(x):.1f}"


def num(x: float) -> str:
    return f"{float(x):.4g}"


def curve_titles(t, task: str) -> dict:
    """The curves' titles; the text task's accuracy is measured on the text itself, not held out."""
    acc = "training.axis_accuracy_text" if task == "text" else "training.axis_accuracy"
    return dict(x_title=t("training.axis_step"), loss_title=t("training.axis_loss"), accuracy_title=t(acc),
                loss_axis=t("training.axis_loss_short"), accuracy_axis=t("training.axis_accuracy_short"))  # fmt: skip


def sample_labels(run) -> list[str]:
    """The sample's tokens as the task shows them (letters, or the text's characters)."""
    return [run.task.labels_in[int(i)] for i in run.sample]


# --- predict ----------------------------------------------------------------------------------------


def section_predict(t, run) -> None:
    """Before training: the learner guesses which pattern the last layer's head 0 will learn. The
    guess locks once this session has a run to show (:mod:`.cached`: it pressed Train), never
    because another session trained the same settings."""
    st.header(t("training.h_predict"))
    st.markdown(t("training.explain_predict"))
    PAGE.widget(t, "radio", "guess", list(patterns.PATTERNS), format_func=lambda p: t(f"training.pattern_{p}"),
                index=None, disabled=run is not None, text="guess")  # fmt: skip
    if run is None:
        st.caption(t("training.predict_then"))


# --- train, live ------------------------------------------------------------------------------------


def start_training(settings, key) -> None:
    cached.start(TRAIN, key, settings, total=settings.total_steps)


def section_train(t, settings, key):
    """The Train button, the live box while a run goes on, and the finished (or stopped) run's curves.
    Returns the run to show, or None."""
    st.header(t("training.h_train"))
    st.markdown(t("training.explain_train", **TRAIN_VALUES))
    job = cached.active(TRAIN, key)
    run = cached.result(TRAIN, key)
    label = "training.train_again" if run is not None else "training.train"
    st.button(t(label), key=TABLE.key("train"), type="primary", on_click=start_training, args=(settings, key),
              disabled=job is not None)  # fmt: skip
    if job is not None:
        st.html(LIVE_CSS)
        st.fragment(run_every=POLL_S)(live_box)(t, job.id, settings.task)
        return None
    last = cached.session_job(TRAIN)
    if last is not None and last.key == key and last.state == "failed":
        st.error(t("training.err_failed"))
    if run is None:
        st.info(t("training.ready_elsewhere" if cached.kept_elsewhere(key) else "training.not_trained"))
        return None
    if run.steps_done == 0:  # stopped before its first step
        st.info(t("training.stopped_at_once"))
        return None
    fig = ftr.curves(list(range(1, run.steps_done + 1)), run.losses, run.accuracy,
                     total=run.steps_done if run.stopped else run.settings.total_steps,
                     **curve_titles(t, run.settings.task))  # fmt: skip
    PAGE.chart(fig, "curves", t("training.alt_curves", steps=run.steps_done))
    st.markdown(t(summary_key(run), steps=run.steps_done, total=run.settings.total_steps, loss0=num(run.losses[0]),
                  loss=num(run.losses[-1]), acc=pct(run.final_accuracy), seconds=f"{run.seconds:.1f}",
                  final=num(run.final_loss), acc_name_lower=t(acc_name(run) + "_lower")))  # fmt: skip
    if diverged(run.losses):
        st.warning(t("training.diverged", end=num(tail_mean(run.losses)), loss0=num(run.losses[0]),
                     lr=f"{run.settings.lr:g}"))  # fmt: skip
    return run


def summary_key(run) -> str:
    """Stopped, one step (whose only loss is measured before its update), or the whole run."""
    if run.stopped:
        return "training.summary_stopped"
    return "training.summary_one" if run.steps_done == 1 else "training.summary"


def acc_name(run) -> str:
    return "training.acc_name_text" if run.settings.task == "text" else "training.acc_name"


def followed_job(job_id: int) -> Job | None:
    """The job a polling fragment follows while it waits or runs; once it has ended (or is gone), a
    full run is asked for instead (and None returned). The training and the experiments share it."""
    job = cached.runner().job(job_id)
    if job is None or job.finished:
        st.rerun()
        return None
    return job


def progress_and_stop(t, job: Job, rows: list, text: Callable[[tuple], str], stop_key: str) -> None:
    """A followed job's progress bar (waiting, starting, then ``text`` of its last row, whose first
    number is the step) and its *Stop* button."""
    if job.state == "waiting":
        st.progress(0.0, text=t("training.waiting"))
    elif not rows:
        st.progress(0.0, text=t("training.starting"))
    else:
        st.progress(min(1.0, rows[-1][0] / max(1, job.total)), text=text(rows[-1]))
    st.button(t("training.stop"), key=stop_key, on_click=job.request_stop)


def live_box(t, job_id: int, task: str) -> None:
    """The polling fragment: progress, live curves and *Stop*; a full run once the job has ended."""
    job = followed_job(job_id)
    if job is None:
        return
    rows = job.rows()
    with st.container(key=TABLE.key("live")):
        progress_and_stop(t, job, rows, lambda row: t("training.progress", step=row[0], total=job.total,
                          loss=num(row[1]), acc=pct(row[2])), TABLE.key("stop"))  # fmt: skip
        if rows:
            steps, losses, accs = zip(*rows, strict=True)
            fig = ftr.curves(steps, losses, accs, total=job.total, **curve_titles(t, task))
            PAGE.chart(fig, "live", t("training.alt_curves", steps=steps[-1]))
        if job.maps is not None:  # the sample's tokens come with the run; positions meanwhile
            n = job.maps.shape[-1]
            fig = ftr.head_maps(job.maps, [str(i) for i in range(n)], panel_title=t("training.panel_title"),
                                hover=PAGE.hover(t))  # fmt: skip
            PAGE.chart(fig, "live_maps", t("training.alt_maps_live", n=n))
            st.caption(t("training.live_maps_note"))


# --- the maps forming -------------------------------------------------------------------------------


def section_maps(t, run) -> None:
    st.header(t("training.h_maps"))
    st.markdown(t("training.explain_maps"))
    steps = [int(s) for s in run.snapshot_steps]  # 0 = at initialisation
    if PAGE.value("snapshot") not in steps:
        st.session_state[TABLE.key("snapshot")] = steps[-1]
    if len(steps) > 1:
        PAGE.widget(t, "select_slider", "snapshot", options=steps, helped=True)
    chosen = steps.index(int(PAGE.value("snapshot")))
    labels = sample_labels(run)
    fig = ftr.head_maps(run.snapshots[chosen], labels, panel_title=t("training.panel_title"),
                        hover=PAGE.hover(t))  # fmt: skip
    PAGE.chart(fig, "maps", t("training.alt_maps", step=steps[chosen], n=len(labels)))
    st.caption(t("training.maps_sample", sample=kit.escape_markdown(" ".join(labels)), step=steps[chosen]))


# --- reveal -----------------------------------------------------------------------------------------


def section_reveal(t, run) -> None:
    st.header(t("training.h_reveal"))
    found = patterns.head_patterns(run)
    layer = run.settings.layers - 1
    learned = found.pattern[layer][0]
    guess = st.session_state.get(GUESS_KEY)
    if guess is None:
        st.markdown(t("training.reveal_no_guess"))
    else:
        key = "training.reveal_right" if guess == learned else "training.reveal_wrong"
        st.markdown(t(key, guess=t(f"training.pattern_{guess}")))
    name = t(f"training.pattern_{learned}")
    st.markdown(t("training.reveal_learned", layer=layer, pattern=name, score=num(found.best_score[layer][0]),
                  threshold=patterns.THRESHOLD))  # fmt: skip
    rows = {t(f"training.pattern_{p}"): [num(found.scores[p][lay][h]) for lay in range(found.layers)
                                         for h in range(found.heads)] for p in patterns.SCORED}  # fmt: skip
    rows[t("training.col_learned")] = [t(f"training.pattern_{found.pattern[lay][h]}") for lay in range(found.layers)
                                       for h in range(found.heads)]  # fmt: skip
    index = [
        t("training.panel_title", layer=lay, head=h)
        for lay in range(found.layers)
        for h in range(found.heads)
    ]
    PAGE.table(kit.frame(rows, index=index), "patterns", always=True)
    m = len(run.repeated) // 2
    st.caption(t("training.reveal_how", n1=len(run.sample) - 1, m=m, last=2 * m - 1))


# --- quiz -------------------------------------------------------------------------------------------


def section_quiz(t, run) -> None:
    st.header(t("training.h_quiz"))
    kit.computed_quiz(t, "training", TABLE.family("q"), questions.from_run(run, patterns.head_patterns(run)))
