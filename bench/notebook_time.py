"""The playground's notebook download (issue 43): how long the default view's notebook takes to run
with nbclient and a fresh ipykernel, start to end. Target: <= 10 s on this machine.

    .venv/bin/python bench/notebook_time.py            # 3 runs, the median
    .venv/bin/python bench/notebook_time.py --smoke    # 1 run, to check the script works

The notebook is the one the playground offers for its default settings and English sentence
(attention_ui/program/notebook.py); each run starts its own kernel, as opening the file in Jupyter and
choosing "Run all" does. Build time is printed apart. Take the figures on a quiet machine.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench import result as bench_result  # noqa: E402


def main() -> None:
    options = bench_result.parser(__doc__, "one run: check the script works")
    options.add_argument("--runs", type=int, default=3)
    args = options.parse_args()
    from nbclient import NotebookClient

    from attention_core import AttentionConfig, codegen, trace_text
    from attention_ui.i18n import Translator, translate
    from attention_ui.program import notebook

    start = time.perf_counter()
    trace = trace_text(translate("en", "playground.default_text"), AttentionConfig())
    program = codegen.layer_program(trace.config, trace.tokens)
    built = notebook.build_notebook(program, trace, Translator("en"))
    build_s = time.perf_counter() - start
    runs = []
    for _ in range(1 if args.smoke else args.runs):
        nb = notebook.build_notebook(program, trace, Translator("en"))
        start = time.perf_counter()
        NotebookClient(nb, timeout=120, kernel_name="python3").execute()
        runs.append(time.perf_counter() - start)
    result = {
        "build_s": round(build_s, 3),
        "execute_s": [round(r, 2) for r in runs],
        "median_s": round(statistics.median(runs), 2),
        "cells": len(built.cells),
        "target": "<= 10 s",
    }
    bench_result.print_result(
        result,
        args,
        lambda r: [
            f"default notebook: {r['cells']} cells, built in {build_s:.3f} s",
            f"nbclient run (fresh kernel): median {r['median_s']} s of {r['execute_s']}  (target <= 10 s)",
        ],
    )


if __name__ == "__main__":
    main()
