"""Attacks on the code check's sandbox (docs/code-check.md): each is refused or killed with a clear
message, through the real worker process, while another check runs to completion meanwhile.

How each is stopped (the docs' table says the same):
- by construction: what the attack needs does not exist in the learner's world (not a builtin, not
  on the ``np`` proxy, not in an array's whitelist), whatever the compiler let through;
- by policy: RestrictedPython's compiler (with our additions) refuses the code before it runs;
- by limits: the worker's resource limits stop it (CPU, memory, no processes, no files; the limits
  alone, without the policy, are tested in test_worker.py).
The ones blocked by construction keep a test each anyway: a later widening of a whitelist must fail.
"""

from __future__ import annotations

import tempfile
import textwrap
import threading
from pathlib import Path

import psutil
import pytest

from attention_core.codecheck import policy
from attention_core.codecheck.cases import hidden_cases
from attention_core.codecheck.check import check_cases
from attention_core.codecheck.report import report_text
from attention_core.codecheck.sandbox import ROOT, TEMP_PREFIX, Sandbox
from tests import codecheck_helpers
from tests.codecheck_helpers import RIGHT

sandbox = codecheck_helpers.sandbox  # the module's sandbox (a warm spare), as a fixture

CASES = hidden_cases()[:1]  # random shapes: the attacks need a case, not many


def fn(body: str) -> str:
    """``body`` inside the learner's attention(), so that it runs on a case."""
    return "import numpy as np\ndef attention(X, W_Q, W_K, W_V, mask, d_k):\n" + textwrap.indent(body, "    ")


def outcome(report) -> tuple:
    """What happened, as a short tuple the table below names."""
    if report.verdict == "refused":
        return ("refused", *((r.code, r.name) for r in report.refusals))
    if report.verdict == "killed":
        return ("killed", report.killed)
    if report.module_error is not None:
        return ("error", report.module_error.code, report.module_error.name)
    first = report.functions[0].cases[0]
    if first.error is not None:
        return ("error", first.error.code, first.error.name)
    return (report.verdict,)


# id, source, expected outcome, stopped by (construction / policy / limits)
ISSUE_ATTACKS = [
    ("import_os", "import os\nos.system('id')", ("refused", ("import", "os")), "policy"),
    ("dunder_import", "__import__('os')", ("refused", ("underscore_name", "__import__")), "policy"),
    (
        "subclasses_walk",
        "x = ().__class__.__bases__[0].__subclasses__()",
        (
            "refused",
            ("underscore_attribute", "__subclasses__"),
            ("underscore_attribute", "__bases__"),
            ("underscore_attribute", "__class__"),
        ),
        "policy",
    ),  # fmt: skip
    (
        "getattr_load",
        "import numpy as np\nf = getattr(np, 'lo' + 'ad')",
        ("refused", ("forbidden_name", "getattr")),
        "policy",
    ),
    (
        "np_load",
        "import numpy as np\nx = np.load('/etc/passwd')",
        ("error", "np_attribute", "load"),
        "construction",
    ),
    (
        "np_fromfile",
        "import numpy as np\nx = np.fromfile('/etc/passwd')",
        ("error", "np_attribute", "fromfile"),
        "construction",
    ),
    (
        "np_loadtxt",
        "import numpy as np\nx = np.loadtxt('/etc/passwd')",
        ("error", "np_attribute", "loadtxt"),
        "construction",
    ),
    ("open", "x = open('/etc/passwd').read()", ("refused", ("forbidden_name", "open")), "policy"),
    ("exec", "exec('import os')", ("refused", ("forbidden_name", "exec")), "policy"),
    ("eval", "x = eval('1 + 1')", ("refused", ("forbidden_name", "eval")), "policy"),
    ("compile", "c = compile('1', 'f', 'eval')", ("refused", ("forbidden_name", "compile")), "policy"),
    (
        "np_ctypeslib",
        "import numpy as np\nx = np.ctypeslib",
        ("error", "np_attribute", "ctypeslib"),
        "construction",
    ),
    (
        "format_string",
        fn("return '{0.__class__.__mro__}'.format(X)"),
        ("error", "attribute", "format"),
        "construction",
    ),
    ("array_tofile", fn("X.tofile('/tmp/x')\nreturn X"), ("error", "attribute", "tofile"), "construction"),
    ("environment", "import os\nx = os.environ", ("refused", ("import", "os")), "policy"),
    ("fork", "import os\npid = os.fork()", ("refused", ("import", "os")), "policy"),
    ("huge_array", "import numpy as np\nx = np.ones(10**10)", ("error", "memory", None), "limits"),
    ("endless_loop", "while True:\n    pass", ("killed", "cpu"), "limits"),
]
MORE_ATTACKS = [
    (
        "fstring_dunder",
        "x = f'{(1).__class__}'",
        ("refused", ("underscore_attribute", "__class__")),
        "policy",
    ),
    (
        "format_map",
        fn("return '{x.__class__}'.format_map({'x': X})"),
        ("error", "attribute", "format_map"),
        "construction",
    ),
    (
        "str_format_on_type",
        fn("return str.format('{0.__class__}', X)"),
        ("error", "attribute", "format"),
        "construction",
    ),
    ("array_ctypes", fn("return X.ctypes"), ("error", "attribute", "ctypes"), "construction"),
    ("array_dump", fn("X.dump('/tmp/x')\nreturn X"), ("error", "attribute", "dump"), "construction"),
    ("array_data", fn("return X.data"), ("error", "attribute", "data"), "construction"),
    ("array_base", fn("return X.T.base"), ("error", "attribute", "base"), "construction"),
    (
        "array_interface",
        fn("return X.__array_interface__"),
        ("refused", ("underscore_attribute", "__array_interface__")),
        "policy",
    ),
    ("array_view", fn("return X.view()"), ("error", "attribute", "view"), "construction"),
    (
        "array_setflags",
        fn("X.setflags(write=True)\nreturn X"),
        ("error", "attribute", "setflags"),
        "construction",
    ),
    ("dtype_type", fn("return X.dtype.type"), ("error", "attribute", "type"), "construction"),
    ("ufunc_attribute", "import numpy as np\nf = np.exp.at", ("error", "attribute", "at"), "construction"),
    (
        "type_attribute",
        "import numpy as np\nf = np.float64.mro",
        ("error", "attribute", "mro"),
        "construction",
    ),
    ("np_lib", "import numpy as np\nx = np.lib.format", ("error", "np_attribute", "lib"), "construction"),
    (
        "np_testing",
        "import numpy as np\nx = np.testing",
        ("error", "np_attribute", "testing"),
        "construction",
    ),
    ("np_f2py", "import numpy as np\nx = np.f2py", ("error", "np_attribute", "f2py"), "construction"),
    (
        "np_distutils",
        "import numpy as np\nx = np.distutils",
        ("error", "np_attribute", "distutils"),
        "construction",
    ),
    (
        "np_frompyfunc",
        "import numpy as np\nf = np.frompyfunc(len, 1, 1)",
        ("error", "np_attribute", "frompyfunc"),
        "construction",
    ),
    (
        "np_vectorize",
        "import numpy as np\nf = np.vectorize(len)",
        ("error", "np_attribute", "vectorize"),
        "construction",
    ),
    (
        "np_set_printoptions",
        "import numpy as np\nnp.set_printoptions(formatter={'all': len})",
        ("error", "np_attribute", "set_printoptions"),
        "construction",
    ),
    (
        "np_save",
        "import numpy as np\nnp.save('/tmp/x', np.ones(3))",
        ("error", "np_attribute", "save"),
        "construction",
    ),
    (
        "np_memmap",
        "import numpy as np\nm = np.memmap('/tmp/x')",
        ("error", "np_attribute", "memmap"),
        "construction",
    ),
    ("from_numpy_import_load", "from numpy import load", ("error", "np_attribute", "load"), "construction"),
    ("import_numpy_submodule", "import numpy.linalg", ("refused", ("import", "numpy.linalg")), "policy"),
    (
        "object_array",
        "import numpy as np\nx = np.array([len, max], dtype='O')",
        ("error", "object_array", "dtype=object"),
        "construction",
    ),
    (
        "astype_object",
        "import numpy as np\nx = np.ones(2).astype('O')",
        ("error", "object_array", "dtype=object"),
        "construction",
    ),
    (
        "generator_frame",
        "g = (i for i in [1])\nf = g.gi_frame",
        ("refused", ("attribute", "gi_frame")),
        "policy",
    ),
    ("generator_send", "g = (i for i in [1])\nf = g.send", ("error", "attribute", "send"), "construction"),
    (
        "function_globals",
        "f = (lambda: 0).__globals__",
        ("refused", ("underscore_attribute", "__globals__")),
        "policy",
    ),
    (
        "exception_traceback",
        "try:\n    1 / 0\nexcept Exception as e:\n    t = e.with_traceback",
        ("error", "attribute", "with_traceback"),
        "construction",
    ),
    (
        "attribute_write",
        "import numpy as np\nx = np.ones(3)\nx.shape = (3, 1)",
        ("error", "write", ".shape"),
        "construction",
    ),
    ("class_definition", "class A:\n    pass", ("refused", ("class", "A")), "policy"),
    ("type_builtin", "T = type('A', (), {})", ("refused", ("forbidden_name", "type")), "policy"),
    ("globals", "g = globals()", ("refused", ("forbidden_name", "globals")), "policy"),
    ("relative_import", "from . import cases", ("refused", ("import", ".")), "policy"),
    (
        "deep_recursion",
        fn("def f(k):\n    return f(k + 1)\nreturn f(0)"),
        ("error", None, None),
        "construction",
    ),
    (
        "vectorised_loop",
        "import numpy as np\nwhile True:\n    np.ones((200, 200)) @ np.ones((200, 200))",
        ("killed", "cpu"),
        "limits",
    ),
    ("big_string", "x = 'x' * 10**9", ("error", "memory", None), "limits"),
]


ATTACKS = ISSUE_ATTACKS + MORE_ATTACKS


@pytest.mark.parametrize("name, source, expected, stopped_by", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_attack_is_refused_or_killed_with_a_clear_message(sandbox, name, source, expected, stopped_by):
    report = check_cases(source, CASES, sandbox)
    got = outcome(report)
    assert got == expected, (name, got)
    text = report_text(report)
    if expected[0] == "killed":
        assert {"cpu": "took longer than 2 s"}[expected[1]] in text
    elif expected[0] == "refused":
        assert all(f"line {r.line}:" in text and r.name in text for r in report.refusals)
    elif expected[1] == "memory":
        assert "used more than 512 MB" in text
    elif expected[1] is not None:
        assert expected[2] in text  # the refused name is said
    assert "Traceback" not in text and str(ROOT) not in text  # never the server's frames


def test_deep_recursion_points_at_the_learners_line(sandbox):
    report = check_cases(fn("def f(k):\n    return f(k + 1)\nreturn f(0)"), CASES, sandbox)
    error = report.function("attention").cases[0].error
    assert error.line == 4 and error.message.startswith("RecursionError")


def test_printing_100_mb_is_cut(sandbox):
    report = check_cases("print('x' * 10**8)\n" + RIGHT, CASES, sandbox)
    assert report.verdict == "pass" and report.printed_cut
    assert len(report.printed) == policy.MAX_PRINTED_CHARS
    assert "(printed text cut here)" in report_text(report)


def test_a_second_check_finishes_while_an_endless_loop_runs(sandbox):
    """Two sessions: one sends an endless loop, the other a right answer; the second is judged while
    the first still runs, and the first is then stopped by the CPU limit."""
    slow: dict = {}
    attacker = threading.Thread(
        target=lambda: slow.setdefault("r", check_cases("while True:\n    pass", CASES, sandbox))
    )
    attacker.start()
    quick = check_cases(RIGHT, CASES, sandbox)
    assert quick.verdict == "pass"
    assert attacker.is_alive()  # the other session's check is still running, in its own process
    attacker.join(120)
    assert outcome(slow["r"]) == ("killed", "cpu")


def test_worker_environment_is_empty_and_nothing_is_left_behind(sandbox):
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    tmp = Path(tempfile.gettempdir())
    dirs_before = set(tmp.glob(TEMP_PREFIX + "*"))
    box = Sandbox()
    try:
        assert check_cases(RIGHT, CASES, box).verdict == "pass"
        spare = box.spare_pid()  # the spare, ready and waiting
        assert Path(f"/proc/{spare}/environ").read_bytes() == b""  # started with an empty environment
    finally:
        box.close()
    after = {p.pid for p in me.children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE}
    assert after - before == set()
    assert set(tmp.glob(TEMP_PREFIX + "*")) - dirs_before == set()
