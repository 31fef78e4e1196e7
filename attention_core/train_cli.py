"""``python -m attention_core train``: train the training lab's tiny Transformer on one task.

    python -m attention_core train --task {previous,reverse,sort,induction,text} [--text T]
        [--layers L] [--heads H] [--d-model D] [--d-k K] [--steps N] [--lr LR] [--seed S]
        [--scale {sqrt,none,<divisor>}] [--mask {causal,none}] [--no-positions] [--ffn] [--json]

``--steps`` defaults to the task's own number (:data:`~attention_core.training.train.DEFAULT_STEPS`);
``--mask`` to the task's own mask (causal for previous, induction and text; none for reverse and
sort); ``--d-k`` to d_model / heads. ``--json`` prints one object with the keys
:data:`TRAIN_JSON_KEYS`: besides the curves and the final maps on the sample (``sample``, its
tokens), the maps on the repeated sample (``repeated``, ``repeated_attention``) from which the
induction and previous-token scores are computed, so anyone can compute them again. Bad input ends
with one ``error:`` line on stderr and exit code 2; ``--text`` without ``--task text`` is ignored
with a ``warning:`` line on stderr.
"""

from __future__ import annotations

import argparse
import sys

TRAIN_JSON_KEYS = (
    "losses", "accuracy", "final_accuracy", "final_loss", "induction", "previous_token", "sample", "attention",
    "repeated", "repeated_attention", "config", "seconds",
)  # fmt: skip


def add_parser(sub) -> None:
    from .cli import _scale_arg
    from .training.tasks import TASKS
    from .training.train import TrainSettings

    p = sub.add_parser("train", help="train a tiny Transformer in NumPy and print its curves and maps")
    p.add_argument("--task", choices=TASKS, default="previous")
    p.add_argument("--text", default="", help="the text for --task text (Japanese welcome)")
    p.add_argument("--layers", type=int, default=TrainSettings.layers)
    p.add_argument("--heads", type=int, default=TrainSettings.heads)
    p.add_argument("--d-model", type=int, default=TrainSettings.d_model)
    p.add_argument("--d-k", type=int, help="per head (d_v the same); default: d_model / heads")
    p.add_argument("--steps", type=int, default=None, help="default: the task's own number")
    p.add_argument("--lr", type=float, default=TrainSettings.lr)
    p.add_argument("--seed", type=int, default=TrainSettings.seed)
    p.add_argument("--scale", type=_scale_arg, default="sqrt", help="sqrt, none or a divisor")
    p.add_argument("--mask", choices=("causal", "none"), default=None, help="default: the task's own")
    p.add_argument("--no-positions", action="store_true", help="no position embedding")
    p.add_argument("--ffn", action="store_true", help="add an FFN (Pre-LN) to every layer")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")


def run_json(run) -> dict:
    """The contract's object for a finished run: keys exactly :data:`TRAIN_JSON_KEYS`. ``induction``
    is the mean of ``repeated_attention[l, h, i, i − m + 1]`` over ``i = m … 2m − 1`` and
    ``previous_token`` that of ``[l, h, i, i − 1]`` over ``i = 1 … 2m − 1`` (``2m = len(repeated)``)."""
    return {
        "losses": run.losses.tolist(),
        "accuracy": run.accuracy.tolist(),
        "final_accuracy": run.final_accuracy,
        "final_loss": run.final_loss,
        "induction": run.induction.tolist(),
        "previous_token": run.previous_token.tolist(),
        "sample": [run.task.labels_in[int(i)] for i in run.sample],
        "attention": run.attention.tolist(),
        "repeated": [run.task.labels_in[int(i)] for i in run.repeated],
        "repeated_attention": run.repeated_attention.tolist(),
        "config": run.settings.to_dict(),
        "seconds": run.seconds,
    }


def format_run(data: dict) -> str:
    c = data["config"]
    losses, acc = data["losses"], data["accuracy"]
    lines = [
        f"task {c['task']}: {c['layers']} layer(s), {c['heads']} head(s), d_model {c['d_model']}, d_k {c['d_k']}, "
        f"mask {c['mask']}, divisor {c['divisor']:.4g}, positions {'on' if c['positions'] else 'off'}, "
        f"FFN {'on' if c['ffn'] else 'off'}, lr {c['lr']:g}, seed {c['seed']}",
        f"{len(losses)} steps in {data['seconds']:.2f} s: loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
        f"held-out accuracy {acc[-1]:.3f}; final accuracy {data['final_accuracy']:.4f}",
    ]
    for name, key in (("induction", "induction"), ("previous-token", "previous_token")):
        grid = data[key]
        score, layer, head = max((v, li, h) for li, row in enumerate(grid) for h, v in enumerate(row))
        lines.append(f"strongest {name} head: layer {layer}, head {head} (score {score:.3f})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from .export import print_result
    from .training.train import TrainSettings, TrainSettingsError, train

    try:
        settings = TrainSettings(
            task=args.task, text=args.text if args.task == "text" else "", layers=args.layers, heads=args.heads,
            d_model=args.d_model, d_k=args.d_k, steps=args.steps, lr=args.lr, seed=args.seed, scale=args.scale,
            mask=args.mask, positions=not args.no_positions, ffn=args.ffn,
        )  # fmt: skip
    except TrainSettingsError as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
    if args.text and args.task != "text":
        sys.stderr.write(f"warning: --text is used only by --task text; ignored for --task {args.task}\n")
    data = run_json(train(settings))
    return print_result(args.json, lambda: data, lambda: format_run(data))
