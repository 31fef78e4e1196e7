"""Where a page's UI code lives (issue 37), enforced: the rule is stated in docs/architecture.md.

- ``attention_ui/<page>/`` (named after ``app_pages/<page>.py``) holds that page's own views and figure
  builders. The two live-class pages (``class_join``, ``class_teach``) share ``attention_ui/classroom/``.
- Everything else in ``attention_ui`` (its top-level modules, ``figures/`` and ``practice/``) is shared:
  each module there is used by two or more pages, directly or through another shared module. What
  ``app.py`` (the shell around every page) imports counts as used by every page.
- A page's package is not imported by another page, nor by a shared module, except the few modules in
  :data:`REUSED`, each with its reason. A new cross-page import fails here: move the code to a shared
  place, or add it to :data:`REUSED` with a reason a reviewer can check.

Imports are read from the source (every ``import`` / ``from … import`` statement, also inside
functions); a page is ``app_pages/<page>.py`` plus its package. ``attention_core`` keeps its own
layout (``labs/<lab>.py``) and is not checked here.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p.stem for p in (ROOT / "app_pages").glob("*.py") if not p.name.startswith("_"))
# The package of each page: its own name, but the two live-class pages share one.
PACKAGE_OF = {page: page for page in PAGES} | {"class_join": "classroom", "class_teach": "classroom"}
SHARED_PACKAGES = (
    "figures",
    "practice",
    "takehome",
    "program",
    "assets",  # the browser code (JavaScript and CSS files) of the shell and the pages
)  # attention_ui sub-packages whose modules several pages use
SHELL = "app"  # app.py: it runs around every page
EVERY_PAGE = "<every page>"

# Modules of one page's package that other pages build on, and why (the only cross-page imports allowed).
REUSED = {
    "attention_ui.playground.url_state": "the URL parameter table and parsers every page with a URL reads",
    "attention_ui.playground.settings": "the playground's table: the live class publishes and follows its live "
    "settings; the code tabs under its steps and the practice hook on its slides use its keys",
    "attention_ui.playground.steps_view": "the live class shows its students the playground's steps",
    "attention_ui.playground.share": "the copy-link button of the path page and of presenter mode",
    "attention_ui.playground.first_screen": "app.py asks it whether this run draws the first screen only",
    "attention_ui.heads.questions": "the training lab's computed quiz uses the heads page's Question",
    "attention_ui.classroom.presenter_hook": "the playground's presenter mode starts a live class",
    "attention_ui.classroom.settings": "presenter mode names the live class's keys (its teacher, its join code)",
    "attention_ui.playground.projector": "kit.Page.chart restyles every page's chart on a slide with it",
    "attention_ui.playground.explain_view": "the offline lesson writes the cell explainer's steps (cell_lines)",
    "attention_ui.classroom.questions": "the lesson's quiz asks the live class's questions on its sentence",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    files = [ROOT / "app.py", *(ROOT / "app_pages").glob("*.py"), *(ROOT / "attention_ui").rglob("*.py")]
    return {_module_name(p): p for p in files}


def _imports(name: str, path: Path, known) -> set[str]:
    """The modules of ``known`` that ``path`` imports (``from pkg import mod`` names ``pkg.mod``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            subs = {f"{source}.{a.name}" for a in node.names} & set(known)
            found |= subs if len(subs) == len(node.names) else subs | {source}
    return {m for m in found if m in known and m != name}


@cache
def import_graph() -> dict[str, frozenset[str]]:
    known = modules()
    return {name: frozenset(_imports(name, path, known)) for name, path in known.items()}


def owners(module: str) -> frozenset[str] | None:
    """The pages a module belongs to, or None for a shared module."""
    if module == SHELL:
        return frozenset({EVERY_PAGE})
    head, _, rest = module.partition(".")
    if head == "app_pages":
        return frozenset({rest})
    if head == "attention_ui" and "." in rest:
        package = rest.partition(".")[0]
        pages = frozenset(p for p, pkg in PACKAGE_OF.items() if pkg == package)
        return pages or None
    return None


def users(graph, module: str, seen: frozenset[str] = frozenset()) -> frozenset[str]:
    """The pages that import ``module``, directly or through shared modules."""
    found: set[str] = set()
    for importer, imported in graph.items():
        if module in imported and importer not in seen:
            mine = owners(importer)
            found |= mine if mine is not None else users(graph, importer, seen | {module})
    return frozenset(found)


def single_page_shared_modules(graph) -> dict[str, frozenset[str]]:
    """Shared modules (not a package's ``__init__``) that fewer than two pages use."""
    out = {}
    for module in graph:
        if not module.startswith("attention_ui.") or owners(module) is not None:
            continue
        if module in {f"attention_ui.{p}" for p in (*SHARED_PACKAGES, *PACKAGE_OF.values())}:
            continue  # a package's __init__
        pages = users(graph, module)
        if EVERY_PAGE not in pages and len(pages) < 2:
            out[module] = pages
    return out


def cross_page_imports(graph, reused=REUSED) -> list[tuple[str, str]]:
    """(importer, imported): a page's package module imported from outside that page and not reused."""
    out = []
    for importer, imported in sorted(graph.items()):
        for module in sorted(imported):
            mine, theirs = owners(importer), owners(module)
            if theirs is None or module.startswith("app_pages") or module in reused:
                continue
            if mine is None or not mine <= theirs:
                out.append((importer, module))
    return out


# --- the rule on the real tree ---------------------------------------------------------------------


def test_every_attention_ui_package_is_a_pages_or_a_shared_one() -> None:
    packages = {
        p.parent.name for p in (ROOT / "attention_ui").rglob("*.py") if p.parent.name != "attention_ui"
    }
    assert packages, "no packages found"
    stray = packages - set(PACKAGE_OF.values()) - set(SHARED_PACKAGES)
    assert not stray, f"attention_ui/{sorted(stray)} is neither a page's package nor a shared one"


def test_every_shared_module_serves_two_or_more_pages() -> None:
    graph = import_graph()
    assert "attention_ui.figures.heatmaps" in graph  # the walk found the figure modules
    wrong = single_page_shared_modules(graph)
    assert not wrong, "only one page uses these; move each into attention_ui/<page>/: " + ", ".join(
        f"{m} ({', '.join(sorted(p)) or 'no page'})" for m, p in sorted(wrong.items())
    )


def test_every_figures_module_is_drawn_with_by_two_or_more_pages() -> None:
    graph = import_graph()
    figures = [m for m in graph if m.startswith("attention_ui.figures.")]
    assert len(figures) >= 3
    for module in figures:
        pages = users(graph, module)
        assert EVERY_PAGE in pages or len(pages) >= 2, f"{module}: only {sorted(pages)}"


def test_no_page_imports_another_pages_package() -> None:
    wrong = cross_page_imports(import_graph())
    assert not wrong, "shared code must live in a shared place (or in REUSED, with why): " + ", ".join(
        f"{a} -> {b}" for a, b in wrong
    )


def test_each_reused_module_is_really_reused() -> None:
    """An allowance nobody needs any more is removed, so the list stays the list of real exceptions."""
    crossing = {b for _, b in cross_page_imports(import_graph(), reused={})}
    assert crossing, "no cross-page import found at all"
    assert not set(REUSED) - crossing, f"not imported across pages any more: {sorted(set(REUSED) - crossing)}"


def test_each_page_with_modules_of_its_own_has_its_package() -> None:
    """A page file imports its own page-only modules from attention_ui/<its package>/."""
    graph = import_graph()
    for page in PAGES:
        own = [m for m in graph[f"app_pages.{page}"] if owners(m) is not None and page in owners(m)]
        for module in own:
            assert module.startswith(f"attention_ui.{PACKAGE_OF[page]}"), (page, module)
        assert (ROOT / "attention_ui" / PACKAGE_OF[page]).is_dir() or not own, page


# --- the checks can fail ---------------------------------------------------------------------------


def test_a_one_page_module_in_figures_is_caught() -> None:
    graph = {
        "app_pages.cost": frozenset({"attention_ui.figures.ring", "attention_ui.figures.base"}),
        "app_pages.block": frozenset({"attention_ui.figures.base"}),
        "attention_ui.figures.ring": frozenset({"attention_ui.figures.base"}),
        "attention_ui.figures.base": frozenset(),
    }
    assert single_page_shared_modules(graph) == {"attention_ui.figures.ring": frozenset({"cost"})}
    graph["app_pages.lookalikes"] = frozenset({"attention_ui.figures.ring"})
    assert single_page_shared_modules(graph) == {}


def test_a_module_only_a_shared_module_uses_counts_that_modules_pages() -> None:
    graph = {
        "app_pages.cost": frozenset({"attention_ui.tables"}),
        "attention_ui.tables": frozenset({"attention_ui.figures.base"}),
        "attention_ui.figures.base": frozenset(),
    }
    assert set(single_page_shared_modules(graph)) == {"attention_ui.tables", "attention_ui.figures.base"}
    graph["app"] = frozenset({"attention_ui.figures.base"})
    assert set(single_page_shared_modules(graph)) == {"attention_ui.tables"}


def test_another_pages_package_imported_is_caught() -> None:
    graph = {
        "app_pages.lookalikes": frozenset({"attention_ui.cost.ring_view"}),
        "attention_ui.kit": frozenset({"attention_ui.masks.figures"}),
        "app_pages.cost": frozenset({"attention_ui.cost.ring_view"}),
        "attention_ui.cost.ring_view": frozenset({"attention_ui.cost.ring_figures"}),
        "app_pages.class_join": frozenset({"attention_ui.classroom.state"}),
        "app_pages.class_teach": frozenset({"attention_ui.classroom.state"}),
    }
    assert cross_page_imports(graph) == [
        ("app_pages.lookalikes", "attention_ui.cost.ring_view"),
        ("attention_ui.kit", "attention_ui.masks.figures"),
    ]


# --- the paths docs/architecture.md names exist ------------------------------------------------------

ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _named_paths(text: str) -> list[str]:
    """Paths in backticks (``a/b.py``, ``a/b/``, ``a/b.name``); templates (``<page>``, ``{en,ja}``) skipped."""
    fenced = re.findall(r"```.*?```", text, flags=re.S)  # a code block: every word in it counts
    spans = [block.strip("`") for block in fenced]
    spans += re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    out = []
    for span in spans:
        for token in re.findall(r"[\w./<>{}#-]+", span):
            token = token.rstrip(".")
            if "/" in token and not re.search(r"[<>{}#]", token) and not token.startswith(("/", "http")):
                out.append(token)
    return out


def _defines(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return name in names


def _exists(token: str) -> bool:
    for base in (ROOT, ROOT / "attention_ui", ROOT / "attention_core"):
        if (base / token).exists():
            return True
        stem, _, name = token.rpartition(".")  # a module and a name it defines
        if stem and (base / f"{stem}.py").is_file() and _defines(base / f"{stem}.py", name):
            return True
    return False


def test_the_paths_the_architecture_notes_name_exist() -> None:
    paths = _named_paths(ARCHITECTURE.read_text(encoding="utf-8"))
    assert len(paths) >= 20, paths
    missing = [p for p in paths if not _exists(p)]
    assert not missing, f"docs/architecture.md names paths that are not there: {missing}"


@pytest.mark.parametrize(
    ("token", "found"),
    [
        ("attention_ui/cost/ring_view.py", True),
        ("attention_ui/cost/ring_view.section_costs", True),
        ("attention_core/labs/ring.RingCosts", True),
        ("attention_ui/cost_ring.py", False),
        ("attention_ui/cost/ring_view.no_such_function", False),
        ("figures/ring.schedule_figure", False),
    ],
)
def test_the_path_check_can_fail(token: str, found: bool) -> None:
    assert _exists(token) is found
    assert _named_paths(f"see `{token}` and `app_pages/<page>.py`") == [token]


# --- one name per page (issue 46); the navigation's own tests, old URLs included: tests/test_nav.py ---


def test_a_page_with_a_core_lab_takes_the_labs_name() -> None:  # or its core package's (codecheck)
    """The rule of docs/architecture.md for the pages renamed so far: script, package, catalog, prefix."""
    for name in (
        "scaling", "positions", "masks", "cost", "block", "lookalikes", "inference", "decoder", "multihead",
        "quiz", "heads", "codecheck",
    ):  # fmt: skip
        assert (ROOT / "attention_core" / "labs" / f"{name}.py").is_file() or (
            ROOT / "attention_core" / name
        ).is_dir()
        assert (ROOT / "app_pages" / f"{name}.py").is_file() and (ROOT / "attention_ui" / name).is_dir()
        assert (ROOT / "attention_ui" / "locales" / "en" / f"{name}.json").is_file()
        # the page's kit is bound beside its table, and the page file and its views use that one
        settings = importlib.import_module(f"attention_ui.{name}.settings")
        assert (settings.PAGE.prefix, settings.PAGE.namespace, settings.TABLE.prefix) == (name, name, name)
        assert settings.PAGE.settings is settings.TABLE
        page = ast.parse((ROOT / "app_pages" / f"{name}.py").read_text(encoding="utf-8"))
        imported = {
            alias.name
            for node in ast.walk(page)
            if isinstance(node, ast.ImportFrom) and node.module == f"attention_ui.{name}.settings"
            for alias in node.names
        }
        assert "PAGE" in imported and "Page(" not in ast.unparse(page) and "Page.of(" not in ast.unparse(page)
        for view in (ROOT / "attention_ui" / name).glob("*.py"):  # its views build no Page of their own
            assert view.name == "settings.py" or "Page.of(" not in view.read_text(encoding="utf-8"), view
