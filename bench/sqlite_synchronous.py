"""What SQLite's ``synchronous = FULL`` costs the live class, against the ``NORMAL`` it used
(issue 34, point 14).

In WAL mode NORMAL syncs the file only at checkpoints: a crashed *process* loses nothing, but a
power cut or an operating-system crash can lose the last commits before a checkpoint. FULL syncs
the write-ahead log at every commit, so an acknowledged answer survives a power cut too. The cost is
one fsync per commit, which depends on the disk: run this on the deployment's disk.

    .venv/bin/python bench/sqlite_synchronous.py                  # in data/ (the store's folder)
    .venv/bin/python bench/sqlite_synchronous.py --dir /var/lib/attention-lab --answers 3000

It times the store's real write of a class, ``answer()`` (one transaction each), for students
answering one after another and for 8 threads answering at once (Streamlit runs each session in its
own thread), with each setting in turn, on a fresh file in the folder, and prints per-answer latency
(p50 / p95 / max, ms) and answers per second.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from classroom.sqlite_store import SqliteStore  # noqa: E402


def _store(folder: Path, mode: str) -> SqliteStore:
    store = type(f"Sqlite{mode}", (SqliteStore,), {"synchronous": mode})(folder / f"sync_{mode}.sqlite3")
    store.migrate()
    return store


def _run(store: SqliteStore, answers: int, threads: int) -> tuple[list[float], float]:
    s = store.start_session()
    students = [store.join(s.code, None, f"addr:10.0.{i // 250}.{i % 250}") for i in range(30)]
    polls = []
    lat: list[float] = []
    lock = threading.Lock()
    for _ in range(max(1, answers // len(students))):
        polls.append(
            store.open_poll(s.session_id, s.teacher_token, {"kind": "winning_key", "row": 1}, 4, 1, 3)
        )
        store.close_poll(s.session_id, s.teacher_token, polls[-1].poll_id)
    jobs = [(p, st, i) for p in polls for i, st in enumerate(students)][:answers]

    # One open poll at a time (the schema's rule): each thread answers its own students of the same
    # poll, poll after poll.
    t_start = time.perf_counter()
    by_poll: dict[str, list] = {}
    for job in jobs:
        by_poll.setdefault(job[0].poll_id, []).append(job)
    for chunk in by_poll.values():
        _open_only(store, s, chunk[0][0])
        parts = [chunk[k::threads] for k in range(threads)]
        workers = [
            threading.Thread(target=_answer_open, args=(store, s, part, lat, lock)) for part in parts if part
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    wall = time.perf_counter() - t_start
    return lat, wall


def _open_only(store: SqliteStore, s, poll) -> None:
    with store._transaction(write=True) as cur:
        store._run(
            cur, "UPDATE polls SET state = 'closed' WHERE session_id = ? AND state = 'open'", (s.session_id,)
        )
        store._run(cur, "UPDATE polls SET state = 'open' WHERE id = ?", (poll.poll_id,))


def _answer_open(store: SqliteStore, s, part, lat: list[float], lock: threading.Lock) -> None:
    for p, st, i in part:
        t0 = time.perf_counter()
        ok = store.answer(s.session_id, st.student_token, p.poll_id, i % 4)
        dt = time.perf_counter() - t0
        if not ok:
            raise RuntimeError("answer refused")
        with lock:
            lat.append(dt)


def _row(mode: str, threads: int, lat: list[float], wall: float) -> str:
    ms = sorted(x * 1000 for x in lat)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    return (
        f"{mode:<7} {threads:>2} thread(s)  answers {len(ms):>5}  p50 {statistics.median(ms):6.2f} ms"
        f"  p95 {p95:6.2f} ms  max {ms[-1]:7.2f} ms  {len(ms) / wall:7.0f} answers/s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=str(Path(__file__).resolve().parent.parent / "data"))
    ap.add_argument("--answers", type=int, default=1500)
    args = ap.parse_args()
    base = Path(args.dir)
    base.mkdir(parents=True, exist_ok=True)
    print(f"folder {base} (filesystem of a fresh file there); {args.answers} answers per run")
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    with tempfile.TemporaryDirectory(dir=base, prefix="sync-bench-") as tmp:
        for threads in (1, 8):
            for mode in ("NORMAL", "FULL", "NORMAL", "FULL"):  # twice each, interleaved
                store = _store(Path(tmp), mode)
                try:
                    lat, wall = _run(store, args.answers, threads)
                finally:
                    store.close()
                print(_row(mode, threads, lat, wall), flush=True)
                for f in Path(tmp).glob(f"sync_{mode}.sqlite3*"):
                    f.unlink()


if __name__ == "__main__":
    main()
