"""Training runs and experiments in worker processes, so one student's run never holds up another's page.

Pure Python and the standard library (no Streamlit): :mod:`.cached` keeps one :class:`Runner` per
server. A job runs ``attention_core.training`` in a process of its own (:mod:`.worker`, a fresh
interpreter at a lower priority): in a thread of the server, the training loop's many small NumPy
calls would hold Python's global interpreter lock for most of the run, and every other session's
reruns would queue behind it (bench/training_latency.py measures another session's rerun time while
a run goes on). The worker writes its progress to a pipe each time the core reports (about every
0.2 s); the runner's reader thread copies it into the :class:`Job`, which the page's polling fragment
reads. *Stop* writes a byte to the worker's stdin, which the core's ``should_stop`` reads; the run it
returns keeps what was trained.

At most :data:`MAX_RUNNING` jobs run at once (the machine's two cores); later ones wait their turn,
and say so. Finished results are kept per settings, the oldest dropped beyond :data:`MAX_FINISHED`.
"""

from __future__ import annotations

import itertools
import logging
import os
import pickle
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

MAX_RUNNING = 2  # worker processes at once (one per core)
MAX_FINISHED = 24  # finished results kept (a run with its snapshots is well under 1 MB)
MAX_JOBS = 32  # jobs remembered (finished ones are dropped first; a stopped run lives only here)
ROOT = Path(__file__).resolve().parents[2]  # the project: the worker imports attention_core from here
TRAIN = "train"
STATES = ("waiting", "running", "done", "stopped", "failed")


@dataclass
class Job:
    """One run, as the page sees it. ``progress`` rows are ``(step, loss, accuracy)``."""

    id: int
    kind: str
    key: Hashable
    total: int  # steps expected (0 when the job reports none: an experiment)
    state: str = "waiting"
    progress: list = field(default_factory=list)
    maps: object = None  # the sample's latest maps [L, H, n, n] while training runs
    label: str | None = None  # an experiment's current run ("scaled, seed 0", ...)
    runs_begun: int = 0  # runs of the job that have reported so far
    result: object = None
    error: str = ""
    created: float = field(default_factory=time.monotonic)
    started: float | None = None
    first_update: float | None = None  # seconds from start to the first progress row
    ended: float | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _proc: object = None

    @property
    def finished(self) -> bool:
        return self.state in ("done", "stopped", "failed")

    def request_stop(self) -> None:
        self._stop.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:  # any byte on its stdin asks the worker to stop (worker.py)
                proc.stdin.write(b"s")
                proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass

    def rows(self) -> list:
        return list(self.progress)  # a copy: the reader thread appends meanwhile


class Runner:
    """Starts jobs, at most :data:`MAX_RUNNING` at once, and keeps finished results per key."""

    def __init__(self, max_running: int = MAX_RUNNING, max_finished: int = MAX_FINISHED) -> None:
        self._slots = threading.BoundedSemaphore(max_running)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.jobs: OrderedDict[int, Job] = OrderedDict()
        self.finished: OrderedDict[Hashable, object] = OrderedDict()
        self.max_finished = max_finished
        self._spare = None  # a worker started in advance, its imports done, waiting for a job
        self._spare_lock = threading.Lock()

    def result(self, key: Hashable):
        """A finished (not stopped) result for ``key``, or None."""
        with self._lock:
            return self.finished.get(key)

    def job(self, job_id) -> Job | None:
        with self._lock:
            return self.jobs.get(job_id)

    def running_for(self, key: Hashable) -> Job | None:
        """A job for ``key`` that has not finished (another session may have started it)."""
        with self._lock:
            return next((j for j in self.jobs.values() if j.key == key and not j.finished), None)

    def start(self, kind: str, key: Hashable, payload, total: int = 0) -> Job:
        """A new job for ``payload`` (or the unfinished one for the same key: two clicks, one run)."""
        with self._lock:
            same = next((j for j in self.jobs.values() if j.key == key and not j.finished), None)
            if same is not None:
                return same
            job = Job(next(self._ids), kind, key, total)
            self.jobs[job.id] = job
            self._forget_old_jobs()
        threading.Thread(target=self._run, args=(job, payload), daemon=True, name=f"job-{job.id}").start()
        return job

    def _forget_old_jobs(self) -> None:
        while len(self.jobs) > MAX_JOBS:
            old = next((i for i, j in self.jobs.items() if j.finished), None)
            if old is None:
                return
            del self.jobs[old]

    def _run(self, job: Job, payload) -> None:
        with self._slots:
            if job._stop.is_set():  # stopped while it waited: nothing was trained
                job.state, job.ended = "stopped", time.monotonic()
                return
            job.started = time.monotonic()
            job.state = "running"
            try:
                proc = self._take_worker()
            except OSError as err:
                job.error, job.state, job.ended = str(err), "failed", time.monotonic()
                log.error("job %s (%s): the worker did not start: %s", job.id, job.kind, err)
                return
            job._proc = proc
            try:
                proc.stdin.write(pickle.dumps((job.kind, payload), protocol=pickle.HIGHEST_PROTOCOL))
                proc.stdin.flush()
                if job._stop.is_set():
                    proc.stdin.write(b"s")
                    proc.stdin.flush()
                self._read(job, proc.stdout)
            except (BrokenPipeError, OSError) as err:
                job.error, job.state = str(err), "failed"
            finally:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                job.ended = time.monotonic()

    def _take_worker(self) -> subprocess.Popen:
        """The spare worker if it is alive (else a new one); a new spare is started for the next job."""
        with self._spare_lock:
            proc, self._spare = self._spare, None
            if proc is None or proc.poll() is not None:
                proc = start_worker()
            try:
                self._spare = start_worker()
            except OSError:
                self._spare = None
        return proc

    def prestart(self) -> None:
        """Start the spare worker now (the page calls it when it is opened), so the first job starts fast."""
        with self._spare_lock:
            if self._spare is None or self._spare.poll() is not None:
                self._spare = start_worker()

    def _read(self, job: Job, stream) -> None:
        while True:
            try:
                msg = pickle.load(stream)
            except (EOFError, pickle.UnpicklingError, OSError):  # killed, or out of memory
                job.error, job.state = "the worker process ended without a result", "failed"
                log.error("job %s (%s): worker ended without a result", job.id, job.kind)
                return
            if msg[0] == "progress":
                _, rows, maps, label, fresh, steps = msg
                if job.first_update is None:
                    job.first_update = time.monotonic() - job.started
                if fresh:  # an experiment's next run: its own rows
                    job.progress, job.runs_begun = [], job.runs_begun + 1
                job.progress.extend(rows)
                job.maps, job.label, job.total = maps, label, steps
            elif msg[0] == "done":
                job.result = msg[1]
                stopped = was_stopped(msg[1])
                if not stopped:
                    self._remember(job.key, msg[1])
                job.state = "stopped" if stopped else "done"
                return
            else:
                job.error, job.state = msg[1], "failed"
                log.error("job %s (%s) failed: %s", job.id, job.kind, msg[1])
                return

    def _remember(self, key: Hashable, result) -> None:
        with self._lock:
            self.finished[key] = result
            self.finished.move_to_end(key)
            while len(self.finished) > self.max_finished:
                self.finished.popitem(last=False)


def was_stopped(result) -> bool:
    """Whether a run or an experiment was stopped before its end (a stopped one is never cached);
    an experiment of a single run says so on that run."""
    return bool(getattr(result, "stopped", False) or getattr(getattr(result, "run", None), "stopped", False))


def start_worker() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "attention_ui.training.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        cwd=ROOT, env=worker_env(),
    )  # fmt: skip


def worker_env() -> dict:
    """The worker's environment: the project importable, one BLAS thread (two cores are shared)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env
