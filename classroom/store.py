"""The store's interface and its one SQL implementation, shared by the SQLite and PostgreSQL backends.

Every teacher action takes the session id and the teacher's token; the token's hash is compared in
constant time before anything is read or changed (:class:`~classroom.model.Forbidden` otherwise).
Student actions take the student's token, whose hash names the student. Every value reaches SQL
as a parameter; the SQL text is constant. A backend supplies :meth:`SqlStore._transaction`
(a connection inside one transaction) and its parameter style.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager

from . import codes
from .model import (
    CLASS_HOURS_DEFAULT,
    MAX_CHOICES,
    QUESTION_MAX_BYTES,
    RETENTION_DAYS_DEFAULT,
    VIEW_MAX_BYTES,
    ClassError,
    Forbidden,
    Joined,
    Poll,
    PollTally,
    Pulse,
    SessionInfo,
    Started,
    StudentPage,
    StudentPoll,
    clean_nickname,
    icu_ready,
    nickname_skeleton,
)
from .schema import LATEST, MIGRATIONS

# A burst of wrong codes (or teacher keys) from one client address: the first FREE_TRIES within
# FAILURE_WINDOW_S are free, then each further try must wait 2, 4, 8 ... up to MAX_WAIT_S seconds
# after the last failure, even with the right join code (a code is short: it can be guessed); the
# right teacher key is never made to wait (43 random characters cannot be). The key is the client's address (see
# classroom/client.py), which a client cannot rotate the way it can a cookie; a whole school behind
# one NAT address shares it, hence more free tries than one typist needs.
FREE_TRIES = 10
FAILURE_WINDOW_S = 600.0
MAX_WAIT_S = 60.0
# Across all addresses: once ALL_FREE_TRIES wrong codes arrived in the window (a guesser with many
# addresses), every address that has itself failed in the window waits as if past its free tries.
ALL_FREE_TRIES = 200
JOIN_FAILURES_MAX = 20_000  # rows kept at most; the oldest go first (a flood cannot fill the disk)
# Identities one client address may make in one class (a school's NAT address: a whole class).
JOINS_PER_ADDRESS = 100
# Classes one client address may start within STARTS_WINDOW_S.
STARTS_PER_ADDRESS = 20
STARTS_WINDOW_S = 3600.0
PURGE_EVERY_S = 600.0  # old classes and join failures are also removed this often (see _maybe_purge)
JOIN_URL_MAX = 500


_SURROGATE = re.compile("[\ud800-\udfff]")


def _finite(value: object) -> object:
    """``value`` with NaN and infinities as None (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _dumps(value: dict, limit: int, what: str) -> str:
    """JSON for the store. A lone surrogate (from a pasted broken emoji) becomes U+FFFD and a NaN or
    infinity becomes null: neither may stop a teacher's view from reaching the class."""
    try:
        text = json.dumps(_finite(value), ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        raise ClassError("class.err_too_big", what=what) from None
    text = _SURROGATE.sub("\ufffd", text)
    if len(text.encode()) > limit:
        raise ClassError("class.err_too_big", what=what)
    return text


class ClassStore(ABC):
    """Sessions, the teacher's current view, polls and answers (see the module docstring)."""

    @abstractmethod
    def migrate(self) -> int: ...
    @abstractmethod
    def start_session(self, *, hours: float = CLASS_HOURS_DEFAULT, join_url: str | None = None,
                      now: float | None = None, client_key: str | None = None) -> Started: ...  # fmt: skip
    @abstractmethod
    def teacher_session(self, session_id: str, token: str, now: float | None = None) -> SessionInfo: ...
    @abstractmethod
    def resume_teacher(
        self, code: str, token: str, client_key: str, now: float | None = None
    ) -> SessionInfo: ...
    @abstractmethod
    def set_view(self, session_id: str, token: str, view: dict) -> int: ...
    @abstractmethod
    def set_join_url(self, session_id: str, token: str, url: str | None) -> None: ...
    @abstractmethod
    def end_session(self, session_id: str, token: str, now: float | None = None) -> None: ...
    @abstractmethod
    def open_poll(self, session_id: str, token: str, question: dict, n_choices: int, correct: int,
                  step: int, now: float | None = None) -> Poll: ...  # fmt: skip
    @abstractmethod
    def close_poll(self, session_id: str, token: str, poll_id: str, *, reveal: bool = False,
                   now: float | None = None) -> None: ...  # fmt: skip
    @abstractmethod
    def tallies(self, session_id: str, token: str) -> list[PollTally]: ...
    @abstractmethod
    def export_answers(self, session_id: str, token: str) -> list[tuple[int, str, int]]: ...
    @abstractmethod
    def join(self, code: str, nickname: object, client_key: str, now: float | None = None, *,
             device: str | None = None) -> Joined: ...  # fmt: skip
    @abstractmethod
    def set_one_per_device(self, session_id: str, token: str, on: bool) -> None: ...
    @abstractmethod
    def resume_student(
        self, session_id: str, student_token: str, now: float | None = None
    ) -> Joined | None: ...
    @abstractmethod
    def pulse(self, session_id: str, now: float | None = None) -> Pulse | None: ...
    @abstractmethod
    def student_view(self, session_id: str, student_token: str) -> tuple[int, dict]: ...
    @abstractmethod
    def student_poll(self, session_id: str, student_token: str) -> StudentPoll | None: ...
    @abstractmethod
    def student_page(
        self, session_id: str, student_token: str, now: float | None = None
    ) -> StudentPage | None: ...
    @abstractmethod
    def answer(self, session_id: str, student_token: str, poll_id: str, choice: int,
               now: float | None = None) -> bool: ...  # fmt: skip
    @abstractmethod
    def answer_refusal(self, session_id: str, student_token: str, poll_id: str, choice: int,
                       now: float | None = None) -> str: ...  # fmt: skip
    @abstractmethod
    def purge(self, retention_days: float = RETENTION_DAYS_DEFAULT, now: float | None = None) -> int: ...
    @abstractmethod
    def close(self) -> None: ...


class SqlStore(ClassStore):
    """The shared SQL. Subclasses: :class:`classroom.sqlite_store.SqliteStore`,
    :class:`classroom.postgres_store.PostgresStore`."""

    param = "?"  # the backend's placeholder; the SQL below is written with "?"
    for_update = ""  # row lock where the database has one (PostgreSQL: " FOR UPDATE")
    dialect = "sql"

    def __init__(self) -> None:
        self._count_lock = threading.Lock()
        self.queries = 0  # statements run by this process (bench/classroom_live.py reads it)
        self.retention_days = RETENTION_DAYS_DEFAULT  # open_store sets these from the settings
        self.joins_per_address = JOINS_PER_ADDRESS
        self.free_tries = FREE_TRIES
        self.starts_per_address = STARTS_PER_ADDRESS
        self._next_purge = 0.0

    # ------------------------------------------------------------------ plumbing
    @abstractmethod
    @contextmanager
    def _transaction(self, write: bool) -> Iterator[object]:
        """A cursor inside one transaction: committed on success, rolled back on an exception."""

    def _sql(self, sql: str) -> str:
        return sql if self.param == "?" else sql.replace("?", self.param)

    def _run(self, cur, sql: str, params: tuple = ()) -> object:
        with self._count_lock:
            self.queries += 1
        cur.execute(self._sql(sql), params)
        return cur

    def _one(self, cur, sql: str, params: tuple = ()):
        return self._run(cur, sql, params).fetchone()

    def _all(self, cur, sql: str, params: tuple = ()) -> list:
        return list(self._run(cur, sql, params).fetchall())

    @staticmethod
    def _now(now: float | None) -> float:
        return time.time() if now is None else float(now)

    def _apply_migrations(self, cur) -> int:
        """Inside a transaction that holds the backend's migration lock."""
        self._run(cur, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = self._one(cur, "SELECT MAX(version) FROM schema_version")
        current = int(row[0]) if row and row[0] is not None else 0
        if current > LATEST:
            raise RuntimeError(
                f"the class database has schema version {current}, newer than this code ({LATEST}):"
                " update Attention Lab on every machine"
            )
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            for statement in statements:
                self._run(cur, statement)
            self._run(cur, "INSERT INTO schema_version (version) VALUES (?)", (version,))
        return LATEST

    def schema_version(self) -> int:
        with self._transaction(write=False) as cur:
            row = self._one(cur, "SELECT MAX(version) FROM schema_version")
        return int(row[0])

    # ------------------------------------------------------------------ checks
    def _teacher(self, cur, session_id: object, token: object, *, lock: bool = False):
        """The session row (id, code, created, expires, ended, join_url, view_json, rev) if ``token``
        is its teacher's; Forbidden otherwise (also for an unknown session, so ids cannot be probed)."""
        if not isinstance(session_id, str) or len(session_id) > 64:
            raise Forbidden()
        row = self._one(
            cur,
            "SELECT id, code, created_at, expires_at, ended_at, join_url, view_json, view_rev, teacher_hash"
            " FROM sessions WHERE id = ?" + (self.for_update if lock else ""),
            (session_id,),
        )
        if row is None or not codes.token_matches(token, row[8]):
            raise Forbidden()
        return row

    @staticmethod
    def _live(row, now: float) -> bool:
        return row[4] is None and now < row[3]

    def _require_live(self, row, now: float) -> None:
        if not self._live(row, now):
            raise ClassError("class.err_session_over")

    @staticmethod
    def _backoff(rows: list, free: int, now: float) -> float:
        """Seconds left to wait after ``rows`` (failure times, newest first) with ``free`` free tries."""
        if len(rows) < free:
            return 0.0
        wait = min(MAX_WAIT_S, 2.0 ** (len(rows) - free + 1))
        return max(0.0, rows[0][0] + wait - now)

    def _failures(self, cur, key: str, now: float) -> list:
        return self._all(
            cur,
            "SELECT at FROM join_failures WHERE client_key = ? AND at > ? ORDER BY at DESC",
            (codes.key_hash(key), now - FAILURE_WINDOW_S),
        )

    def _wait_left(self, cur, client_key: str, now: float) -> tuple[float, str]:
        """Seconds this address must still wait, and why: "address" (its own wrong codes) or
        "everyone" (wrong codes from many addresses, and it typed one too)."""
        own = self._failures(cur, client_key, now)
        wait = self._backoff(own, self.free_tries, now)
        if own and not wait:  # under attack from many addresses: no free tries left for anyone
            everyone = self._one(
                cur, "SELECT COUNT(*) FROM join_failures WHERE at > ?", (now - FAILURE_WINDOW_S,)
            )[0]
            if everyone >= ALL_FREE_TRIES:
                return self._backoff(own, 0, now), "everyone"
        return wait, "address"

    def _fail(self, client_key: str, now: float, key: str) -> ClassError:
        """Record a wrong code (or key) from ``client_key``; old rows go, and at most
        JOIN_FAILURES_MAX stay."""
        with self._transaction(write=True) as cur:
            self._run(
                cur,
                "INSERT INTO join_failures (client_key, at) VALUES (?, ?)",
                (codes.key_hash(client_key), now),
            )
            self._run(cur, "DELETE FROM join_failures WHERE at <= ?", (now - FAILURE_WINDOW_S,))
            self._run(
                cur,
                "DELETE FROM join_failures WHERE at < (SELECT at FROM join_failures"
                " ORDER BY at DESC LIMIT 1 OFFSET ?)",
                (JOIN_FAILURES_MAX - 1,),
            )
        return ClassError(key)

    @staticmethod
    def _client(client_key: object) -> str:
        if not isinstance(client_key, str) or not client_key or len(client_key) > 200:
            raise ClassError("class.err_no_client")
        return client_key

    def _throttle(
        self, client_key: object, now: float, keys=("class.err_slow_down", "class.err_slow_down_all")
    ) -> str:
        """``client_key`` if it may try a code now; else the refusal that names why (``keys``: the
        message for its own wrong tries, and for a store-wide flood of them)."""
        client_key = self._client(client_key)
        self._maybe_purge()
        with self._transaction(write=False) as cur:
            wait, why = self._wait_left(cur, client_key, now)
        if wait > 0:
            raise ClassError(keys[why == "everyone"], seconds=int(wait) + 1)
        return client_key

    # ------------------------------------------------------------------ teacher
    def start_session(
        self, *, hours=CLASS_HOURS_DEFAULT, join_url=None, now=None, client_key=None
    ) -> Started:
        """A new class. ``client_key`` (the starting browser's address, classroom/client.py): at
        most STARTS_PER_ADDRESS classes per STARTS_WINDOW_S from one address; None only for the
        server's own callers (tests, benches). Refused in a process without PyICU: its students'
        nicknames could not be checked for look-alikes (classroom/model.py)."""
        now = self._now(now)
        if not icu_ready():
            raise ClassError("class.err_no_icu")
        if not (isinstance(hours, int | float) and 0 < hours <= 48):
            raise ClassError("class.err_hours")
        join_url = _clean_url(join_url)
        creator = None
        if client_key is not None:
            creator = codes.key_hash(self._client(client_key))
        self._maybe_purge()
        token = codes.new_teacher_token()
        for _ in range(20):  # a code still held by a live or retained session: draw another
            session_id, code = codes.new_id(), codes.new_code()
            with self._transaction(write=True) as cur:
                if creator is not None:
                    recent = self._one(
                        cur,
                        "SELECT COUNT(*) FROM sessions WHERE creator_hash = ? AND created_at > ?",
                        (creator, now - STARTS_WINDOW_S),
                    )[0]
                    if recent >= self.starts_per_address:
                        raise ClassError("class.err_too_many_classes", n=self.starts_per_address)
                if self._one(cur, "SELECT 1 FROM sessions WHERE code = ?", (code,)):
                    continue
                self._run(
                    cur,
                    "INSERT INTO sessions (id, code, teacher_hash, created_at, expires_at, join_url, creator_hash)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (session_id, code, codes.token_hash(token), now, now + hours * 3600, join_url, creator),
                )
            return Started(session_id, code, token, now + hours * 3600)
        raise RuntimeError("no free join code after 20 draws")

    def _info(self, cur, row) -> SessionInfo:
        students = self._one(cur, "SELECT COUNT(*) FROM students WHERE session_id = ?", (row[0],))[0]
        # Identities whose address made more than one, and the most any one address made.
        shared = self._one(
            cur,
            "SELECT COALESCE(SUM(n), 0), COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n FROM students"
            " WHERE session_id = ? AND client_hash IS NOT NULL GROUP BY client_hash) AS per_address"
            " WHERE n > 1",
            (row[0],),
        )
        one = self._one(cur, "SELECT one_per_device FROM sessions WHERE id = ?", (row[0],))[0]
        return SessionInfo(
            row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6]), row[7], students,
            int(shared[0]), int(shared[1]), bool(one),
        )  # fmt: skip

    def teacher_session(self, session_id, token, now=None) -> SessionInfo:
        with self._transaction(write=False) as cur:
            return self._info(cur, self._teacher(cur, session_id, token))

    def resume_teacher(self, code, token, client_key, now=None) -> SessionInfo:
        """Control from another device or after a reload: the join code plus the saved teacher key.

        The right pair always works, at once: the key is 43 random characters, so no number of
        wrong tries brings a guesser nearer, and a lock on it only let anyone who read the
        projected code lock the teacher out (ten wrong keys for the class used to refuse the right
        one too). A wrong pair counts against its address like a wrong join code, and an address
        past its free tries is told to wait, and why."""
        now = self._now(now)
        client_key = self._client(client_key)
        normal = codes.normalise_code(code)
        with self._transaction(write=False) as cur:
            row = normal and self._one(cur, "SELECT id FROM sessions WHERE code = ?", (normal,))
            if row:
                try:
                    return self._info(cur, self._teacher(cur, row[0], token))
                except Forbidden:
                    pass
        self._throttle(client_key, now, ("class.err_resume_slow", "class.err_resume_slow_all"))
        raise self._fail(client_key, now, "class.err_resume")

    def set_one_per_device(self, session_id, token, on: bool) -> None:
        """The teacher's "one vote per device": from now on a device (a browser cookie plus its
        address) joins this class once, and answers count once per device."""
        with self._transaction(write=True) as cur:
            self._teacher(cur, session_id, token, lock=True)
            self._run(cur, "UPDATE sessions SET one_per_device = ? WHERE id = ?", (int(bool(on)), session_id))

    def set_view(self, session_id, token, view) -> int:
        if not isinstance(view, dict):
            raise ClassError("class.err_too_big", what="view")
        text = _dumps(view, VIEW_MAX_BYTES, "view")
        now = self._now(None)
        with self._transaction(write=True) as cur:
            row = self._teacher(cur, session_id, token, lock=True)
            self._require_live(row, now)
            if text == row[6]:
                return row[7]
            self._run(
                cur,
                "UPDATE sessions SET view_json = ?, view_rev = view_rev + 1 WHERE id = ?",
                (text, session_id),
            )
            return row[7] + 1

    def set_join_url(self, session_id, token, url) -> None:
        url = _clean_url(url)
        with self._transaction(write=True) as cur:
            self._teacher(cur, session_id, token, lock=True)
            self._run(cur, "UPDATE sessions SET join_url = ? WHERE id = ?", (url, session_id))

    def end_session(self, session_id, token, now=None) -> None:
        now = self._now(now)
        with self._transaction(write=True) as cur:
            row = self._teacher(cur, session_id, token, lock=True)
            if row[4] is None:
                self._run(cur, "UPDATE sessions SET ended_at = ? WHERE id = ?", (now, session_id))
                self._run(
                    cur,
                    "UPDATE polls SET state = 'closed', closed_at = ? WHERE session_id = ? AND state = 'open'",
                    (now, session_id),
                )

    def open_poll(self, session_id, token, question, n_choices, correct, step, now=None) -> Poll:
        now = self._now(now)
        if not (isinstance(n_choices, int) and 2 <= n_choices <= MAX_CHOICES):
            raise ClassError("class.err_poll")
        if not (isinstance(correct, int) and 0 <= correct < n_choices and isinstance(step, int)):
            raise ClassError("class.err_poll")
        text = _dumps(question, QUESTION_MAX_BYTES, "question")
        with self._transaction(write=True) as cur:
            row = self._teacher(cur, session_id, token, lock=True)
            self._require_live(row, now)
            self._run(
                cur,
                "UPDATE polls SET state = 'closed', closed_at = ? WHERE session_id = ? AND state = 'open'",
                (now, session_id),
            )
            seq = self._one(
                cur, "SELECT COALESCE(MAX(seq), 0) + 1 FROM polls WHERE session_id = ?", (session_id,)
            )[0]
            poll_id = codes.new_id()
            self._run(
                cur,
                "INSERT INTO polls (id, session_id, seq, step, question_json, n_choices, correct, state, opened_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?)",
                (poll_id, session_id, seq, step, text, n_choices, correct, now),
            )
        return Poll(poll_id, seq, step, json.loads(text), n_choices, correct, "open")

    def close_poll(self, session_id, token, poll_id, *, reveal=False, now=None) -> None:
        now = self._now(now)
        with self._transaction(write=True) as cur:
            self._teacher(cur, session_id, token, lock=True)
            self._run(
                cur,
                "UPDATE polls SET state = ?, closed_at = COALESCE(closed_at, ?) WHERE id = ? AND session_id = ?",
                ("revealed" if reveal else "closed", now, poll_id, session_id),
            )

    def _poll(self, row) -> Poll:
        return Poll(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6])

    _POLL_COLUMNS = "id, seq, step, question_json, n_choices, correct, state"

    def _counts(self, cur, poll: Poll) -> tuple[int, ...]:
        counts = [0] * poll.n_choices
        for choice, n in self._all(
            cur, "SELECT choice, COUNT(*) FROM answers WHERE poll_id = ? GROUP BY choice", (poll.poll_id,)
        ):
            if 0 <= choice < poll.n_choices:
                counts[choice] = int(n)
        return tuple(counts)

    def tallies(self, session_id, token) -> list[PollTally]:
        with self._transaction(write=False) as cur:
            self._teacher(cur, session_id, token)
            rows = self._all(
                cur,
                f"SELECT {self._POLL_COLUMNS} FROM polls WHERE session_id = ? ORDER BY seq",
                (session_id,),
            )
            return [PollTally(p, self._counts(cur, p)) for p in map(self._poll, rows)]

    def export_answers(self, session_id, token) -> list[tuple[int, str, int]]:
        """(poll seq, nickname, choice) for the students who gave a nickname, in poll order."""
        with self._transaction(write=False) as cur:
            self._teacher(cur, session_id, token)
            rows = self._all(
                cur,
                "SELECT p.seq, s.nickname, a.choice FROM answers a"
                " JOIN polls p ON p.id = a.poll_id"
                " JOIN students s ON s.session_id = a.session_id AND s.student_hash = a.student_hash"
                " WHERE a.session_id = ? AND s.nickname IS NOT NULL ORDER BY p.seq, s.nickname, a.choice",
                (session_id,),
            )
        return [(int(a), str(b), int(c)) for a, b, c in rows]

    # ------------------------------------------------------------------ students
    def join(self, code, nickname, client_key, now=None, *, device=None) -> Joined:
        """A new identity in the class of ``code``. ``client_key`` is the client's address
        (classroom/client.py): wrong codes from it are throttled and it makes at most
        ``joins_per_address`` identities per class. ``device``: this browser's cookie value; with the
        teacher's "one vote per device" on, one identity per (device, address) and a device is needed."""
        now = self._now(now)
        nickname = clean_nickname(nickname)  # before the throttle: a bad nickname is not a guess
        client_key = self._throttle(client_key, now)
        normal = codes.normalise_code(code)
        if normal is None:
            raise self._fail(client_key, now, "class.err_code")
        if device is not None and (not isinstance(device, str) or not 0 < len(device) <= 300):
            device = None
        token = codes.new_student_token()
        with self._transaction(write=True) as cur:
            row = self._one(
                cur,
                "SELECT id, ended_at, expires_at, one_per_device FROM sessions WHERE code = ?"
                + self.for_update,
                (normal,),
            )
            live = row is not None and row[1] is None and now < row[2]
            if live:
                sid = row[0]
                client = codes.key_hash(sid + "\n" + client_key)
                dev = None if device is None else codes.key_hash(sid + "\n" + client_key + "\n" + device)
                made = self._one(
                    cur,
                    "SELECT COUNT(*) FROM students WHERE session_id = ? AND client_hash = ?",
                    (sid, client),
                )[0]
                if made >= self.joins_per_address:
                    raise ClassError("class.err_joins_per_address", n=self.joins_per_address)
                if row[3]:
                    if dev is None:
                        raise ClassError("class.err_device_needed")
                    if self._one(
                        cur, "SELECT 1 FROM students WHERE session_id = ? AND device_hash = ?", (sid, dev)
                    ):
                        raise ClassError("class.err_device_joined")
                skeleton = None if nickname is None else nickname_skeleton(nickname)
                if skeleton is not None and self._one(
                    cur,
                    "SELECT 1 FROM students WHERE session_id = ? AND nickname_skeleton = ?",
                    (sid, skeleton),
                ):
                    raise ClassError("class.err_nickname_taken")
                self._run(
                    cur,
                    "INSERT INTO students (session_id, student_hash, nickname, joined_at, client_hash, device_hash,"
                    " nickname_skeleton) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (sid, codes.token_hash(token), nickname, now, client, dev, skeleton),
                )
        if not live:
            raise self._fail(client_key, now, "class.err_code")
        return Joined(row[0], normal, token, nickname)

    def resume_student(self, session_id, student_token, now=None) -> Joined | None:
        """The student again after a reload (their token kept in the browser), or None if gone."""
        now = self._now(now)
        if not codes.well_formed(student_token) or not isinstance(session_id, str) or len(session_id) > 64:
            return None
        with self._transaction(write=False) as cur:
            row = self._one(
                cur,
                "SELECT s.code, st.nickname FROM students st JOIN sessions s ON s.id = st.session_id"
                " WHERE st.session_id = ? AND st.student_hash = ? AND s.ended_at IS NULL AND s.expires_at > ?",
                (session_id, codes.token_hash(student_token), now),
            )
        return None if row is None else Joined(session_id, row[0], student_token, row[1])

    def pulse(self, session_id, now=None) -> Pulse | None:
        now = self._now(now)
        self._maybe_purge()
        if not isinstance(session_id, str) or len(session_id) > 64:
            return None
        with self._transaction(write=False) as cur:
            return self._pulse(cur, session_id, now)

    def _pulse(self, cur, session_id: str, now: float) -> Pulse | None:
        row = self._one(
            cur,
            "SELECT s.view_rev, s.ended_at, s.expires_at, p.seq, p.state FROM sessions s"
            " LEFT JOIN polls p ON p.session_id = s.id"
            " AND p.seq = (SELECT MAX(seq) FROM polls WHERE session_id = s.id) WHERE s.id = ?",
            (session_id,),
        )
        if row is None:
            return None
        return Pulse(row[0], row[3], row[4], row[1] is None and now < row[2])

    def _student(self, cur, session_id, student_token) -> str:
        if not codes.well_formed(student_token):
            raise ClassError("class.err_not_joined")
        hashed = codes.token_hash(student_token)
        if not self._one(
            cur, "SELECT 1 FROM students WHERE session_id = ? AND student_hash = ?", (session_id, hashed)
        ):
            raise ClassError("class.err_not_joined")
        return hashed

    def student_view(self, session_id, student_token) -> tuple[int, dict]:
        with self._transaction(write=False) as cur:
            self._student(cur, session_id, student_token)
            return self._view(cur, session_id)

    def _view(self, cur, session_id: str) -> tuple[int, dict]:
        rev, text = self._one(cur, "SELECT view_rev, view_json FROM sessions WHERE id = ?", (session_id,))
        return rev, json.loads(text)

    def student_poll(self, session_id, student_token) -> StudentPoll | None:
        with self._transaction(write=False) as cur:
            return self._student_poll(cur, session_id, self._student(cur, session_id, student_token))

    def _student_poll(self, cur, session_id: str, hashed: str) -> StudentPoll | None:
        row = self._one(
            cur,
            f"SELECT {self._POLL_COLUMNS} FROM polls WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
            (session_id,),
        )
        if row is None:
            return None
        poll = self._poll(row)
        mine = self._one(
            cur,
            "SELECT choice FROM answers WHERE poll_id = ? AND student_hash = ?",
            (poll.poll_id, hashed),
        )
        revealed = poll.state == "revealed"
        share = PollTally(poll, self._counts(cur, poll)).share_right if revealed else None
        return StudentPoll(
            poll.poll_id, poll.seq, poll.question, poll.n_choices, poll.state,
            None if mine is None else int(mine[0]), poll.correct if revealed else None, share, poll.step,
        )  # fmt: skip

    def student_page(self, session_id, student_token, now=None) -> StudentPage | None:
        """:meth:`pulse`, and while the class is live :meth:`student_view` and :meth:`student_poll`,
        read in one transaction: a student's full run, 150 of them at once in a hall, takes one
        connection and one BEGIN/COMMIT instead of three (issue 47). None for an unknown class;
        a live class this student is not in raises ClassError("class.err_not_joined"), as
        student_view does."""
        now = self._now(now)
        self._maybe_purge()
        if not isinstance(session_id, str) or len(session_id) > 64:
            return None
        with self._transaction(write=False) as cur:
            pulse = self._pulse(cur, session_id, now)
            if pulse is None or not pulse.live:
                return None if pulse is None else StudentPage(pulse, None, None, None)
            hashed = self._student(cur, session_id, student_token)
            rev, view = self._view(cur, session_id)
            return StudentPage(pulse, rev, view, self._student_poll(cur, session_id, hashed))

    def answer(self, session_id, student_token, poll_id, choice, now=None) -> bool:
        """Record (or change) the student's answer; True only if the store took it: the poll is open,
        in a live session, the student is in it, the choice exists. One row per student and poll."""
        now = self._now(now)
        if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < MAX_CHOICES:
            return False  # (also keeps a huge number from reaching an INTEGER column)
        if not isinstance(poll_id, str) or len(poll_id) > 64:
            return False
        if not codes.well_formed(student_token) or not isinstance(session_id, str):
            return False
        hashed = codes.token_hash(student_token)
        with self._transaction(write=True) as cur:
            cur = self._run(
                cur,
                "INSERT INTO answers (poll_id, session_id, student_hash, choice, answered_at)"
                " SELECT p.id, p.session_id, st.student_hash, ?, ? FROM polls p"
                " JOIN sessions s ON s.id = p.session_id"
                " JOIN students st ON st.session_id = p.session_id AND st.student_hash = ?"
                " WHERE p.id = ? AND p.session_id = ? AND p.state = 'open' AND ? >= 0 AND ? < p.n_choices"
                " AND s.ended_at IS NULL AND s.expires_at > ?"
                # one vote per device: not when another identity of this device answered this poll
                " AND (s.one_per_device = 0 OR st.device_hash IS NULL OR NOT EXISTS (SELECT 1 FROM answers a"
                " JOIN students o ON o.session_id = a.session_id AND o.student_hash = a.student_hash"
                " WHERE a.poll_id = p.id AND o.device_hash = st.device_hash AND o.student_hash <> st.student_hash))"
                " ON CONFLICT (poll_id, student_hash) DO UPDATE SET choice = excluded.choice,"
                " answered_at = excluded.answered_at",
                (choice, now, hashed, poll_id, session_id, choice, choice, now),
            )
            return cur.rowcount == 1

    def answer_refusal(self, session_id, student_token, poll_id, choice, now=None) -> str:
        """Why :meth:`answer` did not take this answer, as a ``class.*`` catalog key: what the
        student reads (the true cause, not always "the poll has closed")."""
        now = self._now(now)
        if not codes.well_formed(student_token) or not isinstance(session_id, str) or len(session_id) > 64:
            return "class.err_not_joined"
        with self._transaction(write=False) as cur:
            me = self._one(
                cur,
                "SELECT st.device_hash, s.ended_at, s.expires_at, s.one_per_device FROM students st"
                " JOIN sessions s ON s.id = st.session_id WHERE st.session_id = ? AND st.student_hash = ?",
                (session_id, codes.token_hash(student_token)),
            )
            if me is None:
                return "class.err_not_joined"
            if me[1] is not None or now >= me[2]:
                return "class.err_session_over"
            poll = None
            if isinstance(poll_id, str) and len(poll_id) <= 64:
                poll = self._one(
                    cur,
                    "SELECT state, n_choices FROM polls WHERE id = ? AND session_id = ?",
                    (poll_id, session_id),
                )
            if poll is None:
                return "class.answer_refused_unknown"
            if poll[0] != "open":
                return "class.answer_refused"  # closed (or revealed) since the student chose
            if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < poll[1]:
                return "class.answer_refused_unknown"
            if (
                me[3]
                and me[0] is not None
                and self._one(
                    cur,
                    "SELECT 1 FROM answers a JOIN students o ON o.session_id = a.session_id"
                    " AND o.student_hash = a.student_hash WHERE a.poll_id = ? AND o.device_hash = ?"
                    " AND o.student_hash <> ?",
                    (poll_id, me[0], codes.token_hash(student_token)),
                )
            ):
                return "class.answer_refused_device"
        return "class.answer_refused_unknown"  # taken by now, or refused for a reason not named above

    # ------------------------------------------------------------------ housekeeping
    def _maybe_purge(self) -> None:
        """The purge on a timer: at most every PURGE_EVERY_S of the wall clock (not a caller's
        ``now``), run by whichever join, start or pulse comes first (a pulse arrives every second
        while a class is followed)."""
        now = time.time()
        if now < self._next_purge:
            return
        self._next_purge = now + PURGE_EVERY_S
        try:
            self.purge(self.retention_days, now)
        except Exception:  # housekeeping never fails a student's request; the next tick retries
            self._next_purge = now + 5.0

    # ------------------------------------------------------------------ presence
    def seen(self, session_id, student_token, now=None) -> None:
        """A student's page is open now (it says so every few seconds: see students_seen)."""
        now = self._now(now)
        if not codes.well_formed(student_token) or not isinstance(session_id, str) or len(session_id) > 64:
            return
        with self._transaction(write=True) as cur:
            self._run(
                cur,
                "UPDATE students SET seen_at = ? WHERE session_id = ? AND student_hash = ?",
                (now, session_id, codes.token_hash(student_token)),
            )

    def students_seen(self, session_id, token, within_s: float = 60.0, now=None) -> int:
        """Students whose page was open in the last ``within_s`` seconds (or who joined then)."""
        now = self._now(now)
        with self._transaction(write=False) as cur:
            self._teacher(cur, session_id, token)
            return self._one(
                cur,
                "SELECT COUNT(*) FROM students WHERE session_id = ? AND COALESCE(seen_at, joined_at) >= ?",
                (session_id, now - within_s),
            )[0]

    def purge(self, retention_days=RETENTION_DAYS_DEFAULT, now=None) -> int:
        """Remove sessions that ended or expired more than ``retention_days`` ago (with their
        students, polls and answers), and join failures older than the throttle's window."""
        now = self._now(now)
        cutoff = now - retention_days * 86400
        with self._transaction(write=True) as cur:
            cur = self._run(
                cur,
                "DELETE FROM sessions WHERE COALESCE(ended_at, expires_at) < ? AND expires_at < ?",
                (cutoff, now),
            )
            removed = cur.rowcount
            self._run(cur, "DELETE FROM join_failures WHERE at < ?", (now - FAILURE_WINDOW_S,))
        return removed


def _clean_url(url: object) -> str | None:
    """A join address the teacher typed: http(s) only, printable, bounded; None for empty."""
    if url is None:
        return None
    if not isinstance(url, str) or len(url) > JOIN_URL_MAX:
        raise ClassError("class.err_join_url")
    url = url.strip()
    if not url:
        return None
    if not url.lower().startswith(("http://", "https://")) or not url.isprintable() or " " in url:
        raise ClassError("class.err_join_url")
    return url
