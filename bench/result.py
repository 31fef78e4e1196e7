"""The end of a benchmark that prints one result: the machine's load average and whether it was a
smoke run join the result, which is printed as one JSON object or as the script's lines of text."""

from __future__ import annotations

import json
import os
from collections.abc import Callable


def print_result(result: dict, smoke: bool, as_json: bool, lines: Callable[[dict], list[str]]) -> None:
    """``lines(result)``: the text form (asked for only without ``as_json``); a smoke run's figures
    are said not to be a measurement."""
    result["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    result["smoke"] = smoke
    if as_json:
        print(json.dumps(result))
        return
    for line in lines(result):
        print(line)
    print(f"load average {result['loadavg']}" + ("  (smoke run: not a measurement)" if smoke else ""))
