"""What the code check's tests share: a right implementation as a learner would write it, one built
step by step (``attention``, whose lines a trap replaces), and a sandbox per test module."""

from __future__ import annotations

import textwrap

import pytest

from attention_core.codecheck.sandbox import Sandbox

RIGHT = """import numpy as np

def attention(X, W_Q, W_K, W_V, mask, d_k):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = Q @ K.T / np.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    m = S.max(axis=-1, keepdims=True)
    E = np.exp(S - np.where(np.isfinite(m), m, 0.0))
    total = E.sum(axis=-1, keepdims=True)
    A = E / np.where(total == 0, 1.0, total)
    return A @ V
"""

# multi_head, every head at once, as a learner vectorises it
RIGHT_MULTI_HEAD = """import numpy as np


def multi_head(X, W_Q, W_K, W_V, W_O, mask):
    n = X.shape[0]
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    m = S.max(axis=-1, keepdims=True)
    E = np.exp(S - np.where(np.isfinite(m), m, 0.0))
    t = E.sum(axis=-1, keepdims=True)
    A = E / np.where(t == 0, 1.0, t)
    O = A @ V
    C = O.transpose(1, 0, 2).reshape(n, -1)
    return C @ W_O
"""


# attention(...) as a learner writes it, one line per step; a trap replaces one of the lines
RIGHT_SOFTMAX = """m = S.max(axis=-1, keepdims=True)
m = np.where(np.isfinite(m), m, 0)
E = np.exp(S - m)
t = E.sum(axis=-1, keepdims=True)
A = E / np.where(t == 0, 1, t)"""


def attention(
    scale="S = Q @ K.T / np.sqrt(d_k)",
    mask="S = np.where(mask, S, -np.inf) if mask is not None else S",
    soft=RIGHT_SOFTMAX,
    out="return A @ V",
) -> str:
    body = "\n".join(["Q, K, V = X @ W_Q, X @ W_K, X @ W_V", scale, mask, soft, out])
    return "import numpy as np\n\ndef attention(X, W_Q, W_K, W_V, mask, d_k):\n" + textwrap.indent(
        body, "    "
    )


@pytest.fixture(scope="module")
def sandbox():
    """A sandbox with a warm spare. Its wall clock is generous: on a loaded test machine 2 s of CPU can
    take many seconds of wall time, and the tests must see the CPU limit stop an endless loop."""
    box = Sandbox(wall_seconds=90)
    box.prestart()
    yield box
    box.close()


def check_in_process(source: str, cases):
    """The check's report for ``source`` on ``cases``, with the worker's job run in this process (the
    same compile, policy and runs as in the worker, without its process and limits): for tests of the
    verdict that need many checks of trusted, test-written code. The sandbox itself is tested with
    the real worker (codecheck/test_check.py, codecheck/test_sandbox.py)."""
    from attention_core.codecheck import worker
    from attention_core.codecheck.cases import reference
    from attention_core.codecheck.check import encode_case
    from attention_core.codecheck.traps import trap_outputs
    from attention_core.codecheck.verdict import build_report

    reply = worker.run_job({"source": source, "cases": [encode_case(c) for c in cases]})
    refs = {(c.name, c.multi): reference(c) for c in cases}
    return build_report(reply, None, cases, refs, trap_outputs(cases), trap_outputs(cases, multi=True))
