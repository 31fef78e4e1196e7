"""The students' shared pulse (classroom/pulse_cache.py): one store query per class per quarter
second however many pages ask, and a stale entry never makes a page redraw what it shows."""

from __future__ import annotations

import threading
import time

import pytest

from classroom.model import Pulse
from classroom.pulse_cache import PulseCache, moved_on, progress
from classroom.sqlite_store import SqliteStore


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_pages_of_one_process_share_one_query_per_ttl() -> None:
    clock, calls = Clock(), []
    cache = PulseCache(
        lambda sid: calls.append(sid) or Pulse(len(calls), None, None, True), ttl_s=0.25, clock=clock
    )
    assert [cache.get("a").view_rev for _ in range(30)] == [1] * 30  # 30 students, one query
    clock.now += 0.2
    assert cache.get("a").view_rev == 1 and len(calls) == 1
    clock.now += 0.06  # past the quarter second: the next page to ask refreshes it
    assert cache.get("a").view_rev == 2 and len(calls) == 2
    assert cache.get("b").view_rev == 3 and calls == ["a", "a", "b"]  # one entry per class
    assert cache.fetches == 3


def test_a_gone_class_is_cached_too() -> None:
    calls = []
    cache = PulseCache(lambda sid: calls.append(sid), ttl_s=10)
    assert cache.get("x") is None and cache.get("x") is None and len(calls) == 1


def test_threads_asking_at_once_wait_for_one_query() -> None:
    calls, started = [], threading.Event()

    def slow(sid):
        calls.append(sid)
        started.set()
        time.sleep(0.2)
        return Pulse(1, None, None, True)

    cache = PulseCache(slow, ttl_s=5)
    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("s"))) for _ in range(20)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(5)
    assert len(calls) == 1 and len(results) == 20 and all(r.view_rev == 1 for r in results)


def test_entries_stay_bounded() -> None:
    from classroom import pulse_cache

    cache = PulseCache(lambda sid: Pulse(0, None, None, True), ttl_s=60)
    for i in range(pulse_cache.MAX_SESSIONS * 3):
        cache.get(f"s{i}")
    assert len(cache._entries) <= pulse_cache.MAX_SESSIONS and len(cache._locks) <= pulse_cache.MAX_SESSIONS


DRAWN = progress(Pulse(5, 2, "open", True))


@pytest.mark.parametrize(
    ("pulse", "redraw"),
    [
        (Pulse(5, 2, "open", True), False),  # what the page shows
        (Pulse(4, 2, "open", True), False),  # a cached pulse older than the page's own read
        (Pulse(5, 1, "revealed", True), False),  # an older poll, however far it went
        (Pulse(5, 2, None, True), False),
        (Pulse(6, 2, "open", True), True),  # the teacher moved
        (Pulse(5, 2, "closed", True), True),  # the poll closed
        (Pulse(5, 2, "revealed", True), True),
        (Pulse(5, 3, "open", True), True),  # a new poll
        (Pulse(4, 3, "open", True), True),
        (Pulse(5, 2, "open", False), True),  # the class ended
        (None, True),  # the class is gone
    ],
)
def test_only_a_pulse_ahead_of_the_page_redraws_it(pulse, redraw) -> None:
    assert moved_on(progress(pulse), DRAWN) is redraw


def test_nothing_drawn_yet_redraws() -> None:
    assert moved_on(progress(Pulse(0, None, None, True)), None)


def test_the_cache_follows_a_real_store(tmp_path) -> None:
    store = SqliteStore(tmp_path / "c.sqlite3")
    store.migrate()
    s = store.start_session()
    clock = Clock()
    cache = PulseCache(store.pulse, ttl_s=0.25, clock=clock)
    before = store.queries
    drawn = progress(cache.get(s.session_id))
    store.set_view(s.session_id, s.teacher_token, {"step": 2})
    assert not moved_on(progress(cache.get(s.session_id)), drawn)  # within the quarter second
    clock.now += 0.3
    assert moved_on(progress(cache.get(s.session_id)), drawn)
    assert store.queries - before == 2 + 2  # two pulses; set_view reads the session row, updates it
    store.close()
