"""How many times the house writes what it should write once: the before/after counts of issue 46.

    python scripts/house_counts.py            # every count, with the places it found
    python scripts/house_counts.py --brief    # the numbers only
    python scripts/house_counts.py --json     # {name: {"count": n, "places": [...]}}
    python scripts/house_counts.py --root DIR # another checkout on disk
    python scripts/house_counts.py --at main~5 # a git revision (its Python files, by `git archive`)

Each count is one :class:`Count` in :data:`COUNTS`: a name, what it counts, and a finder that reads
the product's Python files (:data:`PRODUCT`: not the tests, the benchmarks or the scripts) or the
test files, and returns the places it found (``file:function:line``, or ``file: n``), so that a
reader can check every one. A new count is one more entry. Code is read as code (``ast``):
docstrings and comments never count.

Issue 46's "Done means" counts:

- ``session_keys``: distinct session keys spelled as a literal outside a table (a module-level
  UPPER_CASE assignment such as ``DEFAULTS``): ``session_state[k]``, ``.get/.pop/.setdefault(k)``,
  ``k in session_state``, ``session_state.k``, a widget's ``key=k``, and a module-level UPPER_CASE
  constant bound to a literal (``MODE_KEY = "pr_mode"``) wherever it is used as a key (its literal
  is the key spelled: only a page's table, attention_ui/settings_table.py, declares one);
  ``session_key_families``: the places that build a key with an f-string.
- ``page_names``: per page of the navigation (attention_ui/nav.py; before it, app.py), its names: the
  file's stem, the URL path (``-`` as ``_``), the kit's prefix and catalog namespace (in the page, or
  its table and kit.Page.of in its settings module), the UI packages and core lab modules only that
  page imports; the figure is the names beyond one, summed over the pages.
- ``web_code_chars``: characters of the Python strings that hold HTML, CSS or JavaScript (a tag, a
  CSS declaration or a line of script); ``streamlit_structure``: names of Streamlit's page structure
  in Python strings (``data-testid``, ``.st-key-``, ``stMain`` and the like).
- ``tests_outside_module_files``: test files not named after a product module (``tests/<package>/
  test_<stem>.py``, or ``tests/test_<name>.py`` with the module's stem, its package, ``<package>_<stem>``
  or ``app_<page>``); ``round_named_tests``: named after an issue or a mutation round;
  ``core_modules_without_tests``: attention_core modules without their test file (attention_core/x/y.py:
  ``tests/x/test_y.py``; attention_core/y.py: ``tests/test_y.py``).
- ``extended_tests``: every ``pytest.mark.extended`` in the tests (tests ``make test`` left out).

The repeated rules (ask 3, the model's code once; "before" is main at c9e85f9):

- ``window_rule``: functions that write the sliding-window rule "i − w < j ≤ i" themselves, that
  is, a position difference compared with a window or a window subtracted from a position.
  Before: 7 (llama.window_allowed, tiled.window_allowed, tiled.window_key_tiles,
  labs/masks.sliding_window_mask, labs/heads.window_allowed, labs/decoder.weight_outside_window,
  kv_cache.keep_window; the issue counted the four mask builders). After: 1 (steps.window_start).
- ``log_softmax``: functions that compute a log of a sum of exponentials. Before: 2
  (training/model.log_softmax, labs/heads.log_softmax). After: 1 (steps.log_softmax).
- ``head_projection``: functions that cut a product with a projection matrix into heads
  (``split_heads(X @ W, h)``). Before: 4, in three weight layouts (steps.project with per-head
  ``[h, d_model, d]``, models/llama.project_heads with ``[h·d, d_model]`` as ``W.T``,
  labs/inference.project_heads and labs/multihead.split_vs_separate with ``[d_model, h·d]``).
  After: 2 (steps.project_heads, which every pass calls, and labs/multihead.split_vs_separate, the
  multi-head lab's check that writes the cut out on purpose beside one product per head:
  tests/labs/test_multihead.py swaps that module's ``split_heads`` to show the check catches a
  wrong cut).
- ``llama_layer_loops``: loops in models/llama.py that run a layer's sub-layers (their body adds the
  FFN block). Before: 3 (run_layers, run_from, decode_layers; the issue counted the first two).
  After: 1 (layer_stack).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The product's code: what ships (not tests/, bench/, scripts/: a test or a reference script may
# write a rule again on purpose, to check the product against it).
PRODUCT = ("app.py", "app_pages", "attention_core", "attention_lab", "attention_ui", "classroom", "deploy")


@dataclass(frozen=True)
class Source:
    """One parsed file: its path relative to the repository, its syntax tree, and each function's own
    nodes (see :func:`functions` and :func:`own_nodes`), listed once for every count."""

    path: str
    tree: ast.Module
    scopes: tuple[tuple[str, tuple[ast.AST, ...]], ...] = field(init=False)

    def __post_init__(self) -> None:
        scopes = tuple((name, tuple(own_nodes(scope))) for name, scope in functions(self))
        object.__setattr__(self, "scopes", scopes)


def _parse(root: Path, names: Sequence[str]) -> tuple[Source, ...]:
    files: list[Path] = []
    for name in names:
        here = root / name
        files += [here] if here.is_file() else sorted(here.rglob("*.py"))
    return tuple(
        Source(f.relative_to(root).as_posix(), ast.parse(f.read_text(encoding="utf-8"))) for f in files
    )


@cache
def product_sources(root: Path = ROOT) -> tuple[Source, ...]:
    """The product's files, parsed once per process."""
    return _parse(root, PRODUCT)


@dataclass(frozen=True)
class House:
    """What the counts read: the product's files and the test files (``tests/``), parsed."""

    product: tuple[Source, ...]
    tests: tuple[Source, ...] = ()


@cache
def house_at(root: Path = ROOT) -> House:
    """The checkout at ``root``, parsed once per process."""
    return House(product_sources(root), _parse(root, ("tests",)))


@contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """The Python files of git revision ``rev`` of this repository, in a temporary folder (``git
    archive``: no worktree is registered, nothing in this checkout changes)."""
    with tempfile.TemporaryDirectory(prefix="house_counts_") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "--", "*.py"], capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)


def functions(source: Source) -> Iterator[tuple[str, ast.AST]]:
    """Every function of a file with its qualified name (``outer.inner``), and the module itself as
    ``<module>`` for code outside any function. A function's nodes do not include its nested ones'."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield name, child
                yield from walk(child, name + ".")

    yield "<module>", source.tree
    yield from walk(source.tree, "")


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one function (or module), not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def places(sources: Sequence[Source], hit: Callable[[ast.AST], ast.AST | None]) -> list[str]:
    """``file:function:line`` of every function with at least one node for which ``hit`` returns a
    node (the first such node's line)."""
    found = []
    for source in sources:
        for name, nodes in source.scopes:
            lines = sorted(node.lineno for node in nodes if hit(node) is not None)
            if lines:
                found.append(f"{source.path}:{name}:{lines[0]}")
    return found


def _name(node: ast.AST) -> str:
    """The last part of a name: ``window`` for ``window`` and for ``self.window``; else ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _is_window(node: ast.AST) -> bool:
    return _name(node).endswith("window")


def _is_difference(node: ast.AST) -> bool:
    """``a - b`` with neither side a literal (``i - j``, ``q[:, None] - k[None, :]``; not ``n - 1``)."""
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and not isinstance(node.left, ast.Constant)
        and not isinstance(node.right, ast.Constant)
    )


def window_rule_hit(node: ast.AST, differences: frozenset[str] = frozenset()) -> ast.AST | None:
    """A window subtracted from something (``i - window``), or a window compared with a position
    difference (``i - j < window``, or ``offset < window`` where ``offset`` names a difference)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and _is_window(node.right):
        return node
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        if any(_is_window(o) for o in operands) and any(
            _is_difference(o) or (isinstance(o, ast.Name) and o.id in differences) for o in operands
        ):
            return node
    return None


def count_window_rule(sources: Sequence[Source]) -> list[str]:
    found = []
    for source in sources:
        for name, nodes in source.scopes:
            differences = frozenset(
                target.id
                for node in nodes
                if isinstance(node, ast.Assign) and any(_is_difference(n) for n in ast.walk(node.value))
                for target in node.targets
                if isinstance(target, ast.Name)
            )
            # a slice's bound (``losses[step - window : step]``) is a running mean's window over a
            # sequence, not which keys a query reads
            bounds = {
                id(b) for n in nodes if isinstance(n, ast.Slice) for b in (n.lower, n.upper) if b is not None
            }
            lines = sorted(
                n.lineno for n in nodes if id(n) not in bounds and window_rule_hit(n, differences) is not None
            )
            if lines:
                found.append(f"{source.path}:{name}:{lines[0]}")
    return found


def _calls(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) == name


def log_of_exp_sum_hit(node: ast.AST) -> ast.AST | None:
    """``log(...exp(...)...)``: a log-sum-exp, the heart of a log-softmax."""
    if _calls(node, "log") and any(_calls(inner, "exp") for arg in node.args for inner in ast.walk(arg)):
        return node
    return None


def head_projection_hit(node: ast.AST) -> ast.AST | None:
    """``split_heads(X @ W, h)``: a product with a projection matrix cut into heads."""
    if (
        _calls(node, "split_heads")
        and node.args
        and isinstance(node.args[0], ast.BinOp)
        and isinstance(node.args[0].op, ast.MatMult)
    ):
        return node
    return None


LLAMA = "attention_core/models/llama.py"
FFN_BLOCKS = ("ffn_block", "swiglu_block")


def layer_loop_hit(node: ast.AST) -> ast.AST | None:
    """A ``for`` loop whose body adds a layer's FFN block: one pass over the decoder's layers."""
    if isinstance(node, ast.For) and any(
        _calls(inner, name) for stmt in node.body for inner in ast.walk(stmt) for name in FFN_BLOCKS
    ):
        return node
    return None


def count_llama_layer_loops(sources: Sequence[Source]) -> list[str]:
    return places([s for s in sources if s.path == LLAMA], layer_loop_hit)


# --- the string glue: session keys, names per page, browser code in Python, tests by module -------

STATE_METHODS = ("get", "pop", "setdefault")  # session_state.get("key") and the like spell a key
NOT_KEYS = ("get", "pop", "setdefault", "keys", "items", "values", "clear", "update", "to_dict")


def _is_state(node: ast.AST, aliases: frozenset[str]) -> bool:
    return _name(node) == "session_state" or (isinstance(node, ast.Name) and node.id in aliases)


def _table_nodes(tree: ast.Module) -> set[int]:
    """The nodes of module-level assignments to an UPPER_CASE name: a page's table of settings (and
    any other constant table), where a key is declared rather than spelled again."""
    ids: set[int] = set()
    for stmt in tree.body:
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id.isupper() for t in targets):
            ids.update(id(n) for n in ast.walk(stmt))
    return ids


def session_key_uses(source: Source, constants: Mapping[str, ast.AST]) -> Iterator[tuple[str, ast.AST]]:
    """Every key a file spells outside its tables: ``(function, the key's node)``, where the node is a
    string (a literal key) or an f-string (a family of keys). Read as a key: ``session_state[k]``,
    ``session_state.get/pop/setdefault(k)``, ``k in session_state``, ``session_state.k`` and a
    widget's ``key=k``; ``session_state`` also under a local name (``s = st.session_state``)."""
    aliases = frozenset(
        t.id
        for n in ast.walk(source.tree)
        if isinstance(n, ast.Assign) and _name(n.value) == "session_state"
        for t in n.targets
        if isinstance(t, ast.Name)
    )
    tables = _table_nodes(source.tree)
    for name, nodes in source.scopes:
        for node in nodes:
            if id(node) in tables:
                continue
            keys: list[ast.AST] = []
            if isinstance(node, ast.Subscript) and _is_state(node.value, aliases):
                keys.append(node.slice)
            elif isinstance(node, ast.Call):
                f = node.func
                if (
                    isinstance(f, ast.Attribute)
                    and f.attr in STATE_METHODS
                    and _is_state(f.value, aliases)
                    and node.args
                ):
                    keys.append(node.args[0])
                keys += [k.value for k in node.keywords if k.arg == "key"]
            elif isinstance(node, ast.Compare) and any(isinstance(o, ast.In | ast.NotIn) for o in node.ops):
                if any(_is_state(c, aliases) for c in node.comparators):
                    keys.append(node.left)
            elif (
                isinstance(node, ast.Attribute)
                and _is_state(node.value, aliases)
                and node.attr not in NOT_KEYS
            ):
                keys.append(ast.copy_location(ast.Constant(node.attr), node))
            for key in keys:
                if (isinstance(key, ast.Constant) and isinstance(key.value, str)) or isinstance(
                    key, ast.JoinedStr
                ):
                    yield name, key
                elif isinstance(key, ast.Name | ast.Attribute) and key_name(key) in constants:
                    yield name, constants[key_name(key)]  # a constant's literal is a key spelled too


def key_name(node: ast.AST) -> str:
    """``FOO`` of ``FOO`` or ``module.FOO``."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def key_constants(sources: Sequence[Source]) -> dict[str, ast.AST]:
    """Module-level UPPER_CASE names bound to a string literal or an f-string in the product
    (``MODE_KEY = "pr_mode"``): used as a session key, such a name spells its key as much as the
    literal would. A value built by a table (``TABLE.key("mode")``) is not a literal and is not here."""
    out: dict[str, ast.AST] = {}
    for source in sources:
        for stmt in source.tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            else:
                continue
            if (
                isinstance(target, ast.Name)
                and target.id.isupper()
                and (
                    (isinstance(value, ast.Constant) and isinstance(value.value, str))
                    or isinstance(value, ast.JoinedStr)
                )
            ):
                out[target.id] = value
    return out


def count_session_keys(house: House) -> list[str]:
    """Distinct literal keys, each as ``key (n×) first-place``."""
    seen: dict[str, list[str]] = {}
    constants = key_constants(house.product)
    for source in house.product:
        for name, key in session_key_uses(source, constants):
            if isinstance(key, ast.Constant):
                seen.setdefault(key.value, []).append(f"{source.path}:{name}:{key.lineno}")
    return [f"{k} ({len(p)}x) {p[0]}" for k, p in sorted(seen.items())]


def count_session_key_families(house: House) -> list[str]:
    """Keys built with an f-string, each place once."""
    constants = key_constants(house.product)
    return [
        f"{source.path}:{name}:{key.lineno}"
        for source in house.product
        for name, key in session_key_uses(source, constants)
        if isinstance(key, ast.JoinedStr)
    ]


def _module_strings(tree: ast.Module) -> Iterator[str]:
    """Every string constant of a file that is not a docstring, f-strings' constant parts included."""
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings:
            yield n.value


# A string is browser code when it holds a tag, a CSS declaration block or a line of JavaScript.
WEB_CODE = re.compile(
    r"<(style|script|div|span|svg|iframe|a|p|b|br|img|button|details|summary|table|td|tr|th|ul|li|code|kbd|small|sup|sub|section)\b"
    r"|\{[^{}]*[\w-]+\s*:[^{};]+;"
    r"|\bfunction\s*\(|=>|\bdocument\.|\bwindow\.|querySelector|addEventListener|\bconst \w+ =|\blet \w+ ="
)
# Streamlit's own page structure: its test ids and its st* class and key names.
ST_STRUCTURE = re.compile(r"data-testid|\.st-key-|\bst[A-Z][A-Za-z]+\b|\.stApp\b")


def count_web_code(house: House) -> list[str]:
    """Characters of browser code (HTML, CSS, JavaScript) in Python strings, per file: ``file: n``."""
    found = []
    for source in house.product:
        n = sum(len(text) for text in _module_strings(source.tree) if WEB_CODE.search(text))
        if n:
            found.append(f"{source.path}: {n}")
    return found


def count_streamlit_structure(house: House) -> list[str]:
    """Places in Python strings that name Streamlit's internal page structure, per file: ``file: n``."""
    found = []
    for source in house.product:
        n = sum(len(ST_STRUCTURE.findall(text)) for text in _module_strings(source.tree))
        if n:
            found.append(f"{source.path}: {n}")
    return found


def _total(places_: list[str]) -> int:
    return sum(int(p.rsplit(": ", 1)[1]) for p in places_)


def _imports(tree: ast.Module, package: str) -> set[str]:
    """The modules or packages right under ``package`` that a file imports (``from package import x``,
    ``from package.x import y``, ``import package.x``)."""
    got = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            if n.module == package:
                got.update(a.name for a in n.names)
            elif n.module.startswith(package + "."):
                got.add(n.module[len(package) + 1 :].split(".")[0])
        elif isinstance(n, ast.Import):
            got.update(
                a.name[len(package) + 1 :].split(".")[0] for a in n.names if a.name.startswith(package + ".")
            )
    return got


def app_pages(house: House) -> dict[str, str]:
    """Each page file of the navigation with its URL path: ``{"app_pages/masks.py": "masks"}``. Read
    from attention_ui/nav.py's ``NavPage(name, icon[, url])`` entries (the script ``app_pages/<name>.py``
    at ``/<name>`` unless a URL is given) or, in a revision before it, from app.py's tuples
    ``(file, title key, icon, url)`` and its ``st.Page(file, url_path=...)``."""
    app = next((s for s in house.product if s.path == "app.py"), None)
    navigation = next((s for s in house.product if s.path == "attention_ui/nav.py"), None)
    pages: dict[str, str] = {}
    for n in ast.walk(navigation.tree) if navigation else ():
        if isinstance(n, ast.Call) and _name(n.func) == "NavPage" and n.args:
            values = [a.value for a in n.args if isinstance(a, ast.Constant)]
            if len(values) == len(n.args) and all(isinstance(v, str) for v in values):
                pages[f"app_pages/{values[0]}.py"] = values[2] if len(values) > 2 else values[0]
    for n in ast.walk(app.tree) if app else ():
        if isinstance(n, ast.Tuple) and len(n.elts) == 4 and all(isinstance(e, ast.Constant) for e in n.elts):
            path, url = n.elts[0].value, n.elts[3].value
            if isinstance(path, str) and path.startswith("app_pages/"):
                pages[path] = url
        if (
            isinstance(n, ast.Call)
            and _name(n.func) == "Page"
            and n.args
            and isinstance(n.args[0], ast.Constant)
        ):
            url = next(
                (
                    k.value.value
                    for k in n.keywords
                    if k.arg == "url_path" and isinstance(k.value, ast.Constant)
                ),
                "",
            )
            pages.setdefault(n.args[0].value, url)
    return pages


def page_names(house: House) -> dict[str, list[str]]:
    """Each page's names: its file's stem, its URL path (``-`` read as ``_``), its kit.Page prefix and
    catalog namespace, and the UI packages and core lab modules only it imports (one imported by two
    pages is shared, not a name of either)."""
    by_path = {s.path: s for s in house.product}
    pages = {p: u for p, u in app_pages(house).items() if p in by_path}
    ui_packages = {
        s.path.split("/")[1]
        for s in house.product
        if s.path.startswith("attention_ui/") and s.path.count("/") >= 2
    }
    ui = {p: _imports(by_path[p].tree, "attention_ui") & ui_packages for p in pages}
    labs = {p: _imports(by_path[p].tree, "attention_core.labs") for p in pages}
    shared_ui = {x for x, k in Counter(x for v in ui.values() for x in v).items() if k > 1}
    shared_labs = {x for x, k in Counter(x for v in labs.values() for x in v).items() if k > 1}
    names = {}
    for path, url in pages.items():
        found = [Path(path).stem]
        if url and url != "start":  # the playground's url_path is an internal name: it lives at /
            found.append(url.replace("-", "_"))
        # the kit's prefix and namespace: kit.Page("prefix", "ns") in the page, or the page's table
        # (Table("prefix", ...)) and kit.Page.of(TABLE[, "ns"]) in its settings module
        settings = by_path.get(f"attention_ui/{Path(path).stem}/settings.py")
        for tree in (by_path[path].tree, *((settings.tree,) if settings else ())):
            for n in ast.walk(tree):
                call = ast.unparse(n.func) if isinstance(n, ast.Call) and n.args else ""
                if call in ("kit.Page", "Page", "kit.Page.of", "Page.of", "Table"):
                    args = n.args[:1] if call == "Table" else n.args[:2]
                    found += [
                        a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                    ]
        found += sorted(ui[path] - shared_ui) + sorted(labs[path] - shared_labs)
        names[path] = list(dict.fromkeys(found))
    return names


def count_page_names(house: House) -> list[str]:
    """Pages with more than one name, each as ``file: name, name, ...`` (the count: the extra names)."""
    return [f"{path}: {', '.join(n)}" for path, n in page_names(house).items() if len(n) > 1]


def _extra_names(places_: list[str]) -> int:
    return sum(len(p.split(": ", 1)[1].split(", ")) - 1 for p in places_)


# named after an issue (issue4, _i24, _i42n) or a mutation round; not i18n, not "playground"
ROUND_NAMED = re.compile(r"issue\d*|_i(?!18n)\d+[a-z]?\b|kills|mutation|(?:^|_)rounds?(?:_|$)")


def module_test_names(house: House) -> set[str]:
    """The test-file names (without ``test_``) that name a product module: its stem, its package's
    name, or ``<package>_<stem>`` (``lab_masks`` for labs/masks.py, ``app_masks`` for app_pages/masks.py)."""
    names = set()
    for s in house.product:
        parts = Path(s.path).with_suffix("").parts
        stem, parent = parts[-1], (parts[-2] if len(parts) > 1 else "")
        if stem == "__init__":
            names.add(parent)
            continue
        names.add(stem)
        if parent:
            names |= {f"{parent}_{stem}", f"{parent.rstrip('s')}_{stem}"}
        if parent == "app_pages":
            names.add(f"app_{stem}")
    return names


def _test_files(house: House) -> list[Source]:
    return [s for s in house.tests if Path(s.path).name.startswith("test_")]


def module_test_path(module: str) -> str:
    """Where the test of an attention_core module lives: ``tests/<package>/test_<stem>.py`` for a
    module of a subpackage (attention_core/labs/masks.py: tests/labs/test_masks.py), ``tests/test_<stem>.py``
    for one of the package itself (attention_core/steps.py: tests/test_steps.py)."""
    parts = Path(module).with_suffix("").parts[1:]
    return "/".join(("tests", *parts[:-1], f"test_{parts[-1]}.py"))


def _package_test_paths(house: House) -> set[str]:
    """``tests/<package>/test_<stem>.py`` for every product module ``<...>/<package>/<stem>.py``."""
    return {
        f"tests/{parts[-2]}/test_{parts[-1]}.py"
        for s in house.product
        if len(parts := Path(s.path).with_suffix("").parts) > 2 and parts[-1] != "__init__"
    }


def count_tests_outside_module_files(house: House) -> list[str]:
    """Test files not named after a product module: ``tests/<package>/test_<stem>.py`` for a module of
    that package, or ``tests/test_<name>.py`` (and a browser test's ``tests/browser/test_<name>.py``)
    with a name of :func:`module_test_names`."""
    named, in_package = module_test_names(house), _package_test_paths(house)
    by_name = ("tests", "tests/browser")  # folders whose files are found by name alone
    return [
        s.path
        for s in _test_files(house)
        if s.path not in in_package
        and not (Path(s.path).parent.as_posix() in by_name and Path(s.path).stem[len("test_") :] in named)
    ]


def count_round_named_tests(house: House) -> list[str]:
    """Test files named after an issue or a mutation-testing round."""
    return [s.path for s in _test_files(house) if ROUND_NAMED.search(Path(s.path).stem)]


def count_core_modules_without_tests(house: House) -> list[str]:
    """attention_core modules whose test file (:func:`module_test_path`) does not exist."""
    tests = {s.path for s in _test_files(house)}
    return [
        s.path
        for s in house.product
        if s.path.startswith("attention_core/")
        and Path(s.path).stem not in ("__init__", "__main__")
        and module_test_path(s.path) not in tests
    ]


def count_extended_tests(house: House) -> list[str]:
    """Every ``pytest.mark.extended`` in the tests (one in a parametrize list may mark several
    cases), as ``file:line``."""
    return [
        f"{s.path}:{n.lineno}"
        for s in house.tests
        for n in ast.walk(s.tree)
        if isinstance(n, ast.Attribute) and n.attr == "extended" and _name(n.value) == "mark"
    ]


@dataclass(frozen=True)
class Count:
    name: str
    what: str
    find: Callable[[House], list[str]]
    total: Callable[[list[str]], int] = len  # the figure, from the places found


COUNTS: tuple[Count, ...] = (
    Count(
        "session_keys",
        "literal session keys spelled outside the tables (distinct keys)",
        count_session_keys,
    ),
    Count("session_key_families", "session keys built with an f-string (places)", count_session_key_families),
    Count(
        "page_names", "extra names of the pages (names per page beyond one)", count_page_names, _extra_names
    ),
    Count(
        "window_rule",
        "functions writing the sliding-window rule i − w < j ≤ i",
        lambda h: count_window_rule(h.product),
    ),
    Count(
        "log_softmax",
        "functions computing a log-sum-exp (log_softmax)",
        lambda h: places(h.product, log_of_exp_sum_hit),
    ),
    Count(
        "head_projection",
        "functions cutting a product with a projection matrix into heads",
        lambda h: places(h.product, head_projection_hit),
    ),
    Count(
        "llama_layer_loops",
        "loops over the decoder's layers in models/llama.py",
        lambda h: count_llama_layer_loops(h.product),
    ),
    Count("web_code_chars", "characters of HTML/CSS/JavaScript in Python strings", count_web_code, _total),
    Count(
        "streamlit_structure",
        "Streamlit page-structure names in Python strings",
        count_streamlit_structure,
        _total,
    ),
    Count(
        "tests_outside_module_files",
        "test files not named after a product module",
        count_tests_outside_module_files,
    ),
    Count(
        "round_named_tests", "test files named after an issue or a mutation round", count_round_named_tests
    ),
    Count(
        "core_modules_without_tests",
        "attention_core modules without tests/<package>/test_<module>.py",
        count_core_modules_without_tests,
    ),
    Count("extended_tests", "uses of the `extended` marker (tests CI never ran)", count_extended_tests),
)


def measure(house: House | None = None) -> dict[str, list[str]]:
    """Every count's places, by name."""
    house = house_at(ROOT) if house is None else house
    return {c.name: c.find(house) for c in COUNTS}


def report(found: dict[str, list[str]], brief: bool, as_json: bool) -> str:
    by_name = {c.name: c for c in COUNTS}
    if as_json:
        return json.dumps(
            {name: {"count": by_name[name].total(p), "places": p} for name, p in found.items()}, indent=2
        )
    lines = []
    for count in COUNTS:
        lines.append(f"{count.name:<28} {count.total(found[count.name]):>6}   {count.what}")
        if not brief:
            lines += [f"{'':<37}{place}" for place in found[count.name]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brief", action="store_true", help="the numbers only")
    ap.add_argument("--json", action="store_true", help="the counts and places as JSON")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--root", type=Path, default=ROOT, help="the checkout to read (default: this one)")
    where.add_argument("--at", metavar="REV", help="a git revision of this repository instead (e.g. main~5)")
    args = ap.parse_args(argv)
    if args.at:
        with checkout(args.at) as root:
            found = measure(house_at(root))
    else:
        found = measure(house_at(args.root))
    print(report(found, args.brief, args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
