"""Time the pretrained (all-MiniLM-L6-v2) NumPy path on a 16-token sentence, all 6 layers.

Usage: .venv/bin/python bench/pretrained_time.py [--runs 20]
Prints the median wall time of ``run_text`` after one warm-up (weights already loaded), plus the
one-off weight-loading time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_core.models import minilm as P  # noqa: E402

# 16 WordPiece tokens including [CLS] and [SEP] (checked below).
SENTENCE = "The students read the notes before the exam started this morning at nine."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    t0 = time.perf_counter()
    P.load_weights()
    P.load_tokenizer()
    load_s = time.perf_counter() - t0

    res = P.run_text(SENTENCE)  # warm-up
    if res.n != 16:
        raise SystemExit(f"expected 16 tokens, got {res.n}: {res.tokens}")
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        P.run_text(SENTENCE)
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    print(f"load weights + tokenizer (once per process): {load_s * 1000:.0f} ms")
    print(
        f"run_text, n=16 tokens, 6 layers x 12 heads: median {med * 1000:.1f} ms "
        f"over {args.runs} runs (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f})"
    )


if __name__ == "__main__":
    main()
