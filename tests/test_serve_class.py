"""The classroom deployment's launcher (deploy/serve_class.py) and HAProxy config, without starting anything.

The running setup (two processes, HAProxy, browsers) is tested in tests/browser/test_proxy_browser.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "deploy"))
from serve_class import (  # noqa: E402
    BEGIN,
    CONFIG_TEMPLATE,
    END,
    PROXY_SECRET_ENV,
    SECRET_ENV,
    Cluster,
    parse_stats,
    render_config,
)

from classroom import StoreSettings  # noqa: E402

TEMPLATE = CONFIG_TEMPLATE.read_text(encoding="utf-8")


def _server_lines(config: str) -> list[str]:
    return [line.strip() for line in config.splitlines() if line.strip().startswith("server ")]


def test_render_config_writes_one_server_per_process_with_its_cookie_value() -> None:
    config = render_config(TEMPLATE, [("r1", 40001), ("r2", 40002), ("r3", 40003), ("r4", 40004)])
    assert _server_lines(config) == [
        "server r1 127.0.0.1:40001 cookie r1",
        "server r2 127.0.0.1:40002 cookie r2",
        "server r3 127.0.0.1:40003 cookie r3",
        "server r4 127.0.0.1:40004 cookie r4",
    ]
    # Everything outside the marked block is the template's, line for line.
    outside = [x for x in config.splitlines() if not x.strip().startswith("server ")]
    assert outside == [x for x in TEMPLATE.splitlines() if not x.strip().startswith("server ")]


def test_render_config_refuses_a_template_without_its_markers_or_servers() -> None:
    with pytest.raises(ValueError, match="BEGIN servers"):
        render_config(TEMPLATE.replace(BEGIN, "# servers"), [("r1", 1)])
    with pytest.raises(ValueError, match="BEGIN servers"):
        render_config(TEMPLATE.replace(END, "# end"), [("r1", 1)])
    with pytest.raises(ValueError, match="at least one"):
        render_config(TEMPLATE, [])


def test_the_config_sticks_by_an_inserted_cookie_checks_health_and_keeps_websockets_open() -> None:
    directives = {
        " ".join(line.split())
        for line in TEMPLATE.splitlines()
        if line.strip() and not line.strip().startswith("#")
    }
    # Cookie insertion, not the client's address (a school behind one NAT address is one address).
    assert 'cookie attnlab_replica insert indirect nocache httponly attr "SameSite=Lax"' in directives
    assert not any(d.startswith(("balance source", "hash-type")) for d in directives)
    assert "http-check send meth GET uri /_stcore/health ver HTTP/1.1 hdr Host localhost" in directives
    assert "option redispatch" in directives
    assert "timeout tunnel 1h" in directives
    # issue 42 point 3: a client's X-Forwarded-For is dropped, and every request carries the run's
    # proxy secret (from HAProxy's environment, so never in the written file), replacing a client's
    assert "http-request del-header X-Forwarded-For" in directives and "option forwardfor" in directives
    assert 'http-request set-header X-Attention-Lab-Proxy "${CLASS_PROXY_SECRET}"' in directives


def test_parse_stats_reads_the_servers_of_the_backend_only() -> None:
    csv_text = (
        "# pxname,svname,qcur,scur,stot,status,\n"
        "class,FRONTEND,,3,10,OPEN,\n"
        "streamlit,r1,0,2,5,UP,\n"
        "streamlit,r2,0,1,4,DOWN,\n"
        "streamlit,BACKEND,0,3,9,UP,\n"
        "other,r1,0,9,9,UP,\n"
    )
    stats = parse_stats(csv_text)
    assert sorted(stats) == ["r1", "r2"]
    assert (stats["r1"]["scur"], stats["r1"]["status"]) == ("2", "UP")
    assert (stats["r2"]["stot"], stats["r2"]["status"]) == ("4", "DOWN")


def test_every_process_of_a_deployment_gets_the_same_fresh_secret_in_its_environment(
    monkeypatch, tmp_path
) -> None:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    monkeypatch.delenv(PROXY_SECRET_ENV, raising=False)
    a = Cluster(3, 8080, run_dir=tmp_path / "a")
    b = Cluster(3, 8080, run_dir=tmp_path / "b")
    assert len(a.secret) == 64 and a.secret != b.secret  # generated per deployment
    assert len(a.proxy_secret) >= 43 and a.proxy_secret != b.proxy_secret  # and per run
    envs = [a._replica_env() for _ in a.replicas]
    assert {e[SECRET_ENV] for e in envs} == {a.secret}
    assert {e[PROXY_SECRET_ENV] for e in envs} == {a.proxy_secret}
    assert StoreSettings.from_env(envs[0]).proxy_secret == a.proxy_secret  # the apps accept it
    assert envs[0]["OPENBLAS_NUM_THREADS"] == "1"
    # A secret given by the operator (e.g. from a secret store) is used as it is.
    monkeypatch.setenv(SECRET_ENV, "from-the-operator-0123456789")
    assert (
        Cluster(2, 8080, run_dir=tmp_path / "c")._replica_env()[SECRET_ENV] == "from-the-operator-0123456789"
    )


@pytest.mark.skipif(shutil.which("haproxy") is None and not Path("/usr/sbin/haproxy").exists(),
                    reason="HAProxy not installed (scripts/ensure_haproxy.sh)")  # fmt: skip
def test_haproxy_accepts_the_checked_in_and_the_rendered_config(tmp_path) -> None:
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    rendered = tmp_path / "haproxy.cfg"
    rendered.write_text(render_config(TEMPLATE, [(f"r{i}", 41000 + i) for i in range(1, 6)]))
    for path in (CONFIG_TEMPLATE, rendered):
        env = {
            "CLASS_RUN_DIR": str(tmp_path),
            "CLASS_PORT": "18080",
            "CLASS_BIND": "127.0.0.1",
            "CLASS_PROXY_SECRET": "x" * 43,
            "PATH": "/usr/bin:/bin",
        }
        check = subprocess.run([haproxy, "-c", "-f", str(path)], env=env, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
