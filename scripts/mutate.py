"""Mutation testing of attention_core, one module at a time (``make mutate``; a habit, not a CI gate).

mutmut (pinned in requirements-mutate.txt) reads one configuration per working directory, so each
module gets its own scratch copy under ``bench/out/mutate/<module>/``: the package, the tests, and a
pyproject.toml whose ``[tool.mutmut]`` names that one module and only the test files that cover it.
mutmut then changes the module one small edit at a time and runs those tests against each edit; a
mutant that no test notices "survives". One child process, so it fits a shared two-core machine.

    python scripts/mutate.py                       # every module in TARGETS, one after the other
    python scripts/mutate.py attention_core/norms.py attention_core/labs/block.py
    python scripts/mutate.py --list                # the modules and their test files
    python scripts/mutate.py --survivors attention_core/norms.py   # diffs of the surviving mutants

Each run prints killed / survived / other counts per module and writes them to
``bench/out/mutate/summary.json``; the scores and the reasons survivors are equivalent are kept
by hand in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "mutate"

# module -> the test files that exercise it (fast, core-only ones; no AppTest, no browser, no
# pretrained weights, so one mutant costs a fraction of a second). Keep this list in step with the
# tests: a test file that covers a module but is missing here makes its mutants look like survivors.
TARGETS: dict[str, list[str]] = {
    "attention_core/steps.py": [
        "tests/test_core_reference.py",
        "tests/test_core_numerics.py",
        "tests/test_mutation_kills.py",
    ],
    "attention_core/trace.py": [
        "tests/test_core_reference.py",
        "tests/test_core_numerics.py",
        "tests/test_mutation_kills.py",
    ],
    "attention_core/rope.py": [
        "tests/test_rope.py",
        "tests/test_lab_positions.py",
        "tests/test_mutation_kills.py",
    ],
    "attention_core/norms.py": [
        "tests/test_norms_ffn.py",
        "tests/test_lab_block.py",
        "tests/test_mutation_kills.py",
    ],
    "attention_core/ffn.py": [
        "tests/test_norms_ffn.py",
        "tests/test_lab_block.py",
        "tests/test_mutation_kills.py",
    ],
    "attention_core/kv_cache.py": [
        "tests/test_gqa_kv_cache.py",
        "tests/test_lab_inference.py",
        "tests/test_mutation_kills.py",
    ],
    "attention_core/gqa.py": [
        "tests/test_gqa_kv_cache.py",
        "tests/test_lab_inference.py",
        "tests/test_mutation_kills.py",
    ],
    "attention_core/tiled.py": [
        "tests/test_tiled.py",
        "tests/test_lab_efficient.py",
        "tests/test_mutation_kills.py",
    ],
    "attention_core/labs/block.py": ["tests/test_lab_block.py", "tests/test_lab_checks_fail.py"],
    "attention_core/labs/cost.py": ["tests/test_lab_cost.py", "tests/test_lab_checks_fail.py"],
    "attention_core/labs/decoder_view.py": [
        "tests/test_lab_decoder_view.py",
        "tests/test_lab_checks_fail.py",
    ],
    "attention_core/labs/efficient.py": ["tests/test_lab_efficient.py", "tests/test_lab_checks_fail.py"],
    "attention_core/labs/inference.py": ["tests/test_lab_inference.py", "tests/test_lab_checks_fail.py"],
    "attention_core/labs/lookalikes.py": ["tests/test_lab_lookalikes.py", "tests/test_lab_checks_fail.py"],
    "attention_core/labs/masks.py": ["tests/test_lab_masks.py", "tests/test_lab_checks_fail.py"],
    "attention_core/labs/multihead.py": ["tests/test_lab_multihead.py", "tests/test_lab_checks_fail.py"],
    "attention_core/labs/positions.py": ["tests/test_lab_positions.py", "tests/test_lab_checks_fail.py"],
    "attention_core/labs/quiz.py": ["tests/test_lab_quiz.py", "tests/test_quiz_bank.py"],
    "attention_core/labs/scaling.py": ["tests/test_lab_scaling.py", "tests/test_lab_checks_fail.py"],
    "attention_core/models/llama.py": ["tests/test_llama_generic.py", "tests/test_mutation_kills.py"],
}

# What the scratch copy needs besides the package and the tests (the tests' conftest imports
# attention_ui for the shared helpers; the golden data sit under tests/data).
COPY = ["attention_core", "attention_ui", "tests"]


def _tool_config(module: str, tests: list[str]) -> str:
    def toml_list(items: list[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"

    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["attention_core/"]\n'
        f"only_mutate = {toml_list([module])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        # no xdist workers, no cache files, no per-test timeout plugin fighting mutmut's own timeout
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-n", "0", "-q"]\n'
        # the tests also import attention_ui and run the bench scripts (only bench/*.py is in the copy)
        'also_copy = ["attention_ui/", "bench/"]\n'
        # The wording of a raised error is not mutated (which inputs raise still is: the conditions
        # before a raise are); see bench/RESULTS.md.
        "do_not_mutate_patterns = ['^\\s*raise \\w+\\(']\n"
        "use_git_change_detection = false\n"
    )


def _scratch(module: str) -> Path:
    return OUT / module.removeprefix("attention_core/").removesuffix(".py").replace("/", "_")


def prepare(module: str, fresh: bool = True) -> Path:
    """The scratch copy for ``module``; ``fresh`` drops mutmut's earlier results (``mutants/``), so
    every mutant is tested against the tests as they are now (mutmut does not notice edited tests)."""
    work = _scratch(module)
    if fresh and (work / "mutants").exists():
        shutil.rmtree(work / "mutants")
    work.mkdir(parents=True, exist_ok=True)
    for name in COPY:
        dest = work / name
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(ROOT / name, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "browser"))
    (work / "bench").mkdir(exist_ok=True)
    for script in (ROOT / "bench").glob("*.py"):
        shutil.copy2(script, work / "bench" / script.name)
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    pyproject = re.sub(r"\n\[tool\.mutmut\][^\[]*", "\n", pyproject)
    tests = [t for t in TARGETS[module] if (ROOT / t).exists()]
    (work / "pyproject.toml").write_text(pyproject + _tool_config(module, tests), "utf-8")
    return work


def _counts(work: Path) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    counts: dict[str, int] = {}
    for line in out.splitlines():
        if ":" in line:
            status = line.rsplit(":", 1)[1].strip()
            counts[status] = counts.get(status, 0) + 1
    return counts


def survivors(module: str) -> list[str]:
    work = _scratch(module)
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results"], cwd=work, capture_output=True, text=True, check=False
    ).stdout
    return [line.split(":")[0].strip() for line in out.splitlines() if line.strip().endswith("survived")]


_SHOW = """
import sys
from mutmut.mutation.diff_apply import find_mutant, get_diff_for_mutant
for name in sys.argv[1:]:
    print(f"# {name}: survived")
    print(get_diff_for_mutant(name, path=find_mutant(name).path))
"""


def show(module: str) -> None:
    """The diff of every surviving mutant of ``module`` (one process for all, not one per mutant)."""
    names = survivors(module)
    if names:
        subprocess.run([sys.executable, "-c", _SHOW, *names], cwd=_scratch(module), check=False)


def run(module: str, mutants: list[str]) -> dict[str, int]:
    work = prepare(module, fresh=not mutants)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "mutmut", "run", "--max-children", "1", *mutants],
        cwd=work,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    counts = _counts(work)
    counts["seconds"] = round(time.monotonic() - start)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to mutate (default: all in TARGETS)")
    parser.add_argument("--list", action="store_true", help="print the modules and their test files")
    parser.add_argument("--survivors", action="store_true", help="show the surviving mutants' diffs")
    parser.add_argument("--mutant", action="append", default=[], help="re-run only these mutant names")
    args = parser.parse_args(argv)
    modules = args.modules or list(TARGETS)
    unknown = [m for m in modules if m not in TARGETS]
    if unknown:
        parser.error(f"not in TARGETS: {', '.join(unknown)}")
    if args.list:
        for m in modules:
            print(m, " ".join(TARGETS[m]))
        return 0
    if args.survivors:
        for m in modules:
            print(f"== {m}")
            show(m)
        return 0
    summary_path = OUT / "summary.json"
    summary = json.loads(summary_path.read_text("utf-8")) if summary_path.exists() else {}
    for m in modules:
        counts = run(m, args.mutant)
        killed = counts.get("killed", 0)
        survived = counts.get("survived", 0)
        score = killed / (killed + survived) if killed + survived else float("nan")
        summary[m] = counts
        print(f"{m}: killed {killed}, survived {survived}, score {score:.0%}, {counts}", flush=True)
        OUT.mkdir(parents=True, exist_ok=True)
        summary_path.write_text(json.dumps(summary, indent=1, sort_keys=True), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
