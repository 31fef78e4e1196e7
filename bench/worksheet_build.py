"""Issue 19: how long a class worksheet PDF takes to build, and how big it is.

Builds the worksheet for a class of 30 students x 3 exercises (180 pages: 90 exercise pages, then
90 answer pages) in Japanese and English, with and without the causal mask, and prints the median
of a few builds, split into drawing the pages and writing the file (font subsetting). For scale it
also times generating the same 90 exercises alone, in the same run.

    python bench/worksheet_build.py            # full run
    python bench/worksheet_build.py --smoke    # one small build, to check the script works
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_core.exercise import generate_exercise  # noqa: E402
from attention_ui.worksheet.worksheet import WorksheetSettings, render_worksheet  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    students, exercises, repeats = (2, 1, 1) if args.smoke else (30, 3, args.repeats)
    print(f"worksheet: {students} students x {exercises} exercises, median of {repeats} builds")
    for lang in ("ja", "en"):
        for causal in (False, True):
            settings = WorksheetSettings(
                exercises=exercises, students=students, first_seed=1000, lang=lang, causal=causal
            )
            draw, write, size, pages = [], [], 0, 0
            for _ in range(repeats):
                t0 = time.perf_counter()
                doc = render_worksheet(settings)
                t1 = time.perf_counter()
                data = bytes(doc.output())
                t2 = time.perf_counter()
                draw.append(t1 - t0)
                write.append(t2 - t1)
                size, pages = len(data), doc.page_no()
            d, w = statistics.median(draw), statistics.median(write)
            print(
                f"  {lang} mask={settings.mask:6s} {pages:4d} pages {size / 1024:7.0f} KiB  "
                f"draw {d:5.2f} s + write {w:5.2f} s = {d + w:5.2f} s "
                f"({(d + w) / settings.total * 1000:5.1f} ms per exercise)"
            )
    t0 = time.perf_counter()
    for seed in range(1000, 1000 + students * exercises):
        generate_exercise(seed, "causal")
    core = time.perf_counter() - t0
    print(f"  generating the {students * exercises} exercises alone: {core * 1000:.1f} ms")


if __name__ == "__main__":
    main()
