"""Issue 36: does one student's training slow another student's page? And the page's first curve update.

Another session is an AppTest of the masks lab, rerun ``--reruns`` times (a seed change each time),
timed three ways:

* ``idle``: nothing else runs;
* ``worker``: a training run goes on in a worker process, as the training lab starts it
  (attention_ui.training.jobs.Runner: a subprocess at a lower priority);
* ``thread``: the same training in a thread of this process (what the page would do without the
  worker: the training loop's NumPy calls and the session's script share one interpreter lock).

It prints the median and 95th percentile rerun time of each, the time from starting a job to its
first progress row (the page polls every 0.4 s on top of that), and the bytes one finished run holds
(what the bounded cache keeps per run). Figures depend on the machine's load: the load average is
printed with them.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/training_latency.py            # 30 reruns each
    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/training_latency.py --reruns 10
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from apptest_pages import open_page  # noqa: E402

from attention_core.training.train import TrainSettings, train  # noqa: E402
from attention_ui.training import jobs  # noqa: E402

SETTINGS = TrainSettings(task="induction", layers=2, heads=2, d_model=32, d_k=16, steps=20_000, seed=0)


def reruns(count: int, first_seed: int) -> list[float]:
    """``count`` reruns of the masks lab, seeds ``first_seed`` onwards: each phase gets seeds of its
    own, or a later phase would find the earlier phase's results in the page's cache."""
    at = open_page("app_pages/masks.py")
    times = []
    for i in range(count):
        at.session_state["masks_seed"] = first_seed + i
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, [e.value for e in at.exception]
    return times


def summary(name: str, times: list[float]) -> str:
    p95 = sorted(times)[max(0, int(round(0.95 * len(times))) - 1)]
    return f"{name:7s} median {1000 * statistics.median(times):7.1f} ms   p95 {1000 * p95:7.1f} ms   (n={len(times)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reruns", type=int, default=30)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    reruns(3, first_seed=1)  # warm the imports (these seeds are not used again)
    seeds = iter(range(4, 4 + 3 * args.reruns, args.reruns))
    results = {"idle": reruns(args.reruns, next(seeds))}

    runner = jobs.Runner()
    runner.prestart()  # as the page does when it is opened
    time.sleep(3)
    job = runner.start(jobs.TRAIN, SETTINGS, SETTINGS, total=SETTINGS.steps)
    while not job.rows():
        time.sleep(0.01)
    first_update = job.first_update
    results["worker"] = reruns(args.reruns, next(seeds))
    job.request_stop()
    while not job.finished:
        time.sleep(0.05)
    run = job.result

    stop = threading.Event()
    thread = threading.Thread(target=lambda: train(SETTINGS, should_stop=stop.is_set), daemon=True)
    thread.start()
    time.sleep(0.5)
    results["thread"] = reruns(args.reruns, next(seeds))
    stop.set()
    thread.join()

    print(f"load average after: {os.getloadavg()}")
    for name, times in results.items():
        print(summary(name, times))
    print(f"first progress row {first_update:.2f} s after the job started (worker start, imports, step 1)")
    print(f"one run of {run.steps_done} steps pickled: {len(pickle.dumps(run)) / 1e6:.2f} MB "
          f"(snapshots {run.snapshots.nbytes / 1e6:.2f} MB, weights {run.params.flat.nbytes / 1e6:.2f} MB)")  # fmt: skip


if __name__ == "__main__":
    main()
