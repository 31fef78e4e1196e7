"""``attention-lab lesson|scorm|quiz``: the files of the download buttons, for a teacher's scripts.

    attention-lab lesson --text "the cat sat" --lang ja --mask causal -o lesson.html
    attention-lab scorm --text "the cat sat" --questions 8 --pass-mark 70 -o lesson.zip
    attention-lab quiz --text "the cat sat" --format gift -o quiz.gift.txt

The sentence and the layer take the core's trace options (``--d-model``, ``--heads``, ``--mask``, …);
``--head`` and ``--cell I J`` choose what the lesson explains and the quiz asks. Bad input (settings
the core refuses, a head or cell outside the layer, a count or pass mark out of range, a file that
cannot be written): one ``error:`` line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attention_core.cli import add_trace_options, config_from_args
from attention_core.config import AttentionConfigError
from attention_core.trace import trace_text
from attention_lab.cli import _Parser
from attention_ui.i18n import LANGUAGES, Translator
from attention_ui.takehome import build, moodle


def _parser(command: str) -> argparse.ArgumentParser:
    ap = _Parser(prog=f"attention-lab {command}", description=__doc__.split("\n\n")[0])
    add_trace_options(ap, json_option=False)
    ap.add_argument("--lang", choices=LANGUAGES, default="en", help="the language of the file")
    ap.add_argument("--head", type=int, default=0, help="the head the lesson shows and the quiz asks about")
    ap.add_argument("--cell", type=int, nargs=2, metavar=("QUERY", "KEY"), help="the cell to explain")
    ap.add_argument("-o", "--output", type=Path, required=True, help="the file to write")
    if command in ("scorm", "quiz"):
        ap.add_argument("--questions", type=int, default=build.DEFAULT_COUNT, help="how many questions")
    if command == "scorm":
        ap.add_argument("--pass-mark", type=int, default=build.DEFAULT_PASS_MARK, help="percent, 0-100")
    if command == "quiz":
        ap.add_argument("--format", choices=moodle.FORMATS, required=True)
    return ap


def main(command: str, argv: list[str]) -> int:
    args = _parser(command).parse_args(argv)
    t = Translator(args.lang)
    try:
        trace = trace_text(args.text, config_from_args(args))
        if command == "lesson":
            data = build.playground_lesson(t, trace, args.text, args.head, args.cell).encode("utf-8")
        elif command == "scorm":
            data = build.scorm_zip(t, trace, args.text, args.head, args.cell, args.questions, args.pass_mark)
        else:
            text = build.quiz_file(t, trace, args.format, args.head, args.cell, args.questions)
            data = text.encode("utf-8")
        args.output.write_bytes(data)
    except (AttentionConfigError, ValueError, OSError) as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
    print(f"{args.output}: {len(data):,} bytes")
    return 0
