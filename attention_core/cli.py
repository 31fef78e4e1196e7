"""``python -m attention_core``: print the worked example, or trace your own sentence."""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from . import check_cli, cli_exercise, code_cli, decoder_cli, grad_cli, heads_cli, train_cli
from .config import MASK_KINDS, AttentionConfig, AttentionConfigError
from .example import worked_example_trace
from .export import print_result, trace_to_json
from .trace import AttentionTrace, trace_text

# The subcommands whose module adds its own parser and runs itself, in the order ``--help`` lists
# them (``example`` and ``trace`` are this module's).
_SUBCOMMANDS = {
    "grad": grad_cli,
    "train": train_cli,
    "exercise": cli_exercise,
    "decoder": decoder_cli,
    "heads": heads_cli,
    "code": code_cli,
    "check": check_cli,
}


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(2)


def _scale_arg(value: str) -> str | float:
    if value in ("sqrt", "none"):
        return value
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sqrt, none or a positive number, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(f"the divisor must be a positive number, got {value!r}")
    return number


def add_trace_options(
    tr: argparse.ArgumentParser, text: str | None = None, text_required: bool = True, json_option: bool = True
) -> None:
    """The sentence and the layer's settings (``trace``, ``grad``, ``check`` and ``code`` share them); with
    ``text``, --text may be left out and defaults to it; without ``text_required`` it defaults to None."""
    if text is not None:
        tr.add_argument("--text", default=text, help=f"the sentence (default: {text!r})")
    elif text_required:
        tr.add_argument("--text", required=True, help="the sentence")
    else:
        tr.add_argument("--text", default=None, help="the sentence")
    tr.add_argument("--d-model", type=int, default=AttentionConfig.d_model)
    tr.add_argument("--heads", type=int, default=AttentionConfig.heads)
    tr.add_argument("--d-k", type=int, default=None, help="default: d_model // heads")
    tr.add_argument("--d-v", type=int, default=None, help="default: d_model // heads")
    tr.add_argument("--mask", choices=MASK_KINDS, default="none")
    tr.add_argument("--pad", type=int, default=0, help="number of [PAD] tokens to append")
    tr.add_argument("--scale", type=_scale_arg, default="sqrt", help="sqrt, none or a divisor")
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--no-pe", action="store_true", help="no positional encoding")
    if json_option:
        tr.add_argument("--json", action="store_true", help="one JSON object instead of text")


def config_from_args(args: argparse.Namespace, scale: str | float | None = None) -> AttentionConfig:
    """The layer the options of :func:`add_trace_options` ask for (AttentionConfigError if refused);
    ``scale`` overrides ``--scale``."""
    return AttentionConfig(
        d_model=args.d_model,
        heads=args.heads,
        d_k=args.d_k,
        d_v=args.d_v,
        mask=args.mask,
        pad=args.pad,
        scale=args.scale if scale is None else scale,
        seed=args.seed,
        positional=not args.no_pe,
    )


def trace_from_args(args: argparse.Namespace) -> AttentionTrace:
    """The trace the options of :func:`add_trace_options` ask for (AttentionConfigError if refused)."""
    return trace_text(args.text, config_from_args(args))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m attention_core", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("example", help="print the reference notes' worked example (n=4, causal)")
    tr = sub.add_parser("trace", help="trace self-attention over your own sentence")
    add_trace_options(tr)
    for module in _SUBCOMMANDS.values():
        module.add_parser(sub)
    return parser


def _fmt(a: np.ndarray) -> str:
    with np.printoptions(precision=4, suppress=True, linewidth=120):
        return np.array2string(np.asarray(a), separator=", ")


def format_trace(trace: AttentionTrace) -> str:
    """Every step as readable text."""
    t = trace
    h = t.heads
    d_k, d_v = t.Q.shape[2], t.V.shape[2]
    lines = [f"tokens ({t.n}): " + " | ".join(f"{i}:{tok}" for i, tok in enumerate(t.tokens))]
    if t.config is not None:
        c = t.config.to_dict()
        lines.append("config: " + ", ".join(f"{k}={v}" for k, v in c.items()))
    if t.tokenization is not None and t.tokenization.truncated:
        lines.append(
            f"note: kept the first {len(t.tokens) - t.n_pad} of {t.tokenization.total_tokens} tokens"
        )
    lines += [
        f"\nX = token vector + position   {t.X.shape[0]}x{t.X.shape[1]}",
        _fmt(t.X),
        f"\nmask (1 = may attend)   {t.n}x{t.n}",
        _fmt(t.mask.astype(int)),
    ]
    for i in range(h):
        # Each step's label beside its matrix, one step per line: fmt: skip keeps the pairs together.
        lines += [
            f"\n===== head {i} =====",
            f"Q = X W_Q   {t.n}x{d_k}", _fmt(t.Q[i]),
            f"K = X W_K   {t.n}x{d_k}", _fmt(t.K[i]),
            f"V = X W_V   {t.n}x{d_v}", _fmt(t.V[i]),
            f"raw scores Q K^T   {t.n}x{t.n}", _fmt(t.scores_raw[i]),
            f"scaled scores (/ {t.divisor:.4g})   {t.n}x{t.n}", _fmt(t.scores_scaled[i]),
            "masked scores (-inf = masked)", _fmt(t.scores_masked[i]),
            "softmax weights (rows sum to 1)", _fmt(t.weights[i]),
            f"head output = weights V   {t.n}x{d_v}", _fmt(t.head_outputs[i]),
        ]  # fmt: skip
    lines += [
        f"\nconcat of {h} heads   {t.concat.shape[0]}x{t.concat.shape[1]}",
        _fmt(t.concat),
        f"\noutput = concat W_O   {t.output.shape[0]}x{t.output.shape[1]}",
        _fmt(t.output),
    ]
    if t.fully_masked_rows.any():
        rows = ", ".join(str(i) for i in np.flatnonzero(t.fully_masked_rows))
        lines.append(f"\nrows with every key masked (weights and output set to 0): {rows}")
    return "\n".join(lines)


def format_example() -> str:
    """The worked example, printed the way the notes print it, then every step in full."""
    t = worked_example_trace()
    w, out = t.weights[0], t.head_outputs[0]
    lines = [
        "Worked example: n=4, d_model=6, d_k=3, d_v=2, default_rng(0), one causal head, / sqrt(3)",
        f"{t.scores_masked[0].shape} {w.shape} {out.shape}",
        str(np.round(w[0], 6)),
        "",
        "weights at full precision:",
        np.array2string(w, precision=17, separator=", ", floatmode="unique"),
        "output (weights @ V) at full precision:",
        np.array2string(out, precision=17, separator=", ", floatmode="unique"),
        "",
        format_trace(t),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "example":
        print(format_example())
        return 0
    if args.command in _SUBCOMMANDS:
        return _SUBCOMMANDS[args.command].run(args)
    try:
        trace = trace_from_args(args)
    except AttentionConfigError as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
    return print_result(args.json, lambda: trace_to_json(trace), lambda: format_trace(trace))
