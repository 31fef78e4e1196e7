"""The training lab's five experiments, each a function of a small frozen settings object that
returns a frozen result holding the numbers the page's conclusion is built from.

Nothing here decides what a result means: :mod:`.verdicts` reads these numbers against named
conditions and margins, and the page says each verdict in words. Every run goes through
:func:`train.train`, so the same settings give the same numbers; ``on_progress(label, progress)``
reports each run by a label (``"scaled, seed 0"`` style keys below) and ``should_stop`` ends the
current run early (the result then says ``stopped``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..arrays import read_only
from ..labs.decoder import head_summary
from ..labs.heads import induction_scores, previous_token_scores
from ..steps import build_mask
from .model import accuracy, backward, cross_entropy, forward, logits_of
from .tasks import INDUCTION_SEGMENT, PAIR_VOCAB
from .train import FINAL_HELD_OUT, TrainProgress, TrainRun, TrainSettings, train

Progress = Callable[[str, TrainProgress], None] | None
Stop = Callable[[], bool] | None


def _train(settings: TrainSettings, label: str, on_progress: Progress, should_stop: Stop) -> TrainRun:
    report = None if on_progress is None else (lambda p: on_progress(label, p))
    return train(settings, on_progress=report, should_stop=should_stop)


def tail_mean(losses: np.ndarray, share: float = 0.1) -> float:
    """The mean of the last ``share`` of a curve (at least one point): a final loss without one step's noise."""
    k = max(1, int(round(len(losses) * share)))
    return float(np.mean(losses[-k:]))


def moving_mean(losses: np.ndarray, window: int) -> np.ndarray:
    """``[len − window + 1]``: entry ``t`` is the mean of the losses of steps ``t + 1 … t + window``
    (step 1 is the first); empty when the curve is shorter than ``window``."""
    losses = np.asarray(losses, dtype=float)
    if len(losses) < window:
        return np.zeros(0)
    return np.convolve(losses, np.ones(window) / window, mode="valid")


# --------------------------------------------------------------------------------------------
# 1. √d_k
# --------------------------------------------------------------------------------------------

LOSS_LEVEL = 0.1  # nats: "learned" for steps-to-level (the previous-token task starts near ln 16 ≈ 2.8)
LEVEL_WINDOW = 5  # steps in the moving mean compared with LOSS_LEVEL (one batch's noise averaged out)
EARLY_STEP = 20  # the fixed early step whose loss (the mean of LEVEL_WINDOW steps ending there) is shown


def steps_to_level(losses: np.ndarray, level: float = LOSS_LEVEL, window: int = LEVEL_WINDOW) -> int | None:
    """The first step at which the mean of the last ``window`` losses is below ``level``; None if
    the curve never gets there."""
    below = np.flatnonzero(moving_mean(losses, window) < level)
    return int(below[0]) + window if below.size else None


def loss_at(losses: np.ndarray, step: int = EARLY_STEP, window: int = LEVEL_WINDOW) -> float:
    """The mean loss of steps ``step − window + 1 … step`` (NaN when the curve is shorter)."""
    losses = np.asarray(losses, dtype=float)
    if not window <= step <= len(losses):
        return math.nan
    return float(np.mean(losses[step - window : step]))


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
    steps_scaled: int | None  # the first step with the moving mean below LOSS_LEVEL (None: never)
    steps_unscaled: int | None
    early_scaled: float  # the loss at EARLY_STEP (the mean of LEVEL_WINDOW steps ending there)
    early_unscaled: float
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
            SqrtDkSeed(
                seed, g_s, g_u, w_s, w_u, tail_mean(r_s.losses), tail_mean(r_u.losses),
                steps_to_level(r_s.losses), steps_to_level(r_u.losses), loss_at(r_s.losses),
                loss_at(r_u.losses), r_s, r_u,
            )
        )  # fmt: skip
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
    prompt: int = 4  # characters of the text given before the short-prompt generation
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
    """One model of the leaky-mask experiment, measured on every window of the text (each start)."""

    mask: str
    run: TrainRun
    final_loss: float  # training loss, mean of the last 10 % of steps
    visible: np.ndarray  # [n] accuracy at each position given the whole window (as in training)
    prefix: np.ndarray  # [n] the same positions given only the characters up to them (as in generation)
    next_weight: np.ndarray  # [n-1] mean weight on position i+1 (next_weight)
    future_weight: np.ndarray  # [n] mean weight on every position after i together (future_weight)
    short: Generation  # from the text's first `prompt` characters
    full: Generation  # from its first n characters: a full window


@dataclass(frozen=True)
class LeakyResult:
    settings: LeakySettings
    causal: LeakyRun
    leaky: LeakyRun  # trained with the mask off
    stopped: bool


def generate(run: TrainRun, prompt_ids: list[int], length: int) -> list[int]:
    """Greedy generation: the model reads its context (the last ``n`` ids) and its answer at the
    last position is appended, ``length`` times. Once the context is ``n`` long, every answer is
    read at position ``n − 1``; before that, at the context's own last position."""
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


def position_accuracy(run: TrainRun) -> tuple[np.ndarray, np.ndarray]:
    """``(visible [n], prefix [n])``: over every window of the text (one per start), the share of
    right next characters at each position ``i``, given the whole window as in training (the
    model's mask decides what ``i`` reads), and given only characters ``0 … i`` as in generation."""
    windows = run.task.text_windows()
    divisor, kind = run.settings.divisor, run.settings.mask_kind
    guess = logits_of(run.params, windows.tokens, run.allowed, divisor).argmax(axis=-1)  # [T, n]
    visible = (guess == windows.targets).mean(axis=0)
    prefix = np.array([
        (logits_of(run.params, windows.tokens[:, : i + 1], build_mask(kind, i + 1), divisor)[:, -1].argmax(axis=-1)
         == windows.targets[:, i]).mean()
        for i in range(run.task.n)
    ])  # fmt: skip
    return read_only(visible), read_only(prefix)


def next_weight(run: TrainRun) -> np.ndarray:
    """``[n − 1]``: for each position ``i``, the mean weight (over every window of the text) that
    the head putting the most there puts on position ``i + 1``. 0 under the causal mask."""
    i = np.arange(run.task.n - 1)
    per_head = _window_weights(run)[..., i, i + 1].mean(axis=0)  # [L, h, n-1]
    return read_only(per_head.reshape(-1, len(i)).max(axis=0))


def future_weight(run: TrainRun) -> np.ndarray:
    """``[n]``: for each position ``i``, the mean weight (over every window of the text) that the
    head putting the most there puts on all positions after ``i`` together. 0 under the causal
    mask, and at the last position, whose window ends there."""
    n = run.task.n
    later = np.arange(n)[None, :] > np.arange(n)[:, None]  # [query, key]: the key comes after the query
    per_head = np.where(later, _window_weights(run), 0.0).sum(axis=-1).mean(axis=0)  # [L, h, n]
    return read_only(per_head.reshape(-1, n).max(axis=0))


def _window_weights(run: TrainRun) -> np.ndarray:
    """``[T, L, h, n, n]``: every head's map on every window of the text."""
    windows = run.task.text_windows()
    return forward(run.params, windows.tokens, run.allowed, run.settings.divisor).weights()


def _leaky_run(mask: str, run: TrainRun, prompt: int) -> LeakyRun:
    visible, prefix = position_accuracy(run)
    return LeakyRun(
        mask, run, tail_mean(run.losses), visible, prefix, next_weight(run), future_weight(run),
        _generation(run, prompt), _generation(run, run.task.n),
    )  # fmt: skip


def leaky_mask(s: LeakySettings, on_progress: Progress = None, should_stop: Stop = None) -> LeakyResult:
    """Next-character training on the same text with and without the causal mask."""
    runs = {}
    for mask in ("causal", "none"):
        settings = TrainSettings(task="text", text=s.text, mask=mask, steps=s.steps, seed=s.seed, lr=s.lr)
        runs[mask] = _leaky_run(mask, _train(settings, mask, on_progress, should_stop), s.prompt)
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
        _pair_accuracies(logits_of(run.params, test.tokens, allowed, divisor, ((0, h),)), test.targets,
                         test.scored)
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
    # Two heads of 16 and 800 steps: the width at which the two-layer loss stays flat before it drops
    # on every seed tried (bench/RESULTS.md, issue 41); at 4 heads of 16 it falls steadily instead.
    steps: int | None = 800  # None: the induction task's default
    seed: int = 0
    d_model: int = 32
    heads: int = 2
    lr: float = 3e-3


PHASE_WINDOW = 20  # steps in the moving mean the curve is read from
PHASE_SPAN = 50  # steps over which a fall is measured
FLAT_SHARE = 0.04  # a plateau: the moving mean falls by less than 4 % of its range over PHASE_SPAN steps
PREVIOUS_HEAD = 0.5  # a layer-0 head is a previous-token head at this score (the reveal's threshold)


@dataclass(frozen=True)
class PhaseChange:
    """A loss curve read for a plateau and a drop. A step names the last step of a moving mean of
    :data:`PHASE_WINDOW` losses; a fall is measured over :data:`PHASE_SPAN` steps."""

    span: float  # the moving mean's range (largest − smallest), the scale of every share below
    drop_start: int  # the steepest fall: from the mean at this step …
    drop_end: int  # … to the mean at this one (PHASE_SPAN steps later)
    drop_from: float
    drop_to: float
    plateau_start: int | None  # the longest flat stretch before drop_start (None: no flat stretch)
    plateau_end: int | None
    plateau_loss: float  # the moving mean's average over that stretch (NaN without one)
    flattest: float  # the smallest fall over PHASE_SPAN steps before the drop, as a share of span (NaN: none)


NO_PHASE = PhaseChange(math.nan, 0, 0, math.nan, math.nan, None, None, math.nan, math.nan)


def phase_change(
    losses: np.ndarray, window: int = PHASE_WINDOW, k: int = PHASE_SPAN, flat: float = FLAT_SHARE
) -> PhaseChange:
    """The steepest fall of the moving mean over ``k`` steps, and before it the longest stretch in
    which every ``k``-step fall is below ``flat`` of the mean's range (a plateau)."""
    mean = moving_mean(losses, window)  # mean[t]: steps t+1 .. t+window, named step t + window
    if len(mean) <= k:
        return NO_PHASE  # too short to measure one fall
    span = float(mean.max() - mean.min())
    fall = mean[:-k] - mean[k:]  # fall[t]: from mean[t] to mean[t + k]
    d = int(np.argmax(fall))
    before = fall[: max(0, d - k + 1)]  # windows that end by the drop's start
    flats = np.flatnonzero(before < flat * span)
    plateau = _longest_run(flats)
    p_start, p_end, p_loss = (None, None, math.nan) if plateau is None else (
        plateau[0] + window, plateau[1] + k + window, float(np.mean(mean[plateau[0] : plateau[1] + k + 1])))  # fmt: skip
    return PhaseChange(
        span=span, drop_start=d + window, drop_end=d + k + window, drop_from=float(mean[d]),
        drop_to=float(mean[d + k]), plateau_start=p_start, plateau_end=p_end, plateau_loss=p_loss,
        flattest=float(before.min() / span) if len(before) and span > 0 else math.nan,
    )  # fmt: skip


def _longest_run(indices: np.ndarray) -> tuple[int, int] | None:
    """The first and last of the longest run of consecutive integers in sorted ``indices`` (the
    earliest of equally long ones); None when empty."""
    if len(indices) == 0:
        return None
    breaks = np.flatnonzero(np.diff(indices) != 1)
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [len(indices) - 1]])
    best = int(np.argmax(ends - starts))
    return int(indices[starts[best]]), int(indices[ends[best]])


def lengths_possible(n: int, i: int, segment: tuple[int, int] = INDUCTION_SEGMENT) -> int:
    """How many segment lengths ``m`` leave query position ``i`` inside the scored repeat (``i ≥ n − m``)."""
    lo, hi = segment
    return max(0, hi - max(lo, n - i) + 1)


def accuracy_by_lengths(run: TrainRun) -> np.ndarray:
    """``[hi − lo + 1]``: on the final accuracy's sequences, the accuracy at the scored queries whose
    position allows 1, 2, … segment lengths (NaN where there is none). At ``i = n − hi`` only the
    longest is possible, so the answer is ``hi − 1`` places back: a position alone finds it."""
    task, divisor = run.task, run.settings.divisor
    test = task.held_out(np.random.default_rng((run.settings.seed, 4)), FINAL_HELD_OUT)
    hits = (
        logits_of(run.params, test.tokens, run.allowed, divisor).argmax(axis=-1) == test.targets
    ) & test.scored
    lo, hi = INDUCTION_SEGMENT
    k = np.array([lengths_possible(task.n, i) for i in range(task.n)])
    out = []
    for count in range(1, hi - lo + 2):
        where = test.scored & (k == count)[None, :]
        out.append(float(hits[where].sum() / where.sum()) if where.any() else math.nan)
    return read_only(np.array(out))


@dataclass(frozen=True)
class InductionDepth:
    layers: int
    run: TrainRun
    accuracy: float  # on the repeated half after its first token
    induction: np.ndarray  # [L, h]
    previous_token: np.ndarray  # [L, h]
    phase: PhaseChange
    by_lengths: np.ndarray  # accuracy_by_lengths: [7] for 1 … 7 segment lengths possible at the query


@dataclass(frozen=True)
class InductionResult:
    settings: InductionSettings
    one: InductionDepth
    two: InductionDepth
    previous_heads: tuple[
        int, ...
    ]  # layer-0 heads of the two-layer model zeroed (PREVIOUS_HEAD; at least the strongest)
    induction_head: tuple[int, int]  # its strongest induction head in layer 1
    accuracy_without_previous_heads: float  # the two-layer model with those heads zeroed
    induction_without_previous_heads: float  # that layer-1 head's induction score then
    stopped: bool


def _depth(layers: int, s: InductionSettings, on_progress: Progress, should_stop: Stop) -> InductionDepth:
    settings = TrainSettings(
        task="induction", layers=layers, heads=s.heads, d_model=s.d_model, steps=s.steps, seed=s.seed, lr=s.lr
    )
    run = _train(settings, f"{layers} layer{'s' if layers > 1 else ''}", on_progress, should_stop)
    return InductionDepth(
        layers, run, run.final_accuracy, run.induction, run.previous_token, phase_change(run.losses),
        accuracy_by_lengths(run),
    )  # fmt: skip


def previous_heads(scores: np.ndarray, threshold: float = PREVIOUS_HEAD) -> tuple[int, ...]:
    """Layer 0's heads whose previous-token score reaches ``threshold``; the strongest alone if none does."""
    scores = np.asarray(scores)
    found = tuple(int(h) for h in np.flatnonzero(scores >= threshold))
    return found or (int(np.argmax(scores)),)


def induction_layers(
    s: InductionSettings = InductionSettings(), on_progress: Progress = None, should_stop: Stop = None
) -> InductionResult:
    """The induction task with 1 and with 2 attention-only layers; then the two-layer model with its
    layer-0 previous-token heads zeroed."""
    one = _depth(1, s, on_progress, should_stop)
    two = _depth(2, s, on_progress, should_stop)
    prev = previous_heads(two.previous_token[0])
    ind_head = (1, int(np.argmax(two.induction[1])))
    run = two.run
    task, allowed, divisor = run.task, run.allowed, run.settings.divisor
    zeroed = tuple((0, h) for h in prev)
    test = task.held_out(np.random.default_rng((s.seed, 4)), 512)
    ablated = logits_of(run.params, test.tokens, allowed, divisor, zeroed)
    m = len(run.repeated) // 2
    rep = forward(run.params, run.repeated[None], allowed[: 2 * m, : 2 * m], divisor, zeroed).weights()[0]
    return InductionResult(
        settings=s, one=one, two=two, previous_heads=prev, induction_head=ind_head,
        accuracy_without_previous_heads=accuracy(ablated, test.targets, test.scored),
        induction_without_previous_heads=float(induction_scores(rep, m)[ind_head]),
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
    baseline: float  # multiset_baseline on the sequences the accuracy is measured on


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


def multiset_baseline(task: str, tokens: np.ndarray, vocab: int) -> float:
    """The best accuracy a model can expect on these inputs ``[B, n]`` when all it knows at a
    position is that position's own token and which tokens the input holds (how many of each), as
    a model without positions: on average over every order of each input's tokens.

    At a position holding ``c``: for ``sort`` the answer is the ``i``-th smallest for an ``i`` it
    cannot know, so the best guess is the most frequent token, right ``max count / n`` of the time;
    for ``reverse`` the answer is one of the other ``n − 1`` tokens, each equally likely, so the best
    guess is the most frequent of those, right ``max count(others) / (n − 1)`` of the time."""
    tokens = np.asarray(tokens)
    n = tokens.shape[1]
    counts = (tokens[:, :, None] == np.arange(vocab)).sum(axis=1)  # [B, V]: how many of each token
    if task == "sort":
        return float(np.mean(counts.max(axis=1) / n))
    if task == "reverse":
        others = counts[:, None, :] - (np.arange(vocab)[None, None, :] == tokens[:, :, None])  # [B, n, V]
        return float(np.mean(others.max(axis=-1) / (n - 1)))
    raise ValueError(f"no baseline for {task!r}")


def positions(
    s: PositionsSettings = PositionsSettings(), on_progress: Progress = None, should_stop: Stop = None
) -> PositionsResult:
    """Reverse and sort, with and without the position embedding (the mask off, as those tasks are set)."""
    runs = []
    for task in ("reverse", "sort"):
        for pos in (True, False):
            settings = TrainSettings(
                task=task, positions=pos, steps=s.steps, seed=s.seed, lr=s.lr, layers=s.layers, ffn=s.ffn,
                mask="none",
            )  # fmt: skip
            run = _train(settings, f"{task}, positions {'on' if pos else 'off'}", on_progress, should_stop)
            test = run.task.held_out(
                np.random.default_rng((s.seed, 4)), FINAL_HELD_OUT
            )  # the final accuracy's
            runs.append(
                PositionsRun(
                    task, pos, run, run.final_accuracy, equivariance_error(run, s.seed),
                    multiset_baseline(task, test.tokens, run.task.vocab_in),
                )
            )  # fmt: skip
    return PositionsResult(s, tuple(runs), 1.0 / runs[0].run.task.vocab_out, any(r.run.stopped for r in runs))
