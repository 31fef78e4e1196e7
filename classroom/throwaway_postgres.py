"""A throwaway PostgreSQL server for the tests and the bench: a new cluster in a temporary folder,
listening on a free loopback port only, trusted local logins, stopped and deleted afterwards.

    with ThrowawayPostgres() as pg:
        store = PostgresStore(pg.url("postgres"))

Finds the server programs in $PG_BIN, ``pg_config --bindir`` or /usr/lib/postgresql/<version>/bin
(Debian's ``postgresql`` package; ``scripts/ensure_postgres.sh`` installs it as root). PostgreSQL
refuses to run as root: as root the cluster belongs to, and runs as, the ``postgres`` system user
that the Debian package creates.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

ENV_BIN = "PG_BIN"


class PostgresMissing(RuntimeError):
    pass


def find_bindir() -> Path | None:
    candidates = [os.environ.get(ENV_BIN)]
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.append(out.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for c in candidates:
        if (
            c
            and (Path(c) / "initdb").exists()
            and (Path(c) / "pg_ctl").exists()
            and (Path(c) / "postgres").exists()
        ):
            return Path(c)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThrowawayPostgres:
    def __init__(self) -> None:
        self.bindir = find_bindir()
        if self.bindir is None:
            raise PostgresMissing(
                "PostgreSQL's server programs (initdb, pg_ctl, postgres) are not installed: run"
                " `bash scripts/ensure_postgres.sh` (as root on Debian it installs the postgresql package)"
                f" or set {ENV_BIN}=/path/to/bin"
            )
        self.port = _free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="attnlab-pg-"))
        self.data = self.dir / "data"
        self._as: list[str] = []
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresMissing(
                    "running as root, but there is no 'postgres' user to run the server as"
                ) from None
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]
        self.started = False

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*self._as, *args], capture_output=True, text=True, timeout=timeout, cwd=self.dir
        )

    def start(self) -> ThrowawayPostgres:
        init = self._run(
            str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
            "--encoding=UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{init.stdout}{init.stderr}")
        # Loopback only, a socket in our own folder, and no durability: a test cluster lives minutes.
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.dir}"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        started = self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "server.log"),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip
        if started.returncode != 0:
            log = (
                (self.dir / "server.log").read_text(errors="replace")
                if (self.dir / "server.log").exists()
                else ""
            )
            self.stop()
            raise RuntimeError(f"pg_ctl start failed:\n{started.stdout}{started.stderr}\n{log[-2000:]}")
        self.started = True
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # name from the test code, [a-z0-9_] only
        return self.url(name)

    def stop(self) -> None:
        if self.started:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
            self.started = False
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> ThrowawayPostgres:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def wait(self, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (
                self._run(str(self.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)).returncode
                == 0
            ):
                return
            time.sleep(0.1)
