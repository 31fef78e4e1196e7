"""``python -m attention_core grad``: the backward pass of one layer on your own sentence.

    python -m attention_core grad --text TEXT [trace's options] [--target-seed S] [--json]

The loss is ``L = ½‖O − Y‖²`` against an invented target ``Y`` drawn from ``--target-seed``
(there is no right answer for a random layer). ``--json`` prints one object with the keys
:data:`GRAD_JSON_KEYS`; bad input ends with one ``error:`` line on stderr and exit code 2. A text
longer than the tokenizer keeps is cut, with a ``note:`` line on stderr saying how much was kept.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .backward import AttentionGrads, attention_grads
from .config import MAX_SEED, AttentionConfigError
from .export import print_result
from .tokenizer import MAX_INPUT_CHARS
from .trace import AttentionTrace

# loss, config, then the arrays: [h, d_model, d_k] x2, [h, d_model, d_v], [h*d_v, d_model], [n, d_model],
# [h, n, d_k] x2, [h, n, d_v], then [h, n, n] x3
GRAD_ARRAYS = ("dW_Q", "dW_K", "dW_V", "dW_O", "dX", "dQ", "dK", "dV", "dweights", "dscores", "draw_scores")
GRAD_JSON_KEYS = ("loss", "config", *GRAD_ARRAYS)


def add_parser(sub) -> None:
    from .cli import add_trace_options

    p = sub.add_parser("grad", help="the gradient of L = 1/2 ||O - Y||^2 through every step of the layer")
    add_trace_options(p)
    p.add_argument("--target-seed", type=int, default=0, help="seed of the invented target Y (default 0)")


def grads_to_json(trace: AttentionTrace, grads: AttentionGrads) -> dict:
    """The contract's object: keys exactly :data:`GRAD_JSON_KEYS` (every gradient is finite)."""
    config = trace.config.to_dict() if trace.config else {"divisor": trace.divisor}
    data: dict = {"loss": grads.loss, "config": config}
    for key in GRAD_ARRAYS:
        data[key] = np.asarray(getattr(grads, key)).tolist()
    return data


def _fmt(a: np.ndarray) -> str:
    with np.printoptions(precision=4, suppress=True, linewidth=120):
        return np.array2string(np.asarray(a), separator=", ")


def format_grads(trace: AttentionTrace, grads: AttentionGrads, target_seed: int) -> str:
    """Every gradient as readable text, from the output back to the input."""
    t, g = trace, grads
    lines = [
        f"tokens ({t.n}): " + " | ".join(f"{i}:{tok}" for i, tok in enumerate(t.tokens)),
        f"loss L = 1/2 ||O - Y||^2 = {g.loss:.6g}  (Y invented: standard normal, seed {target_seed})",
        f"\ndL/dW_O   {g.dW_O.shape[0]}x{g.dW_O.shape[1]}",
        _fmt(g.dW_O),
    ]
    for i in range(t.heads):
        lines += [
            f"\n===== head {i} =====",
            "dL/d(weights) (g)", _fmt(g.dweights[i]),
            "dL/d(scores), after the softmax Jacobian p * (g - sum p g)", _fmt(g.dscores[i]),
            f"dL/d(Q K^T), divided by {t.divisor:.4g}", _fmt(g.draw_scores[i]),
            "dL/dQ", _fmt(g.dQ[i]), "dL/dK", _fmt(g.dK[i]), "dL/dV", _fmt(g.dV[i]),
            "dL/dW_Q", _fmt(g.dW_Q[i]), "dL/dW_K", _fmt(g.dW_K[i]), "dL/dW_V", _fmt(g.dW_V[i]),
        ]  # fmt: skip
    lines += [f"\ndL/dX   {g.dX.shape[0]}x{g.dX.shape[1]}", _fmt(g.dX)]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from .cli import trace_from_args

    if not 0 <= args.target_seed <= MAX_SEED:
        sys.stderr.write(f"error: --target-seed must be between 0 and {MAX_SEED}, got {args.target_seed}\n")
        return 2
    try:
        trace = trace_from_args(args)
    except AttentionConfigError as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
    tok = trace.tokenization
    if tok is not None and tok.truncated:  # stderr: the JSON on stdout stays one object
        unread = (
            f"; the {tok.chars_cut} characters after the first {MAX_INPUT_CHARS} were not read"
            if tok.chars_cut
            else ""
        )
        sys.stderr.write(
            f"note: kept the first {len(trace.tokens) - trace.n_pad} of {tok.total_tokens} tokens{unread}\n"
        )
    grads = attention_grads(trace, args.target_seed)
    return print_result(
        args.json, lambda: grads_to_json(trace, grads), lambda: format_grads(trace, grads, args.target_seed)
    )
