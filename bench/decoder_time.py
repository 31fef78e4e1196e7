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
import json  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
from decoder_bench import SAMPLE_TEXT, child, fmt, load_line, load_once, rss, step_times  # noqa: E402  (puts the repository on sys.path)
from timing import timed  # noqa: E402  (bench/ is on sys.path when a script runs)

from attention_core.models import smollm2 as S  # noqa: E402

TEXT = SAMPLE_TEXT * 4


def measure_load() -> dict:
    """Load once in this process: seconds and the RSS it adds."""
    import gguf  # noqa: F401  (the libraries are imported first: their code is not the model's memory)
    import tokenizers  # noqa: F401

    return load_once(S.load_model)


def trace_bytes(trace) -> int:
    return sum(
        getattr(layer, f).nbytes
        for layer in trace.layers
        for f in layer.__dataclass_fields__
        if isinstance(getattr(layer, f), np.ndarray)
    )


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

    rss_libs = rss()
    loads = []
    if not args.smoke:  # fresh processes: each pays the whole load (the file is in the page cache)
        loads += [child(__file__, "--child-load", 300) for _ in range(3)]
    here = measure_load()
    loads.append(here)
    model = S.load_model()

    n_fwd = 16 if args.smoke else 64
    enc = S.encode(TEXT, max_tokens=n_fwd, truncate=True, model=model)
    assert enc.n == n_fwd, enc.n
    fwd = timed(lambda: S.forward(enc.ids, model), 1 if args.smoke else 10)
    trace = S.forward(enc.ids, model)
    rss_with_trace = rss()
    state, step, logits = step_times(S, trace, model, 1 if args.smoke else 20)

    print(f"decoder: {S.MODEL_NAME}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    rss_mb = max(entry["rss_model_mb"] for entry in loads)
    print(load_line(loads))
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
