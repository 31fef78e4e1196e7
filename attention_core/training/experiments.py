"""The training lab's five experiments, each a function of a small frozen settings object that
returns a frozen result holding the numbers the page's conclusion is built from.

Nothing here decides what a result means in words: the page states the comparison and the
numbers, and says so when a difference is small. Every run goes through :func:`train.train`, so
the same settings give the same numbers; ``on_progress(label, progress)`` reports each run by a
label (``"scaled, seed 0"`` style keys below) and ``should_stop`` ends the current run early (the
result then says ``stopped``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..arrays import read_only
from ..labs.decoder_view import head_summary
from ..labs.heads import previous_token_scores
from ..steps import build_mask
from .model import accuracy, backward, cross_entropy, forward, logits_of
from .tasks import PAIR_VOCAB
from .train import TrainProgress, TrainRun, TrainSettings, train

Progress = Callable[[str, TrainProgress], None] | None
Stop = Callable[[], bool] | None


def _train(settings: TrainSettings, label: str, on_progress: Progress, should_stop: Stop) -> TrainRun:
    report = None if on_progress is None else (lambda p: on_progress(label, p))
    return train(settings, on_progress=report, should_stop=should_stop)


def tail_mean(losses: np.ndarray, share: float = 0.1) -> float:
    """The mean of the last ``share`` of a curve (at least one point): a final loss without one step's noise."""
    k = max(1, int(round(len(losses) * share)))
    return float(np.mean(losses[-k:]))


# --------------------------------------------------------------------------------------------
# 1. √d_k
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SqrtDkSettings:
    d_k: int = 64  # one head of this size (d_model = d_k)
    task: str = "previous"
    steps: int = 150  # N
    seeds: tuple[int, ...] = (0, 1, 2)
    lr: float = 3e-3


@dataclass(frozen=True)
class SqrtDkSeed:
    seed: int
    grad_scaled: float  # ‖dL/d(scores)‖ at initialisation, scores divided by √d_k
    grad_unscaled: float  # the same weights and batch, divided by 1
    max_weight_scaled: float  # mean largest weight per row at initialisation
    max_weight_unscaled: float
    loss_scaled: float  # training loss after N steps (mean of the last 10 %)
    loss_unscaled: float
    run_scaled: TrainRun
    run_unscaled: TrainRun


@dataclass(frozen=True)
class SqrtDkResult:
    settings: SqrtDkSettings
    seeds: tuple[SqrtDkSeed, ...]
    stopped: bool

    @property
    def grad_ratio(self) -> np.ndarray:
        """Per seed: scaled over unscaled gradient norm at initialisation."""
        return np.array(
            [s.grad_scaled / s.grad_unscaled if s.grad_unscaled else math.inf for s in self.seeds]
        )


def score_gradient(settings: TrainSettings) -> tuple[float, float]:
    """At initialisation, on the first training batch: ‖dL/d(softmax input)‖ over every layer and
    head, and the mean (over layers, heads and query rows) of each row's largest weight."""
    from .model import init_model

    task = settings.make_task()
    params = init_model(settings.model_shape(task), settings.seed)
    batch = task.batch(np.random.default_rng((settings.seed, 1)), settings.batch)
    allowed = build_mask(settings.mask_kind, task.n)
    fwd = forward(params, batch.tokens, allowed, settings.divisor)
    _, dlogits = cross_entropy(fwd.logits, batch.targets, batch.scored)
    layers: list = []
    backward(params, fwd, dlogits, params.zeros_like(), layers)
    norm = math.sqrt(sum(float(np.sum(np.asarray(g.dscores) ** 2)) for g in layers))
    return norm, float(fwd.weights().max(axis=-1).mean())


def sqrt_dk(
    s: SqrtDkSettings = SqrtDkSettings(), on_progress: Progress = None, should_stop: Stop = None
) -> SqrtDkResult:
    """The same model, weights and batches with the scores divided by √d_k and by 1."""
    rows, stopped = [], False
    for seed in s.seeds:
        base = TrainSettings(
            task=s.task, layers=1, heads=1, d_model=s.d_k, d_k=s.d_k, steps=s.steps, seed=seed, lr=s.lr
        )
        scaled, unscaled = replace(base, scale="sqrt"), replace(base, scale="none")
        g_s, w_s = score_gradient(scaled)
        g_u, w_u = score_gradient(unscaled)
        r_s = _train(scaled, f"scaled, seed {seed}", on_progress, should_stop)
        r_u = _train(unscaled, f"unscaled, seed {seed}", on_progress, should_stop)
        rows.append(
            SqrtDkSeed(seed, g_s, g_u, w_s, w_u, tail_mean(r_s.losses), tail_mean(r_u.losses), r_s, r_u)
        )
        stopped = stopped or r_s.stopped or r_u.stopped
        if stopped:
            break
    return SqrtDkResult(s, tuple(rows), stopped)


# --------------------------------------------------------------------------------------------
# 2. The leaky mask
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeakySettings:
    text: str
    steps: int = 600
    seed: int = 0
    prompt: int = 4  # characters of the text given before generating
    lr: float = 3e-3


FOLLOW_CONTEXT = 3  # characters before a generated one that the text must continue the same way


@dataclass(frozen=True)
class Generation:
    prompt: str
    generated: str  # the model's own continuation, one character at a time
    expected: str  # the text's own continuation (repeated as needed)
    accuracy: float  # the share of generated characters equal to the text's at the same place
    follows: (
        float  # the share whose previous FOLLOW_CONTEXT characters are followed by it somewhere in the text
    )


@dataclass(frozen=True)
class LeakyRun:
    mask: str
    run: TrainRun
    final_loss: float  # training loss, mean of the last 10 % of steps
    text_accuracy: float  # next character on the text, each position reading what the mask allows
    generation: Generation


@dataclass(frozen=True)
class LeakyResult:
    settings: LeakySettings
    causal: LeakyRun
    leaky: LeakyRun  # trained with the mask off
    stopped: bool


def generate(run: TrainRun, prompt_ids: list[int], length: int) -> list[int]:
    """Greedy generation: the model reads its context (the last ``n`` ids) and its answer at the
    last position is appended, ``length`` times. Nothing after the last position exists, so a model
    that learned to read the answer from the future has nothing to read."""
    ids = list(prompt_ids)
    n = run.task.n
    for _ in range(length):
        context = np.array(ids[-n:], dtype=np.intp)[None, :]
        allowed = build_mask(run.settings.mask_kind, context.shape[1])
        logits = forward(run.params, context, allowed, run.settings.divisor).logits
        ids.append(int(logits[0, -1].argmax()))
    return ids[len(prompt_ids) :]


def _generation(run: TrainRun, prompt: int) -> Generation:
    task = run.task
    ids = list(task.text_ids)
    k = min(prompt, len(ids))
    length = len(ids)  # once round the text
    out = generate(run, ids[:k], length)
    expected = [ids[(k + i) % len(ids)] for i in range(length)]
    label = task.labels_in
    return Generation(
        prompt="".join(label[i] for i in ids[:k]), generated="".join(label[i] for i in out),
        expected="".join(label[i] for i in expected),
        accuracy=float(np.mean([a == b for a, b in zip(out, expected, strict=True)])),
        follows=follow_share(ids, ids[:k] + out, k),
    )  # fmt: skip


def follow_share(text_ids: list[int], ids: list[int], start: int, context: int = FOLLOW_CONTEXT) -> float:
    """Of ``ids[start:]``, the share whose ``context`` predecessors are followed by that same id
    somewhere in the (cyclic) text: a continuation can differ from the text's own and still read
    like it (one branch of a repeated word instead of another); reading nonsense cannot."""
    T = len(text_ids)
    grams = {tuple(text_ids[(s + j) % T] for j in range(context + 1)) for s in range(T)}
    hits = [tuple(ids[i - context : i + 1]) in grams for i in range(max(start, context), len(ids))]
    return float(np.mean(hits)) if hits else 0.0


def leaky_mask(s: LeakySettings, on_progress: Progress = None, should_stop: Stop = None) -> LeakyResult:
    """Next-character training on the same text with and without the causal mask."""
    runs = {}
    for mask in ("causal", "none"):
        settings = TrainSettings(task="text", text=s.text, mask=mask, steps=s.steps, seed=s.seed, lr=s.lr)
        run = _train(settings, mask, on_progress, should_stop)
        runs[mask] = LeakyRun(
            mask, run, tail_mean(run.losses), run.final_accuracy, _generation(run, s.prompt)
        )
    return LeakyResult(
        s, runs["causal"], runs["none"], runs["causal"].run.stopped or runs["none"].run.stopped
    )


# --------------------------------------------------------------------------------------------
# 3. Heads specialise
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadsSettings:
    steps: int = 800
    seed: int = 0
    d_model: int = 32
    lr: float = 3e-3


@dataclass(frozen=True)
class HeadsResult:
    """``previous_first``: each position answers the pair (previous token, first token)."""

    settings: HeadsSettings
    run: TrainRun
    previous_score: np.ndarray  # [2] each head's mean weight on the previous token (rows 1..n-1)
    first_score: np.ndarray  # [2] each head's mean weight on token 0 (rows 1..n-1)
    accuracy: float  # both halves of the pair right
    previous_accuracy: float  # the previous-token half right
    first_accuracy: float  # the first-token half right
    ablated: np.ndarray  # [2, 3] head h zeroed: (pair, previous half, first half) accuracy
    maps: np.ndarray  # [2, n, n] each head's map on the sample

    @property
    def accuracy_lost(self) -> np.ndarray:
        """[2, 3]: what zeroing each head costs, for the pair and each half."""
        return np.array([self.accuracy, self.previous_accuracy, self.first_accuracy]) - self.ablated


def _pair_accuracies(
    logits: np.ndarray, targets: np.ndarray, scored: np.ndarray
) -> tuple[float, float, float]:
    guess = logits.argmax(axis=-1)
    count = max(int(scored.sum()), 1)

    def share(hit: np.ndarray) -> float:
        return float((hit & scored).sum() / count)

    return (
        accuracy(logits, targets, scored),
        share(guess // PAIR_VOCAB == targets // PAIR_VOCAB),
        share(guess % PAIR_VOCAB == targets % PAIR_VOCAB),
    )


def heads_specialise(
    s: HeadsSettings = HeadsSettings(), on_progress: Progress = None, should_stop: Stop = None
) -> HeadsResult:
    """One layer, two heads, on a task that needs two relations at once; then each head ablated."""
    settings = TrainSettings(
        task="previous_first", layers=1, heads=2, d_model=s.d_model, steps=s.steps, seed=s.seed, lr=s.lr
    )
    run = _train(settings, "heads", on_progress, should_stop)
    task, allowed, divisor = run.task, run.allowed, settings.divisor
    test = task.held_out(np.random.default_rng((s.seed, 4)), 512)
    full = _pair_accuracies(logits_of(run.params, test.tokens, allowed, divisor), test.targets, test.scored)
    ablated = np.array([
        _pair_accuracies(logits_of(run.params, test.tokens, allowed, divisor, (0, h)), test.targets, test.scored)
        for h in range(2)
    ])  # fmt: skip
    weights = forward(run.params, test.tokens[:64], allowed, divisor).weights()[:, 0]  # [64, 2, n, n]
    return HeadsResult(
        settings=s, run=run,
        previous_score=read_only(previous_token_scores(weights).mean(axis=0)),
        first_score=read_only(head_summary(weights, "first").mean(axis=0)),
        accuracy=full[0], previous_accuracy=full[1], first_accuracy=full[2],
        ablated=read_only(ablated), maps=read_only(run.attention[0]),
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# 4. Induction heads need two layers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InductionSettings:
    steps: int | None = None  # None: the induction task's default
    seed: int = 0
    d_model: int = 64
    heads: int = 4
    lr: float = 3e-3


@dataclass(frozen=True)
class PhaseChange:
    """Where the loss curve falls fastest, after its first tenth (the first fall is to the
    token frequencies, which any model finds)."""

    drop_step: int  # the middle of the steepest fall of the moving mean
    loss_before: float  # the moving mean just before that fall (the plateau)
    loss_after: float  # just after it


@dataclass(frozen=True)
class InductionDepth:
    layers: int
    run: TrainRun
    accuracy: float  # on the repeated half after its first token
    induction: np.ndarray  # [L, h]
    previous_token: np.ndarray  # [L, h]
    phase: PhaseChange


@dataclass(frozen=True)
class InductionResult:
    settings: InductionSettings
    one: InductionDepth
    two: InductionDepth
    previous_head: tuple[int, int]  # the two-layer model's strongest previous-token head in layer 0
    induction_head: tuple[int, int]  # its strongest induction head in layer 1
    accuracy_without_previous_head: float  # the two-layer model with that layer-0 head zeroed
    induction_without_previous_head: float  # that layer-1 head's induction score then
    stopped: bool


PHASE_WINDOW = 20  # steps in the moving mean and in the fall measured


def phase_change(losses: np.ndarray, window: int = PHASE_WINDOW) -> PhaseChange:
    """The steepest fall of the loss's moving mean over ``window`` steps, after the first tenth."""
    losses = np.asarray(losses, dtype=float)
    if len(losses) == 0:  # a run stopped before its first step (Stop pressed during an earlier run)
        return PhaseChange(0, math.nan, math.nan)
    if len(losses) < 3 * window:
        return PhaseChange(len(losses) // 2, float(losses[0]), float(losses[-1]))
    mean = np.convolve(losses, np.ones(window) / window, mode="valid")  # mean[t]: steps t .. t+window-1
    fall = mean[:-window] - mean[window:]  # fall from t to t+window
    start = len(losses) // 10
    t = start + int(np.argmax(fall[start:]))
    return PhaseChange(t + window, float(mean[t]), float(mean[t + window]))


def _depth(layers: int, s: InductionSettings, on_progress: Progress, should_stop: Stop) -> InductionDepth:
    settings = TrainSettings(
        task="induction", layers=layers, heads=s.heads, d_model=s.d_model, steps=s.steps, seed=s.seed, lr=s.lr
    )
    run = _train(settings, f"{layers} layer{'s' if layers > 1 else ''}", on_progress, should_stop)
    return InductionDepth(
        layers, run, run.final_accuracy, run.induction, run.previous_token, phase_change(run.losses)
    )


def induction_layers(
    s: InductionSettings = InductionSettings(), on_progress: Progress = None, should_stop: Stop = None
) -> InductionResult:
    """The induction task with 1 and with 2 attention-only layers."""
    one = _depth(1, s, on_progress, should_stop)
    two = _depth(2, s, on_progress, should_stop)
    prev_head = (0, int(np.argmax(two.previous_token[0])))
    ind_head = (1, int(np.argmax(two.induction[1])))
    run = two.run
    task, allowed, divisor = run.task, run.allowed, run.settings.divisor
    test = task.held_out(np.random.default_rng((s.seed, 4)), 512)
    ablated = logits_of(run.params, test.tokens, allowed, divisor, prev_head)
    m = len(run.repeated) // 2
    rep = forward(
        run.params, run.repeated[None], allowed[: 2 * m, : 2 * m], divisor, ablate=prev_head
    ).weights()[0]
    from ..labs.heads import induction_scores

    return InductionResult(
        settings=s, one=one, two=two, previous_head=prev_head, induction_head=ind_head,
        accuracy_without_previous_head=accuracy(ablated, test.targets, test.scored),
        induction_without_previous_head=float(induction_scores(rep, m)[ind_head]),
        stopped=one.run.stopped or two.run.stopped,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# 5. Positions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionsSettings:
    steps: int | None = None  # None: each task's default
    seed: int = 0
    lr: float = 3e-3
    layers: int = 1
    ffn: bool = False


@dataclass(frozen=True)
class PositionsRun:
    task: str
    positions: bool
    run: TrainRun
    accuracy: float
    equivariance_error: float  # max |f(πx) − π f(x)| over a permuted batch (0 without positions)


@dataclass(frozen=True)
class PositionsResult:
    settings: PositionsSettings
    runs: tuple[PositionsRun, ...]  # reverse on, reverse off, sort on, sort off
    uniform_guess: float  # 1 / vocabulary: a guess that knows nothing
    stopped: bool


def equivariance_error(run: TrainRun, seed: int = 0) -> float:
    """Permute the positions of a batch: how far the model's logits are from the same permutation
    of its logits on the original. Without positions and without a mask this is rounding only."""
    rng = np.random.default_rng((seed, 5))
    batch = run.task.batch(rng, 16)
    perm = rng.permutation(run.task.n)
    allowed, divisor = run.allowed, run.settings.divisor
    base = forward(run.params, batch.tokens, allowed, divisor).logits
    moved = forward(run.params, batch.tokens[:, perm], allowed, divisor).logits
    return float(np.max(np.abs(moved - base[:, perm])))


def positions(
    s: PositionsSettings = PositionsSettings(), on_progress: Progress = None, should_stop: Stop = None
) -> PositionsResult:
    """Reverse and sort, with and without the position embedding (the mask off, as those tasks are set)."""
    runs = []
    for task in ("reverse", "sort"):
        for pos in (True, False):
            settings = TrainSettings(
                task=task,
                positions=pos,
                steps=s.steps,
                seed=s.seed,
                lr=s.lr,
                layers=s.layers,
                ffn=s.ffn,
                mask="none",
            )
            run = _train(settings, f"{task}, positions {'on' if pos else 'off'}", on_progress, should_stop)
            runs.append(PositionsRun(task, pos, run, run.final_accuracy, equivariance_error(run, s.seed)))
    return PositionsResult(s, tuple(runs), 1.0 / runs[0].run.task.vocab_out, any(r.run.stopped for r in runs))
