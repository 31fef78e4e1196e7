"""scripts/house_counts.py: each count's finder on small pieces of code written here (what it must
find and what it must not), the house as it is now (every rule of issue 46's ask 3 written once, no
`extended` marker), and a count of another revision."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import house_counts as HC  # noqa: E402


def house(product: dict[str, str], tests: dict[str, str] | None = None) -> HC.House:
    def parsed(files):
        return tuple(HC.Source(path, ast.parse(code)) for path, code in files.items())

    return HC.House(parsed(product), parsed(tests or {}))


def found(count: str, code: str, path: str = "attention_core/x.py") -> list[str]:
    return next(c for c in HC.COUNTS if c.name == count).find(house({path: code}))


WINDOW_RULES = {
    "a window subtracted": "def f(i, j, window):\n    return (j <= i) & (j > i - window)\n",
    "a difference compared": "def f(i, j, window):\n    return (j <= i) & ((i - j < window) | (j < 2))\n",
    "a named difference": "def f(q, k, window):\n    offset = q[:, None] - k[None, :]\n    return offset < window\n",
    "an attribute": "def f(c):\n    return c.length - c.window\n",
    "in a closure": "def f(window):\n    def g(i, j):\n        return (i - j) >= window\n    return g\n",
}
NOT_WINDOW_RULES = {
    "a check of the window": "def f(window, n):\n    if window < 1 or window >= n - 1:\n        raise ValueError\n",
    "a length compared": "def f(trace, window):\n    return trace.n <= window\n",
    "a docstring": 'def f():\n    """query i reads keys i - window < j <= i"""\n',
    "a count": "def f(n, w):\n    return n * w - w * (w - 1) // 2\n",
    "a call": "def f(q, k, window):\n    return k >= window_start(q, window)\n",
    "a running mean's slice": "def f(losses, step, window):\n    return losses[step - window : step].mean()\n",
}


@pytest.mark.parametrize("name", list(WINDOW_RULES))
def test_the_window_rule_is_found(name):
    assert len(found("window_rule", WINDOW_RULES[name])) == 1


@pytest.mark.parametrize("name", list(NOT_WINDOW_RULES))
def test_what_is_not_the_window_rule(name):
    assert found("window_rule", NOT_WINDOW_RULES[name]) == []


def test_a_place_names_its_file_function_and_line():
    code = "import numpy as np\n\nclass A:\n    def f(self, i, window):\n        return i - window + 1\n"
    assert found("window_rule", code, "attention_core/y.py") == ["attention_core/y.py:A.f:5"]


def test_log_softmax_head_projection_and_layer_loops_are_found():
    log_sm = "def ls(z):\n    z = z - z.max(-1)\n    return z - np.log(np.exp(z).sum(-1))\n"
    assert len(found("log_softmax", log_sm)) == 1
    assert found("log_softmax", "def f(w):\n    return w * np.log(np.where(w > 0, w, 1))\n") == []
    assert len(found("head_projection", "def p(X, W):\n    return split_heads(X @ W.T, 4)\n")) == 1
    assert found("head_projection", "def p(d):\n    return steps.split_heads(d, 4)\n") == []  # no product
    loops = (
        "def a(x, layers):\n    for layer in layers:\n        x = x + ffn_block(x, layer)\n    return x\n"
        "def b(x, layers):\n    for i in range(3):\n        x = x + swiglu_block(x, layers[i])\n    return x\n"
        "def c(layers):\n    for layer in layers:\n        print(layer)\n"
    )
    assert len(found("llama_layer_loops", loops, HC.LLAMA)) == 2
    assert found("llama_layer_loops", loops, "attention_core/other.py") == []  # llama.py only


def test_the_house_writes_each_rule_once():
    got = HC.measure()
    assert got["window_rule"] == [got["window_rule"][0]] and ":window_start:" in got["window_rule"][0]
    assert [p.split(":")[:2] for p in got["log_softmax"]] == [["attention_core/steps.py", "log_softmax"]]
    assert [p.split(":")[1] for p in got["llama_layer_loops"]] == ["layer_stack"]
    # the one projection every pass calls, and the multi-head lab's check that writes the cut out on
    # purpose beside one product per head (tests/labs/test_multihead.py swaps its split_heads)
    assert sorted(p.split(":")[1] for p in got["head_projection"]) == ["project_heads", "split_vs_separate"]


def test_the_script_prints_every_count(capsys):
    assert HC.main(["--brief"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [c.name for c in HC.COUNTS]
    assert HC.main(["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["window_rule"]["count"] == len(data["window_rule"]["places"]) == 1


SESSION_CODE = """
import streamlit as st

DEFAULTS = {"pg_table": 1}  # a table declares its keys
SETTINGS = (Setting(key="pg_entry"),)
MODE_KEY = "pg_mode"  # a constant spells its key: counted where it is used as one
TITLE = "pg_title"  # (not used as a key: not counted)


def f(n):
    \"\"\"st.session_state["pg_doc"] in a docstring is not code\"\"\"
    s = st.session_state
    st.slider("d", key="pg_d")
    if "pg_in" in st.session_state and s.get("pg_get"):
        st.session_state["pg_d"] = st.session_state.pg_attr
    st.toggle("m", key=MODE_KEY)
    return st.session_state[f"pg_head_{n}"], sorted([], key=len), TITLE
"""


def test_session_keys_spelled_outside_the_tables():
    keys = [p.split()[0] for p in found("session_keys", SESSION_CODE, "app_pages/x.py")]
    assert keys == ["pg_attr", "pg_d", "pg_get", "pg_in", "pg_mode"]
    assert found("session_keys", SESSION_CODE, "app_pages/x.py")[1].startswith("pg_d (2x) app_pages/x.py:f:")
    assert len(found("session_key_families", SESSION_CODE, "app_pages/x.py")) == 1


def test_browser_code_and_streamlit_structure_in_strings():
    css, js = "<style>.a { color: red; }</style>", "() => document.querySelector('[data-testid=stMain]')"
    code = f'"""<div> in a docstring"""\nCSS = "{css}"\nJS = "{js}"\nTEXT = "a plain sentence: no code"\n'
    assert found("web_code_chars", code, "attention_ui/x.py") == [f"attention_ui/x.py: {len(css) + len(js)}"]
    assert found("streamlit_structure", code, "attention_ui/x.py") == ["attention_ui/x.py: 2"]


def test_names_of_a_page():
    app = 'LABS = [("app_pages/why_sqrt_dk.py", "app.nav", "i", "why-sqrt-dk"), ("app_pages/masks.py", "k", "i", "masks")]'
    page = "from attention_core.labs import scaling\nfrom attention_ui.why_sqrt_dk import figures\nPAGE = kit.Page('sq', 'sqrt')"
    masks = "from attention_ui.masks import views\nPAGE = kit.Page('masks', 'masks')"
    h = house({"app.py": app, "app_pages/why_sqrt_dk.py": page, "app_pages/masks.py": masks,
               "attention_ui/why_sqrt_dk/figures.py": "", "attention_ui/masks/views.py": ""})  # fmt: skip
    count = next(c for c in HC.COUNTS if c.name == "page_names")
    assert count.find(h) == ["app_pages/why_sqrt_dk.py: why_sqrt_dk, sq, sqrt, scaling"]
    assert count.total(count.find(h)) == 3


def test_names_of_a_page_from_the_navigation_and_its_settings_module():
    """attention_ui/nav.py's entries name the script and the URL; the page's settings module holds its
    table's prefix and the kit's namespace, which count as names where they differ from the page's."""
    navigation = 'LABS = (NavPage("scaling", "i", "why-sqrt-dk"), NavPage("masks", "i"))'
    settings = 'TABLE = Table("sq", Setting("x", 1))\nPAGE = kit.Page.of(TABLE, "sqrt")'
    h = house({"app.py": "", "attention_ui/nav.py": navigation,
               "app_pages/scaling.py": "from attention_ui.scaling.settings import PAGE",
               "attention_ui/scaling/settings.py": settings, "app_pages/masks.py": "",
               "attention_ui/masks/settings.py": 'TABLE = Table("masks")\nPAGE = kit.Page.of(TABLE)'})  # fmt: skip
    count = next(c for c in HC.COUNTS if c.name == "page_names")
    assert count.find(h) == ["app_pages/scaling.py: scaling, why_sqrt_dk, sq, sqrt"]
    assert count.total(count.find(h)) == 3


def test_tests_by_module_and_the_extended_marker():
    h = house(
        {
            "attention_core/labs/masks.py": "",
            "attention_core/labs/scaling.py": "",
            "attention_core/models/llama.py": "",
            "attention_core/steps.py": "",
            "app_pages/masks.py": "",
        },
        {
            "tests/labs/test_masks.py": "",  # its package's folder: the rule
            "tests/test_lab_scaling.py": "",  # named after the module, but not where the rule looks
            "tests/test_llama.py": "",  # the stem alone, outside the package's folder
            "tests/labs/test_steps.py": "",  # a top-level module's test in a package's folder
            "tests/test_app_masks.py": "",
            "tests/test_issue18.py": "import pytest\n\n@pytest.mark.extended\ndef test_a():\n    pass\n",
            "tests/test_mutation_kills.py": "",
            "tests/helpers.py": "",
        },
    )
    by = {c.name: c.find(h) for c in HC.COUNTS}
    assert by["tests_outside_module_files"] == [
        "tests/labs/test_steps.py",
        "tests/test_issue18.py",
        "tests/test_mutation_kills.py",
    ]
    assert by["round_named_tests"] == ["tests/test_issue18.py", "tests/test_mutation_kills.py"]
    assert by["core_modules_without_tests"] == [
        "attention_core/labs/scaling.py",
        "attention_core/models/llama.py",
        "attention_core/steps.py",
    ]
    assert by["extended_tests"] == ["tests/test_issue18.py:3"]
    assert HC.module_test_path("attention_core/labs/masks.py") == "tests/labs/test_masks.py"
    assert HC.module_test_path("attention_core/steps.py") == "tests/test_steps.py"
    named = (
        "test_app_issue4",
        "test_catalog_claims_i24",
        "test_x_i42n",
        "test_cli_train_kills",
        "test_round_2",
    )
    assert all(HC.ROUND_NAMED.search(n) for n in named)
    assert not any(HC.ROUND_NAMED.search(n) for n in ("test_i18n", "test_app_playground", "test_surround"))


def test_every_core_module_has_its_test_file():
    """attention_core/x/y.py is tested in tests/x/test_y.py, attention_core/y.py in tests/test_y.py."""
    missing = HC.measure()["core_modules_without_tests"]
    assert not missing, f"no test file for {missing}: write {[HC.module_test_path(m) for m in missing]}"


def test_no_test_is_marked_extended_any_more():
    assert HC.measure()["extended_tests"] == []


def test_another_revision_is_counted_from_git(capsys):
    assert HC.main(["--brief", "--at", "HEAD"]) == 0
    at_head = capsys.readouterr().out
    assert [line.split()[0] for line in at_head.splitlines()] == [c.name for c in HC.COUNTS]
    assert "llama_layer_loops" in at_head
