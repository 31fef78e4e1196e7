"""Issue 25: Gemma 3 270M in NumPy - load time, full passes at 64 and 1,024 tokens, a cached step, memory.

    python bench/gemma3_time.py            # 2 loads in fresh processes, passes, cached steps, both decoders
    python bench/gemma3_time.py --smoke    # one load, one short pass, one step

Prints (targets from the issue):
- load (read the GGUF file + dequantize + build the tokenizer), once per process: < 8 s; and its
  parts, timed in a second fresh process that runs the same steps one by one;
- the resident memory the loaded model adds (RSS after loading minus RSS before, both after
  importing numpy and gguf; psutil): <= 700 MB;
- one full pass with every intermediate kept at 64 tokens: < 1.5 s; at 1,024 tokens (weights
  only, as the page keeps it at that length): < 20 s; the trace's size at 64, 128 and 1,024;
- one cached next-token step (262,144 logits) at position 64: < 250 ms; also at 1,023, past the
  window, with the cache's bytes per layer kind (local layers stop at 512 tokens);
- SmolLM2 and Gemma loaded in one process: <= 1.3 GB added.

BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1 unless set), as in the app and the tests. The
machine is shared: the load average is printed with the figures; minimum times are the better
estimate of an unloaded run, medians what a learner waits on this machine now.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads BLAS; inherited by the load subprocesses

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from decoder_bench import SAMPLE_TEXT, child, fmt, load_line, load_once, rss, step_times  # noqa: E402  (puts the repository on sys.path)
from timing import timed  # noqa: E402  (bench/ is on sys.path when a script runs)

from attention_core.models import gemma3 as G  # noqa: E402

TEXT = SAMPLE_TEXT + "注意機構では、各トークンがそれ以前のトークンを振り返って読みます。"


def _libs(smollm2: bool = False) -> None:
    """Import the reader libraries first: their own code is not the model's memory. Gemma needs only
    ``gguf`` (its tokenizer is plain Python); SmolLM2's tokenizer is a ``tokenizers`` one."""
    import gguf  # noqa: F401

    if smollm2:
        import tokenizers  # noqa: F401


def measure_load() -> dict:
    """Load once in this process: seconds and the RSS it adds."""
    _libs()
    return load_once(G.load_model)


def measure_load_parts() -> dict:
    """The steps of ``load_model`` one by one (same functions), in a fresh process."""
    from attention_core.models import gguf_file, llama, spm_bpe

    _libs()
    out = {}
    t = time.perf_counter()
    path = G.model_path()
    out["find_file_s"] = time.perf_counter() - t
    t = time.perf_counter()
    reader = gguf_file.open_reader(path)
    meta = gguf_file.read_metadata(reader)
    out["read_metadata_s"] = time.perf_counter() - t
    t = time.perf_counter()
    llama.weights_from_gguf(reader, G.config_from_metadata(meta))
    out["dequantize_s"] = time.perf_counter() - t
    t = time.perf_counter()
    spm_bpe.build_tokenizer(
        meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"], meta["tokenizer.ggml.token_type"]
    )
    out["tokenizer_s"] = time.perf_counter() - t
    return out


def _child(flag: str) -> dict:
    return child(__file__, flag, 600)


def measure_both() -> dict:
    """SmolLM2 and Gemma loaded in one process, one short pass each: the RSS added."""
    from attention_core.models import smollm2 as S

    _libs(smollm2=True)
    before = rss()
    S.load_model()
    G.load_model()
    S.run_text("The cat sat on the mat.")
    G.run_text("The cat sat on the mat.")
    return {"rss_both_mb": (rss() - before) / 1e6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="one load, one short pass, one step")
    ap.add_argument("--child-load", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child-parts", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child-both", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_load or args.child_parts or args.child_both:
        fn = measure_load if args.child_load else measure_load_parts if args.child_parts else measure_both
        print(json.dumps(fn()))
        return 0
    if not G.is_available():
        print(f"Gemma 3 is not installed: {G.INSTALL_COMMAND}")
        return 1
    print(f"decoder: {G.MODEL_NAME}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    print(
        f"load average at start (1, 5, 15 min): {', '.join(f'{v:.1f}' for v in os.getloadavg())}  (2 cores)"
    )
    _libs()
    rss_libs = rss()
    loads = [] if args.smoke else [_child("--child-load") for _ in range(2)]
    parts = None if args.smoke else _child("--child-parts")
    here = measure_load()
    loads.append(here)
    model = G.load_model()

    print(load_line(loads))
    if parts:
        print("  parts: " + ", ".join(f"{k[:-2].replace('_', ' ')} {v:.2f} s" for k, v in parts.items()))
    print(
        f"resident memory of the loaded model    {max(e['rss_model_mb'] for e in loads):.0f} MB  (weights arrays "
        f"{here['weights_mb']:.0f} MB; RSS with numpy+gguf imported, before: {rss_libs / 1e6:.0f} MB)"
    )

    long_enc = G.encode(TEXT * 40, max_tokens=G.MAX_TOKENS, truncate=True, model=model)  # 1,024, BOS included
    n_short = 16 if args.smoke else 64
    short_ids = long_enc.ids[:n_short]
    fwd = timed(lambda: G.forward(short_ids, model, keep="all"), 1 if args.smoke else 5)
    trace = G.forward(short_ids, model, keep="all")
    print(f"full pass, n={n_short}, every intermediate    {fmt(fwd)}  trace {trace.nbytes / 1e6:.1f} MB")
    _state, step, logits = step_times(G, trace, model, 1 if args.smoke else 10)
    print(f"cached next-token step at n={n_short}        {fmt(step)}")
    print(f"  of which the output logits (262144)  {fmt(logits)}")
    if args.smoke:
        return 0

    ids128 = long_enc.ids[:128]
    t128 = G.forward(ids128, model, keep="all")
    print(f"trace at n=128, every intermediate     {t128.nbytes / 1e6:.1f} MB")
    del t128
    before_long = rss()
    long_times = timed(lambda: G.forward(long_enc.ids, model), 2)
    long_trace = G.forward(long_enc.ids, model)
    rss_long = rss()
    print(
        f"full pass, n={long_enc.n}, weights kept ({long_trace.keep})  {fmt(long_times, 1.0, 's')}  "
        f"trace {long_trace.nbytes / 1e6:.0f} MB (RSS +{(rss_long - before_long) / 1e6:.0f} MB while held)"
    )
    long_state = G.start_state(G.forward(long_enc.ids[:-1], model))
    long_step = timed(lambda: G.decode_step(long_state, long_enc.ids[-1], model), 5)
    kinds = G.decode_step(long_state, long_enc.ids[-1], model).cache_bytes_by_kind
    print(f"cached next-token step at n={long_enc.n - 1}      {fmt(long_step)}")
    print(
        f"KV cache at n={long_enc.n}: local layers {kinds['local']:,} bytes (15 layers x 512 tokens), "
        f"global layers {kinds['global']:,} bytes (3 layers x {long_enc.n} tokens)"
    )
    del long_trace
    both = _child("--child-both")
    print(f"SmolLM2 + Gemma 3 in one process       {both['rss_both_mb']:.0f} MB added (one short pass each)")
    print(f"load average at end (1, 5, 15 min): {', '.join(f'{v:.1f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
