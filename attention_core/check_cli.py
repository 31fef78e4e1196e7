"""``python -m attention_core check FILE.py [trace options]``: check your own NumPy attention.

The same check as the page's: the file runs in the sandbox's worker process on your sentence and
the hidden cases, and the report says, per function and case, pass or fail, where a failure first
differs and which known trap it is. Exit code 0 when every function passes on every case, 1 when
something fails (a wrong value, an error in your code, a time or memory limit), 2 when no verdict
can be given (no such file, options the core refuses, code the policy does not run, none of the
functions defined, or no sandbox on this machine).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .codecheck.policy import MAX_SOURCE_CHARS

DEFAULT_TEXT = "the cat sat on the mat"


def add_parser(sub: argparse._SubParsersAction) -> None:
    from .cli import add_trace_options

    ck = sub.add_parser(
        "check",
        help="check your own attention(X, W_Q, W_K, W_V, mask, d_k) or step functions, in a sandbox",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ck.add_argument("file", help="a Python file defining attention(...) and/or the step functions")
    add_trace_options(ck, text=DEFAULT_TEXT)


def run(args: argparse.Namespace) -> int:
    from .cli import config_from_args
    from .codecheck.check import check
    from .codecheck.report import report_text
    from .codecheck.sandbox import SandboxUnavailable
    from .config import AttentionConfigError

    try:
        source = Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        sys.stderr.write(f"error: cannot read {args.file}: {err}\n")
        return 2
    if len(source) > MAX_SOURCE_CHARS:
        sys.stderr.write(f"error: {args.file} is longer than {MAX_SOURCE_CHARS} characters\n")
        return 2
    try:
        config = config_from_args(args, scale="sqrt")  # the contract divides by √d_k
        report = check(source, args.text, config)
    except AttentionConfigError as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
    except SandboxUnavailable as err:
        sys.stderr.write(f"error: the sandbox could not start on this machine: {err}\n")
        return 2
    print(report_text(report))
    if report.verdict == "pass":
        return 0
    return 2 if report.verdict in ("refused", "nothing") else 1
