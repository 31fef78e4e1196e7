"""The house rules of issue 16, checked on every file so a new page cannot drift from them:

- pages are thin: no NumPy in ``app_pages/`` (computation lives in ``attention_core``), and no page
  file longer than 250 lines;
- ``attention_core`` imports only NumPy and the standard library (optional model readers import
  their packages inside functions, so ``import attention_core`` needs nothing else);
- no test function contains ``return`` (issue 28): a test that returns early passes silently, so a
  case a test cannot check is branched with ``if``/``else`` or skipped with ``pytest.skip`` (which
  the report shows).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "app_pages").glob("*.py"))
CORE = sorted((ROOT / "attention_core").rglob("*.py"))
MAX_PAGE_LINES = 250
# Optional extras, imported lazily inside the functions that read a pretrained model's files, and
# RestrictedPython, imported only inside the code check's worker process (attention_core/codecheck).
LAZY_EXTRAS = {"safetensors", "tokenizers", "gguf", "RestrictedPython"}
# The one core module that reaches into the app, inside the function that needs it: ``code --notebook``
# writes the playground's own notebook, whose words are the app's message catalogs (issue 43).
CORE_USES_APP = {"code_cli.py": {"attention_ui"}}


def _imports(tree: ast.AST, top_level_only: bool) -> set[str]:
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_there_are_pages_and_core_modules():
    assert len(PAGES) >= 7 and len(CORE) >= 20


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_is_thin(page: Path):
    text = page.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_PAGE_LINES, f"{page.name}: move code to the core, kit or figures"
    assert "numpy" not in _imports(ast.parse(text), top_level_only=False), f"{page.name} imports NumPy"
    assert "np." not in text, f"{page.name} computes with NumPy"


@pytest.mark.parametrize("module", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_imports_only_numpy_and_the_standard_library(module: Path):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    top = _imports(tree, top_level_only=True) - {"numpy", "__future__"}
    foreign = {name for name in top if name not in sys.stdlib_module_names}
    assert not foreign, f"{module.name} imports {sorted(foreign)} at module level"
    anywhere = _imports(tree, top_level_only=False) - {"numpy", "__future__"} - LAZY_EXTRAS
    anywhere -= CORE_USES_APP.get(module.name, set())
    assert {name for name in anywhere if name not in sys.stdlib_module_names} == set()


TESTS = sorted((ROOT / "tests").rglob("test_*.py"))


def _returns_in_tests(tree: ast.AST) -> list[tuple[str, int]]:
    """(test name, line) of every ``return`` in a ``test_*`` function's own body (nested helpers and
    lambdas are not the test and may return)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            stack = list(node.body)
            while stack:
                child = stack.pop()
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                    continue
                if isinstance(child, ast.Return):
                    found.append((node.name, child.lineno))
                stack.extend(ast.iter_child_nodes(child))
    return found


def test_the_return_scan_finds_an_early_return():
    src = (
        "def test_a(x):\n    if not x:\n        return\n    assert x\n"
        "def test_b():\n    def helper():\n        return 1\n    assert helper() == 1\n"
    )
    assert _returns_in_tests(ast.parse(src)) == [("test_a", 3)]


@pytest.mark.parametrize("path", TESTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_returns_early(path: Path):
    found = _returns_in_tests(ast.parse(path.read_text(encoding="utf-8")))
    assert not found, f"{path.name}: return in {found}; branch with if/else or pytest.skip instead"


# --- a download made when pressed does not rerun the page ----------------------------------------

UI_FILES = sorted([*(ROOT / "attention_ui").rglob("*.py"), *PAGES, ROOT / "app.py"])


def downloads_that_rerun(source: str) -> list[int]:
    """Lines of ``st.download_button(...)`` calls without ``on_click="ignore"``. Every download in
    this app makes its data when pressed (deferred data: a lambda, or a function such as the key
    file's), and such a press reran the page: a rerun that starts before the server reads the
    download request drops the callable it asks for, and the press downloads nothing (Streamlit
    1.67's media file manager). No download here needs a rerun, so every one says "ignore"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "download_button":
            if not any(
                k.arg == "on_click" and getattr(k.value, "value", None) == "ignore" for k in node.keywords
            ):
                found.append(node.lineno)
    return found


def test_the_download_scan_finds_a_download_that_reruns():
    assert downloads_that_rerun('st.download_button("x", lambda: b"", key="k")') == [1]
    assert downloads_that_rerun('x = 1\nst.download_button("x", data=make, on_click="rerun")') == [2]
    assert downloads_that_rerun('st.download_button("x", lambda: b"", on_click="ignore")') == []


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_download_does_not_rerun_the_page(path: Path):
    assert downloads_that_rerun(path.read_text("utf-8")) == []


def _conflict_markers(text: str) -> list[int]:
    """Line numbers (1-based) of a merge's conflict markers: a line that is exactly '=======' or
    starts with seven '<' or '>' and a space."""
    return [
        i
        for i, line in enumerate(text.splitlines(), 1)
        if line == "=" * 7 or line.startswith(("<" * 7 + " ", ">" * 7 + " "))
    ]


def test_the_marker_scan_finds_a_conflict():
    assert _conflict_markers("a\n" + "<" * 7 + " HEAD\nb\n" + "=" * 7 + "\nc\n" + ">" * 7 + " x\n") == [
        2,
        4,
        6,
    ]
    assert _conflict_markers("a ======= b\n" + "=" * 8 + "\n") == []


def test_no_tracked_file_holds_a_merge_conflict():
    """A merge committed with its conflicts unresolved once left markers in three docs pages."""
    import subprocess

    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    found = {}
    for name in files:
        path = ROOT / name
        if path.suffix not in {".py", ".md", ".json", ".txt", ".toml", ".cfg", ".sh", ".js", ".css", ".html"}:
            continue
        if path.is_file() and (
            lines := _conflict_markers(path.read_text(encoding="utf-8", errors="replace"))
        ):
            found[name] = lines
    assert found == {}
