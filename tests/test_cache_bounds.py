"""Every Streamlit cache in the app is bounded (issue 5, bounded memory).

A classroom server lives for hours and sees thousands of different sentences and settings; an
unbounded ``st.cache_data``/``st.cache_resource`` would keep every one of them. The check is on the
source (AST), so it covers pages that AppTest never reaches and caches declared in helpers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    [ROOT / "app.py", *(ROOT / "app_pages").glob("*.py"), *(ROOT / "attention_ui").rglob("*.py")]
)
CACHE_NAMES = {"cache_data", "cache_resource"}
REMOVED = {
    "cache",
    "experimental_memo",
    "experimental_singleton",
}  # only as ``st.<name>``; functools.cache is fine
MAX_ENTRIES_LIMIT = 256  # a bound, but one that still means something


def _cache_name(node: ast.expr) -> str | None:
    """``st.cache_data`` / ``streamlit.cache_resource`` / bare ``cache_data`` (imported) -> its name."""
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute) and target.attr in CACHE_NAMES:
        return target.attr
    if (
        isinstance(target, ast.Attribute)
        and target.attr in REMOVED
        and isinstance(target.value, ast.Name)
        and target.value.id in ("st", "streamlit")
    ):
        return target.attr
    if isinstance(target, ast.Name) and target.id in CACHE_NAMES:
        return target.id
    return None


def cache_uses(path: Path) -> list[tuple[int, str, dict[str, ast.expr]]]:
    """(line, cache name, keyword arguments) for every cache decorator or call in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                name = _cache_name(dec)
                if name:
                    kwargs = {k.arg: k.value for k in dec.keywords} if isinstance(dec, ast.Call) else {}
                    found.append((dec.lineno, name, kwargs))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
            name = _cache_name(node.func)  # st.cache_data(max_entries=...)(func)
            if name:
                found.append((node.lineno, name, {k.arg: k.value for k in node.func.keywords}))
    return found


def unbounded(path: Path) -> list[str]:
    problems = []
    for line, name, kwargs in cache_uses(path):
        where = f"{path.relative_to(ROOT)}:{line} st.{name}"
        bound = kwargs.get("max_entries")
        if bound is None:
            problems.append(f"{where} has no max_entries")
        elif not (
            isinstance(bound, ast.Constant)
            and isinstance(bound.value, int)
            and 0 < bound.value <= MAX_ENTRIES_LIMIT
        ):
            problems.append(
                f"{where} max_entries must be a literal 1..{MAX_ENTRIES_LIMIT}, got {ast.unparse(bound)}"
            )
        if name in REMOVED:
            problems.append(f"{where} is a removed Streamlit cache API")
    return problems


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cache_has_max_entries(path: Path) -> None:
    assert unbounded(path) == []


def test_the_scanner_finds_caches_and_catches_an_unbounded_one(tmp_path: Path) -> None:
    # The pages really do use caches (so the test above is not vacuous) ...
    assert sum(len(cache_uses(p)) for p in SOURCES) >= 10
    # ... and the scanner flags each unbounded form.
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import streamlit as st\n"
        "from streamlit import cache_resource\n"
        "@st.cache_data\ndef a(x): return x\n"
        "@st.cache_data(ttl=60)\ndef b(x): return x\n"
        "@cache_resource(max_entries=None)\ndef c(x): return x\n"
        "d = st.cache_data(show_spinner=False)(len)\n"
        "@st.cache_resource(max_entries=8)\ndef ok(x): return x\n",
        encoding="utf-8",
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        problems = unbounded(bad)
    finally:
        ROOT = saved
    assert len(problems) == 4, problems
    assert [p.split(":")[1].split()[0] for p in problems] == ["3", "5", "7", "9"]
