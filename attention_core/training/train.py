"""Train the tiny Transformer on one task: the settings, the loop, and the frozen record of a run.

Randomness comes from ``seed`` only: the weights from ``default_rng((seed, 0))``, the training
batches from ``(seed, 1)``, the held-out batch from ``(seed, 2)``, the sample inputs from
``(seed, 3)``, the final accuracy's sequences from ``(seed, 4)``. The same settings therefore give the same losses, to the bit, on the same machine.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..arrays import read_only
from ..config import MAX_DIVISOR, MAX_SEED, MIN_DIVISOR, HeadWidth
from ..labs.heads import induction_scores, previous_token_scores
from ..steps import build_mask
from .model import ModelShape, Params, accuracy, backward, cross_entropy, forward, init_model, logits_of
from .optim import Adam
from .tasks import ALL_TASKS, TASKS, Task, TaskError, make_task

MAX_LAYERS = 2
MAX_HEADS = 4
D_MODEL_RANGE = (4, 64)
MAX_D_K = 64
MAX_STEPS = 20_000
BATCH_RANGE = (1, 256)
LR_RANGE = (1e-5, 1.0)
HELD_OUT = 32  # sequences in the accuracy batch measured after every step (one forward pass each)
FINAL_HELD_OUT = 512  # fresh sequences for the final accuracy, measured once
MAX_SNAPSHOTS = 60  # maps kept per run: about 1 MB at the largest settings
PROGRESS_SECONDS = 0.2  # the page's curves update at least five times a second
MASKS = ("causal", "none")
# Steps per task: about twice what the bench (bench/training.py) needed to reach the targets, so other
# seeds reach them too (previous: >= 99 % after ~75 steps; induction, 2 layers: >= 90 % after ~250).
DEFAULT_STEPS = {
    "previous": 150,
    "reverse": 400,
    "sort": 800,
    "induction": 500,
    "text": 500,
    "previous_first": 300,
}


class TrainSettingsError(ValueError):
    """A setting the trainer refuses. ``key`` names the reason for the page's catalog
    (``training.error.<key>``), ``values`` fill its placeholders; ``str(err)`` is the English text."""

    def __init__(self, key: str, message: str, **values) -> None:
        super().__init__(message)
        self.key = key
        self.values = values


def _whole(name: str, value: object, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise TrainSettingsError(
            name,
            f"{name} must be a whole number from {lo} to {hi} (got {value!r}).",
            lo=lo,
            hi=hi,
            value=value,
        )


@dataclass(frozen=True)
class TrainSettings(HeadWidth):
    """One training run's settings, validated once."""

    task: str = "previous"  # one of TASKS (or "previous_first", the heads experiment's)
    text: str = ""  # the text task's text (the page passes the learner's sentence)
    layers: int = 1
    heads: int = 2
    d_model: int = 32
    d_k: int | None = None  # per head, d_v the same; None = d_model // heads
    scale: str | float = "sqrt"  # "sqrt" (÷√d_k), "none" (÷1) or a divisor
    mask: str | None = None  # "causal", "none", or None: the task's own (causal for next-token tasks)
    positions: bool = True  # learned position embedding on or off
    ffn: bool = False  # add an FFN with Pre-LN to every layer (off: attention-only layers)
    lr: float = 3e-3
    steps: int | None = None  # None: DEFAULT_STEPS[task]
    seed: int = 0
    batch: int = 32
    offset: int = 1  # previous: copy the token this many places back

    def __post_init__(self) -> None:
        if self.task not in ALL_TASKS:
            raise TrainSettingsError(
                "task", f"Unknown task {self.task!r}: choose one of {', '.join(TASKS)}.", task=self.task
            )
        _whole("layers", self.layers, 1, MAX_LAYERS)
        _whole("heads", self.heads, 1, MAX_HEADS)
        _whole("d_model", self.d_model, *D_MODEL_RANGE)
        if self.d_k is None:
            if self.d_model % self.heads:
                raise TrainSettingsError(
                    "d_model_heads",
                    f"d_model ({self.d_model}) is not divisible by heads ({self.heads}): set d_k by hand (--d-k).",
                    d_model=self.d_model, heads=self.heads,
                )  # fmt: skip
        else:
            _whole("d_k", self.d_k, 1, MAX_D_K)
        if isinstance(self.scale, str):
            if self.scale not in ("sqrt", "none"):
                raise TrainSettingsError(
                    "scale", f"Unknown scale {self.scale!r}: use sqrt, none or a divisor."
                )
        elif (
            isinstance(self.scale, bool)
            or not isinstance(self.scale, (int, float))
            or not math.isfinite(self.scale)
            or not MIN_DIVISOR <= self.scale <= MAX_DIVISOR
        ):
            raise TrainSettingsError(
                "divisor", f"The divisor must be between {MIN_DIVISOR:g} and {MAX_DIVISOR:g}.",
                lo=MIN_DIVISOR, hi=MAX_DIVISOR,
            )  # fmt: skip
        if self.mask is not None and self.mask not in MASKS:
            raise TrainSettingsError("mask", f"Unknown mask {self.mask!r}: use causal or none.")
        for name in ("positions", "ffn"):
            if not isinstance(getattr(self, name), bool):
                raise TrainSettingsError(name, f"{name} must be True or False.")
        if (
            isinstance(self.lr, bool)
            or not isinstance(self.lr, (int, float))
            or not math.isfinite(self.lr)
            or not LR_RANGE[0] <= self.lr <= LR_RANGE[1]
        ):
            raise TrainSettingsError(
                "lr", f"The learning rate must be between {LR_RANGE[0]:g} and {LR_RANGE[1]:g}.",
                lo=LR_RANGE[0], hi=LR_RANGE[1],
            )  # fmt: skip
        if self.steps is not None:
            _whole("steps", self.steps, 1, MAX_STEPS)
        _whole("seed", self.seed, 0, MAX_SEED)
        _whole("batch", self.batch, *BATCH_RANGE)
        try:
            make_task(self.task, self.text, self.offset)
        except TaskError as err:
            raise TrainSettingsError(err.key, str(err), **err.values) from None

    head_dim = HeadWidth.head_dim_k  # d_k and d_v: the model's heads have one width

    @property
    def total_steps(self) -> int:
        return self.steps if self.steps is not None else DEFAULT_STEPS[self.task]

    def make_task(self) -> Task:
        return make_task(self.task, self.text, self.offset)

    @property
    def mask_kind(self) -> str:
        return self.mask if self.mask is not None else self.make_task().default_mask

    def model_shape(self, task: Task | None = None) -> ModelShape:
        task = task or self.make_task()
        return ModelShape(
            vocab_in=task.vocab_in, vocab_out=task.vocab_out, n=task.n, d_model=self.d_model, heads=self.heads,
            d_k=self.head_dim, layers=self.layers, ffn=self.ffn, positions=self.positions,
        )  # fmt: skip

    def to_dict(self) -> dict:
        """Plain values (d_k, steps and mask resolved), for JSON and display."""
        return {
            "task": self.task, "text": self.text, "layers": self.layers, "heads": self.heads,
            "d_model": self.d_model, "d_k": self.head_dim, "scale": self.scale, "divisor": self.divisor,
            "mask": self.mask_kind, "positions": self.positions, "ffn": self.ffn, "lr": self.lr,
            "steps": self.total_steps, "seed": self.seed, "batch": self.batch, "offset": self.offset,
        }  # fmt: skip


@dataclass(frozen=True)
class TrainProgress:
    """What ``on_progress`` receives while training runs (arrays are read-only views of the run so far)."""

    step: int  # steps done
    steps: int  # steps asked for
    losses: np.ndarray  # [step]
    accuracy: np.ndarray  # [step]
    attention: np.ndarray  # [L, h, n, n] the sample's maps at the latest snapshot
    seconds: float


@dataclass(frozen=True, eq=False)
class TrainRun:
    """A finished (or stopped) run. Arrays are read-only.

        ``losses``/``accuracy`` ``[steps_done]``: the training batch's mean cross-entropy at each step
        (before that step's update) and the accuracy on a fixed held-out batch of :data:`HELD_OUT`
        sequences right after it; ``final_accuracy``: the final model on :data:`FINAL_HELD_OUT` fresh
        sequences (text: on the text, as the curve), ``final_loss`` its loss there (after the last update:
    every point of ``losses`` is measured before its step's update). ``snapshot_steps [S]``
        and ``snapshots [S, L, h, n, n]``: the sample's maps after that many steps (0 = at
        initialisation; the last is the final model). ``induction``/``previous_token`` ``[L, h]``: the
        heads page's scores on ``repeated`` (a random half and the same again).
    """

    settings: TrainSettings
    task: Task
    losses: np.ndarray
    accuracy: np.ndarray
    final_accuracy: float
    final_loss: float  # the final model's mean cross-entropy on the final accuracy's sequences
    steps_done: int
    stopped: bool
    snapshot_steps: np.ndarray
    snapshots: np.ndarray
    sample: np.ndarray  # [n] the sample's input ids
    sample_targets: np.ndarray  # [n]
    sample_scored: np.ndarray  # [n] bool
    sample_predictions: np.ndarray  # [n] the final model's answers
    repeated: np.ndarray  # [2·(n//2)] the repeated sample's ids
    repeated_attention: np.ndarray  # [L, h, 2m, 2m] the final maps on it, where the two scores are read
    induction: np.ndarray
    previous_token: np.ndarray
    attention: np.ndarray  # [L, h, n, n] the final maps on the sample
    seconds: float
    params: Params = field(repr=False)  # the final weights (read-only)

    @property
    def allowed(self) -> np.ndarray:
        return build_mask(self.settings.mask_kind, self.task.n)


def repeated_maps(params: Params, repeated: np.ndarray, allowed: np.ndarray, divisor: float) -> np.ndarray:
    """Every head's map ``[L, h, 2m, 2m]`` on a repeated sample ``[2m]`` (the scores are read from it)."""
    m = len(repeated) // 2
    return forward(params, repeated[None, :], allowed[: 2 * m, : 2 * m], divisor).weights()[0]


def head_scores(
    params: Params, repeated: np.ndarray, allowed: np.ndarray, divisor: float
) -> tuple[np.ndarray, np.ndarray]:
    """The heads page's induction and previous-token scores ``[L, h]`` on a repeated sample ``[2m]``."""
    weights = repeated_maps(params, repeated, allowed, divisor)
    return induction_scores(weights, len(repeated) // 2), previous_token_scores(weights)


def _sample_maps(params: Params, tokens: np.ndarray, allowed: np.ndarray, divisor: float) -> np.ndarray:
    return forward(params, tokens, allowed, divisor).weights()[0]  # [L, h, n, n]


def train(
    settings: TrainSettings,
    *,
    on_progress: Callable[[TrainProgress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    snapshot_every: int | None = None,
) -> TrainRun:
    """Train from scratch with Adam; see the module doc for the seeds.

    ``on_progress`` is called after the first step, then whenever :data:`PROGRESS_SECONDS` have
    passed, and after the last step. ``should_stop()`` is asked before every step; when it says
    True the run ends there and keeps what was trained (``stopped`` True). ``snapshot_every``:
    steps between the sample's maps (default: at most :data:`MAX_SNAPSHOTS` maps in all).
    """
    start = time.perf_counter()
    task = settings.make_task()
    shape = settings.model_shape(task)
    steps = settings.total_steps
    divisor = settings.divisor
    allowed = build_mask(settings.mask_kind, task.n)
    every = snapshot_every if snapshot_every is not None else max(1, math.ceil(steps / (MAX_SNAPSHOTS - 1)))
    if every < 1:
        raise ValueError("snapshot_every must be at least 1")

    params = init_model(shape, settings.seed)
    grads = params.zeros_like()
    adam = Adam(params.flat.size, settings.lr)
    data_rng = np.random.default_rng((settings.seed, 1))
    held = task.held_out(np.random.default_rng((settings.seed, 2)), HELD_OUT)
    sample_rng = np.random.default_rng((settings.seed, 3))
    sample = task.sample(sample_rng)
    repeated = task.repeated_sample(sample_rng)[0]

    losses = np.zeros(steps)
    accs = np.zeros(steps)
    snap_steps = [0]
    snaps = [_sample_maps(params, sample.tokens, allowed, divisor)]
    last_report = -math.inf
    done = 0
    stopped = False
    for step in range(steps):
        if should_stop is not None and should_stop():
            stopped = True
            break
        batch = task.batch(data_rng, settings.batch)
        fwd = forward(params, batch.tokens, allowed, divisor)
        losses[step], dlogits = cross_entropy(fwd.logits, batch.targets, batch.scored)
        backward(params, fwd, dlogits, grads)
        adam.step(params.flat, grads.flat)
        accs[step] = accuracy(
            forward(params, held.tokens, allowed, divisor).logits, held.targets, held.scored
        )
        done = step + 1
        if done % every == 0 or done == steps:
            snap_steps.append(done)
            snaps.append(_sample_maps(params, sample.tokens, allowed, divisor))
        now = time.perf_counter()
        # after step 1 (last_report is still -inf), every PROGRESS_SECONDS, and after the last step
        if on_progress is not None and (now - last_report >= PROGRESS_SECONDS or done == steps):
            last_report = now
            on_progress(
                TrainProgress(
                    done, steps, read_only(losses[:done]), read_only(accs[:done]), snaps[-1], now - start
                )
            )
    if stopped and snap_steps[-1] != done:
        snap_steps.append(done)
        snaps.append(_sample_maps(params, sample.tokens, allowed, divisor))
    final = params.frozen_copy()
    last = task.held_out(np.random.default_rng((settings.seed, 4)), FINAL_HELD_OUT)
    rep_maps = repeated_maps(final, repeated, allowed, divisor)
    ind, prev = induction_scores(rep_maps, len(repeated) // 2), previous_token_scores(rep_maps)
    final_fwd = forward(final, sample.tokens, allowed, divisor)
    final_logits = logits_of(final, last.tokens, allowed, divisor)
    return TrainRun(
        settings=settings, task=task,
        losses=read_only(losses[:done].copy()), accuracy=read_only(accs[:done].copy()),
        final_accuracy=accuracy(final_logits, last.targets, last.scored),
        final_loss=cross_entropy(final_logits, last.targets, last.scored)[0],
        steps_done=done, stopped=stopped,
        snapshot_steps=read_only(np.array(snap_steps)), snapshots=read_only(np.stack(snaps)),
        sample=read_only(sample.tokens[0]), sample_targets=read_only(sample.targets[0]),
        sample_scored=read_only(sample.scored[0]), sample_predictions=read_only(final_fwd.logits[0].argmax(axis=-1)),
        repeated=read_only(repeated), repeated_attention=read_only(rep_maps), induction=read_only(ind),
        previous_token=read_only(prev),
        attention=read_only(final_fwd.weights()[0]), seconds=time.perf_counter() - start, params=final,
    )  # fmt: skip
