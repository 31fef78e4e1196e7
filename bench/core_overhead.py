"""Issue 6, target 1: the core's overhead over bare NumPy, and `import attention_core` time.

Times `attend()` (every intermediate kept, arrays frozen) against the bare operations it needs
(projections, QKᵀ, scale, mask, softmax, weights·V, concat, W^O) at n=64, d_model=512, 8 heads,
in the same process, interleaved, and prints the median ratio. Also reports the end-to-end
`trace_text` time (tokenize + embed + draw weights + attend) for context.

    python bench/core_overhead.py            # full run
    python bench/core_overhead.py --smoke    # a few repeats, for CI

BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1, set here unless already set): on the shared
two-core machine, BLAS thread oversubscription made these small products up to 10x slower.
The import time is also given beside `import numpy` alone, timed the same way (its floor).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads BLAS; inherited by the import-time subprocesses

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from timing import timed  # noqa: E402  (bench/ is on sys.path when a script runs)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_core import AttentionConfig, attend, build_mask, embed, init_params, trace_text  # noqa: E402


def bare(X, W_Q, W_K, W_V, W_O, allowed, divisor):
    """The minimum NumPy work of multi-head attention, nothing kept."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = np.where(allowed, (Q @ K.transpose(0, 2, 1)) / divisor, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    o = w @ V
    h, n, d_v = o.shape
    return o.transpose(1, 0, 2).reshape(n, h * d_v) @ W_O


def import_time_ms(runs: int, module: str = "attention_core", then: str = "") -> float:
    """Median ms of ``import module`` (plus the statement ``then``) in fresh interpreters."""
    code = (
        f"import time; t=time.perf_counter(); import {module}; {then or 'pass'}; print(time.perf_counter()-t)"
    )
    times = []
    for _ in range(runs):
        res = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent.parent,
        )
        times.append(float(res.stdout) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--d-model", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    args = ap.parse_args()
    rounds, inner = (3, 3) if args.smoke else (30, 10)

    cfg = AttentionConfig(d_model=args.d_model, heads=args.heads, mask="causal")
    tokens = tuple(f"w{i}" for i in range(args.n))
    X = embed(tokens, cfg.d_model, cfg.seed)
    params = init_params(cfg)
    allowed = build_mask("causal", args.n)
    np.testing.assert_allclose(
        attend(X, params, allowed, cfg.divisor).output,
        bare(X, params.W_Q, params.W_K, params.W_V, params.W_O, allowed, cfg.divisor),
        atol=1e-10,
    )

    ratios, t_core, t_bare = [], [], []
    for _ in range(rounds):  # interleave so machine noise hits both sides alike
        c = min(timed(lambda: attend(X, params, allowed, cfg.divisor), inner))
        b = min(
            timed(
                lambda: bare(X, params.W_Q, params.W_K, params.W_V, params.W_O, allowed, cfg.divisor), inner
            )
        )
        t_core.append(c)
        t_bare.append(b)
        ratios.append(c / b)
    text = " ".join(tokens)
    t_text = statistics.median(timed(lambda: trace_text(text, cfg), max(3, inner)))

    print(f"n={args.n} d_model={args.d_model} heads={args.heads} (causal)")
    print(f"bare NumPy ops         median {statistics.median(t_bare) * 1e3:8.3f} ms")
    print(f"attend() full trace    median {statistics.median(t_core) * 1e3:8.3f} ms")
    print(f"overhead ratio         median {statistics.median(ratios):8.3f}x   (target <= 1.5x)")
    print(f"trace_text end to end  median {t_text * 1e3:8.3f} ms   (adds tokenize, embed, weight draws)")
    runs = 3 if args.smoke else 11
    core_ms, numpy_ms = import_time_ms(runs), import_time_ms(runs, "numpy")
    used_ms = import_time_ms(runs, then="attention_core.trace_text")
    print(f"import attention_core  median {core_ms:8.1f} ms   (target < 100 ms; public names load lazily)")
    print(f"  + first name used    median {used_ms:8.1f} ms   (loads the submodules and NumPy)")
    print(f"import numpy alone     median {numpy_ms:8.1f} ms   (floor of the line above)")


if __name__ == "__main__":
    main()
