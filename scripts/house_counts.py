"""How many times the house writes what it should write once: the before/after counts of issue 46.

    python scripts/house_counts.py            # every count, with the places it found
    python scripts/house_counts.py --brief    # the numbers only
    python scripts/house_counts.py --json     # {name: {"count": n, "places": [...]}}
    python scripts/house_counts.py --root DIR # another checkout (e.g. `git worktree add DIR main`)

Each count is one :class:`Count` in :data:`COUNTS`: a name, what it counts, and a finder that reads
the product's Python files (:data:`PRODUCT`: not the tests, the benchmarks or the scripts) and
returns the places it found, as ``file:function:line``, so that a reader can check every one. A new
count is one more entry. Code is read as code (``ast``): docstrings, comments and LaTeX in strings
never count.

The counts and their figures (ask 3, the model's code once; "before" is main at c9e85f9):

- ``window_rule``: functions that write the sliding-window rule "i − w < j ≤ i" themselves, that
  is, a position difference compared with a window or a window subtracted from a position.
  Before: 7 (llama.window_allowed, tiled.window_allowed, tiled.window_key_tiles,
  labs/masks.sliding_window_mask, labs/heads.window_allowed, labs/decoder_view.weight_outside_window,
  kv_cache.keep_window; the issue counted the four mask builders). After: 1 (steps.window_start).
- ``log_softmax``: functions that compute a log of a sum of exponentials. Before: 2
  (training/model.log_softmax, labs/heads.log_softmax). After: 1 (steps.log_softmax).
- ``head_projection``: functions that cut a product with a projection matrix into heads
  (``split_heads(X @ W, h)``). Before: 4, in three weight layouts (steps.project with per-head
  ``[h, d_model, d]``, models/llama.project_heads with ``[h·d, d_model]`` as ``W.T``,
  labs/inference.project_heads and labs/multihead.split_vs_separate with ``[d_model, h·d]``).
  After: 2 (steps.project_heads, which every pass calls, and labs/multihead.split_vs_separate, the
  multi-head lab's check that writes the cut out on purpose beside one product per head:
  tests/test_lab_checks_fail.py swaps that module's ``split_heads`` to show the check catches a
  wrong cut).
- ``llama_layer_loops``: loops in models/llama.py that run a layer's sub-layers (their body adds the
  FFN block). Before: 3 (run_layers, run_from, decode_layers; the issue counted the first two).
  After: 1 (layer_stack).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Callable, Iterator, Sequence
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


@cache
def product_sources(root: Path = ROOT) -> tuple[Source, ...]:
    """The product's files, parsed once per process."""
    files: list[Path] = []
    for name in PRODUCT:
        here = root / name
        files += [here] if here.is_file() else sorted(here.rglob("*.py"))
    return tuple(
        Source(f.relative_to(root).as_posix(), ast.parse(f.read_text(encoding="utf-8"))) for f in files
    )


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
            lines = sorted(n.lineno for n in nodes if window_rule_hit(n, differences) is not None)
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


@dataclass(frozen=True)
class Count:
    name: str
    what: str
    find: Callable[[Sequence[Source]], list[str]]


COUNTS: tuple[Count, ...] = (
    Count("window_rule", "functions writing the sliding-window rule i − w < j ≤ i", count_window_rule),
    Count(
        "log_softmax",
        "functions computing a log-sum-exp (log_softmax)",
        lambda sources: places(sources, log_of_exp_sum_hit),
    ),
    Count(
        "head_projection",
        "functions cutting a product with a projection matrix into heads",
        lambda sources: places(sources, head_projection_hit),
    ),
    Count("llama_layer_loops", "loops over the decoder's layers in models/llama.py", count_llama_layer_loops),
)


def measure(sources: Sequence[Source] | None = None) -> dict[str, list[str]]:
    """Every count's places, by name."""
    sources = product_sources(ROOT) if sources is None else sources
    return {c.name: c.find(sources) for c in COUNTS}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brief", action="store_true", help="the numbers only")
    ap.add_argument("--json", action="store_true", help="the counts and places as JSON")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout to read (default: this one)")
    args = ap.parse_args(argv)
    found = measure(product_sources(args.root))
    if args.json:
        print(json.dumps({name: {"count": len(p), "places": p} for name, p in found.items()}, indent=2))
        return 0
    for count in COUNTS:
        print(f"{count.name:<20} {len(found[count.name]):>4}   {count.what}")
        if not args.brief:
            for place in found[count.name]:
                print(f"{'':<27}{place}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
