"""Issue 33: where the decoder page's long text (Gemma 3, 512 to 1,024 tokens) spends its time.

    python bench/decoder_long_text.py [--lang ja|en] [--repeat 3]

Prints, for the page's long preset (attention_ui.decoder.gemma_view.long_preset): the tokens, and the
CPU seconds (time.process_time, minimum and median of the repeats) of each part of a run: tokenizing,
the full pass (weights kept only, as the page keeps a long text), the pass's softmax alone, the
overview grid's four statistics, and one weight map as the page sends it (a Plotly heatmap of n × n
cells turned into JSON). BLAS single-threaded, as in the app. The machine is shared: the load
average is printed with the figures.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from attention_core import steps  # noqa: E402
from attention_core.labs import decoder as lab_decoder  # noqa: E402
from attention_core.models import gemma3  # noqa: E402


def cpu(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times), statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", default="ja", choices=("ja", "en"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not gemma3.is_available():
        print("Gemma 3 270M is not installed:", gemma3.INSTALL_COMMAND)
        return
    from attention_ui.decoder.gemma_view import long_preset

    model = gemma3.load_model()
    text = long_preset(args.lang)
    enc = gemma3.encode(text, max_tokens=gemma3.MAX_TOKENS, truncate=True, model=model)
    trace = gemma3.forward(enc.ids, model, labels=enc.labels)
    n, h = trace.n, trace.config.n_heads
    rng = np.random.default_rng(0)
    scores = np.where(np.tril(np.ones((n, n), bool)), rng.normal(size=(h, n, n)).astype(np.float32), -np.inf)
    rows = [
        ("encode", lambda: gemma3.encode(text, max_tokens=gemma3.MAX_TOKENS, truncate=True, model=model)),
        ("full pass (18 layers, weights kept)", lambda: gemma3.forward(enc.ids, model, labels=enc.labels)),
        ("softmax of one layer's [4, n, n] scores (x 18 in a pass)", lambda: steps.softmax(scores)),
        ("overview grid, 4 statistics", lambda: [lab_decoder.layer_head_grid(trace, s) for s in lab_decoder.HEAD_STATS]),
        ("one weight map as JSON (n x n heatmap)", lambda: _heatmap_json(trace.layers[0].weights[0], trace.labels)),
    ]  # fmt: skip
    print(f"long preset ({args.lang}): {len(text):,} characters, {n} tokens; load average {os.getloadavg()}")
    for name, fn in rows:
        lo, med = cpu(fn, args.repeat)
        print(f"{name:58s} CPU min {lo:6.2f} s  median {med:6.2f} s")


def _heatmap_json(weights: np.ndarray, labels) -> str:
    import plotly.graph_objects as go

    fig = go.Figure(go.Heatmap(z=weights, x=list(range(len(labels))), y=list(range(len(labels)))))
    return fig.to_json()


if __name__ == "__main__":
    main()
