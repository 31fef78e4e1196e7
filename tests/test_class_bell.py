"""The class bell (classroom/bell.py): the pages of a process that are behind their class are rung,
once per state (again only after ring_again_s), with one pulse per class however many pages."""

from __future__ import annotations

import threading
import time

import pytest

from classroom import bell as bell_module
from classroom.bell import Bell
from classroom.model import Pulse
from classroom.pulse_cache import progress


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


class Hall:
    """Classes whose pulses the test sets, and the rings the bell made."""

    def __init__(self) -> None:
        self.pulses: dict[str, Pulse | None] = {}
        self.asked: list[str] = []
        self.rung: list[tuple[str, str]] = []
        self.fragments: list[str] = []  # the part of the page each ring asked to rerun
        self.gone: set[str] = set()

    def pulse_of(self, class_id: str) -> Pulse | None:
        self.asked.append(class_id)
        return self.pulses.get(class_id)

    def ring(self, session_id: str, page: str, fragment: str) -> bool:
        if session_id in self.gone:
            return False
        self.rung.append((session_id, page))
        self.fragments.append(fragment)
        return True


def at(rev: int, seq: int | None = None, state: str | None = None, live: bool = True) -> Pulse:
    return Pulse(rev, seq, state, live)


@pytest.fixture
def hall() -> tuple[Hall, Bell, Clock]:
    h, clock = Hall(), Clock()
    return h, Bell(h.pulse_of, h.ring, ring_again_s=3.0, clock=clock), clock


def test_a_page_behind_its_class_is_rung_once_until_it_draws(hall) -> None:
    h, bell, clock = hall
    h.pulses["C"] = at(1)
    bell.follow("s1", "C", "join", progress(at(1)))
    assert bell.check() == [] and h.rung == []  # up to date: nothing to ring
    h.pulses["C"] = at(2)  # the teacher's next step
    assert bell.check() == ["s1"] and h.rung == [("s1", "join")]
    clock.now += 2.9
    assert bell.check() == []  # its run is drawing step 2: not rung again
    bell.follow("s1", "C", "join", progress(at(2)))  # ... and it drew it
    clock.now += 10
    assert bell.check() == [] and bell.rings == 1


def test_a_page_that_did_not_draw_what_it_was_rung_for_is_rung_again(hall) -> None:
    h, bell, clock = hall
    h.pulses["C"] = at(2)
    bell.follow("s1", "C", "join", progress(at(1)))
    assert bell.check() == ["s1"]
    clock.now += 3.0  # its run was lost
    assert bell.check() == ["s1"]
    h.pulses["C"] = at(3)  # a newer state is rung at once, whenever the last ring was
    clock.now += 0.5
    assert bell.check() == ["s1"] and bell.rings == 3


def test_a_run_that_drew_an_older_state_than_it_was_rung_for_keeps_the_ring(hall) -> None:
    h, bell, clock = hall
    h.pulses["C"] = at(3)
    bell.follow("s1", "C", "join", progress(at(1)))
    assert bell.check() == ["s1"]
    bell.follow("s1", "C", "join", progress(at(2)))  # a run started before the ring ended now
    clock.now += 1
    assert bell.check() == []  # the rung run is still drawing step 3: no second ring
    clock.now += 2.5
    assert bell.check() == ["s1"]


def test_polls_and_the_class_end_ring_too(hall) -> None:
    h, bell, _ = hall
    h.pulses["C"] = at(1)
    bell.follow("s1", "C", "join", progress(at(1)))
    for pulse in (
        at(1, 1, "open"),
        at(1, 1, "closed"),
        at(1, 1, "revealed"),
        at(1, 1, "revealed", live=False),
    ):
        h.pulses["C"] = pulse
        assert bell.check() == ["s1"]
        bell.follow("s1", "C", "join", progress(pulse))
    h.pulses["C"] = None  # the class is gone from the store
    assert bell.check() == ["s1"]


def test_one_pulse_per_class_however_many_pages(hall) -> None:
    h, bell, _ = hall
    bell.max_ringing = 40  # (as many places as pages: a round rings them all)
    h.pulses.update(A=at(2), B=at(5))
    for i in range(40):
        bell.follow(f"a{i}", "A", "join", progress(at(1)))
    for i in range(3):
        bell.follow(f"b{i}", "B", "join", progress(at(5)))
    rung = bell.check()
    assert sorted(h.asked) == ["A", "B"]
    assert sorted(rung) == sorted(f"a{i}" for i in range(40))


def test_a_page_gone_or_left_is_dropped(hall) -> None:
    h, bell, clock = hall
    h.pulses["C"] = at(2)
    for sid in ("s1", "s2", "s3"):
        bell.follow(sid, "C", "join", progress(at(1)))
    h.gone.add("s2")  # closed, or on another page of the app
    bell.leave("s3")  # a run of its page that stopped before it drew the class
    assert bell.check() == ["s1"] and bell.following() == 1
    clock.now += 5
    assert bell.check() == ["s1"]
    assert ("s2", "join") not in h.rung and ("s3", "join") not in h.rung


def test_a_ring_asks_for_the_part_of_the_page_its_last_drawing_named(hall) -> None:
    h, bell, clock = hall
    h.pulses["C"] = at(2)
    bell.follow("s1", "C", "join", progress(at(1)), fragment="live")
    bell.follow("s2", "C", "join", progress(at(1)))  # a whole-page drawing: a whole-page ring
    assert bell.check() == ["s1", "s2"] and h.fragments == ["live", ""]
    bell.follow("s1", "C", "join", progress(at(1)))  # a full run drew it next, and named no part
    clock.now += 3.0
    assert bell.check() == ["s1", "s2"] and h.fragments[2:] == ["", ""]


def test_at_most_max_ringing_pages_draw_at_once_and_each_drawing_hands_its_place_on(hall) -> None:
    h, _, clock = hall
    bell = Bell(h.pulse_of, h.ring, ring_again_s=3.0, max_ringing=3, clock=clock)
    h.pulses["C"] = at(1)
    for i in range(7):
        bell.follow(f"s{i}", "C", "join", progress(at(1)))
    h.pulses["C"] = at(2)
    first = bell.check()
    assert len(first) == 3 and bell.check() == []  # three draw; four wait, even on the next round
    assert not bell._wake.is_set()
    bell.follow(first[0], "C", "join", progress(at(2)))  # one has drawn: its place goes on at once
    assert bell._wake.is_set()
    second = bell.check()
    assert len(second) == 1 and second[0] not in first
    clock.now += 3.0  # the two others never drew: their rings count as lost, their places free
    third = bell.check()
    assert third == [*first[1:], *second]  # every ring lost by now: rung again, in their order
    clock.now += 1.0
    bell.follow(first[1], "C", "join", progress(at(2)))
    assert bell.check() == ["s4"]  # its place, and only its place, goes on
    assert bell._waiting == 2 and bell.check() == []


def test_the_bells_thread_checks_as_soon_as_a_place_comes_free() -> None:
    rang: list[str] = []
    pulses = {"C": at(1)}
    bell = Bell(
        pulses.get, lambda sid, page, fragment: rang.append(sid) or True, period_s=60.0, max_ringing=1
    )
    for i in range(2):
        bell.follow(f"s{i}", "C", "join", progress(at(1)))
    pulses["C"] = at(2)
    assert bell.check() == ["s0"] and bell._waiting == 1
    bell.start()
    try:
        bell.follow("s0", "C", "join", progress(at(2)))  # drawn: the thread rings s1 now, not in 60 s
        deadline = time.monotonic() + 10
        while rang != ["s0", "s1"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert rang == ["s0", "s1"]
        assert bell._thread.daemon and bell._thread.name == "class-bell"  # never holds the server's exit
    finally:
        bell.stop()
    bell.leave("never-followed")  # leaving twice, or without following, is nothing
    bell.leave("s0")
    bell.leave("s0")
    assert bell.following() == 1


def test_a_ring_that_raises_is_logged_and_the_others_are_rung(hall, caplog) -> None:
    h, bell, _ = hall
    h.pulses["C"] = at(2)
    bell.follow("bad", "C", "join", progress(at(1)))
    bell.follow("good", "C", "join", progress(at(1)))
    real = h.ring

    def ring(session_id: str, page: str, fragment: str) -> bool:
        if session_id == "bad":
            raise RuntimeError("no loop")
        return real(session_id, page, fragment)

    bell._ring = ring
    assert bell.check() == ["good"]
    assert bell.following() == 1 and "ringing session bad failed" in caplog.text


def test_the_bell_holds_a_bounded_number_of_pages(hall, monkeypatch) -> None:
    _, bell, _ = hall
    monkeypatch.setattr(bell_module, "MAX_FOLLOWERS", 2)
    assert bell.follow("s1", "C", "join", (1, 0, 0, 0)) and bell.follow("s2", "C", "join", (1, 0, 0, 0))
    assert not bell.follow("s3", "C", "join", (1, 0, 0, 0))
    assert bell.follow("s1", "C", "join", (2, 0, 0, 0))  # a page already followed is updated
    assert bell.following() == 2


def test_the_bells_thread_rings_and_survives_a_failing_store() -> None:
    rang, calls = threading.Event(), []

    def pulse_of(class_id: str) -> Pulse:
        calls.append(class_id)
        if len(calls) == 1:
            raise OSError("database is locked")  # one failed round: the thread goes on
        return at(2)

    bell = Bell(pulse_of, lambda sid, page, fragment: rang.set() or True, period_s=0.01)
    bell.follow("s1", "C", "join", progress(at(1)))
    bell.start()
    try:
        assert rang.wait(10), "the bell's thread never rang the page behind"
        assert len(calls) >= 2
        assert bell.start() is bell  # a second start does not start a second thread
    finally:
        bell.stop()
