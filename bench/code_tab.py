"""The playground's code tabs (issue 43): a rerun with a code tab open against the same rerun with
every code tab closed. Target: open <= 1.1x closed (the tab's program is cached per settings; a closed
tab makes nothing).

    .venv/bin/python bench/code_tab.py            # 60 timed reruns per case
    .venv/bin/python bench/code_tab.py --smoke    # 6, to check the script works (not a measurement)

One AppTest session of the playground (the script runner, caches and session state a server uses),
no browser: the figure is the server's time for a rerun. Each rerun changes the seed, cycling over a
few values, so the trace and the program come from the cache after the first round, as when a learner
moves back and forth. Cases: every tab closed; one step's tab (step 3) and the whole program open;
every tab open. Medians in ms, the ratios to closed, and the machine's load average (take the figures
on a quiet machine; bench/RESULTS.md keeps them).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from attention_ui.playground.steps_view import STEPS  # noqa: E402  (the playground's steps, a tab each)
from bench import result as bench_result  # noqa: E402

CASES = {
    "closed": {},
    "open": {"pg_code_raw": True, "pg_code_all": True},
    "all_open": {**{f"pg_code_{s}": True for s in STEPS}, "pg_code_all": True, "pg_code_example": True},
}
SEEDS = 5


def time_case(state: dict, reruns: int) -> list[float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["lang"] = "en"
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    times = []
    for i in range(reruns + SEEDS):  # the first round fills the caches and is not timed
        at.session_state["pg_seed"] = i % SEEDS
        start = time.perf_counter()
        at.run()
        if i >= SEEDS:
            times.append((time.perf_counter() - start) * 1000)
        if at.exception:
            raise SystemExit(f"the app raised {at.exception}")
    codes = len(at.code)
    if (codes == 0) != (not state):
        raise SystemExit(f"case {sorted(state)}: {codes} code boxes drawn")
    return times


def main() -> None:
    options = bench_result.parser(__doc__, "6 reruns per case: check the script works")
    options.add_argument("--reruns", type=int, default=60)
    args = options.parse_args()
    reruns = 6 if args.smoke else args.reruns
    medians = {name: statistics.median(time_case(state, reruns)) for name, state in CASES.items()}
    result = {
        "reruns": reruns,
        "median_ms": {k: round(v, 1) for k, v in medians.items()},
        "ratio_open_to_closed": round(medians["open"] / medians["closed"], 3),
        "ratio_all_open_to_closed": round(medians["all_open"] / medians["closed"], 3),
        "target": "open <= 1.1 x closed",
    }
    bench_result.print_result(
        result,
        args,
        lambda r: [
            f"playground rerun, {reruns} reruns per case (median): "
            + ", ".join(f"{k} {v:.1f} ms" for k, v in medians.items()),
            f"open / closed = {r['ratio_open_to_closed']}  (target <= 1.1); "
            f"all open / closed = {r['ratio_all_open_to_closed']}",
        ],
    )


if __name__ == "__main__":
    main()
