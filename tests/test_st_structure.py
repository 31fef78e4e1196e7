"""attention_ui/st_structure.py: every name of Streamlit's page structure that the product selects is
declared there, and the installed Streamlit still renders each one (an upgrade that renames one fails
here, naming it, instead of a rule that silently matches nothing in the browser)."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest
import streamlit

from attention_ui import assets, st_structure

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from house_counts import PRODUCT, _module_strings  # noqa: E402

BUNDLE = Path(streamlit.__file__).parent / "static" / "static" / "js"


@cache
def bundle() -> str:
    """The installed Streamlit's frontend JavaScript, as one text (its files that name a test id: the
    others are libraries' code, such as Plotly's)."""
    chunks = (p.read_bytes() for p in sorted(BUNDLE.glob("*.js")))
    return "\n".join(c.decode("utf-8", "replace") for c in chunks if b"data-testid" in c)


@cache
def _uses() -> dict[str, set[str]]:
    """Each structure name that the assets and the product's Python strings select -> the files."""
    texts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in assets.files()}
    for name in PRODUCT:
        here = ROOT / name
        for path in [here] if here.is_file() else sorted(here.rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            # only a file that spells a name or builds a selector is parsed (to read its strings, not
            # its comments); a selector built with st_structure.testid/key_class is written out here
            if path.name == "st_structure.py" or not (st_structure.used_names(source) or "testid(" in source):
                continue
            tree = ast.parse(source)
            built = [
                st_structure.testid(node.args[0].value)
                for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "testid"
            ]
            texts[path.relative_to(ROOT).as_posix()] = "\n".join([*_module_strings(tree), *built])
    uses: dict[str, set[str]] = {}
    for where, text in texts.items():
        for used in st_structure.used_names(text):
            uses.setdefault(used, set()).add(where)
    return uses


def test_every_selected_name_is_declared() -> None:
    undeclared = {name: sorted(where) for name, where in _uses().items() if name not in st_structure.NAMES}
    assert not undeclared, f"declare these in attention_ui/st_structure.py (name: used by): {undeclared}"


def test_every_declared_name_is_used() -> None:
    unused = set(st_structure.NAMES) - set(_uses())
    assert not unused, f"declared in attention_ui/st_structure.py but selected nowhere: {sorted(unused)}"


def test_the_installed_streamlit_renders_every_declared_name() -> None:
    assert BUNDLE.is_dir(), f"no frontend bundle at {BUNDLE}"
    missing = st_structure.missing_from(bundle(), st_structure.NAMES, streamlit.__version__)
    assert not missing, "\n".join(missing)


def test_a_renamed_name_is_named_in_the_failure() -> None:
    # A made-up name, as an upgrade that renamed stMain would leave it; and a real one's longer
    # neighbour does not count as the name (stMainBlockContainer is not stMain).
    made_up = {"stMainColumn": "presenter.css", "stSidebarCollapsedControl": "presenter.css (before 1.67)"}
    assert st_structure.missing_from(bundle(), made_up, "9.9") == [
        "Streamlit 9.9 no longer renders 'stMainColumn'; used by presenter.css",
        "Streamlit 9.9 no longer renders 'stSidebarCollapsedControl'; used by presenter.css (before 1.67)",
    ]
    assert st_structure.missing_from("x `stMainBlockContainer` y", {"stMain": "p"}, "9.9")
    assert not st_structure.missing_from("x `stMain` y", {"stMain": "p"}, "9.9")


def test_the_selector_builders() -> None:
    assert st_structure.testid("stMain") == '[data-testid="stMain"]'
    assert st_structure.testid("stBaseButton", "^=") == '[data-testid^="stBaseButton"]'
    assert st_structure.key_class("pg_present_next") == ".st-key-pg_present_next"
    with pytest.raises(KeyError, match="stMainColumn"):
        st_structure.testid("stMainColumn")
    with pytest.raises(ValueError):
        st_structure.testid("stMain", "*=")
    with pytest.raises(ValueError):
        st_structure.key_class('x"] , body')


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ('[data-testid="stMain"] .stMarkdown p', {"stMain", "stMarkdown"}),
        ("[data-testid^='stBaseButton']", {"stBaseButton"}),
        (
            'querySelector(\'[data-testid="stApp"]\').getAttribute("data-test-script-state")',
            {"stApp", "data-test-script-state"},
        ),
        (".st-key-cls_now button", {"st-key-"}),
        ("requestAnimationFrame(firstElementChild); .katex-display", set()),
    ],
)
def test_used_names(text, names) -> None:
    assert st_structure.used_names(text) == names


def test_assets_are_read_once_and_only_from_their_folder() -> None:
    assets.text.cache_clear()
    first = assets.text("touch_select.js")
    assert assets.text("touch_select.js") is first and assets.text.cache_info().misses == 1
    assert assets.script("touch_select.js").strip().startswith("<script>")
    for bad in ("../st_structure.py", "__init__.py", "touch_select"):
        with pytest.raises(ValueError):
            assets.text(bad)
