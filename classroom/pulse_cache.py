"""One store query per class per fraction of a second, however many students' pages ask.

The class bell of each process (classroom/bell.py) and every student page's own check (every few
seconds) ask whether the teacher's view or the poll changed (:meth:`ClassStore.pulse`). With 30
students in one process checking once a second, that was 30 queries a second for the same row. :class:`PulseCache` keeps each session's last pulse for ``ttl_s`` seconds and shares it
between the threads (Streamlit sessions) of one process; one thread refreshes an expired entry
while the others wait on that session's lock for the result instead of querying too.

A cached pulse may be up to ``ttl_s`` older than the store; :func:`moved_on` therefore asks
"is this pulse *ahead* of what the page drew?" rather than "is it different?", so a stale cache
entry never makes a page redraw what it already shows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .model import Pulse

PULSE_SHARE_S = 0.25  # added to the follow time at most; 4 queries/s per class per process at most
MAX_SESSIONS = 256  # entries kept per process; the oldest are dropped beyond this

_STATE_RANK = {None: 0, "open": 1, "closed": 2, "revealed": 3}  # a poll only moves forward


def progress(pulse: Pulse | None) -> tuple[int, int, int, int]:
    """A pulse as numbers that only grow while a class runs: (view revision, poll number, poll
    state's rank, ended). ``None`` (class gone) ranks after every live state."""
    if pulse is None:
        return (0, 0, 0, 2)
    return (pulse.view_rev, pulse.poll_seq or 0, _STATE_RANK.get(pulse.poll_state, 0), 0 if pulse.live else 1)


def moved_on(now: tuple[int, int, int, int], drawn: tuple[int, int, int, int] | None) -> bool:
    """True when ``now`` is ahead of ``drawn`` in any part (a newer view, a newer poll, a poll that
    closed or was revealed, the class ended or gone), or nothing was drawn yet."""
    if drawn is None:
        return True
    if now[0] > drawn[0] or now[3] > drawn[3]:
        return True
    return (now[1], now[2]) > (drawn[1], drawn[2])


class PulseCache:
    """``get(session_id)``: the store's pulse, at most ``ttl_s`` old, shared by this process."""

    def __init__(self, fetch: Callable[[str], Pulse | None], ttl_s: float = PULSE_SHARE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._fetch, self.ttl_s, self._clock = fetch, float(ttl_s), clock
        self._entries: dict[str, tuple[float, Pulse | None]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.fetches = 0  # store queries made (tests and the bench read it)

    def _lock_for(self, session_id: str) -> threading.Lock:
        with self._guard:
            lock = self._locks.get(session_id)
            if lock is None:
                if len(self._locks) >= MAX_SESSIONS:  # drop the oldest sessions' entries
                    for old in list(self._locks)[: MAX_SESSIONS // 4]:
                        self._locks.pop(old, None)
                        self._entries.pop(old, None)
                lock = self._locks[session_id] = threading.Lock()
            return lock

    def get(self, session_id: str) -> Pulse | None:
        entry = self._entries.get(session_id)
        if entry is not None and self._clock() - entry[0] < self.ttl_s:
            return entry[1]
        with self._lock_for(session_id):
            entry = self._entries.get(session_id)  # another thread may have refreshed it meanwhile
            if entry is not None and self._clock() - entry[0] < self.ttl_s:
                return entry[1]
            started = self._clock()
            pulse = self._fetch(session_id)
            self.fetches += 1
            self._entries[session_id] = (started, pulse)
            return pulse
