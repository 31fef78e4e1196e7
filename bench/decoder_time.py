"""Issue 13: the SmolLM2-135M decoder in NumPy - load time, forward and cached-step time, memory.

    python bench/decoder_time.py            # 3 loads in fresh processes, 10 passes, 20 cached steps
    python bench/decoder_time.py --smoke    # one load, one short pass, one step (CI)

Prints:
- load (read the GGUF file + dequantize + build the tokenizer), once per process: targets < 5 s;
- the resident memory the loaded model adds (RSS after loading minus RSS before, both after
  importing numpy, gguf and tokenizers, so the libraries' own code is not counted; psutil): <= 600 MB;
  and the libraries' import cost beside it;
- one forward pass at 64 tokens with every attention intermediate kept: < 1.5 s; also at 128;
- one cached next-token step at position 64 (one query row per layer against the KV cache,
  plus the logits over the vocabulary): < 150 ms; the logits' share is printed beside it;
- the size of the trace of one pass (every kept array) and of the KV cache.

BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1 unless set): the same setting as the app and
tests. Times are medians (and minimum) over the repeats; on the shared two-core machine the
minimum is the better estimate of an unloaded run, the median of what a learner waits.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads BLAS; inherited by the load subprocesses

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import psutil  # noqa: E402
from timing import timed  # noqa: E402  (bench/ is on sys.path when a script runs)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attention_core.models import smollm2 as S  # noqa: E402

TEXT = (
    "Attention lets every token look back at the tokens before it. In a decoder the mask is causal, "
    "so each word can only use what came earlier, and the last position predicts the next word. "
) * 4


def _rss() -> int:
    gc.collect()
    return psutil.Process().memory_info().rss


def measure_load() -> dict:
    """Load once in this process: seconds and the RSS it adds."""
    import gguf  # noqa: F401  (the libraries are imported first: their code is not the model's memory)
    import tokenizers  # noqa: F401

    before = _rss()
    t0 = time.perf_counter()
    model = S.load_model()
    load_s = time.perf_counter() - t0
    after = _rss()
    return {
        "load_s": load_s,
        "rss_model_mb": (after - before) / 1e6,
        "weights_mb": model.weights.nbytes / 1e6,
    }


def trace_bytes(trace) -> int:
    return sum(
        getattr(layer, f).nbytes
        for layer in trace.layers
        for f in layer.__dataclass_fields__
        if isinstance(getattr(layer, f), np.ndarray)
    )


def fmt(times: list[float], unit: float = 1000.0, label: str = "ms") -> str:
    return f"median {statistics.median(times) * unit:.0f} {label}  min {min(times) * unit:.0f} {label}  ({len(times)} runs)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="one load, one short pass, one step (CI)")
    ap.add_argument("--child-load", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_load:
        print(json.dumps(measure_load()))
        return 0
    if not S.is_available():
        print(f"the decoder model is not installed: {S.INSTALL_COMMAND}")
        return 1

    import gguf  # noqa: F401
    import tokenizers  # noqa: F401

    rss_libs = _rss()
    loads = []
    if not args.smoke:  # fresh processes: each pays the whole load (the file is in the page cache)
        for _ in range(3):
            out = subprocess.run(
                [sys.executable, __file__, "--child-load"],
                capture_output=True,
                text=True,
                check=True,
                timeout=300,
            )
            loads.append(json.loads(out.stdout))
    here = measure_load()
    loads.append(here)
    model = S.load_model()

    n_fwd = 16 if args.smoke else 64
    enc = S.encode(TEXT, max_tokens=n_fwd, truncate=True, model=model)
    assert enc.n == n_fwd, enc.n
    fwd = timed(lambda: S.forward(enc.ids, model), 1 if args.smoke else 10)
    trace = S.forward(enc.ids, model)
    rss_with_trace = _rss()
    state = S.start_state(trace)
    token = S.pick_token(S.next_token_probs(state.logits))
    step = timed(lambda: S.decode_step(state, token, model), 1 if args.smoke else 20)
    x = np.ones(model.config.d_model, dtype=np.float32)
    logits = timed(lambda: S.output_logits(x, model.weights), 1 if args.smoke else 20)

    print(f"decoder: {S.MODEL_NAME}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    load_s = [entry["load_s"] for entry in loads]
    rss_mb = max(entry["rss_model_mb"] for entry in loads)
    print(
        f"load (read + dequantize + tokenizer)   median {statistics.median(load_s):.2f} s  min {min(load_s):.2f} s"
        f"  ({len(loads)} processes)"
    )
    print(
        f"resident memory of the loaded model    {rss_mb:.0f} MB  (weights arrays {here['weights_mb']:.0f} MB;"
        f" process RSS with numpy+gguf+tokenizers imported, before loading: {rss_libs / 1e6:.0f} MB)"
    )
    print(f"forward pass, n={n_fwd}, every step kept   {fmt(fwd)}")
    print(f"cached next-token step at n={n_fwd}       {fmt(step)}")
    print(f"  of which the output logits (49152)   {fmt(logits)}")
    print(f"trace of one pass at n={n_fwd}            {trace_bytes(trace) / 1e6:.1f} MB")
    print(f"KV cache at n={n_fwd}                     {state.cache_bytes:,} bytes")
    print(f"process RSS with one trace held        {rss_with_trace / 1e6:.0f} MB")
    if not args.smoke:
        enc128 = S.encode(TEXT, max_tokens=S.MAX_TOKENS, truncate=True, model=model)
        fwd128 = timed(lambda: S.forward(enc128.ids, model), 3)
        trace128 = S.forward(enc128.ids, model)
        print(f"forward pass, n={enc128.n}, every step kept  {fmt(fwd128)}")
        print(f"trace of one pass at n={enc128.n}           {trace_bytes(trace128) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
