"""Issue 14, part 3: the sliding window as a saving of work, and linear attention's recurrence.

For each n, on the same random Q, K, V (float64, d = 64), interleaved rounds (median of the rounds):
- full causal attention, direct (the whole n × n matrix; only up to n = 4,096, since it needs
  several n × n float64 temporaries),
- full causal attention, tiled (every tile on or below the diagonal),
- the tiled sliding window of w keys (only the tiles inside the window are visited),
- causal linear attention as a recurrence (elu + 1; a Python loop over the tokens).
It prints seconds and the ratios measured side by side in the same run (seconds from different runs
or machines are not comparable), plus the tile counts, which predict the trend: full tiles ×4 per
doubling of n, window tiles ×2. The window's output is checked against masked full attention.

    OPENBLAS_NUM_THREADS=1 python bench/window_vs_full.py            # n = 1,024 … 16,384, ~1 min
    OPENBLAS_NUM_THREADS=1 python bench/window_vs_full.py --smoke    # n = 256, 512: a second
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads BLAS

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import timed  # noqa: E402

from attention_core.labs.efficient import linear_attention_recurrent, masked_attention  # noqa: E402
from attention_core.labs.masks import sliding_window_mask  # noqa: E402
from attention_core.tiled import direct_attention, tiled_attention  # noqa: E402

DIRECT_MAX_N = 4096


def seconds(fn) -> float:
    return timed(fn, 1)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="two small sizes, one round")
    ap.add_argument("--window", type=int, default=256)
    ap.add_argument("--block", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    ns = (256, 512) if args.smoke else (1024, 2048, 4096, 8192, 16384)
    rounds = 1 if args.smoke else args.rounds
    w, b, d = args.window, args.block, 64
    rng = np.random.default_rng(0)

    # equality check once, at a size where the masked reference is cheap
    n0 = ns[0]
    Q, K, V = (rng.standard_normal((n0, d)) for _ in range(3))
    diff = np.max(
        np.abs(
            tiled_attention(Q, K, V, b, b, window=w).output
            - masked_attention(Q, K, V, sliding_window_mask(n0, w))
        )
    )
    print(f"window w={w}, tiles b={b}, d={d}; max |tiled window − masked full| at n={n0}: {diff:.2e}")
    print(
        f"{'n':>6} {'direct ms':>10} {'tiled ms':>9} {'window ms':>10} {'linear ms':>10} "
        f"{'tiled/win':>10} {'direct/win':>11} {'tiles win/full':>15}"
    )
    for fn in (direct_attention, linear_attention_recurrent):  # warm-up: first calls pay set-up costs
        fn(Q, K, V)
    tiled_attention(Q, K, V, b, b, window=w)
    for n in ns:
        Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))
        runs = {"direct": [], "tiled": [], "window": [], "linear": []}
        for _ in range(rounds):  # interleaved, so load changes hit every method alike
            if n <= DIRECT_MAX_N:
                runs["direct"].append(seconds(lambda: direct_attention(Q, K, V, causal=True)))  # noqa: B023
            runs["tiled"].append(seconds(lambda: tiled_attention(Q, K, V, b, b, causal=True)))  # noqa: B023
            runs["window"].append(seconds(lambda: tiled_attention(Q, K, V, b, b, window=w)))  # noqa: B023
            runs["linear"].append(seconds(lambda: linear_attention_recurrent(Q, K, V)))  # noqa: B023
        med = {k: statistics.median(v) if v else None for k, v in runs.items()}
        tf = sum(1 for qi in range(0, n, b) for ki in range(0, n, b) if ki <= qi)
        tw = tiled_attention(Q, K, V, b, b, window=w).tiles_computed
        direct = f"{med['direct'] * 1000:10.1f}" if med["direct"] else f"{'—':>10}"
        ratio_d = f"{med['direct'] / med['window']:10.2f}×" if med["direct"] else f"{'—':>11}"
        print(
            f"{n:>6} {direct} {med['tiled'] * 1000:9.1f} {med['window'] * 1000:10.1f} {med['linear'] * 1000:10.1f} "
            f"{med['tiled'] / med['window']:9.2f}× {ratio_d} {tw:>7} / {tf:<6}"
        )


if __name__ == "__main__":
    main()
