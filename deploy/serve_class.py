"""Attention Lab for a class: N Streamlit processes on loopback ports behind HAProxy.

    python deploy/serve_class.py --replicas 3 --port 8080    # foreground; Ctrl-C stops everything
    python deploy/serve_class.py --stop --port 8080          # stop it from another shell

(``make serve-class REPLICAS=3 PORT=8080`` / ``make stop-class PORT=8080`` run these.)

Starts ``streamlit run app.py`` N times on free loopback ports (each its own process group, all
with one cookie secret generated for this deployment, or $STREAMLIT_SERVER_COOKIE_SECRET if set,
and one proxy secret made for this run, which HAProxy adds to every request and without which the
apps believe no X-Forwarded-For: a process that reaches an app's port directly cannot forge its address),
waits until each answers ``/_stcore/health``, writes a copy of ``deploy/haproxy.cfg`` with one
``server`` line per process into the run directory, checks it with ``haproxy -c`` and runs HAProxy
in the foreground. A process that dies is started again on its port (``--no-restart`` to keep it
down); HAProxy's health check takes it back once it answers. Ctrl-C, SIGTERM or ``--stop`` stop
HAProxy and every Streamlit process this launcher started, and nothing else.

Standard library only, so ``--stop`` works with any Python. The ``Cluster`` class is what
``bench/classroom_load.py --proxy`` and ``tests/browser/test_proxy_browser.py`` use.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG_TEMPLATE = ROOT / "deploy" / "haproxy.cfg"
BEGIN, END = "# BEGIN servers", "# END servers"
BACKEND = "streamlit"  # the backend's name in haproxy.cfg
SECRET_ENV = "STREAMLIT_SERVER_COOKIE_SECRET"  # Streamlit reads server.cookieSecret from it
PROXY_SECRET_ENV = "ATTENTION_LAB_PROXY_SECRET"  # the apps' (classroom/client.py)
HAPROXY_SECRET_ENV = "CLASS_PROXY_SECRET"  # HAProxy's, read by deploy/haproxy.cfg
START_TIMEOUT_S = 120
RESTART_MIN_INTERVAL_S = 10


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def find_haproxy() -> str:
    """$HAPROXY, `haproxy` on the PATH or /usr/sbin/haproxy; scripts/ensure_haproxy.sh installs one."""
    for candidate in (os.environ.get("HAPROXY"), shutil.which("haproxy"), "/usr/sbin/haproxy"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit(
        "HAProxy is not installed. Run `bash scripts/ensure_haproxy.sh` (as root on Debian/Ubuntu it"
        " installs the haproxy package), or set HAPROXY=/path/to/haproxy."
    )


def render_config(template: str, servers: list[tuple[str, int]]) -> str:
    """The template with the lines between the BEGIN/END markers replaced by one server per process.

    ``servers`` holds (name, loopback port); the name is also the value of the stickiness cookie.
    """
    lines = template.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip().startswith(BEGIN)]
    ends = [i for i, line in enumerate(lines) if line.strip().startswith(END)]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(
            f"the template needs exactly one line starting '{BEGIN}' followed by one starting '{END}'"
        )
    if not servers:
        raise ValueError("at least one server is needed")
    indent = lines[starts[0]][: len(lines[starts[0]]) - len(lines[starts[0]].lstrip())]
    block = [f"{indent}server {name} 127.0.0.1:{port} cookie {name}" for name, port in servers]
    return "\n".join(lines[: starts[0] + 1] + block + lines[ends[0] :]) + "\n"


def parse_stats(csv_text: str, backend: str = BACKEND) -> dict[str, dict[str, str]]:
    """HAProxy's ``show stat`` CSV -> {server name: row} for the servers of ``backend``."""
    text = csv_text.lstrip()
    if text.startswith("# "):
        text = text[2:]
    rows = csv.DictReader(io.StringIO(text))
    return {
        r["svname"]: r
        for r in rows
        if r.get("pxname") == backend and r.get("svname") not in ("FRONTEND", "BACKEND")
    }


def healthy(base_url: str, timeout: float = 2) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=timeout) as r:
            return r.status == 200 and r.read().strip() == b"ok"
    except (OSError, urllib.error.URLError):
        return False


def upload_status(base: str, token: str, replica: str, with_header: bool) -> int:
    """HTTP status of an empty upload through the proxy, pinned to ``replica`` by its cookie, with the
    XSRF cookie ``token`` and (``with_header``) the matching header: how XSRF is probed across processes."""
    req = urllib.request.Request(f"{base}/_stcore/upload_file/no-session/no-file", method="PUT", data=b"")
    req.add_header("Cookie", f"_streamlit_xsrf={token}; attnlab_replica={replica}")
    if with_header:
        req.add_header("X-Xsrftoken", token)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def _stop_group(proc: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM the process group this launcher started, then SIGKILL what is left after ``timeout``."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=timeout)


@dataclass
class Replica:
    name: str  # r1, r2, ...: the server name in HAProxy and the value of the stickiness cookie
    port: int
    log: Path
    proc: subprocess.Popen | None = None
    restarts: list[float] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Cluster:
    """N Streamlit processes and one HAProxy, started and stopped together (a context manager)."""

    def __init__(
        self,
        replicas: int = 3,
        port: int = 8080,
        bind: str = "127.0.0.1",
        run_dir: Path | None = None,
        app: str = "app.py",
        streamlit_args: list[str] | None = None,
        secret: str | None = None,
        env: dict[str, str] | None = None,
        quiet: bool = False,
    ) -> None:
        if replicas < 1:
            raise ValueError("replicas must be at least 1")
        self.port, self.bind, self.app = port, bind, app
        self.run_dir = Path(run_dir or ROOT / "artifacts" / "serve-class" / str(port))
        self.streamlit_args = list(streamlit_args or [])
        # One secret for every process of this deployment: Streamlit signs its cookies with
        # server.cookieSecret (random per process unless set). Never written to disk here.
        self.secret = secret or os.environ.get(SECRET_ENV) or secrets.token_hex(32)
        # Proof that a request came through this HAProxy (it sets the header, replacing a client's):
        # a new one for every run, in the environment of HAProxy and of the apps only.
        self.proxy_secret = os.environ.get(PROXY_SECRET_ENV) or secrets.token_urlsafe(32)
        self.env = dict(env or {})
        self.quiet = quiet
        self.replicas = [
            Replica(f"r{i}", 0, self.run_dir / f"streamlit-r{i}.log") for i in range(1, replicas + 1)
        ]
        self.haproxy: subprocess.Popen | None = None
        self.config_path = self.run_dir / "haproxy.cfg"
        self.socket_path = self.run_dir / "haproxy.sock"
        self.haproxy_log = self.run_dir / "haproxy.log"

    # ------------------------------------------------------------------ addresses
    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.bind in ("0.0.0.0", "::", "") else self.bind
        return f"http://{host}:{self.port}"

    def replica(self, name: str) -> Replica:
        for r in self.replicas:
            if r.name == name:
                return r
        raise KeyError(name)

    def _say(self, text: str) -> None:
        if not self.quiet:
            print(text, flush=True)

    # ------------------------------------------------------------------ processes
    def _replica_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per process (see the Makefile)
        env.setdefault("OMP_NUM_THREADS", "1")
        env.update(self.env)
        # The replicas listen on loopback behind this HAProxy: believe its X-Forwarded-For (the
        # client's address, for the live class's throttle and join limits; classroom/client.py), and
        # only on requests that carry this run's proxy secret: anyone on this machine can reach the
        # replicas' ports and send any X-Forwarded-For they like.
        env.setdefault("ATTENTION_LAB_TRUSTED_PROXIES", "127.0.0.1")
        env["FORWARDED_ALLOW_IPS"] = "127.0.0.1"  # uvicorn's own setting, the same proxy
        env[SECRET_ENV] = self.secret  # in the environment, not on the command line (`ps` shows that)
        env[PROXY_SECRET_ENV] = self.proxy_secret
        # A class's server runs learners' code only if the operator says so (ATTENTION_LAB_CODE_CHECK=1;
        # docs/code-check.md): the code check's page reads this marker to say why it is off.
        env["ATTENTION_LAB_SERVE_CLASS"] = "1"
        return env

    def _spawn(self, replica: Replica) -> None:
        cmd = [
            sys.executable, "-m", "streamlit", "run", self.app,
            "--server.address", "127.0.0.1", "--server.port", str(replica.port),
            "--server.headless", "true", "--server.fileWatcherType", "none",
            *self.streamlit_args,
        ]  # fmt: skip
        with replica.log.open("a", encoding="utf-8") as log:
            replica.proc = subprocess.Popen(
                cmd, cwd=ROOT, env=self._replica_env(), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,  # own group: stopped as a whole
            )  # fmt: skip

    def _wait_healthy(self, replica: Replica, timeout: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not replica.alive():
                break
            if healthy(replica.url):
                return
            time.sleep(0.3)
        tail = "\n".join(replica.log.read_text(errors="replace").splitlines()[-20:])
        raise RuntimeError(f"Streamlit process {replica.name} did not start on {replica.url}:\n{tail}")

    def start(self) -> Cluster:
        haproxy = find_haproxy()  # before anything is started
        self.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            taken: set[int] = {self.port}
            for r in self.replicas:
                while (port := free_port()) in taken:
                    pass
                r.port = port
                taken.add(port)
                r.log.write_text("")
                self._spawn(r)
            with ThreadPoolExecutor(len(self.replicas)) as pool:
                list(pool.map(self._wait_healthy, self.replicas))
            template = CONFIG_TEMPLATE.read_text(encoding="utf-8")
            self.config_path.write_text(render_config(template, [(r.name, r.port) for r in self.replicas]))
            env = dict(
                os.environ, CLASS_BIND=self.bind, CLASS_PORT=str(self.port), CLASS_RUN_DIR=str(self.run_dir)
            )
            env[HAPROXY_SECRET_ENV] = self.proxy_secret  # haproxy.cfg reads it: never in the written file
            check = subprocess.run(
                [haproxy, "-c", "-q", "-f", str(self.config_path)],
                env=env,
                capture_output=True,
                text=True,
            )
            if check.returncode != 0:
                raise RuntimeError(f"haproxy -c rejected {self.config_path}:\n{check.stdout}{check.stderr}")
            with self.haproxy_log.open("w", encoding="utf-8") as log:
                self.haproxy = subprocess.Popen(
                    [haproxy, "-db", "-f", str(self.config_path)], cwd=self.run_dir, env=env,
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip
            deadline = time.monotonic() + 30
            while not healthy(self.url):
                if self.haproxy.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"HAProxy did not answer on {self.url}:\n{self.haproxy_log.read_text(errors='replace')[-2000:]}"
                    )
                time.sleep(0.2)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop HAProxy, then every Streamlit process group this cluster started."""
        if self.haproxy is not None:
            _stop_group(self.haproxy, timeout=5)
        with ThreadPoolExecutor(max(1, len(self.replicas))) as pool:
            list(pool.map(lambda r: r.proc and _stop_group(r.proc), self.replicas))

    def kill(self, name: str, sig: int = signal.SIGKILL) -> int:
        """Kill one Streamlit process (the whole group) with ``sig``; returns its pid."""
        replica = self.replica(name)
        if not replica.alive():
            raise RuntimeError(f"{name} is not running")
        os.killpg(replica.proc.pid, sig)
        replica.proc.wait(timeout=30)
        return replica.proc.pid

    def restart(self, name: str, wait: bool = True) -> None:
        """Start a stopped process again on its port (HAProxy takes it back after two good checks)."""
        replica = self.replica(name)
        if replica.alive():
            return
        replica.restarts.append(time.monotonic())
        self._spawn(replica)
        if wait:
            self._wait_healthy(replica)

    def supervise(self) -> list[str]:
        """Restart processes that died (at most once per RESTART_MIN_INTERVAL_S each); returns their names."""
        restarted = []
        for r in self.replicas:
            if r.alive() or (r.restarts and time.monotonic() - r.restarts[-1] < RESTART_MIN_INTERVAL_S):
                continue
            code = r.proc.returncode if r.proc else None
            self._say(f"{r.name} (port {r.port}) exited with {code}; starting it again (log: {r.log})")
            self.restart(r.name, wait=False)
            restarted.append(r.name)
        return restarted

    # ------------------------------------------------------------------ HAProxy's view
    def command(self, line: str, timeout: float = 5) -> str:
        """One command on HAProxy's runtime API (stats socket), e.g. ``show stat``."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(self.socket_path))
            s.sendall(line.encode() + b"\n")
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    def stats(self) -> dict[str, dict[str, str]]:
        """Per process: status (UP/DOWN/...), scur (open connections), stot (connections so far), ..."""
        return parse_stats(self.command("show stat"))

    def wait_status(self, name: str, status: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.stats().get(name, {}).get("status", "").startswith(status):
                return
            time.sleep(0.3)
        raise TimeoutError(f"{name} not {status} in HAProxy after {timeout} s: {self.stats().get(name)}")

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ---------------------------------------------------------------------- command line
def _pid_file(run_dir: Path) -> Path:
    return run_dir / "serve_class.pid"


def stop_running(run_dir: Path, timeout: float = 40) -> int:
    """Send SIGTERM to the launcher recorded in ``run_dir`` (it stops what it started) and wait."""
    pid_file = _pid_file(run_dir)
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        print(f"nothing to stop: no launcher recorded in {pid_file}")
        return 1
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        cmdline = b"serve_class.py" if _running(pid) else b""
    if b"serve_class.py" not in cmdline:  # gone, or the pid now belongs to something else
        print(f"the launcher recorded in {pid_file} (pid {pid}) is no longer running")
        pid_file.unlink(missing_ok=True)
        return 1
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _running(pid):
        print(f"pid {pid} is still running after {timeout} s")
        return 1
    print(f"stopped the class deployment (launcher pid {pid})")
    return 0


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Stop(Exception):
    pass


def _raise_stop(signum, _frame) -> None:
    raise _Stop(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicas", type=int, default=3, help="Streamlit processes (about one per core)")
    ap.add_argument("--port", type=int, default=8080, help="the port students open (HAProxy's)")
    ap.add_argument("--bind", default="0.0.0.0", help="HAProxy's address (0.0.0.0 = every interface)")
    ap.add_argument("--run-dir", type=Path, help="config, logs, socket (default artifacts/serve-class/PORT)")
    ap.add_argument("--no-restart", action="store_true", help="leave a process that died down")
    ap.add_argument("--stop", action="store_true", help="stop the deployment running on --port")
    ap.add_argument("streamlit_args", nargs="*", help="after --: extra `streamlit run` options")
    args = ap.parse_args(argv)
    run_dir = args.run_dir or ROOT / "artifacts" / "serve-class" / str(args.port)
    if args.stop:
        return stop_running(run_dir)
    if _running_launcher(run_dir):
        print(
            f"a deployment is already running for port {args.port}; `make stop-class PORT={args.port}` stops it"
        )
        return 1
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_stop)
    cluster = Cluster(args.replicas, args.port, args.bind, run_dir, streamlit_args=args.streamlit_args)
    try:
        print(f"starting {args.replicas} Streamlit processes and HAProxy (logs in {run_dir})...", flush=True)
        run_dir.mkdir(parents=True, exist_ok=True)
        _pid_file(run_dir).write_text(f"{os.getpid()}\n")
        cluster.start()
        for r in cluster.replicas:
            print(f"  {r.name}: 127.0.0.1:{r.port} (pid {r.pid})")
        secret_from = "from $" + SECRET_ENV if os.environ.get(SECRET_ENV) else "generated for this run"
        print(f"cookie secret shared by all processes: {secret_from}")
        host = socket.gethostname() if args.bind in ("0.0.0.0", "::") else args.bind
        where = " (every interface)" if args.bind in ("0.0.0.0", "::") else ""
        print(
            f"Attention Lab for the class: http://{host}:{args.port}/{where}; Ctrl-C stops everything",
            flush=True,
        )
        while True:
            if cluster.haproxy is not None and cluster.haproxy.poll() is not None:
                print(f"HAProxy exited with {cluster.haproxy.returncode}; see {cluster.haproxy_log}")
                return 1
            if not args.no_restart:
                cluster.supervise()
            time.sleep(1)
    except _Stop as stop:
        print(f"\n{stop}: stopping...", flush=True)
        return 0
    except KeyboardInterrupt:
        print("\nstopping...", flush=True)
        return 0
    except RuntimeError as exc:  # a process or HAProxy did not start: say why, stop the rest
        print(f"could not start the class deployment: {exc}", flush=True)
        return 1
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        cluster.stop()
        _pid_file(run_dir).unlink(missing_ok=True)
        print("stopped HAProxy and every Streamlit process started here", flush=True)


def _running_launcher(run_dir: Path) -> bool:
    try:
        pid = int(_pid_file(run_dir).read_text().strip())
        return b"serve_class.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return False


if __name__ == "__main__":
    raise SystemExit(main())
