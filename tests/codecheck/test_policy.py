"""The sandbox's policy (attention_core/codecheck/policy.py) in this process: what the compiler refuses,
with the learner's line and a readable reason, and what the learner's ``np`` and attribute guard offer.
(The same rules through the real worker, as attacks, are in test_sandbox.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.codecheck import policy as P
from tests.codecheck_helpers import RIGHT


@pytest.mark.parametrize(
    "source, refusal",
    [
        ("import os\n", P.Refusal(1, "import", "os")),
        ("x = 1\n_y = 2\n", P.Refusal(2, "underscore_name", "_y")),
        ("x = 1\ny = x.__class__\n", P.Refusal(2, "underscore_attribute", "__class__")),
        ("\n\nclass A:\n    pass\n", P.Refusal(3, "class", "A")),
        ("x = eval('1')\n", P.Refusal(1, "forbidden_name", "eval")),
        ("x = " + "1" * P.MAX_SOURCE_CHARS + "\n", P.Refusal(None, "too_long", str(P.MAX_SOURCE_CHARS))),
    ],
    ids=["import", "underscore_name", "underscore_attribute", "class", "eval", "too_long"],
)
def test_code_the_policy_refuses_is_not_compiled_and_says_where_and_why(source, refusal):
    code, refusals = P.compile_learner(source)
    assert code is None and refusal in refusals


def test_a_syntax_error_is_refused_and_the_right_code_compiles():
    code, refusals = P.compile_learner("def f(:\n    return 1\n")
    assert code is None and [r.code for r in refusals] == ["syntax"]
    code, refusals = P.compile_learner(RIGHT)
    assert code is not None and refusals == ()


def test_a_refusal_reads_as_a_sentence_with_the_line():
    assert P.Refusal(4, "import", "os").text().startswith("line 4: import os is not allowed")
    assert P.Refusal(None, "attribute", "tofile").text() == "line ?: .tofile is not available in the check"
    assert P.refusal_from_message("Line 7: Exec calls are not allowed.") == P.Refusal(
        7, "forbidden_name", "exec"
    )
    assert P.refusal_from_message("something else") == P.Refusal(None, "policy", "something else")


def test_the_learners_numpy_and_attributes_are_the_whitelist():
    assert P.NP.sqrt(np.array([4.0])).tolist() == [2.0] and P.NP.pi == np.pi
    for name in ("load", "save", "ctypeslib", "lib"):
        with pytest.raises(P.NotAllowed) as err:
            getattr(P.NP, name)
        assert (err.value.code, err.value.name) == ("np_attribute", name)
    a = np.zeros((2, 3))
    assert P.guarded_getattr(a, "shape") == (2, 3) and P.guarded_getattr(a, "T").shape == (3, 2)
    for obj, name in ((a, "tofile"), (a, "_private"), ("text", "format"), (1, "real")):
        with pytest.raises(P.NotAllowed):
            P.guarded_getattr(obj, name)
