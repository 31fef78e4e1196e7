"""The class's news pushed to its students' pages in this process, instead of each page asking.

A student's page used to learn of the teacher's next step by asking the server once a second (a
``run_every`` fragment). In a hall that is one script run per student per second while nothing
changes (a third of a core per process with 150 students, bench/RESULTS.md), and it adds up to a
second before a page even asks. Here one thread per process reads the pulse of each class that
pages of this process follow, every ``period_s`` (from the shared :class:`PulseCache`: one store
query per class, however many students), and rings each page that has drawn less than the class
now shows. The ring (given by the caller: the app's is attention_ui/classroom/ring.py) starts that
page's run from the server: of only the part that shows the class (a fragment) when the page named
one. The page's own slower check stays, as the fallback.

A page says what it drew at the end of each run that drew the class (:meth:`Bell.follow`); a page that rang is
not rung again for the same state for ``ring_again_s`` (its run is drawing it), then once more if
it still has not said it drew it (a run that was lost or failed). At most ``max_ringing`` rung pages
draw at once; the others are rung as those draw. A ring that finds the page gone (closed, on another
page of the app) drops it. Nothing here imports Streamlit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .model import Pulse
from .pulse_cache import PULSE_SHARE_S, moved_on, progress

# A page rung for a state that has not drawn it after this long is rung again. A ring finds a page
# that is in a run (its own check, or a redraw that started before the class moved) and leaves it
# to that run (attention_ui/classroom/ring.py), so the next ring must come soon; it never stops a
# run, so a run longer than this (150 of them sharing a core) is not restarted.
RING_AGAIN_S = 1.0
MAX_FOLLOWERS = 4096  # pages followed per process; a follow beyond this is refused (never rung)
# Pages of a process rung and still drawing, at most. A step change rang all of a process's students
# at once: 150 script threads then took turns at the one interpreter lock, and the teacher's own run
# (the panel showing the poll the teacher had just opened) waited behind all of them (issue 47: the
# poll on the panel after 2.8 and 3.5 s at 300 students). A page that draws hands its place to the
# next one at once (follow wakes the bell's thread); a rung page that never draws gives its place
# back after ring_again_s.
MAX_RINGING = 12

_LOG = logging.getLogger(__name__)

Progress = tuple[int, int, int, int]  # classroom.pulse_cache.progress


@dataclass
class _Follower:
    class_id: str
    page: str  # the caller's name for the page the session showed (a ring checks it still does)
    drawn: Progress
    fragment: str = ""  # the part of the page a ring reruns ("" : the whole page)
    rung: Progress | None = None
    rung_at: float = 0.0


class Bell:
    """``follow(session, class, page, drawn)`` after each drawing; ``check()`` rings those behind.

    ``pulse_of(class_id)``: the class's pulse (may be up to a fraction of a second old);
    ``ring(session, page, fragment)``: start that session's run (of ``fragment`` if not ""); False
    when the session is gone or shows another page (it is then dropped)."""

    def __init__(self, pulse_of: Callable[[str], Pulse | None], ring: Callable[[str, str, str], bool], *,
                 period_s: float = PULSE_SHARE_S, ring_again_s: float = RING_AGAIN_S,
                 max_ringing: int = MAX_RINGING, clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._pulse_of, self._ring = pulse_of, ring
        self.period_s, self.ring_again_s, self._clock = float(period_s), float(ring_again_s), clock
        self.max_ringing = int(max_ringing)
        self._waiting = 0  # pages behind their class that the last round left for want of a place
        self._wake = threading.Event()
        self._followers: dict[str, _Follower] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.rings = 0  # rings made (tests and the bench read it)

    def follow(self, session_id: str, class_id: str, page: str, drawn: Progress, fragment: str = "") -> bool:
        """This session's page has drawn ``drawn`` of ``class_id`` (in its part ``fragment``, which
        a ring reruns; "" for the whole page); False if the bell is full."""
        with self._lock:
            old = self._followers.get(session_id)
            if old is None and len(self._followers) >= MAX_FOLLOWERS:
                return False
            f = _Follower(class_id, page, tuple(drawn), fragment)
            if (
                old is not None
                and old.class_id == class_id
                and old.rung is not None
                and moved_on(old.rung, f.drawn)
            ):
                f.rung, f.rung_at = old.rung, old.rung_at  # rung for a later state than this run drew
            self._followers[session_id] = f
            wake = self._waiting > 0
        if wake:  # a place may have come free: the next round now, not at the next period
            self._wake.set()
        return True

    def leave(self, session_id: str) -> None:
        with self._lock:
            self._followers.pop(session_id, None)

    def following(self) -> int:
        with self._lock:
            return len(self._followers)

    def check(self) -> list[str]:
        """One round: one pulse per followed class; ring each page behind it while fewer than
        ``max_ringing`` rung pages are still drawing. Returns those rung."""
        now = self._clock()
        with self._lock:
            by_class: dict[str, list[tuple[str, _Follower]]] = {}
            for sid, f in self._followers.items():
                by_class.setdefault(f.class_id, []).append((sid, f))
            places = self.max_ringing - sum(1 for f in self._followers.values() if self._drawing(f, now))
        rung: list[str] = []
        waiting = 0
        for class_id, followers in by_class.items():
            now_at = progress(self._pulse_of(class_id))
            for session_id, f in followers:
                if not moved_on(now_at, f.drawn):
                    continue
                if f.rung == now_at and now - f.rung_at < self.ring_again_s:
                    continue  # its run is drawing this state
                if places <= 0:
                    waiting += 1  # rung when a page that is drawing has drawn
                    continue
                try:
                    alive = self._ring(session_id, f.page, f.fragment)
                except Exception:  # a ring that fails must not stop the others
                    _LOG.exception("ringing session %s failed", session_id)
                    alive = False
                with self._lock:
                    if not alive:
                        if self._followers.get(session_id) is f:
                            del self._followers[session_id]
                        continue
                    f.rung, f.rung_at = now_at, now
                places -= 1
                self.rings += 1
                rung.append(session_id)
        with self._lock:
            self._waiting = waiting
        return rung

    def _drawing(self, f: _Follower, now: float) -> bool:
        """Rung for a state it has not drawn yet, and not so long ago that the ring counts as lost."""
        return f.rung is not None and moved_on(f.rung, f.drawn) and now - f.rung_at < self.ring_again_s

    def start(self) -> Bell:
        """Check every ``period_s`` on a daemon thread (once; later calls do nothing)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="class-bell", daemon=True)
                self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.period_s)  # the period, or sooner when a drawing freed a place
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.check()
            except Exception:  # the store down for a moment: the next round tries again
                _LOG.exception("the class bell's check failed")
