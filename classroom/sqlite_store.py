"""The embedded default: one SQLite file (WAL, a busy timeout), shared by every process on a machine."""

from __future__ import annotations

import queue
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

from .store import SqlStore

BUSY_TIMEOUT_MS = 10_000  # a writer waits this long for another process's write to finish
POOL_SIZE = 8  # connections kept open per process (Streamlit runs each session in its own thread)


def _switch_to_wal(conn: sqlite3.Connection, timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
    """Put the file in WAL mode (it stays there: later connections find it so and change nothing).

    The first switch of a new file needs the file to itself, and SQLite answers "database is locked"
    at once, without calling the busy handler, when another process is switching or migrating at that
    moment. So retry, with a growing pause, for as long as a busy write would be waited for.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)


class SqliteStore(SqlStore):
    dialect = "sqlite"
    # NORMAL in WAL mode: a crash of the process loses nothing, but a power cut (or an OS crash)
    # can lose the last commits before a checkpoint; FULL syncs the WAL at every commit
    # (bench/sqlite_synchronous.py measures the cost; docs/deployment.md says which is used).
    synchronous = "NORMAL"

    def __init__(self, path: str | Path, *, synchronous: str | None = None) -> None:
        super().__init__()
        if synchronous is not None:
            if synchronous.upper() not in ("NORMAL", "FULL"):
                raise ValueError("synchronous must be NORMAL or FULL")
            self.synchronous = synchronous.upper()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._closed = False

    def _connect(self) -> sqlite3.Connection:
        # autocommit mode (isolation_level=None): transactions are begun explicitly below, so a write
        # takes the database's write lock at BEGIN IMMEDIATE, not half-way through.
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)  # fmt: skip
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _switch_to_wal(conn)  # readers never wait for the writer
        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    @contextmanager
    def _connection(self):
        try:
            conn = self._pool.get_nowait()
        except queue.Empty:
            conn = self._connect()
        try:
            yield conn
        finally:
            self._give_back(conn)

    def _give_back(self, conn: sqlite3.Connection) -> None:
        """Back to the pool only outside a transaction: a connection whose COMMIT (or ROLLBACK)
        failed is still in its transaction, and every later BEGIN on it would fail."""
        if conn.in_transaction:
            try:
                conn.rollback()
            except sqlite3.Error:
                pass
        if self._closed or conn.in_transaction or self._pool.qsize() >= POOL_SIZE:
            conn.close()
        else:
            self._pool.put(conn)

    @contextmanager
    def _transaction(self, write: bool):
        with self._connection() as conn:
            cur = conn.cursor()
            cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield cur
            except BaseException:
                conn.rollback()
                raise
            else:
                conn.commit()  # if this fails, _give_back rolls back or drops the connection
            finally:
                cur.close()

    def migrate(self) -> int:
        # BEGIN IMMEDIATE holds the file's write lock: a second process starting at the same moment
        # waits (busy timeout), then finds the tables made and the version recorded.
        with self._transaction(write=True) as cur:
            return self._apply_migrations(cur)

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                break
