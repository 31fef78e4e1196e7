"""The live-class store's contract, run against SQLite and a real PostgreSQL (tests/class_stores.py).

Each security rule of the live class has a test here that fails when the rule is removed from the
store: teacher actions need the token (compared in constant time), one answer per student per poll
(a constraint), no answers to closed polls, dead join codes, slowed wrong-code bursts, hostile input.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import psycopg
import pytest

from classroom import codes, sqlite_store
from classroom import store as store_module
from classroom.model import NICKNAME_MAX, ClassError, Forbidden, StudentPoll
from classroom.schema import LATEST
from tests.class_stores import (  # noqa: F401  (fixtures used by name)
    TABLES,
    fixture_empty_store_factory,
    fixture_postgres_server,
    fixture_postgres_store,
    fixture_store,
)

HOSTILE = json.loads((Path(__file__).parent / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
INTEGRITY = (sqlite3.IntegrityError, psycopg.errors.IntegrityError)
T0 = 1_800_000_000.0  # a fixed "now" for the tests that move the clock


def raw(store, sql, params=()):
    with store._transaction(write=True) as cur:
        store._run(cur, sql, params)
        try:
            return cur.fetchall()
        except Exception:  # statements without rows
            return None


def started(store, now=T0):
    return store.start_session(now=now)


def joined(store, s, nick=None, client="c-join"):
    return store.join(s.code, nick, client, now=T0 + 1)


def poll(store, s, n=4, correct=2):
    return store.open_poll(
        s.session_id, s.teacher_token, {"kind": "winning_key", "row": 1}, n, correct, 7, now=T0 + 2
    )


# ---------------------------------------------------------------------- schema and migrations
def test_migrations_are_recorded_once_and_rerun_harmlessly(store):
    assert store.schema_version() == LATEST
    assert store.migrate() == LATEST
    assert [r[0] for r in raw(store, "SELECT version FROM schema_version ORDER BY version")] == list(
        range(1, LATEST + 1)
    )


def test_concurrent_start_migrates_once(empty_store_factory):
    """Eight processes' stores migrating one new database at the same instant: no error, one record
    per version (without the backend's migration lock, CREATE TABLE races and fails)."""
    stores = [empty_store_factory() for _ in range(8)]
    barrier, errors = threading.Barrier(len(stores)), []

    def go(s):
        try:
            barrier.wait()
            s.migrate()
        except Exception as exc:  # collected: the assertion below names it
            errors.append(repr(exc))

    threads = [threading.Thread(target=go, args=(s,)) for s in stores]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    rows = raw(stores[0], "SELECT version FROM schema_version ORDER BY version")
    assert [r[0] for r in rows] == list(range(1, LATEST + 1))


def test_many_new_sqlite_files_opened_by_eight_processes_at_once(tmp_path):
    """The race the test above hits only now and then, made likely: 30 new files, each opened and
    migrated by eight stores at the same instant. The first switch of a file to WAL answers
    "database is locked" at once, without the busy timeout, when another connection is switching."""
    failures = []
    for trial in range(30):
        path = tmp_path / f"c{trial}.db"
        stores = [sqlite_store.SqliteStore(path) for _ in range(8)]
        barrier = threading.Barrier(len(stores))

        def go(s, barrier=barrier, trial=trial):
            try:
                barrier.wait()
                s.migrate()
            except Exception as exc:  # collected: the assertion below names it
                failures.append((trial, repr(exc)))

        threads = [threading.Thread(target=go, args=(s,)) for s in stores]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for s in stores:
            s.close()
    assert failures == []


class _LockedThenFree:
    """A connection whose journal-mode switch is refused as locked the first `locked` times."""

    def __init__(self, locked, message="database is locked"):
        self.locked, self.message, self.calls = locked, message, 0

    def execute(self, sql):
        self.calls += 1
        if self.calls <= self.locked:
            raise sqlite3.OperationalError(self.message)
        assert sql == "PRAGMA journal_mode = WAL"


def test_the_wal_switch_retries_while_locked_and_gives_up_after_the_timeout():
    conn = _LockedThenFree(locked=4)
    sqlite_store._switch_to_wal(conn, timeout_ms=5_000)
    assert conn.calls == 5  # four refusals, then the switch
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        sqlite_store._switch_to_wal(_LockedThenFree(locked=10**9), timeout_ms=50)
    other = _LockedThenFree(locked=1, message="disk I/O error")  # not a lock: raised at once
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        sqlite_store._switch_to_wal(other, timeout_ms=5_000)
    assert other.calls == 1


def test_a_newer_schema_is_refused(store):
    raw(store, "INSERT INTO schema_version (version) VALUES (?)", (LATEST + 1,))
    with pytest.raises(RuntimeError, match="newer than this code"):
        store.migrate()


# ---------------------------------------------------------------------- the teacher's token
def test_teacher_token_is_long_random_and_only_its_hash_is_stored(store):
    a, b = started(store), started(store)
    assert len(a.teacher_token) >= 43 and a.teacher_token != b.teacher_token
    assert set(a.code) <= set(codes.CODE_ALPHABET) and len(a.code) == codes.CODE_LENGTH
    dump = json.dumps(raw(store, "SELECT * FROM sessions"))
    assert a.teacher_token not in dump and codes.token_hash(a.teacher_token) in dump


def test_teacher_token_is_compared_in_constant_time(store, monkeypatch):
    s = started(store)
    calls = []
    real = codes.hmac.compare_digest
    monkeypatch.setattr(codes.hmac, "compare_digest", lambda x, y: calls.append(1) or real(x, y))
    store.teacher_session(s.session_id, s.teacher_token)
    with pytest.raises(Forbidden):
        store.teacher_session(s.session_id, "A" * 43)
    assert len(calls) == 2


FORGED = ["", "A" * 43, "' OR '1'='1", "x" * 100_000, None, 12345, "\x00" * 20]


def _teacher_actions(store, s, p, token):
    sid = s.session_id
    return {
        "set_view": lambda: store.set_view(sid, token, {"step": 5}),
        "open_poll": lambda: store.open_poll(sid, token, {"kind": "x"}, 2, 0, 1),
        "close_poll": lambda: store.close_poll(sid, token, p.poll_id),
        "reveal": lambda: store.close_poll(sid, token, p.poll_id, reveal=True),
        "end": lambda: store.end_session(sid, token),
        "tallies": lambda: store.tallies(sid, token),
        "export": lambda: store.export_answers(sid, token),
        "join_url": lambda: store.set_join_url(sid, token, "http://evil.example/"),
        "session": lambda: store.teacher_session(sid, token),
    }


def _snapshot(store):
    return {t: raw(store, f"SELECT * FROM {t} ORDER BY 1") for t in ("sessions", "polls", "answers")}


@pytest.mark.parametrize("forged", [*FORGED, "student", "other-teacher"], ids=repr)
def test_no_teacher_action_without_the_teacher_token(store, forged):
    s = started(store)
    other = started(store)
    student = joined(store, s)
    p = poll(store, s)
    token = {"student": student.student_token, "other-teacher": other.teacher_token}.get(forged, forged)
    before = _snapshot(store)
    for name, action in _teacher_actions(store, s, p, token).items():
        with pytest.raises(Forbidden):
            action()
            pytest.fail(f"{name} ran with a forged token")
    assert _snapshot(store) == before


def test_the_teacher_token_does_everything(store):
    s = started(store)
    p = poll(store, s)
    for action in _teacher_actions(store, s, p, s.teacher_token).values():
        action()
    assert store.teacher_session(s.session_id, s.teacher_token).ended_at is not None


def test_resume_teacher_from_another_device_needs_code_and_key(store):
    s = started(store)
    info = store.resume_teacher(s.code.lower(), s.teacher_token, "dev2", now=T0 + 5)
    assert info.session_id == s.session_id
    with pytest.raises(ClassError) as err:
        store.resume_teacher(s.code, "B" * 43, "dev2", now=T0 + 6)
    assert err.value.key == "class.err_resume"


# ---------------------------------------------------------------------- joining
def test_join_codes_are_forgiving_in_form(store):
    s = started(store)
    typed = " " + s.code[:3].lower() + "-" + s.code[3:] + " "
    j = store.join(typed, "  Ann  ", "c1", now=T0 + 1)
    assert (j.session_id, j.nickname) == (s.session_id, "Ann")
    assert store.resume_student(s.session_id, j.student_token, now=T0 + 2).nickname == "Ann"


@pytest.mark.parametrize("how", ["ended", "expired"])
def test_dead_join_codes_stop_working(store, how):
    s = started(store)
    j = joined(store, s)
    if how == "ended":
        store.end_session(s.session_id, s.teacher_token, now=T0 + 10)
        later = T0 + 20
    else:
        later = s.expires_at + 1
    with pytest.raises(ClassError) as err:
        store.join(s.code, None, "c2", now=later)
    assert err.value.key == "class.err_code"
    assert store.resume_student(s.session_id, j.student_token, now=later) is None
    assert store.pulse(s.session_id, now=later).live is False


def test_a_burst_of_wrong_codes_is_slowed_down(store):
    s = started(store)
    for i in range(store_module.FREE_TRIES):
        with pytest.raises(ClassError) as err:
            store.join("WRONG" + str(i), None, "burst", now=T0 + i)
        assert err.value.key == "class.err_code"
    with pytest.raises(ClassError) as err:  # even the right code must wait now
        store.join(s.code, None, "burst", now=T0 + 5)
    assert err.value.key == "class.err_slow_down" and err.value.values["seconds"] >= 1
    assert store.join(s.code, None, "another-browser", now=T0 + 5).session_id == s.session_id
    assert store.join(s.code, None, "burst", now=T0 + 5 + store_module.MAX_WAIT_S).session_id == s.session_id


# ---------------------------------------------------------------------- answers
def test_one_answer_per_student_per_poll_changeable_while_open(store):
    s = started(store)
    j = joined(store, s)
    p = poll(store, s)
    assert store.answer(s.session_id, j.student_token, p.poll_id, 1)
    assert store.answer(s.session_id, j.student_token, p.poll_id, 3)
    (tally,) = store.tallies(s.session_id, s.teacher_token)
    assert tally.counts == (0, 0, 0, 1)
    assert store.student_poll(s.session_id, j.student_token).my_choice == 3


def test_the_database_itself_refuses_a_second_answer(store):
    s = started(store)
    j = joined(store, s)
    p = poll(store, s)
    store.answer(s.session_id, j.student_token, p.poll_id, 1)
    with pytest.raises(INTEGRITY):
        raw(
            store,
            "INSERT INTO answers (poll_id, session_id, student_hash, choice, answered_at) VALUES (?, ?, ?, ?, ?)",
            (p.poll_id, s.session_id, codes.token_hash(j.student_token), 2, T0),
        )


def test_the_database_itself_refuses_a_second_open_poll(store):
    s = started(store)
    poll(store, s)
    with pytest.raises(INTEGRITY):
        raw(
            store,
            "INSERT INTO polls (id, session_id, seq, step, question_json, n_choices, correct, state, opened_at)"
            " VALUES ('p2', ?, 99, 1, '{}', 2, 0, 'open', 0)",
            (s.session_id,),
        )


@pytest.mark.parametrize("state", ["closed", "revealed"])
def test_a_closed_poll_takes_no_answers(store, state):
    s = started(store)
    a, b = joined(store, s), joined(store, s)
    p = poll(store, s)
    assert store.answer(s.session_id, a.student_token, p.poll_id, 2)
    store.close_poll(s.session_id, s.teacher_token, p.poll_id, reveal=state == "revealed")
    assert not store.answer(s.session_id, a.student_token, p.poll_id, 0)
    assert not store.answer(s.session_id, b.student_token, p.poll_id, 0)
    (tally,) = store.tallies(s.session_id, s.teacher_token)
    assert tally.counts == (0, 0, 1, 0) and tally.poll.state == state


def test_opening_a_poll_closes_the_previous_one(store):
    s = started(store)
    j = joined(store, s)
    first = poll(store, s)
    second = poll(store, s)
    assert second.seq == first.seq + 1
    assert not store.answer(s.session_id, j.student_token, first.poll_id, 0)
    assert store.answer(s.session_id, j.student_token, second.poll_id, 0)


@pytest.mark.parametrize("choice", [-1, 4, 10**12, True, "1", 1.0, None])
def test_answers_outside_the_choices_are_refused(store, choice):
    s = started(store)
    j = joined(store, s)
    p = poll(store, s)
    assert not store.answer(s.session_id, j.student_token, p.poll_id, choice)
    assert store.tallies(s.session_id, s.teacher_token)[0].total == 0


def test_only_the_sessions_own_students_answer(store):
    s, other = started(store), started(store)
    outsider = joined(store, other)
    p = poll(store, s)
    assert not store.answer(s.session_id, outsider.student_token, p.poll_id, 1)
    assert not store.answer(other.session_id, outsider.student_token, p.poll_id, 1)
    assert not store.answer(s.session_id, "F" * 22, p.poll_id, 1)
    assert store.tallies(s.session_id, s.teacher_token)[0].total == 0


def test_students_see_neither_names_nor_answers_and_the_answer_only_after_reveal(store):
    s = started(store)
    a = joined(store, s, "Alice")
    b = joined(store, s, "Bob")
    p = poll(store, s, correct=2)
    store.answer(s.session_id, a.student_token, p.poll_id, 2)
    store.answer(s.session_id, b.student_token, p.poll_id, 1)
    seen = store.student_poll(s.session_id, b.student_token)
    assert (seen.my_choice, seen.correct, seen.share_right) == (1, None, None)
    assert set(vars(seen)) == {f for f in StudentPoll.__dataclass_fields__}
    assert "Alice" not in repr(seen) and "counts" not in StudentPoll.__dataclass_fields__
    store.close_poll(s.session_id, s.teacher_token, p.poll_id, reveal=True)
    seen = store.student_poll(s.session_id, b.student_token)
    assert (seen.correct, seen.share_right) == (2, 0.5)
    with pytest.raises(ClassError):
        store.student_view(s.session_id, "not-a-student-token-at-all")


def test_answers_from_thirty_students_at_once_are_all_counted(store):
    s = started(store)
    students = [store.join(s.code, None, f"c{i}") for i in range(30)]
    p = store.open_poll(s.session_id, s.teacher_token, {"kind": "x"}, 4, 0, 1)
    acks, barrier = [], threading.Barrier(10)

    def go(chunk):
        barrier.wait()
        for i, j in chunk:
            acks.append((i % 4) if store.answer(s.session_id, j.student_token, p.poll_id, i % 4) else None)

    indexed = list(enumerate(students))
    threads = [threading.Thread(target=go, args=(indexed[k::10],)) for k in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    (tally,) = store.tallies(s.session_id, s.teacher_token)
    assert None not in acks and tally.total == len(acks) == 30
    assert tally.counts == tuple(acks.count(c) for c in range(4))


# ---------------------------------------------------------------------- view, export, end, retention
def test_the_view_changes_its_revision_only_when_it_changes(store):
    s = started(store)
    j = joined(store, s)
    assert store.set_view(s.session_id, s.teacher_token, {"step": 3, "text": "the cat"}) == 1
    assert store.set_view(s.session_id, s.teacher_token, {"step": 3, "text": "the cat"}) == 1
    assert store.set_view(s.session_id, s.teacher_token, {"step": 4, "text": "the cat"}) == 2
    assert store.student_view(s.session_id, j.student_token) == (2, {"step": 4, "text": "the cat"})
    assert store.pulse(s.session_id).view_rev == 2
    with pytest.raises(ClassError) as err:
        store.set_view(s.session_id, s.teacher_token, {"text": "x" * 20_000})
    assert err.value.key == "class.err_too_big" and store.pulse(s.session_id).view_rev == 2


def test_a_students_page_reads_pulse_view_and_poll_in_one_transaction(store, monkeypatch):
    s = started(store)
    a, b = joined(store, s), joined(store, s)
    store.set_view(s.session_id, s.teacher_token, {"step": 5, "text": "the cat"})
    p = poll(store, s)
    store.answer(s.session_id, a.student_token, p.poll_id, 3)
    transactions = []
    enter = store._transaction
    monkeypatch.setattr(store, "_transaction", lambda write: transactions.append(write) or enter(write))
    for who in (a, b):
        page = store.student_page(s.session_id, who.student_token)
        assert transactions == [False]  # one read transaction, not three
        transactions.clear()
        assert page.pulse == store.pulse(s.session_id)
        assert (page.view_rev, page.view) == store.student_view(s.session_id, who.student_token)
        assert page.poll == store.student_poll(s.session_id, who.student_token)
        transactions.clear()
    assert (page.view, page.poll.my_choice) == ({"step": 5, "text": "the cat"}, None)  # b's own, not a's
    assert store.student_page(s.session_id, a.student_token).poll.my_choice == 3
    with pytest.raises(ClassError):
        store.student_page(s.session_id, "not-a-student-token-at-all")
    assert store.student_page("no such class", a.student_token) is None
    assert store.student_page(None, a.student_token) is None
    store.end_session(s.session_id, s.teacher_token)
    over = store.student_page(s.session_id, "not-a-student-token-at-all")  # over: nothing more is read
    assert over.pulse.live is False and (over.view_rev, over.view, over.poll) == (None, None, None)


def test_export_names_only_students_who_gave_a_nickname(store):
    s = started(store)
    a, b = joined(store, s, "Alice"), joined(store, s)
    p = poll(store, s)
    store.answer(s.session_id, a.student_token, p.poll_id, 2)
    store.answer(s.session_id, b.student_token, p.poll_id, 0)
    assert store.export_answers(s.session_id, s.teacher_token) == [(1, "Alice", 2)]


def test_ending_closes_the_open_poll_and_keeps_results_for_export(store):
    s = started(store)
    j = joined(store, s)
    p = poll(store, s)
    store.answer(s.session_id, j.student_token, p.poll_id, 2, now=T0 + 3)
    store.end_session(s.session_id, s.teacher_token, now=T0 + 4)
    assert not store.answer(s.session_id, j.student_token, p.poll_id, 1, now=T0 + 5)
    (tally,) = store.tallies(s.session_id, s.teacher_token)
    assert tally.poll.state == "closed" and tally.counts == (0, 0, 1, 0)
    with pytest.raises(ClassError):
        store.set_view(s.session_id, s.teacher_token, {"step": 1})


def test_retention_removes_old_classes_with_everything_in_them(store):
    s, fresh = started(store), started(store, now=T0 + 30 * 86400)
    j = joined(store, s)
    store.answer(s.session_id, j.student_token, poll(store, s).poll_id, 1, now=T0 + 3)
    store.end_session(s.session_id, s.teacher_token, now=T0 + 3600)
    assert store.purge(7, now=T0 + 3600 + 6 * 86400) == 0
    assert store.purge(7, now=T0 + 3600 + 8 * 86400) == 1
    for table in ("students", "polls", "answers"):
        assert raw(store, f"SELECT COUNT(*) FROM {table} WHERE session_id = ?", (s.session_id,))[0][0] == 0
    assert store.pulse(fresh.session_id) is not None


# ---------------------------------------------------------------------- hostile input
def test_a_100_kb_nickname_is_refused_and_nothing_is_stored(store):
    s = started(store)
    with pytest.raises(ClassError) as err:
        store.join(s.code, "N" * 100_000, "c1")
    assert err.value.key == "class.err_nickname_long" and err.value.values["limit"] == NICKNAME_MAX
    assert raw(store, "SELECT COUNT(*) FROM students")[0][0] == 0


@pytest.mark.parametrize("nick", ["a\x00b", "bell\x07", "line\nbreak", "\u202eevil", "tab\there"], ids=repr)
def test_control_characters_in_a_nickname_are_refused(store, nick):
    s = started(store)
    with pytest.raises(ClassError) as err:
        store.join(s.code, nick, "c1")
    assert err.value.key == "class.err_nickname_chars"
    assert raw(store, "SELECT COUNT(*) FROM students")[0][0] == 0


def test_sql_in_a_nickname_is_kept_as_text(store):
    s = started(store)
    nick = "'); DROP TABLE answers;--"[:NICKNAME_MAX]
    j = store.join(s.code, nick, "c1")
    p = poll(store, s)
    store.answer(s.session_id, j.student_token, p.poll_id, 1)
    assert store.export_answers(s.session_id, s.teacher_token) == [(1, nick, 1)]
    for table in TABLES:
        raw(store, f"SELECT COUNT(*) FROM {table}")  # every table is still there


def test_the_hostile_corpus_as_nicknames_and_codes(store):
    s = started(store)
    for n, case in enumerate(HOSTILE["texts"]):
        text = case["text"]
        try:
            j = store.join(s.code, text, f"nick{n}")
        except ClassError as err:
            assert err.key.startswith("class.err_nickname")
        else:
            assert j.nickname is None or (j.nickname == text.strip() or len(j.nickname) <= NICKNAME_MAX)
        with pytest.raises(ClassError):
            store.join(text, None, f"code{n}")
    for n, query in enumerate(HOSTILE["query_strings"]):
        with pytest.raises(ClassError) as err:
            store.join(str(query), None, f"qs{n}")
        assert err.value.key == "class.err_code"
    assert store.pulse("'; DROP TABLE sessions;--") is None
