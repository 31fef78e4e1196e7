"""A benchmark that prints one result: its two common options (``--smoke``, a short run that checks
the script works, and ``--json``) and its end, where the machine's load average and the smoke flag
join the result, printed as one JSON object or as the script's lines of text."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable


def parser(doc: str, smoke_help: str) -> argparse.ArgumentParser:
    """The options :func:`print_result` reads; the script adds its own. ``doc``: the script's
    docstring, whose first line describes it."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--smoke", action="store_true", help=smoke_help)
    p.add_argument("--json", action="store_true")
    return p


def print_result(result: dict, args: argparse.Namespace, lines: Callable[[dict], list[str]]) -> None:
    """``lines(result)``: the text form (asked for only without ``--json``); a smoke run's figures
    are said not to be a measurement."""
    smoke = args.smoke
    result["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    result["smoke"] = smoke
    if args.json:
        print(json.dumps(result))
        return
    for line in lines(result):
        print(line)
    print(f"load average {result['loadavg']}" + ("  (smoke run: not a measurement)" if smoke else ""))
