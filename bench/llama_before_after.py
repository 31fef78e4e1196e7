"""The decoder's full pass and one KV-cached step, this checkout's core against another's, in one process.

    python bench/llama_before_after.py --before DIR                  # SmolLM2-135M, 64 tokens, 20 rounds
    python bench/llama_before_after.py --before DIR --model gemma3   # Gemma 3 270M
    python bench/llama_before_after.py --before . --smoke            # one round against itself (CI)

For a change to attention_core that must not change the numbers nor slow the decoder (issue 46: the
layer loop written once). ``DIR`` is another checkout of the project (``git worktree add DIR main``);
its ``attention_core`` is imported beside this one's under another name, the model is loaded once
(by this checkout) and both cores run on the same weights and the same 64 tokens: ``run_layers``
(every step kept) and ``decode_layers`` (one token at position 64 against the pass's cache).

Prints whether the two give bit-for-bit the same logits (pass and step), then per side the median and
the minimum time of the pass and of the step. The two sides alternate round by round (AB, BA, ...),
so a load that comes and goes on a shared machine falls on both alike; the minimum is the better
estimate of an unloaded run. BLAS runs single-threaded, as in the app. Exit code 1 when the logits
differ.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads BLAS

import argparse  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from decoder_bench import SAMPLE_TEXT  # noqa: E402  (bench/ is on sys.path when a script runs)

from attention_core import kv_cache  # noqa: E402
from attention_core.models import llama  # noqa: E402

N_TOKENS = 64
BEFORE_NAME = "attention_core_before"


def import_core(checkout: Path):
    """``attention_core.models.llama`` and ``attention_core.kv_cache`` of another checkout, imported
    as the package :data:`BEFORE_NAME` (its imports are relative, so it never mixes with ours)."""
    pkg = checkout / "attention_core"
    spec = importlib.util.spec_from_file_location(
        BEFORE_NAME, pkg / "__init__.py", submodule_search_locations=[str(pkg)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[BEFORE_NAME] = module
    spec.loader.exec_module(module)
    return importlib.import_module(f"{BEFORE_NAME}.models.llama"), importlib.import_module(
        f"{BEFORE_NAME}.kv_cache"
    )


def cache_from(kv, traces):
    """The KV cache a full pass leaves (each layer's K and V), in that core's own types."""
    return kv.KVCache(tuple(kv.LayerCache(K=t.K, V=t.V) for t in traces))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="the other checkout's root folder")
    ap.add_argument("--model", choices=("smollm2", "gemma3"), default="smollm2")
    ap.add_argument("--rounds", type=int, default=20, help="timed rounds per side")
    ap.add_argument("--smoke", action="store_true", help="one round (CI)")
    args = ap.parse_args(argv)
    M = importlib.import_module(f"attention_core.models.{args.model}")
    if not M.is_available():
        print(f"the model is not installed: {M.INSTALL_COMMAND}")
        return 1
    before_llama, before_kv = import_core(args.before.resolve())
    model = M.load_model()
    w = model.weights
    ids = np.array(M.encode(SAMPLE_TEXT * 4, max_tokens=N_TOKENS, truncate=True, model=model).ids)
    token = int(ids[0])

    sides = {}
    for name, L, kv in (("before", before_llama, before_kv), ("after", llama, kv_cache)):
        traces, logits = L.run_layers(ids, w)
        cache = cache_from(kv, traces)
        sides[name] = (L, cache, logits, L.decode_layers(token, cache, w)[2])
    same = all(np.array_equal(sides["before"][k], sides["after"][k]) for k in (2, 3))
    print(f"{M.MODEL_NAME}, {len(ids)} tokens, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    print(f"the same logits, bit for bit (pass and step): {'yes' if same else 'NO'}")

    times: dict[str, list[float]] = {f"{part} {name}": [] for part in ("pass", "step") for name in sides}
    rounds = 1 if args.smoke else args.rounds
    for r in range(rounds):
        for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
            L, cache, _, _ = sides[name]
            t0 = time.perf_counter()
            L.run_layers(ids, w)
            t1 = time.perf_counter()
            L.decode_layers(token, cache, w)
            t2 = time.perf_counter()
            times[f"pass {name}"].append(t1 - t0)
            times[f"step {name}"].append(t2 - t1)
    print(
        f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; {rounds} rounds, alternating"
    )
    for label, values in times.items():
        print(
            f"{label:<12} median {statistics.median(values) * 1000:7.1f} ms  min {min(values) * 1000:7.1f} ms"
        )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
