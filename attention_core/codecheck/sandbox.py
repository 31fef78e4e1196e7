"""The server's side of the sandbox: one fresh worker process per check, a warm spare, timeouts.

Why one worker per check, with a spare started in advance (not a pool of reused workers): a worker
that has run a learner's code may have been changed by it (a module-level list, a patched proxy, a
leaked array), and nothing short of a new process is sure to forget that. The cost of a new
process is its imports (NumPy, RestrictedPython: a few tenths of a second), which the spare pays
before anyone asks: it waits, locked down, for its one job. After each check a new spare is
started in the background. Several checks at once each take a worker (the spare or a new one), at
most :data:`MAX_WORKERS` at a time; the others wait their turn.

The server's thread that runs a check only waits on a pipe: the learner's code runs in the other
process, so other sessions' pages stay responsive (Python's lock is not held while it waits).

Nothing is left behind: the worker's temporary directory is removed as soon as the worker has
entered it, before it is even ready (its working directory, and as root its whole file system, is
then a directory that no longer exists); a worker is killed by its own pid when its time is up, and
the spare when the server exits.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .worker import CPU_SECONDS, MEMORY_BYTES

ROOT = Path(__file__).resolve().parents[2]  # the project: the worker imports attention_core from here
BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from attention_core.codecheck.worker import main; main(sys.argv[2:])"
MAX_WORKERS = 4  # checks running at once (the rest wait)
MAX_REPLY_BYTES = 8 * 1024 * 1024
START_TIMEOUT = 30.0  # imports and the warm-up on a busy machine
# Wall-clock seconds before a worker is killed, as a multiple of its CPU budget: the learner's code
# has nothing that waits (no files, sockets, sleep), so wall time is CPU time stretched by the load;
# on a two-core machine shared with a class the stretch was measured above 4x (bench/code_check.py).
WALL_FACTOR = 5.0
TEMP_PREFIX = "attention-lab-check-"


class SandboxUnavailable(RuntimeError):
    """The worker could not lock itself down (or start): the check must not run."""


@dataclass
class Reply:
    """What came back from one worker: its JSON reply, or why there is none.

    ``killed``: "cpu" (over the CPU budget), "wall" (over the wall-clock budget), "memory" (over
    the address-space limit), "output" (a reply larger than the server reads), "crash" (ended
    without a reply), or None.
    """

    data: dict | None
    killed: str | None = None
    returncode: int | None = None
    seconds: float = 0.0
    isolation: dict = field(default_factory=dict)


class _Worker:
    def __init__(self, python: str, cpu_seconds: float, memory_bytes: int) -> None:
        self.tmp = tempfile.mkdtemp(prefix=TEMP_PREFIX)
        try:
            self.proc = subprocess.Popen(
                [python, "-I", "-c", BOOT, str(ROOT), str(cpu_seconds), str(memory_bytes)],
                cwd=self.tmp,
                env={},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,
            )
        finally:
            # Popen returns once the child has entered the directory and started Python: the directory
            # can go now, so that nothing is left behind even if this server is killed before the
            # worker is ready (its working directory, and as root its root, is then a deleted one).
            self._remove_dir()
        self.buffer = b""
        self.isolation: dict = {}
        self.ready_error: str | None = None

    def wait_ready(self, timeout: float) -> None:
        """Read the worker's first line; its directory goes as soon as it has entered it."""
        try:
            line = self._read_line(time.monotonic() + timeout)
            hello = json.loads(line) if line else {"ready": False, "reason": "no answer"}
        except (ValueError, OSError) as err:
            hello = {"ready": False, "reason": str(err)}
        if not hello.get("ready"):
            self.kill()
            reason = hello.get("reason") or f"exit code {self.proc.poll()}"
            raise SandboxUnavailable(str(reason)[:300])
        self.isolation = hello.get("isolation") or {}

    def _remove_dir(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _read_line(self, deadline: float) -> bytes:
        while b"\n" not in self.buffer:
            chunk = self._read_some(deadline)
            if chunk is None:
                break
            self.buffer += chunk
            if len(self.buffer) > MAX_REPLY_BYTES:
                break
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def _read_some(self, deadline: float) -> bytes | None:
        fd = self.proc.stdout.fileno()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        readable, _, _ = select.select([fd], [], [], remaining)
        if not readable:
            return None
        chunk = os.read(fd, 65536)
        return chunk or None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.kill()  # this worker's own pid, never a name
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._remove_dir()

    def run(self, job: dict, wall_seconds: float) -> Reply:
        start = time.monotonic()
        deadline = start + wall_seconds
        try:
            self.proc.stdin.write(json.dumps(job).encode("utf-8"))
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        data = b""
        over = False
        while True:
            chunk = self._read_some(deadline)
            if chunk is None:
                break
            data += chunk
            if len(self.buffer) + len(data) > MAX_REPLY_BYTES:
                over = True
                break
        timed_out = self.alive() and not over and time.monotonic() >= deadline
        if over or timed_out:
            self.kill()
        else:
            try:
                self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
                self.kill()
        seconds = time.monotonic() - start
        code = self.proc.returncode
        self.kill()  # closes the pipes
        text = (self.buffer + data).strip()
        if over:
            return Reply(None, "output", code, seconds, self.isolation)
        if timed_out:
            return Reply(None, "wall", code, seconds, self.isolation)
        reply = _parse(text) if code == 0 else None
        if reply is None:
            killed = "cpu" if code in (-signal.SIGPROF, -signal.SIGXCPU, -signal.SIGKILL) else "crash"
            return Reply(None, killed, code, seconds, self.isolation)
        if reply.get("memory"):
            return Reply(reply, "memory", code, seconds, self.isolation)
        return Reply(reply, None, code, seconds, self.isolation)


def _parse(text: bytes) -> dict | None:
    try:
        value = json.loads(text.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


class Sandbox:
    """Runs jobs in fresh workers; thread-safe. ``spare=False`` starts every worker cold."""

    def __init__(
        self,
        cpu_seconds: float = CPU_SECONDS,
        memory_bytes: int = MEMORY_BYTES,
        wall_seconds: float | None = None,
        spare: bool = True,
        python: str = sys.executable,
        max_workers: int = MAX_WORKERS,
    ) -> None:
        self.cpu_seconds = cpu_seconds
        self.memory_bytes = memory_bytes
        self.wall_seconds = wall_seconds if wall_seconds is not None else cpu_seconds * WALL_FACTOR
        self.python = python
        self.keep_spare = spare
        self._slots = threading.BoundedSemaphore(max_workers)
        self._lock = threading.Lock()
        self._spare: _Worker | None = None
        self._starting: threading.Event | None = None  # set when the spare being started is ready
        self._closed = False
        self.unavailable: str | None = None

    def _start(self) -> _Worker:
        worker = _Worker(self.python, self.cpu_seconds, self.memory_bytes)
        worker.wait_ready(START_TIMEOUT)
        return worker

    def _take(self) -> _Worker:
        with self._lock:
            starting = self._starting
        if starting is not None:  # a spare is on its way: waiting for it beats starting another
            starting.wait(START_TIMEOUT)
        with self._lock:
            worker, self._spare = self._spare, None
        if worker is not None and worker.alive():
            return worker
        if worker is not None:
            worker.kill()
        return self._start()

    def _refill(self) -> None:
        if not self.keep_spare:
            return
        with self._lock:
            if self._closed or self._spare is not None or self._starting is not None:
                return
            self._starting = starting = threading.Event()
        worker = None
        try:
            worker = self._start()
        except (SandboxUnavailable, OSError):
            pass
        with self._lock:
            keep = worker is not None and not self._closed and self._spare is None
            if keep:
                self._spare = worker
            self._starting = None
        starting.set()
        if worker is not None and not keep:
            worker.kill()

    def prestart(self) -> None:
        """Start the spare now (in the background), so that the first check is warm."""
        if self.keep_spare:
            threading.Thread(target=self._refill, daemon=True, name="check-spare").start()

    def spare_pid(self, timeout: float = START_TIMEOUT) -> int | None:
        """The waiting spare's pid once it is ready (None if there is none): for tests and bench."""
        self._refill()
        with self._lock:
            starting = self._starting
        if starting is not None:
            starting.wait(timeout)
        with self._lock:
            return self._spare.proc.pid if self._spare is not None else None

    def run(self, job: dict) -> Reply:
        """Run one job in a worker of its own (raises SandboxUnavailable if none can lock down)."""
        with self._slots:
            try:
                worker = self._take()
            except SandboxUnavailable as err:
                self.unavailable = str(err)
                raise
            try:
                return worker.run({**job, "cpu_seconds": self.cpu_seconds}, self.wall_seconds)
            finally:
                worker.kill()
                self.prestart()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            worker, self._spare = self._spare, None
        if worker is not None:
            worker.kill()


_DEFAULT: Sandbox | None = None
_DEFAULT_LOCK = threading.Lock()


def default_sandbox() -> Sandbox:
    """The server's one sandbox (its spare is killed when the server exits)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = Sandbox()
            atexit.register(_DEFAULT.close)
        return _DEFAULT
