"""attention_ui/per_process.py: built once per key, however many threads ask at once."""

from __future__ import annotations

import threading
import time

from attention_ui import per_process


def test_a_value_is_built_once_per_key_and_shared() -> None:
    calls = []

    def build(name: str):
        calls.append(name)
        time.sleep(0.01)  # threads asking meanwhile wait for this build, not one of their own
        return [name]

    got: list = []
    threads = [threading.Thread(target=lambda: got.append(per_process.built(("t", "a"), lambda: build("a"))))
               for _ in range(8)]  # fmt: skip
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert calls == ["a"] and all(g is got[0] for g in got)
    assert per_process.built(("t", "b"), lambda: build("b")) == ["b"] and calls == ["a", "b"]
    assert per_process.built(("t", "a"), lambda: build("again")) is got[0]
