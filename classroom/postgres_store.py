"""Several machines: PostgreSQL through psycopg 3, with a connection pool per process."""

from __future__ import annotations

from contextlib import contextmanager

from .store import SqlStore

# Any constant: the key of the advisory lock that serialises migrations across processes.
MIGRATION_LOCK = 0x61747465  # "atte"
POOL_MIN, POOL_MAX = 1, 8  # connections per process; PostgreSQL's default max_connections is 100
CONNECT_TIMEOUT_S = 3  # one connection attempt (a server that does not answer)
OPEN_WAIT_S = 5.0  # opening the store waits this long for a first connection, then fails
GET_WAIT_S = 10.0  # a request waits this long for a free connection of the pool


class PostgresStore(SqlStore):
    dialect = "postgresql"
    param = "%s"
    for_update = " FOR UPDATE"

    def __init__(self, url: str, *, min_size: int = POOL_MIN, max_size: int = POOL_MAX) -> None:
        super().__init__()
        import psycopg  # imported here: SQLite users need no psycopg
        from psycopg_pool import ConnectionPool

        self.url = url
        # One plain connection first: a server that is down or refuses says so now (within
        # CONNECT_TIMEOUT_S), before any pool (and its threads) exists.
        psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, application_name="attention-lab").close()
        self._pool = ConnectionPool(
            url, min_size=min_size, max_size=max_size, open=True, timeout=GET_WAIT_S,
            kwargs={"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "attention-lab"},
        )  # fmt: skip
        try:  # a database that is down fails here within seconds, and the pool's threads end
            self._pool.wait(timeout=OPEN_WAIT_S)
        except BaseException:
            self._pool.close()
            raise

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
