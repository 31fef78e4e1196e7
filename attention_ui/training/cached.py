"""The training lab's shared state: one job runner per server (a Streamlit resource shared by every
session), and the session's own jobs by name (``tr_job_<name>``: the id of its latest job)."""

from __future__ import annotations

import streamlit as st

from .jobs import TRAIN, Job, Runner


@st.cache_resource(show_spinner=False, max_entries=1)  # one runner per server: the function takes nothing
def runner() -> Runner:
    r = Runner()
    r.prestart()  # a worker with its imports done waits for the first run
    return r


def job_key(name: str) -> str:
    return f"tr_job_{name}"


def session_job(name: str) -> Job | None:
    """The session's latest job called ``name`` (``train`` or an experiment's name), if it is known."""
    job_id = st.session_state.get(job_key(name))
    return runner().job(job_id) if job_id is not None else None


def start(name: str, key, payload, total: int = 0) -> Job:
    """Start (or join: same key, still running) a job and remember it in the session."""
    kind = TRAIN if name == TRAIN else name
    job = runner().start(kind, key, payload, total)
    st.session_state[job_key(name)] = job.id
    return job


def result(name: str, key):
    """What to show for ``key``: a finished run of any session, else this session's own last run for
    the same key (a stopped one: it keeps what was trained), else None."""
    done = runner().result(key)
    if done is not None:
        return done
    job = session_job(name)
    if job is not None and job.key == key and job.state in ("done", "stopped") and job.result is not None:
        return job.result
    return None


def active(name: str, key) -> Job | None:
    """This session's job for ``key`` while it waits or runs."""
    job = session_job(name)
    return job if job is not None and job.key == key and not job.finished else None
