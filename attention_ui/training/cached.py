"""The training lab's shared state: one job runner per server (a Streamlit resource shared by every
session), the session's own jobs by name (``job_<name>``: the id of its latest job), and the
training settings this session has asked to see (``asked``); both keys are the page's table's.

A finished training run is kept per settings for every session, but a session sees one only after
it has pressed Train for those settings: its guess is its own (predict-then-reveal), never locked
by another learner's run. Pressing Train then reuses the kept run at once. The experiments have no
guess: a finished one is shown to every session.
"""

from __future__ import annotations

import streamlit as st

from .jobs import TRAIN, Job, Runner
from .settings import TABLE

ASKED_KEY = TABLE.key("asked")  # the training settings this session pressed Train for


@st.cache_resource(show_spinner=False, max_entries=1)  # one runner per server: the function takes nothing
def runner() -> Runner:
    r = Runner()
    r.prestart()  # a worker with its imports done waits for the first run
    return r


def job_key(name: str) -> str:
    return TABLE.key("job", name)


def session_job(name: str) -> Job | None:
    """The session's latest job called ``name`` (``train`` or an experiment's name), if it is known."""
    job_id = st.session_state.get(job_key(name))
    return runner().job(job_id) if job_id is not None else None


def asked(key) -> bool:
    """Whether this session has pressed Train for the training settings ``key``."""
    return key in st.session_state.get(ASKED_KEY, ())


def start(name: str, key, payload, total: int = 0) -> Job | None:
    """Start (or join: same key, still running) a job and remember it in the session. Train on
    settings whose run is kept but new to this session shows that run instead (None returned)."""
    if name == TRAIN:
        first = not asked(key)
        st.session_state[ASKED_KEY] = st.session_state.get(ASKED_KEY, frozenset()) | {key}
        if first and runner().result(key) is not None:
            return None
    kind = TRAIN if name == TRAIN else name
    job = runner().start(kind, key, payload, total)
    st.session_state[job_key(name)] = job.id
    return job


def result(name: str, key):
    """What to show for ``key``: a finished run kept for any session (training runs: once this
    session has pressed Train for ``key``), else this session's own last run for the same key (a
    stopped one: it keeps what was trained), else None."""
    if name != TRAIN or asked(key):
        done = runner().result(key)
        if done is not None:
            return done
    job = session_job(name)
    if job is not None and job.key == key and job.state in ("done", "stopped") and job.result is not None:
        return job.result
    return None


def kept_elsewhere(key) -> bool:
    """A finished training run for ``key`` is kept, and this session has not asked to see it yet."""
    return not asked(key) and runner().result(key) is not None


def active(name: str, key) -> Job | None:
    """This session's job for ``key`` while it waits or runs."""
    job = session_job(name)
    return job if job is not None and job.key == key and not job.finished else None
