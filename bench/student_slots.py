"""Would at most two students' script runs at once keep a busy app process's event loop responsive?

    .venv/bin/python bench/student_slots.py            # 150 runs of 40 ms CPU each, twice each way

The mechanism of a step change in a hall, without Streamlit: ``--runs`` threads (one per student's
full run, each ``--cpu`` seconds of pure-Python work, so they contend for the GIL) start at once,
either all free to run or each waiting for one of ``--slots`` slots served in order; meanwhile an
asyncio loop (the process's event loop: health checks, websocket writes) sleeps 50 ms over and over.
Printed: when the runs finished (p50, p95, max, from their start: the students' follow delay) and how
late the loop woke (p50, p95, max), with the load average. A slot's waiter sleeps on a
``threading.Event`` and is handed the slot by the run before it. (This measured the fourth server fix
that attention_ui/server_fixes.py no longer has; see bench/RESULTS.md, issue 47.)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import threading
import time
from collections import deque


class FairSlots:
    """A counting semaphore that hands a released slot to its longest waiter."""

    def __init__(self, n: int) -> None:
        self._lock, self._free, self._waiters = threading.Lock(), n, deque()

    def __enter__(self) -> None:
        with self._lock:
            if self._free and not self._waiters:
                self._free -= 1
                return
            turn = threading.Event()
            self._waiters.append(turn)
        turn.wait()

    def __exit__(self, *exc) -> None:
        with self._lock:
            if self._waiters:
                self._waiters.popleft().set()
            else:
                self._free += 1


def _busy(cpu_s: float) -> None:
    t, x = time.thread_time(), 0
    while time.thread_time() - t < cpu_s:
        for i in range(1000):
            x += i


def _q(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(p * len(values)))]


async def one(runs: int, cpu_s: float, slots: int | None) -> str:
    gate = FairSlots(slots) if slots else None
    done: list[float] = []
    t0 = time.perf_counter()

    def run() -> None:
        if gate:
            with gate:
                _busy(cpu_s)
        else:
            _busy(cpu_s)
        done.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=run) for _ in range(runs)]
    starter = threading.Thread(target=lambda: [t.start() for t in threads])  # not on the loop's thread
    starter.start()
    late: list[float] = []
    while len(done) < runs:
        a = time.perf_counter()
        await asyncio.sleep(0.05)
        late.append(time.perf_counter() - a - 0.05)
    starter.join()
    for t in threads:
        t.join()
    done.sort()
    late.sort()
    return (
        f"{'all at once' if not slots else f'{slots} slots':11s}: runs finished p50 {_q(done, 0.5):.2f} s,"
        f" p95 {_q(done, 0.95):.2f} s, max {done[-1]:.2f} s; the loop woke late by p50"
        f" {1000 * _q(late, 0.5):.0f} ms, p95 {1000 * _q(late, 0.95):.0f} ms, max {1000 * late[-1]:.0f} ms;"
        f" load average {os.getloadavg()[0]:.1f}"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=150)
    ap.add_argument("--cpu", type=float, default=0.04, help="CPU seconds of each run")
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    for _ in range(args.repeat):
        for slots in (None, args.slots):
            print(asyncio.run(one(args.runs, args.cpu, slots)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
