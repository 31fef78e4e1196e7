"""Running ``python -m attention_core <command>`` in the test's own process (a subprocess costs ~0.7 s
of CPU here, and mutation testing only reaches code run in-process), and the grad command's JSON
contract (issue 36)."""

from __future__ import annotations

from attention_core import cli


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``cli.main(argv)``: its exit code (argparse's own errors and --help included), stdout, stderr."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exit_:
        code = exit_.code
    out = capsys.readouterr()
    return code, out.out, out.err


def grad_json_shapes(h: int, n: int, d: int, d_k: int, d_v: int) -> dict[str, tuple[int, ...]]:
    """The grad command's arrays in their JSON order, with their shapes."""
    return {
        "dW_Q": (h, d, d_k), "dW_K": (h, d, d_k), "dW_V": (h, d, d_v), "dW_O": (h * d_v, d), "dX": (n, d),
        "dQ": (h, n, d_k), "dK": (h, n, d_k), "dV": (h, n, d_v),
        "dweights": (h, n, n), "dscores": (h, n, n), "draw_scores": (h, n, n),
    }  # fmt: skip
