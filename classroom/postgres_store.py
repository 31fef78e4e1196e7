"""Several machines: PostgreSQL through psycopg 3, with a connection pool per process."""

from __future__ import annotations

from contextlib import contextmanager

from .store import SqlStore

# Any constant: the key of the advisory lock that serialises migrations across processes.
MIGRATION_LOCK = 0x61747465  # "atte"
POOL_MIN, POOL_MAX = 1, 8  # connections per process; PostgreSQL's default max_connections is 100


class PostgresStore(SqlStore):
    dialect = "postgresql"
    param = "%s"
    for_update = " FOR UPDATE"

    def __init__(self, url: str, *, min_size: int = POOL_MIN, max_size: int = POOL_MAX) -> None:
        super().__init__()
        from psycopg_pool import ConnectionPool  # imported here: SQLite users need no psycopg

        self.url = url
        self._pool = ConnectionPool(
            url, min_size=min_size, max_size=max_size, open=True, timeout=30,
            kwargs={"connect_timeout": 10, "application_name": "attention-lab"},
        )  # fmt: skip

    @contextmanager
    def _transaction(self, write: bool):
        # The pool's connection context commits on success and rolls back on an exception.
        with self._pool.connection() as conn, conn.cursor() as cur:
            yield cur

    def migrate(self) -> int:
        # One process at a time, whichever starts first: the others wait on the lock (released
        # at commit), then see the recorded version and apply nothing.
        with self._transaction(write=True) as cur:
            self._run(cur, "SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
            return self._apply_migrations(cur)

    def close(self) -> None:
        self._pool.close()
