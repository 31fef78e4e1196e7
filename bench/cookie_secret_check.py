"""Which cookies survive a move between replicas: a check of Streamlit's cookie handling behind HAProxy.

    .venv/bin/python bench/cookie_secret_check.py

Streamlit signs its login cookie (``_streamlit_user``, set by ``st.login``) with
``server.cookieSecret``, which is random per process unless set. This starts two small clusters
(deploy/serve_class.py, 2 processes each) running a probe page that prints ``st.user.is_logged_in``:
one where both processes share a secret (what the launcher does) and one where each process draws its
own (Streamlit's default). In each, a browser carrying a login cookie signed with replica r1's secret
is pinned to r1 and then to r2 (through HAProxy's stickiness cookie). It also checks the XSRF
double-submit cookie: a token issued by one process, presented to the other one's upload endpoint.

Expected with Streamlit 1.67: the login cookie is accepted by both processes only with a shared
secret; the XSRF token is accepted by the other process either way (it is a random token compared
with its own cookie, not signed), and a request without it is refused (403).
Loopback only; takes about a minute.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright
from streamlit.web.server.starlette.starlette_app_utils import create_signed_value

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "deploy"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from serve_class import SECRET_ENV, Cluster, free_port, upload_status  # noqa: E402
from st_browser import CHROMIUM_ARGS, chromium_executable  # noqa: E402

PROBE = "import streamlit as st\n\nst.write(f\"LOGGED_IN={st.user.to_dict().get('is_logged_in', False)}\")\n"


class _OwnSecrets(Cluster):
    """Every process draws its own random secret: Streamlit's default when none is set."""

    def _replica_env(self) -> dict[str, str]:
        env = super()._replica_env()
        env[SECRET_ENV] = secrets.token_hex(32)
        return env


def run(cluster_cls, label: str, browser, app: Path) -> dict:
    shared = secrets.token_hex(32)
    port = free_port()
    run_dir = Path(tempfile.mkdtemp(prefix="cookie-secret-"))
    result = {"setup": label}
    with cluster_cls(2, port, run_dir=run_dir, app=str(app), secret=shared, quiet=True) as cluster:
        origin = cluster.url
        # A login cookie as r1 would sign it (with the shared secret in the first setup; in the
        # second r1 has its own, read from its environment).
        r1_secret = Path(f"/proc/{cluster.replica('r1').pid}/environ").read_bytes().split(b"\0")
        r1_secret = next(v.split(b"=", 1)[1].decode() for v in r1_secret if v.startswith(SECRET_ENV.encode()))
        payload = json.dumps({"origin": origin, "is_logged_in": True, "email": "t@example.org"})
        signed = create_signed_value(r1_secret, "_streamlit_user", payload).decode()
        for name in ("r1", "r2"):
            context = browser.new_context()
            context.add_cookies([
                {"name": "_streamlit_user", "value": signed, "url": origin},
                {"name": "attnlab_replica", "value": name, "url": origin},
            ])  # fmt: skip
            page = context.new_page()
            page.goto(origin + "/")
            text = page.get_by_text("LOGGED_IN=").inner_text(timeout=60_000)
            result[f"login cookie signed by r1, on {name}"] = text.split("=", 1)[1]
            context.close()
        with urllib.request.urlopen(f"{origin}/_stcore/health") as r:  # pinned to whichever answers
            cookies = r.headers.get_all("Set-Cookie")
        token = next(c.split(";")[0].split("=", 1)[1] for c in cookies if c.startswith("_streamlit_xsrf="))
        issuer = next(c.split(";")[0].split("=", 1)[1] for c in cookies if c.startswith("attnlab_replica="))
        other = "r2" if issuer == "r1" else "r1"
        result[f"XSRF token from {issuer}, upload on {other}"] = upload_status(origin, token, other, True)
        result[f"no XSRF header, upload on {other}"] = upload_status(origin, token, other, False)
    return result


def main() -> int:
    os.environ.pop(SECRET_ENV, None)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        app = Path(tmp) / "probe.py"
        app.write_text(PROBE)
        browser = pw.chromium.launch(headless=True, executable_path=chromium_executable(), args=CHROMIUM_ARGS)
        rows = [
            run(Cluster, "one shared secret", browser, app),
            run(_OwnSecrets, "a secret per process", browser, app),
        ]
        browser.close()
    for row in rows:
        print(row.pop("setup"))
        for key, value in row.items():
            print(f"  {key}: {value}")
    shared, own = rows
    ok = (
        list(shared.values())[:2] == ["True", "True"]
        and list(own.values())[:2] == ["True", "False"]
        and all(v == 400 for k, v in {**shared, **own}.items() if k.startswith("XSRF"))
        and all(v == 403 for k, v in {**shared, **own}.items() if k.startswith("no XSRF"))
    )
    print("as expected (login cookie needs the shared secret; XSRF works across processes either way)"
          if ok else "UNEXPECTED: see above")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
