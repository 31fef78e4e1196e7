"""SQLite migrations run under BEGIN IMMEDIATE: the file's write lock is taken *before* the schema
version is read, so a process that starts while another is migrating waits, then finds the work
done. The test makes the race deterministic: the database is at version 1 (an upgrade, where the
first statement, CREATE TABLE IF NOT EXISTS, is a no-op read), another connection holds the write
lock and applies the upgrade itself while our store's migrate() is already under way.

Under a plain (deferred) BEGIN, migrate() reads version 1 from its snapshot, then fails: it cannot
turn its stale read into a write (SQLite: "database is locked"), or it applies migration 2 twice
("index ... already exists"). Under BEGIN IMMEDIATE it waits at BEGIN and applies nothing.
"""

from __future__ import annotations

import sqlite3
import threading
import time

from classroom.schema import LATEST, MIGRATIONS
from classroom.sqlite_store import SqliteStore


def _database_at_version_1(path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for statement in dict(MIGRATIONS)[1]:
        conn.execute(statement)
    conn.execute("INSERT INTO schema_version (version) VALUES (1)")
    conn.close()


def test_a_process_starting_during_another_ones_upgrade_waits_and_applies_nothing(tmp_path) -> None:
    assert LATEST >= 2  # the test needs an upgrade step after version 1
    path = tmp_path / "class.sqlite3"
    _database_at_version_1(path)
    other = sqlite3.connect(path, isolation_level=None, timeout=10)
    other.execute("BEGIN IMMEDIATE")  # another process, mid-way through its own start-up migration

    store, outcome = SqliteStore(path), {}

    def migrate() -> None:
        try:
            outcome["version"] = store.migrate()
        except Exception as exc:  # the assertion below names it
            outcome["error"] = repr(exc)

    th = threading.Thread(target=migrate)
    th.start()
    time.sleep(0.5)  # our migrate() is under way: waiting at BEGIN IMMEDIATE (or, wrongly, past its read)
    for version, statements in MIGRATIONS[1:]:
        for statement in statements:
            other.execute(statement)
        other.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    other.execute("COMMIT")
    th.join(30)
    other.close()
    assert not th.is_alive()
    assert outcome == {"version": LATEST}
    versions = [r[0] for r in sqlite3.connect(path).execute("SELECT version FROM schema_version ORDER BY 1")]
    assert versions == list(range(1, LATEST + 1))  # each version recorded once
    store.close()
