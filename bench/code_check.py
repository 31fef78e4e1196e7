"""Issue 44's targets for the code check: a check's verdict time, warm and cold, and what is left behind.

    .venv/bin/python bench/code_check.py            # 20 cold, 20 warm, 4 sessions x 20 checks
    .venv/bin/python bench/code_check.py --smoke    # a few of each (CI, tests/test_bench_smoke.py)
    .venv/bin/python bench/code_check.py --json

A check is the page's *Check*: the learner's sentence (head 0 and the layer) plus the hidden cases,
a right implementation, from the job's encoding to the verdict (attention_core.codecheck.check).
- cold: no spare worker (``Sandbox(spare=False)``): the worker's start, imports and lock-down count;
- warm: a spare waits, ready, before each check (the page's normal case);
- leftovers: 4 threads (sessions) run 20 checks each on one sandbox; afterwards the sandbox is
  closed and the worker processes still alive and the sandbox's temporary directories are counted
  (both must be 0). Targets: p95 <= 1.5 s warm, <= 3 s cold, nothing left behind.
Timings depend on the machine's load (printed with them): take the figures on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from attention_core.codecheck.check import all_cases, check_cases  # noqa: E402
from attention_core.codecheck.sandbox import TEMP_PREFIX, Sandbox  # noqa: E402
from attention_core.codegen import one_head_function  # noqa: E402
from attention_core.config import AttentionConfig  # noqa: E402

CASES = all_cases("the cat sat on the mat", AttentionConfig(mask="causal"))
SOURCE = one_head_function()


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def timed_check(box: Sandbox) -> float:
    start = time.perf_counter()
    report = check_cases(SOURCE, CASES, box)
    seconds = time.perf_counter() - start
    if report.verdict != "pass":
        raise SystemExit(f"the reference implementation did not pass: {report.verdict}")
    return seconds


def cold(n: int) -> list[float]:
    box = Sandbox(spare=False)
    try:
        return [timed_check(box) for _ in range(n)]
    finally:
        box.close()


def warm(n: int) -> list[float]:
    box = Sandbox()
    times = []
    try:
        for _ in range(n):
            box.spare_pid()  # the spare is ready, as between two learners' clicks
            times.append(timed_check(box))
    finally:
        box.close()
    return times


def leftovers(sessions: int, checks: int) -> dict:
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    tmp = Path(tempfile.gettempdir())
    dirs_before = set(tmp.glob(TEMP_PREFIX + "*"))
    box = Sandbox()
    errors: list[str] = []

    def session() -> None:
        for _ in range(checks):
            try:
                timed_check(box)
            except BaseException as err:  # noqa: BLE001 - reported, not raised in a thread
                errors.append(repr(err))

    threads = [threading.Thread(target=session) for _ in range(sessions)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    box.close()
    time.sleep(0.2)
    alive = [
        p.pid
        for p in me.children(recursive=True)
        if p.pid not in before and p.status() != psutil.STATUS_ZOMBIE
    ]
    dirs = sorted(str(d) for d in set(tmp.glob(TEMP_PREFIX + "*")) - dirs_before)
    return {
        "sessions": sessions,
        "checks_each": checks,
        "errors": errors,
        "workers_left": alive,
        "dirs_left": dirs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a few checks of each kind")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    n, per_session = (3, 2) if args.smoke else (20, 20)
    cold_times, warm_times = cold(n), warm(n)
    left = leftovers(4, per_session)
    result = {
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
        "cases": len(CASES),
        "cold_p50_s": statistics.median(cold_times),
        "cold_p95_s": p95(cold_times),
        "warm_p50_s": statistics.median(warm_times),
        "warm_p95_s": p95(warm_times),
        **left,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"load average {result['load_average']}, {result['cpus']} CPUs, {result['cases']} cases per check"
        )
        print(
            f"cold: p50 {result['cold_p50_s']:.3f} s, p95 {result['cold_p95_s']:.3f} s (target <= 3 s), n={n}"
        )
        print(
            f"warm: p50 {result['warm_p50_s']:.3f} s, p95 {result['warm_p95_s']:.3f} s (target <= 1.5 s), n={n}"
        )
        print(
            f"{left['sessions']} sessions x {left['checks_each']} checks: {len(left['errors'])} errors, "
            f"{len(left['workers_left'])} workers and {len(left['dirs_left'])} temporary directories left"
        )
    ok = not left["errors"] and not left["workers_left"] and not left["dirs_left"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
