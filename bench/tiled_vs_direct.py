"""Issue 6, target 5: tiled attention vs the direct n × n computation at n=8,192, d=64.

Both run in this process on the same random Q, K, V (float64). Time is measured without tracing,
interleaved (direct, tiled, direct, tiled, ...), median of the rounds; peak memory is measured
separately with tracemalloc (NumPy reports its buffers to it), as the growth above what was held
before the call. Targets: tiled peak <= 5% of direct peak, tiled time <= 2x direct, outputs equal
within 1e-10.

    OPENBLAS_NUM_THREADS=1 python bench/tiled_vs_direct.py            # n=8192, about a minute
    OPENBLAS_NUM_THREADS=1 python bench/tiled_vs_direct.py --smoke    # n=512, a second

The direct computation needs several GB at n=8192 (512 MB per n × n float64 matrix); run it alone.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads BLAS: no thread oversubscription

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_core.labs.cost import peak_bytes  # noqa: E402
from attention_core.tiled import direct_attention, tiled_attention  # noqa: E402


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="n=512, one round (CI)")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--block-q", type=int, default=512)
    ap.add_argument("--block-k", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--causal", action="store_true")
    args = ap.parse_args()
    n = 512 if args.smoke else args.n
    rounds = 1 if args.smoke else args.rounds
    if args.smoke:
        args.block_q = args.block_k = 128
    bq, bk = min(args.block_q, n), min(args.block_k, n)

    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((n, args.d)) for _ in range(3))
    direct = lambda: direct_attention(Q, K, V, causal=args.causal)  # noqa: E731
    tiled = lambda: tiled_attention(Q, K, V, bq, bk, causal=args.causal).output  # noqa: E731

    t_direct, t_tiled, worst = [], [], 0.0
    for _ in range(rounds):  # interleaved so machine noise hits both alike
        td, out_d = timed(direct)
        tt, out_t = timed(tiled)
        t_direct.append(td)
        t_tiled.append(tt)
        worst = max(worst, float(np.max(np.abs(out_d - out_t))))
        del out_d, out_t
    p_direct = peak_bytes(direct)
    p_tiled = peak_bytes(tiled)

    md, mt = statistics.median(t_direct), statistics.median(t_tiled)
    mem_ratio, time_ratio = p_tiled / p_direct, mt / md
    print(
        f"n={n} d={args.d} causal={args.causal} blocks={bq}x{bk} rounds={rounds} "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    print(f"direct  median {md:8.3f} s   peak {p_direct / 2**20:9.1f} MiB")
    print(f"tiled   median {mt:8.3f} s   peak {p_tiled / 2**20:9.1f} MiB")
    print(f"memory ratio {mem_ratio * 100:6.2f} %   (target <= 5 %)")
    print(f"time ratio   {time_ratio:6.2f} x   (target <= 2x)")
    print(f"max |direct - tiled| {worst:.2e}   (target <= 1e-10)")
    ok = mem_ratio <= 0.05 and time_ratio <= 2.0 and worst <= 1e-10
    print("PASS" if ok else "FAIL")
    return 0 if ok or args.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
