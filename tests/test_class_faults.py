"""Issue 34, point 13: faults injected into the live-class store, each of which once left the
class broken: PostgreSQL down at start-up, a failed COMMIT on SQLite, a lone surrogate or a NaN in
the teacher's view (that one on both stores is in tests/test_class_attacks.py, which shares their
PostgreSQL database)."""

from __future__ import annotations

import socket
import sqlite3
import threading
import time

import pytest

from attention_ui.classroom import presenter_hook, state
from classroom import ClassError, StoreSettings, open_store
from classroom.sqlite_store import SqliteStore

T0 = 1_800_000_000.0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


def test_open_store_with_postgresql_down_fails_fast_and_leaks_no_pool(tmp_path):
    settings = StoreSettings(
        database_url=f"postgresql://attnlab@127.0.0.1:{_closed_port()}/attnlab", data_dir=tmp_path,
        class_hours=4, retention_days=7, join_url=None,
    )  # fmt: skip
    before = threading.active_count()
    for _ in range(3):  # three page runs while the database is down
        started = time.monotonic()
        with pytest.raises(Exception) as err:
            open_store(settings)
        assert time.monotonic() - started < 15, "blocked like the 30-s pool wait"  # (was 30 s each)
        assert not isinstance(err.value, ClassError)
    time.sleep(0.2)
    assert threading.active_count() == before, [t.name for t in threading.enumerate()]


def test_a_failed_open_is_not_retried_on_every_page_run(monkeypatch):
    calls = []

    def down():
        calls.append(1)
        raise ConnectionError("database down")

    monkeypatch.setattr(state, "_opened", down)
    monkeypatch.setattr(state, "_FAILED", {})
    for _ in range(5):
        with pytest.raises(ConnectionError):
            state.store()
    assert len(calls) == 1
    state._FAILED["at"] -= state.STORE_RETRY_S + 1  # ten seconds later: tried again
    with pytest.raises(ConnectionError):
        state.store()
    assert len(calls) == 2


class _CommitFailsOnce(sqlite3.Connection):
    armed = False

    def commit(self):
        if type(self).armed:
            type(self).armed = False
            raise sqlite3.OperationalError("disk I/O error (injected)")
        return super().commit()


def test_a_failed_commit_on_sqlite_does_not_poison_the_pool(tmp_path, monkeypatch):
    store = SqliteStore(tmp_path / "c.sqlite3")
    store.migrate()
    real_connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: real_connect(*a, factory=_CommitFailsOnce, **k))
    store.close()
    store = SqliteStore(tmp_path / "c.sqlite3")  # its pool now holds only failing-commit connections
    s = store.start_session(now=T0)
    _CommitFailsOnce.armed = True
    with pytest.raises(sqlite3.OperationalError):
        store.join(s.code, "lost", "addr:192.0.2.1", now=T0 + 1)
    # every later call of this process works (they all failed: "cannot start a transaction within
    # a transaction"), and the failed join left nothing behind
    for i in range(3):
        store.join(s.code, f"n{i}", "addr:192.0.2.1", now=T0 + 2)
    assert store.teacher_session(s.session_id, s.teacher_token).students == 3
    store.close()


def test_publish_never_raises_and_keeps_the_class_for_a_view_it_cannot_share(monkeypatch):
    class Refusing:
        def set_view(self, *a):
            raise ClassError("class.err_too_big", what="view")

    class Failing:
        def set_view(self, *a):
            raise ValueError("Out of range float values are not JSON compliant")

    shown = []
    monkeypatch.setattr(presenter_hook, "_warn", lambda key, values: shown.append(key))
    monkeypatch.setattr(presenter_hook.follow, "view_of", lambda s: {"step": 1})
    cls = {"sid": "s", "token": "t"}
    for db in (Refusing(), Failing()):
        monkeypatch.setattr(state, "store", lambda db=db: db)
        assert presenter_hook.publish(cls) is True  # the class goes on: not "this class has ended"
    assert shown == ["class.err_too_big", "class.err_store"]
