"""The worker process of a training job: ``python -m attention_ui.training.worker``.

It reads one pickled ``(kind, payload)`` from stdin and writes pickled messages to stdout:
``("progress", rows, maps, label, fresh, steps)`` each time the core reports, then ``("done", result)`` or
``("failed", reason)``. Any further byte on stdin, or stdin closing (the server went away), asks the
run to stop; the core then ends the run at the next step and keeps what was trained. The process
runs at a lower priority (``nice``), so the server answers other students first.

A fresh interpreter, started by :mod:`.jobs` with :mod:`subprocess`: ``multiprocessing``'s spawn
would import the server's main module again, and Streamlit's main module is the page script.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading

import numpy as np

NICE = 10  # the worker's priority below the server's
EXPERIMENTS = ("sqrt_dk", "leaky_mask", "heads_specialise", "induction_layers", "positions")  # experiments.py


def run(kind: str, payload, send, should_stop):
    """The job itself, ``send`` receiving each message; returns nothing (the result is sent).
    An experiment trains several runs in turn: each new run's rows start again (``label`` names it)."""
    sent = {"label": None, "step": 0}

    def report(label, p) -> None:
        fresh = label != sent["label"]
        if fresh:
            sent["label"], sent["step"] = label, 0
        rows = [(k + 1, float(p.losses[k]), float(p.accuracy[k])) for k in range(sent["step"], p.step)]
        sent["step"] = p.step
        send(("progress", rows, np.array(p.attention), label, fresh, p.steps))

    if kind != "train" and kind not in EXPERIMENTS:
        send(("failed", f"unknown job kind {kind!r}"))
        return
    try:
        if kind == "train":
            from attention_core.training.train import train

            result = train(payload, on_progress=lambda p: report(None, p), should_stop=should_stop)
        else:
            from attention_core.training import experiments

            result = getattr(experiments, kind)(payload, on_progress=report, should_stop=should_stop)
        send(("done", result))
    except Exception as err:  # the page says the run failed; the server log gets the reason
        send(("failed", f"{type(err).__name__}: {err}"))


def preload() -> None:
    """Import the core before the job arrives: a spare worker (:mod:`.jobs` keeps one ready) then
    starts training at once, and the page's first curve update comes sooner."""
    import attention_core.training.train  # noqa: F401

    try:
        import attention_core.training.experiments  # noqa: F401
    except ImportError:
        pass


def main() -> None:
    try:
        os.nice(NICE)
    except OSError:
        pass
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but messages on the pipe
    preload()
    try:
        kind, payload = pickle.load(sys.stdin.buffer)
    except EOFError:  # a spare worker the server never used (it shut down)
        os._exit(0)
    stop = threading.Event()

    def watch() -> None:
        sys.stdin.buffer.read(1)  # a byte, or the end of the pipe
        stop.set()

    threading.Thread(target=watch, daemon=True).start()

    def send(msg) -> None:
        pickle.dump(msg, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()

    run(kind, payload, send, stop.is_set)
    out.flush()
    os._exit(0)  # at once: the stdin watcher may still be blocked in a read (no clean-up is left)


if __name__ == "__main__":
    main()
