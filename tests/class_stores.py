"""Store fixtures for the live-class tests: every contract test runs on SQLite and on a real PostgreSQL.

PostgreSQL is a throwaway cluster (classroom/throwaway_postgres.py) started once per test process.
Without PostgreSQL's server programs its tests skip on a developer's machine and FAIL when
CI=true, so a CI without PostgreSQL cannot pass by skipping.
"""

from __future__ import annotations

import atexit
import itertools
import os

import pytest

from classroom.postgres_store import PostgresStore
from classroom.schema import LATEST
from classroom.sqlite_store import SqliteStore
from classroom.throwaway_postgres import PostgresMissing, ThrowawayPostgres

BACKENDS = ("sqlite", "postgresql")
TABLES = ("answers", "polls", "students", "sessions", "join_failures")
_names = itertools.count()


def postgres_unavailable(why: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and PostgreSQL is unavailable: {why}")
    pytest.skip(f"PostgreSQL unavailable: {why}")


_SHARED: dict = {}  # one server and one contract database per test process, whichever module asks first


def _stop_shared() -> None:
    store = _SHARED.pop("store", None)
    if store is not None:
        store.close()
    server = _SHARED.pop("server", None)
    if server is not None:
        server.stop()


@pytest.fixture(scope="session", name="postgres_server")
def fixture_postgres_server():
    """The throwaway server, started once per test process: each module that imports this fixture
    gets its own fixture instance, and without the sharing each started a server (3-10 s)."""
    if "server" not in _SHARED:
        try:
            _SHARED["server"] = ThrowawayPostgres().start()
        except (PostgresMissing, RuntimeError) as exc:
            postgres_unavailable(str(exc))
        atexit.register(_stop_shared)
    yield _SHARED["server"]


def fresh_store(backend: str, request, tmp_path):
    """A migrated, empty store of ``backend`` in its own database (closed after the test)."""
    if backend == "sqlite":
        return SqliteStore(tmp_path / f"class{next(_names)}.sqlite3")
    server = request.getfixturevalue("postgres_server")
    return PostgresStore(server.create_database(f"t{os.getpid()}_{next(_names)}"), max_size=12)


@pytest.fixture(scope="session", name="postgres_store")
def fixture_postgres_store(postgres_server):
    """One migrated PostgreSQL database per test process, emptied before each test (a new database
    per test cost about 0.6 s each here)."""
    if "store" not in _SHARED:
        s = PostgresStore(postgres_server.create_database(f"contract{os.getpid()}"), max_size=12)
        s.migrate()
        _SHARED["store"] = s
    yield _SHARED["store"]


def _empty(s) -> None:
    with s._transaction(write=True) as cur:
        s._run(cur, "TRUNCATE " + ", ".join(TABLES))
        s._run(cur, "DELETE FROM schema_version WHERE version > ?", (LATEST,))


@pytest.fixture(params=BACKENDS, name="store")
def fixture_store(request, tmp_path):
    if request.param == "postgresql":
        s = request.getfixturevalue("postgres_store")
        _empty(s)
        yield s
        return
    s = fresh_store(request.param, request, tmp_path)
    s.migrate()
    yield s
    s.close()


@pytest.fixture(params=BACKENDS, name="empty_store_factory")
def fixture_empty_store_factory(request, tmp_path):
    """A function making new store objects on ONE new, unmigrated database (as separate processes
    would open it)."""
    first = fresh_store(request.param, request, tmp_path)
    made = [first]

    def make():
        if len(made) == 1 and not getattr(make, "used", False):
            make.used = True
            return first
        other = SqliteStore(first.path) if request.param == "sqlite" else PostgresStore(first.url, max_size=2)
        made.append(other)
        return other

    yield make
    for s in made:
        s.close()
