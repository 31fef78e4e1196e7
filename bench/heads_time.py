"""Issue 26: the heads lab on SmolLM2-135M - what each view costs, and the measured rank correlation.

    python bench/heads_time.py            # every figure, one full 270-head sweep at 32 tokens
    python bench/heads_time.py --smoke    # a short text, one ablation, a 9-head sweep (CI)
    python bench/heads_time.py --model gemma3   # the same on Gemma 3 270M (72 heads; <bos> first)

Prints, at 32 tokens of the project's own text:
- the cached pass (run_from keeping the residual stream) against llama.run_layers on the same ids
  (the pass the decoder page already makes), and the memory the stream adds beyond the attention trace;
- the logit lens and the attribution from that pass (no forward pass: only the read-outs);
- one ablation (worst case: layer 0, all 30 layers rerun; and a middle layer): target < 1.5 s;
- the sweep of all 270 heads, each rerun from its own layer: target < 90 s;
- Spearman's rank correlation between each head's pattern sharpness and its ablation KL;
- induction at 25 + 25 tokens (one pass with traces, losses at every position): target < 3 s;
- the mask experiment (three passes over the long text, no trace kept).

BLAS single-threaded (as in the app and the tests). Times: median and minimum over the repeats.
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

import numpy as np  # noqa: E402
from timing import timed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attention_core.labs import heads as H  # noqa: E402
from attention_core.models import llama  # noqa: E402


def fmt(ts: list[float]) -> str:
    return f"median {statistics.median(ts) * 1000:.0f} ms, min {min(ts) * 1000:.0f} ms (n={len(ts)})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--model", choices=H.MODELS, default="smollm2")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    t0 = time.perf_counter()
    model = H.load_model(args.model)
    print(f"model {model.name}: loaded in {time.perf_counter() - t0:.1f} s")
    w = model.weights
    c = model.config
    n = 8 if args.smoke else 32
    ids = model.tokenize(H.LONG_TEXT)[:n]
    reps = 1 if args.smoke else args.reps
    print(f"tokens: {n}")
    print("plain pass (llama.run_layers):", fmt(timed(lambda: llama.run_layers(np.array(ids), w), reps)))
    print("cached pass (run_from, stream kept):", fmt(timed(lambda: H.run_pass(ids, model), reps)))
    p = H.run_pass(ids, model)
    trace_bytes = sum(
        getattr(t, f).nbytes
        for t in p.run.layers
        for f in t.__dataclass_fields__
        if isinstance(getattr(t, f), np.ndarray)
    )
    print(
        f"memory: attention trace {trace_bytes / 1e6:.2f} MB; stream + FFN outputs add {p.extra_bytes / 1e6:.2f} MB"
    )
    print("logit lens from the pass:", fmt(timed(lambda: H.logit_lens(p, w), reps)))
    print(
        "attribution from the pass:", fmt(timed(lambda: H.attribution(p, w, int(np.argmax(p.logits))), reps))
    )
    mid = c.n_layers // 2
    print(
        f"one ablation, layer 0 ({c.n_layers} layers rerun):", fmt(timed(lambda: H.ablate(p, w, 0, 0), reps))
    )
    print(
        f"one ablation, layer {mid} ({c.n_layers - mid} layers rerun):",
        fmt(timed(lambda: H.ablate(p, w, mid, 0, "mean"), reps)),
    )
    sharp = np.stack([H.pattern_sharpness(t.weights) for t in p.run.layers])
    if args.smoke:
        t0 = time.perf_counter()
        res = [H.ablate(p, w, 0, h) for h in range(model.config.n_heads)]
        print(f"sweep of layer 0's {c.n_heads} heads: {time.perf_counter() - t0:.2f} s")
    else:
        t0 = time.perf_counter()
        res = list(H.sweep(p, w))
        elapsed = time.perf_counter() - t0
        maps = H.sweep_maps(res, model.config)
        print(f"sweep of all {len(res)} heads: {elapsed:.1f} s (target < 90 s)")
        rho = H.spearman(sharp, maps.kl)
        print(f"Spearman(pattern sharpness, ablation KL) over {len(res)} heads at {n} tokens: {rho:.3f}")
        first = np.stack([t.weights[:, 1:, 0].mean(axis=-1) for t in p.run.layers])
        print(f"Spearman(weight on the first token, ablation KL): {H.spearman(first, maps.kl):.3f}")
        top = np.argsort(maps.kl.ravel())[::-1][:5]
        print(
            "largest KL heads:",
            [(int(i // c.n_heads), int(i % c.n_heads), round(float(maps.kl.ravel()[i]), 4)) for i in top],
        )
    length = 6 if args.smoke else 25
    print(f"induction {length} + {length}:", fmt(timed(lambda: H.induction(model, length, 0), reps)))
    ind = H.induction(model, length, 0)
    best = np.unravel_index(np.argmax(ind.induction), ind.induction.shape)
    print(f"  top induction head {best}, score {ind.induction.max():.3f}; loss first {ind.loss_first:.2f}, "
          f"second {ind.loss_second:.2f}")  # fmt: skip
    if not args.smoke:
        long_ids = model.tokenize(H.LONG_TEXT)
        t0 = time.perf_counter()
        exp = H.mask_experiment(long_ids, w, H.DEFAULT_WINDOW)
        print(f"mask experiment, {len(long_ids)} tokens, W = {exp.window}: {time.perf_counter() - t0:.1f} s")
        for run in H.MASK_RUNS:
            print(f"  {run}: mean loss beyond the window {exp.mean_beyond(run):.3f}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
