"""The worker's lock-down (attention_core/codecheck/worker.py), without the policy: trusted code in a
locked-down worker process can start no process, write or read no file and open no socket. (The worker
running learners' code through the sandbox is tested in test_sandbox.py and test_check.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from attention_core.codecheck.sandbox import ROOT

LIMITS_PROBE = textwrap.dedent(
    """
    import os, socket, sys
    sys.path.insert(0, sys.argv[1])
    from attention_core.codecheck import worker
    worker._imports()
    done = worker.lock_down()
    out = os.fdopen(int(sys.argv[2]), "w")
    def attempt(what, action):
        try:
            action()
            out.write(what + ": allowed\\n")
        except OSError as err:
            out.write(what + ": refused " + type(err).__name__ + "\\n")
    attempt("fork", os.fork)
    attempt("write", lambda: open("/x", "w").close())
    attempt("read", lambda: open("/etc/passwd").read())
    attempt("socket", lambda: socket.socket())
    out.write("root " + str(done["root"]) + " user " + str(os.getuid()) + "\\n")
    out.flush()
    """
)


def test_the_limits_hold_without_the_policy(tmp_path):
    """Trusted code in a locked-down worker tries what the policy would have refused: no new
    process, no file written or read, no socket (by construction of the limits, not the policy)."""
    read, write = os.pipe()
    proc = subprocess.run(
        [sys.executable, "-I", "-c", LIMITS_PROBE, str(ROOT), str(write)],
        cwd=tmp_path, env={}, pass_fds=(write,), stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
    )  # fmt: skip
    os.close(write)
    with os.fdopen(read) as f:
        lines = f.read().splitlines()
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert [line.split(":")[0] for line in lines[:4]] == ["fork", "write", "read", "socket"]
    assert all("refused" in line for line in lines[:4]), lines
    if os.geteuid() == 0:  # as root the worker leaves root behind: nobody, in its empty directory
        assert lines[4].startswith("root True user ") and not lines[4].endswith(" 0")
