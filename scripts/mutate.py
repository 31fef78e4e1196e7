"""Mutation testing of attention_core, one module at a time (``make mutate``; a habit, not a CI gate).

mutmut (pinned in requirements-mutate.txt) reads one configuration per working directory, so each
module gets its own scratch copy under ``bench/out/mutate/<module>/``: the package, the tests, and a
pyproject.toml whose ``[tool.mutmut]`` names that one module and only the test files that cover it
(TARGETS). mutmut then changes the module one small edit at a time and runs those tests against each
edit; a mutant that no test notices "survives". One child process, so it fits a shared two-core
machine. The wording of raised errors is not mutated (the conditions that raise are).

    python scripts/mutate.py                      # every module in TARGETS, fresh, one after the other
    python scripts/mutate.py attention_core/norms.py attention_core/labs/block.py
    python scripts/mutate.py --rerun              # only the last run's unexplained survivors, again
    python scripts/mutate.py --report             # count the last run, no new run
    python scripts/mutate.py --survivors MODULE   # diffs of the survivors not listed as equivalent
    python scripts/mutate.py --draft MODULE       # the same as JSON entries for mutation_equivalent.json
    python scripts/mutate.py --all                # also the pretrained-model modules (hours)
    python scripts/mutate.py --list               # the modules and their test files

A survivor is either killed by a new test or listed in bench/mutation_equivalent.json with the
reason it cannot change what a caller sees; the score is killed / (killed + survivors − equivalent),
"no tests" counted as survivors. Counts go to ``bench/out/mutate/summary.json``; the scores are kept
in bench/RESULTS.md.
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

from house_counts import module_test_path  # scripts/ is this script's folder

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "mutate"
# Surviving mutants that cannot change what any caller sees, each with the reason (by module,
# function and the mutated line, so the entries survive renumbering).
EQUIVALENT = ROOT / "bench" / "mutation_equivalent.json"

# module -> the test files that exercise it (fast, core-only ones; no AppTest, no browser, no
# pretrained weights, so one mutant costs a fraction of a second). Keep this list in step with the
# tests: a test file that covers a module but is missing here makes its mutants look like survivors.
# A core module's own test file (the house rule, house_counts.module_test_path:
# attention_core/labs/masks.py -> tests/labs/test_masks.py) is always among them; ALSO lists the others.
TRAINING_TESTS = ["tests/training/test_model.py", "tests/training/test_optim.py", "tests/training/test_tasks.py",
                  "tests/training/test_train.py", "tests/training/test_experiments.py"]  # fmt: skip
MEASURES = "tests/test_training_measures.py"
ALSO: dict[str, list[str]] = {
    "attention_core/steps.py": ["tests/test_core_reference.py", "tests/test_core_numerics.py"],
    "attention_core/trace.py": ["tests/test_core_reference.py", "tests/test_core_numerics.py"],
    "attention_core/backward.py": [],
    "attention_core/grad_cli.py": ["tests/test_backward.py"],
    "attention_core/training/model.py": [*TRAINING_TESTS, MEASURES],
    "attention_core/training/tasks.py": [*TRAINING_TESTS, MEASURES],
    "attention_core/training/optim.py": TRAINING_TESTS,
    "attention_core/training/train.py": [*TRAINING_TESTS, MEASURES],
    "attention_core/training/experiments.py": [*TRAINING_TESTS, "tests/test_training_experiments.py", MEASURES, "tests/training/test_verdicts.py"],
    "attention_core/training/verdicts.py": ["tests/test_training_experiments.py"],
    "attention_core/train_cli.py": [],
    "attention_core/explain.py": [],
    "attention_core/tokenizer.py": [],
    "attention_core/codegen.py": ["tests/test_codegen_questions.py"],
    "attention_core/codegen_questions.py": [],
    "attention_core/rope.py": ["tests/labs/test_positions.py"],
    "attention_core/norms.py": ["tests/labs/test_block.py"],
    "attention_core/ffn.py": ["tests/labs/test_block.py"],
    "attention_core/kv_cache.py": ["tests/labs/test_inference.py"],
    "attention_core/gqa.py": ["tests/labs/test_inference.py"],
    "attention_core/csv_cells.py": [],
    "attention_core/tiled.py": ["tests/labs/test_efficient.py"],
    "attention_core/models/llama.py": ["tests/test_llama_generic.py", "tests/test_gemma_family.py", "tests/models/test_gguf_file.py"],
    "attention_core/models/decoding.py": ["tests/models/test_gguf_file.py", "tests/test_gemma_family.py"],
    "attention_core/models/gguf_file.py": ["tests/models/test_llama.py"],
    "attention_core/models/spm_bpe.py": ["tests/test_models_fast_files.py"],
    "attention_core/models/byte_bpe.py": ["tests/test_token_labels.py", "tests/test_decoder_token_words.py", "tests/models/test_gguf_file.py"],
    "attention_core/models/chunked_file.py": ["tests/test_models_fast_files.py"],
    "attention_core/models/gemma3.py": ["tests/test_gemma_family.py"],
    "attention_core/models/smollm2.py": [],
    # MiniLM (22 M parameters) loads in a fraction of a second: its real-model tests are fast enough
    "attention_core/models/minilm.py": ["tests/test_figures_pretrained.py"],
    # the code check's verdict (issue 44): pure, its tests build the worker's replies by hand
    "attention_core/codecheck/verdict.py": [],
    # the traps run on the cases: the hand-written traps, checked in this process (no worker)
    "attention_core/codecheck/traps.py": [],
    # the code check's plain parts, each by its own test file (the worker and the sandbox need processes)
    "attention_core/codecheck/wire.py": ["tests/codecheck/test_verdict.py"],
    "attention_core/codecheck/templates.py": [],
    "attention_core/codecheck/report.py": [],
    "attention_core/exercise_text.py": [],
    "attention_core/models/availability.py": [],
    # each lab's own test file, and the other lab tests that call it
    "attention_core/labs/block.py": [],
    "attention_core/labs/cost.py": [],
    "attention_core/labs/decoder.py": ["tests/test_gemma_view.py"],
    "attention_core/labs/efficient.py": ["tests/labs/test_cost.py"],
    "attention_core/labs/inference.py": [],
    "attention_core/labs/lookalikes.py": [],
    "attention_core/labs/masks.py": [],
    "attention_core/labs/multihead.py": ["tests/labs/test_ring.py"],
    "attention_core/labs/positions.py": ["tests/labs/test_inference.py"],
    "attention_core/labs/quiz.py": ["tests/test_quiz_bank.py"],
    "attention_core/labs/scaling.py": [],
    "attention_core/labs/heads.py": [],
    "attention_core/labs/ring.py": [],
    "attention_core/labs/ssm.py": [],
}  # fmt: skip
# (a training module's own file is one of TRAINING_TESTS: each file is listed once)
TARGETS: dict[str, list[str]] = {
    m: list(dict.fromkeys([module_test_path(m), *also])) for m, also in ALSO.items()
}
TARGETS["classroom/bell.py"] = ["tests/test_class_bell.py"]  # outside the core: its file by its own name
TARGETS["attention_ui/nav.py"] = ["tests/test_nav.py"]  # the navigation as data: plain Python, no Streamlit
# Modules whose tests are too slow per mutant for a two-core machine: only with --all. (None left:
# smollm2, gemma3, gguf_file and the tokenizers are in TARGETS with fast tests on tiny GGUF files
# the tests write; byte_bpe's list also holds tests/test_token_labels.py, whose property tests read
# the real SmolLM2 tokenizer.)
HEAVY: dict[str, list[str]] = {}
# Tests left out of one module's run (a pytest -k expression): the heads lab's tests on the real
# SmolLM2-135M and Gemma 3 270M take seconds each and would run for most of its mutants; the same
# checks run on the tiny random Llama and Gemma models in those files, and what only the real
# models caught gets its own fast test. The Gemma view's file also has one test on the real model.
DESELECT: dict[str, str] = {
    "attention_core/labs/heads.py": "not (_real or long_text_is_long_enough or (test_gemma_ and not not_installed) or last_layer_is_the_models)",
    "attention_core/labs/decoder.py": "not long_preset",  # tokenizes with the real Gemma 3
}

# What the scratch copy needs besides the package and the tests (the tests' conftest imports
# attention_ui for the shared helpers; the golden data sit under tests/data).
COPY = ["attention_core", "attention_ui", "app_pages", "classroom", "tests"]


def _tool_config(module: str, tests: list[str]) -> str:
    def toml_list(items: list[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"

    deselect = ["-k", DESELECT[module]] if module in DESELECT else []
    package = module.split("/")[0] + "/"  # attention_core/, or classroom/ for the live class's store and bell
    also = [p for p in ("attention_core/", "classroom/", "attention_ui/", "app_pages/") if p != package]

    return (
        "\n[tool.mutmut]\n"
        f"source_paths = {toml_list([package])}\n"
        f"only_mutate = {toml_list([module])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        # no xdist workers, no cache files, no per-test timeout plugin fighting mutmut's own timeout
        f"pytest_add_cli_args = {toml_list(['-p', 'no:cacheprovider', '-n', '0', '-q', *deselect])}\n"
        # the tests also import attention_ui and run the bench scripts (only bench/*.py is in the copy)
        f"also_copy = {toml_list([*also, 'app.py', 'bench/'])}\n"
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
    shutil.copy2(ROOT / "app.py", work / "app.py")  # the quiz bank's tests read the app's page list
    (work / "bench").mkdir(exist_ok=True)
    for script in (ROOT / "bench").glob("*.py"):
        shutil.copy2(script, work / "bench" / script.name)
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    pyproject = re.sub(r"\n\[tool\.mutmut\][^\[]*", "\n", pyproject)
    tests = [t for t in TARGETS[module] if (ROOT / t).exists()]
    (work / "pyproject.toml").write_text(pyproject + _tool_config(module, tests), "utf-8")
    return work


def statuses(module: str) -> dict[str, str]:
    """Every mutant of ``module`` and its status (killed, survived, no tests, timeout, …)."""
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=_scratch(module),
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    found = {}
    for line in out.splitlines():
        if ":" in line:
            name, status = line.rsplit(":", 1)
            found[name.strip()] = status.strip()
    return found


def survivors(module: str) -> list[str]:
    """The mutants no selected test noticed: "survived", and "no tests" (no selected test runs the
    function, which is no better)."""
    return [n for n, s in statuses(module).items() if s in ("survived", "no tests")]


_DIFFS = """
import json, sys
from mutmut.mutation.diff_apply import find_mutant, get_diff_for_mutant
print(json.dumps({name: get_diff_for_mutant(name, path=find_mutant(name).path) for name in sys.argv[1:]}))
"""


def diffs(module: str, names: list[str]) -> dict[str, str]:
    """The diff of each named mutant, from one process (``mutmut show`` would start one per mutant)."""
    if not names:
        return {}
    out = subprocess.run(
        [sys.executable, "-c", _DIFFS, *names],
        cwd=_scratch(module),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def mutated_text(diff: str) -> str:
    """The mutant's new line(s), stripped and joined: what bench/mutation_equivalent.json matches."""
    lines = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return " | ".join(lines)


def function_of(name: str) -> str:
    """``attention_core.steps.x_softmax__mutmut_16`` -> ``x_softmax`` (methods: ``xǁClassǁmethod``)."""
    return name.rsplit(".", 1)[1].split("__mutmut_")[0]


def load_equivalent() -> list[dict[str, str]]:
    return json.loads(EQUIVALENT.read_text("utf-8")) if EQUIVALENT.exists() else []


RERUN_MARK = "RERUN"


def _listed_equivalent(module: str, names: list[str]) -> set[str]:
    registry = [e for e in load_equivalent() if e["module"] == module]
    return {
        n
        for n, diff in diffs(module, names).items()
        if any(e["function"] == function_of(n) and e["mutated"] == mutated_text(diff) for e in registry)
    }


def classify(module: str) -> dict[str, object]:
    """Counts for ``module`` and the survivors bench/mutation_equivalent.json does not explain.

    score = killed / (killed + survived − equivalent), where "killed" includes timeouts (the mutant
    made a test hang) and "survived" includes "no tests".
    """
    status = statuses(module)
    if (_scratch(module) / RERUN_MARK).exists():
        # After --rerun with a changed test selection mutmut resets every mutant it was not asked
        # to test to "not checked": those are the first run's killed mutants and its listed
        # equivalents (tests were only added, so a killed mutant stays killed).
        reset = [n for n, st in status.items() if st == "not checked"]
        eq_reset = _listed_equivalent(module, reset)
        for n in reset:
            status[n] = "equivalent (first run)" if n in eq_reset else "killed"
    confirmed = verified(module) & set(status)  # killed when run directly (see verify)
    counts: dict[str, int] = {}
    for st in status.values():
        counts[st] = counts.get(st, 0) + 1
    left = [n for n, st in status.items() if st in ("survived", "no tests") and n not in confirmed]
    registry = [e for e in load_equivalent() if e["module"] == module]
    unexplained, equivalent = {}, counts.get("equivalent (first run)", 0)
    for name, diff in diffs(module, left).items():
        text, func = mutated_text(diff), function_of(name)
        if any(e["function"] == func and e["mutated"] == text for e in registry):
            equivalent += 1
        else:
            unexplained[name] = diff
    killed = counts.get("killed", 0) + counts.get("timeout", 0) + len(confirmed)
    survived = len(left) + counts.get("equivalent (first run)", 0)
    alive = survived - equivalent
    return dict(
        counts=counts,
        killed=killed,
        survived=survived,
        equivalent=equivalent,
        score=killed / (killed + alive) if killed + alive else float("nan"),
        unexplained=unexplained,
    )


VERIFIED = OUT / "verified.json"


def verify(module: str) -> list[str]:
    """Run each unexplained survivor against all of the module's test files directly (pytest with
    MUTANT_UNDER_TEST set, in mutmut's own mutated tree): mutmut picks the tests per mutant from its
    coverage stats, which can miss a test. The ones a test fails on are recorded as killed."""
    work = _scratch(module) / "mutants"
    shutil.copytree(ROOT / "tests", work / "tests", dirs_exist_ok=True)  # the tests as they are now
    tests = [t for t in TARGETS[module] if (ROOT / t).exists()]
    done = json.loads(VERIFIED.read_text("utf-8")) if VERIFIED.exists() else {}
    killed = set(done.get(module, []))
    deselect = ["-k", DESELECT[module]] if module in DESELECT else []
    args = ["-x", "-q", "-p", "no:cacheprovider", "-n", "0", *deselect, *tests]
    for name in classify(module)["unexplained"]:
        env = dict(os.environ, MUTANT_UNDER_TEST=name, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        r = subprocess.run(
            [sys.executable, "-m", "pytest", *args],
            cwd=work,
            env=env,
            capture_output=True,
            check=False,
        )
        if r.returncode == 1:  # a test failed (not a collection error or an interrupt)
            killed.add(name)
    done[module] = sorted(killed)
    VERIFIED.write_text(json.dumps(done, indent=1), "utf-8")
    return sorted(killed)


def verified(module: str) -> set[str]:
    return set(json.loads(VERIFIED.read_text("utf-8")).get(module, [])) if VERIFIED.exists() else set()


def equivalent_names(module: str) -> set[str]:
    """The survivors of the last run that bench/mutation_equivalent.json lists."""
    return set(survivors(module)) - set(classify(module)["unexplained"])


def show(module: str) -> None:
    """The diffs of the survivors that are not listed as equivalent."""
    for name, diff in classify(module)["unexplained"].items():
        print(f"# {name}: {function_of(name)}  [{mutated_text(diff)}]")
        print(diff)


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
    return {"seconds": round(time.monotonic() - start)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to mutate (default: all in TARGETS)")
    parser.add_argument("--all", action="store_true", help="also the HEAVY pretrained-model modules")
    parser.add_argument("--list", action="store_true", help="print the modules and their test files")
    parser.add_argument(
        "--survivors", action="store_true", help="show the diffs of survivors not listed as equivalent"
    )
    parser.add_argument("--mutant", action="append", default=[], help="re-run only these mutant names")
    parser.add_argument("--report", action="store_true", help="only count the last run (no new run)")
    parser.add_argument("--table", action="store_true", help="print summary.json as a Markdown table")
    parser.add_argument(
        "--verify", action="store_true", help="run each unexplained survivor against all its tests directly"
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="test only the last run's survivors again, against the tests as they are now (tests only added)",
    )
    parser.add_argument(
        "--draft", action="store_true", help="print unexplained survivors as draft equivalence entries (JSON)"
    )
    args = parser.parse_args(argv)
    if args.all:
        TARGETS.update(HEAVY)
    modules = args.modules or list(TARGETS)
    unknown = [m for m in modules if m not in TARGETS]
    if unknown:
        parser.error(f"not in TARGETS: {', '.join(unknown)}")
    if args.list:
        for m in modules:
            print(m, " ".join(TARGETS[m]))
        return 0
    if args.table:
        summary = json.loads((OUT / "summary.json").read_text("utf-8"))
        print("| module | mutants | killed | survived | equivalent | not killed | score |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for m in modules:
            c = summary.get(m)
            if not c or "killed" not in c or not isinstance(c.get("counts"), dict):
                print(f"| {m} | not run | | | | | |")
                continue
            total = sum(c["counts"].values())
            alive = c["survived"] - c["equivalent"]
            print(
                f"| {m} | {total} | {c['killed']} | {c['survived']} | {c['equivalent']} | {alive} | {c['score']:.1%} |"
            )
        return 0
    if args.draft:
        entries = [
            dict(module=m, function=function_of(name), mutated=mutated_text(diff), reason="")
            for m in modules
            for name, diff in classify(m)["unexplained"].items()
        ]
        print(json.dumps(entries, indent=1, ensure_ascii=False))
        return 0
    if args.survivors:
        for m in modules:
            print(f"== {m}")
            show(m)
        return 0
    summary_path = OUT / "summary.json"
    summary = json.loads(summary_path.read_text("utf-8")) if summary_path.exists() else {}
    for m in modules:
        if args.rerun:
            (_scratch(m) / RERUN_MARK).touch()
        if args.verify:
            start = time.monotonic()
            verify(m)
            seconds = round(time.monotonic() - start)
        elif args.rerun:
            explained = equivalent_names(m)  # once: each call diffs every survivor
            left = [n for n in survivors(m) if n not in explained]
            seconds = run(m, left)["seconds"] if left else 0
        elif not args.report:
            seconds = run(m, args.mutant)["seconds"]
        else:
            seconds = summary.get(m, {}).get("seconds")
        c = classify(m)
        summary[m] = {k: v for k, v in c.items() if k != "unexplained"} | {"seconds": seconds}
        print(
            f"{m}: killed {c['killed']}, survived {c['survived']} ({c['equivalent']} equivalent), "
            f"score {c['score']:.1%}, {c['counts']}, {seconds} s",
            flush=True,
        )
        OUT.mkdir(parents=True, exist_ok=True)
        summary_path.write_text(json.dumps(summary, indent=1, sort_keys=True), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
