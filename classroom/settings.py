"""Where the store lives and how long a class lasts, from the environment.

- ``ATTENTION_LAB_DATABASE_URL=postgresql://user:pass@host/db``: PostgreSQL (several machines);
  unset: SQLite in ``ATTENTION_LAB_DATA_DIR`` (default ``data/`` beside app.py), file ``classroom.sqlite3``.
- ``ATTENTION_LAB_CLASS_HOURS`` (default 4): a session ends by itself after this long.
- ``ATTENTION_LAB_CLASS_RETENTION_DAYS`` (default 7): its data are removed this long after it ended.
- ``ATTENTION_LAB_JOIN_URL``: the address students open, fixed for the whole server (else the
  teacher may type one; else the address the teacher's browser used).
- ``ATTENTION_LAB_TRUSTED_PROXIES``: the addresses of the reverse proxies whose X-Forwarded-For
  is believed (comma-separated; unset: none). ``make serve-class`` sets 127.0.0.1 (its HAProxy).
- ``ATTENTION_LAB_PROXY_SECRET``: a secret the proxy adds to every request (header
  X-Attention-Lab-Proxy); with it, X-Forwarded-For is believed only on requests that carry it
  (classroom/client.py). Needed when the proxy is on this machine (a loopback address in
  ATTENTION_LAB_TRUSTED_PROXIES): ``make serve-class`` makes one per run.
- ``ATTENTION_LAB_JOINS_PER_ADDRESS`` (default 100): identities one client address may make in a class.
- ``ATTENTION_LAB_SQLITE_SYNCHRONOUS`` (NORMAL, or FULL: every commit survives a power cut too, at
  the cost measured by bench/sqlite_synchronous.py).
- ``ATTENTION_LAB_WRONG_CODE_FREE_TRIES`` (default 10): wrong codes one address may type in 10 minutes
  before each further try waits 2, 4, 8 ... 60 s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .client import LOOPBACK
from .model import CLASS_HOURS_DEFAULT, RETENTION_DAYS_DEFAULT
from .store import FREE_TRIES, JOINS_PER_ADDRESS

ROOT = Path(__file__).resolve().parent.parent
DB_FILE = "classroom.sqlite3"


def _number(env, name: str, default: float, low: float, high: float) -> float:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"{name}={raw!r} is not a number") from None
    if not low < value <= high:
        raise SystemExit(f"{name}={raw!r} must be above {low} and at most {high}")
    return value


def _synchronous(raw: str | None) -> str:
    value = (raw or "NORMAL").strip().upper()
    if value not in ("NORMAL", "FULL"):
        raise SystemExit(f"ATTENTION_LAB_SQLITE_SYNCHRONOUS={raw!r} must be NORMAL or FULL")
    return value


PROXY_SECRET_MIN = 16  # characters; `make serve-class` makes 43 (32 random bytes)


def _proxy_secret(raw: str | None, trusted: frozenset[str]) -> str | None:
    secret = (raw or "").strip() or None
    if secret is not None and (
        len(secret) < PROXY_SECRET_MIN or not (secret.isascii() and secret.isprintable())
    ):
        # (the value itself is never repeated: it is a secret)
        raise SystemExit(
            f"ATTENTION_LAB_PROXY_SECRET must be at least {PROXY_SECRET_MIN} printable ASCII characters"
        )
    if secret is None and trusted & LOOPBACK:
        raise SystemExit(
            "ATTENTION_LAB_TRUSTED_PROXIES names this machine (a loopback address): any process here could"
            " then forge X-Forwarded-For. Set ATTENTION_LAB_PROXY_SECRET too, and have the proxy send it in"
            " the X-Attention-Lab-Proxy header (deploy/haproxy.cfg does; `make serve-class` makes one per run)"
        )
    return secret


@dataclass(frozen=True)
class StoreSettings:
    database_url: str | None
    data_dir: Path
    class_hours: float
    retention_days: float
    join_url: str | None
    trusted_proxies: frozenset[str] = frozenset()
    proxy_secret: str | None = field(default=None, repr=False)  # never in a log or a traceback
    joins_per_address: int = JOINS_PER_ADDRESS
    free_tries: int = FREE_TRIES
    sqlite_synchronous: str = "NORMAL"

    @classmethod
    def from_env(cls, env=None) -> StoreSettings:
        env = os.environ if env is None else env
        url = env.get("ATTENTION_LAB_DATABASE_URL") or None
        if url and not url.startswith(("postgresql://", "postgres://")):
            raise SystemExit("ATTENTION_LAB_DATABASE_URL must start with postgresql://")
        trusted = frozenset(
            a.strip() for a in (env.get("ATTENTION_LAB_TRUSTED_PROXIES") or "").split(",") if a.strip()
        )
        return cls(
            database_url=url,
            data_dir=Path(env.get("ATTENTION_LAB_DATA_DIR") or ROOT / "data"),
            class_hours=_number(env, "ATTENTION_LAB_CLASS_HOURS", CLASS_HOURS_DEFAULT, 0, 48),
            retention_days=_number(
                env, "ATTENTION_LAB_CLASS_RETENTION_DAYS", RETENTION_DAYS_DEFAULT, 0, 3650
            ),
            join_url=env.get("ATTENTION_LAB_JOIN_URL") or None,
            trusted_proxies=trusted,
            proxy_secret=_proxy_secret(env.get("ATTENTION_LAB_PROXY_SECRET"), trusted),
            joins_per_address=int(
                _number(env, "ATTENTION_LAB_JOINS_PER_ADDRESS", JOINS_PER_ADDRESS, 0, 100_000)
            ),
            sqlite_synchronous=_synchronous(env.get("ATTENTION_LAB_SQLITE_SYNCHRONOUS")),
            free_tries=int(_number(env, "ATTENTION_LAB_WRONG_CODE_FREE_TRIES", FREE_TRIES, 0, 1000)),
        )

    @property
    def backend(self) -> str:
        return "postgresql" if self.database_url else "sqlite"


def open_store(settings: StoreSettings | None = None):
    """The configured store, migrated to the latest schema and purged of expired classes."""
    settings = settings or StoreSettings.from_env()
    if settings.database_url:
        from .postgres_store import PostgresStore

        store = PostgresStore(settings.database_url)
    else:
        from .sqlite_store import SqliteStore

        store = SqliteStore(settings.data_dir / DB_FILE, synchronous=settings.sqlite_synchronous)
    try:
        store.migrate()
        store.purge(settings.retention_days)
    except BaseException:
        store.close()  # no pool (and no pool threads) left behind by a failed open
        raise
    store.retention_days = settings.retention_days
    store.joins_per_address = settings.joins_per_address
    store.free_tries = settings.free_tries
    stats_dir = os.environ.get("ATTENTION_LAB_STORE_STATS")
    if stats_dir:  # bench/classroom_live.py: each process's statement count, written every second
        _write_stats(store, Path(stats_dir))
    return store


def _write_stats(store, folder: Path) -> None:
    import json
    import threading
    import time

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{os.getpid()}.json"

    def loop() -> None:
        while True:
            path.write_text(json.dumps({"queries": store.queries, "at": time.time()}))
            time.sleep(1.0)

    threading.Thread(target=loop, name="store-stats", daemon=True).start()
