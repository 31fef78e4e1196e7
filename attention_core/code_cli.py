"""``python -m attention_core code``: the layer as a NumPy program you can run.

    python -m attention_core code --text TEXT [trace's options] [--trap NAME] [--notebook FILE [--lang ja]]
    python -m attention_core code --example [--trap NAME] [--notebook FILE [--lang ja]]

Prints the program that computes every step for the sentence and settings (``--example``: the reference
notes' worked example, which prints the notes' two lines when run); ``--trap`` writes it with one of the
catalogue's traps (:data:`codegen.MUTATIONS`). ``--notebook FILE`` writes the Jupyter notebook the
playground offers instead, its explanations in ``--lang``. Bad input ends with one ``error:`` line on
stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import sys

from .codegen import MUTATION_NAMES, MutationNotApplicable, example_program, layer_program
from .config import AttentionConfigError

LANGS = ("en", "ja")


def add_parser(sub) -> None:
    from .cli import add_trace_options

    p = sub.add_parser("code", help="print the NumPy program of the layer (or write it as a notebook)")
    add_trace_options(p, text_required=False, json_option=False)
    p.add_argument("--example", action="store_true", help="the reference notes' worked example instead")
    p.add_argument(
        "--trap", choices=MUTATION_NAMES, default=None, metavar="NAME", help="write it with this trap"
    )
    p.add_argument(
        "--notebook", metavar="FILE", default=None, help="write a Jupyter notebook (.ipynb) instead"
    )
    p.add_argument("--lang", choices=LANGS, default="en", help="the notebook's language (default en)")


def _fail(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    return 2


def run(args: argparse.Namespace) -> int:
    from .cli import trace_from_args

    if args.example == (args.text is not None):
        return _fail("give either --text TEXT or --example")
    try:
        if args.example:
            from .example import worked_example_trace

            program, trace = example_program(args.trap), worked_example_trace()
        else:
            trace = trace_from_args(args)
            program = layer_program(trace.config, trace.tokens[: trace.n - trace.n_pad], args.trap)
    except (AttentionConfigError, MutationNotApplicable) as err:
        return _fail(str(err))
    if args.notebook is None:
        sys.stdout.write(program.source)
        return 0
    # The notebook is the app's own (its words are the app's message catalogs): imported only here,
    # so the rest of the command line needs neither nbformat nor the app's package.
    from attention_ui.i18n import Translator
    from attention_ui.program.notebook import notebook_bytes

    data = notebook_bytes(program, trace, Translator(args.lang), example=args.example)
    try:
        with open(args.notebook, "wb") as f:
            f.write(data)
    except OSError as err:
        return _fail(f"cannot write {args.notebook}: {err.strerror or err}")
    sys.stderr.write(f"wrote {args.notebook} ({len(data)} bytes)\n")
    return 0
