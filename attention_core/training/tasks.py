"""The training lab's tasks: each one makes its batches from a seed (a ``np.random.Generator``).

Every task is token classification on a sequence of ``n`` tokens: ``tokens [B, n]`` go in,
``targets [B, n]`` are the answers, and ``scored [B, n]`` says which positions count in the loss
and the accuracy.

- ``previous``: the token ``offset`` places back (offset 1: the previous token). Positions
  ``0 .. offset-1`` have no answer and are not scored.
- ``reverse``: position ``i`` answers the token at ``n-1-i``.
- ``sort``: position ``i`` answers the ``i``-th smallest token.
- ``induction``: random filler, then a segment of ``m`` random tokens, then the same segment again
  (``n − 2m`` filler tokens; ``m`` drawn per example from :data:`INDUCTION_SEGMENT`; no token twice
  except in the repeat). Each position predicts the next token; only the repeated half (the
  second copy) after its first token is scored: the rest cannot be foreseen. Because ``m`` varies,
  no fixed offset from a query finds the answer: a model has to look for where its token occurred
  before and read what followed it.
- ``text``: the next character of the learner's text, repeated as often as needed (after the last
  character comes the first again). Every position is scored.
- ``previous_first`` (the heads experiment only): position ``i >= 1`` answers the pair (token
  ``i-1``, token 0), one class per pair, so it needs two relations at once.

With the mask off (``none``), ``previous`` and ``induction`` are still posed the same way; only
``text`` and ``induction`` are next-token tasks, where the mask decides whether the answer is visible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TASKS = ("previous", "reverse", "sort", "induction", "text")  # the learner's (and the CLI's) choices
EXPERIMENT_TASKS = ("previous_first",)
ALL_TASKS = TASKS + EXPERIMENT_TASKS

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SYNTHETIC_VOCAB = 16  # previous, reverse, sort
SYNTHETIC_LENGTH = {"previous": 12, "reverse": 8, "sort": 8}
INDUCTION_VOCAB = 24
INDUCTION_LENGTH = 20
# m, inclusive. The longest, n/2, is the heads page's repeated sample (a segment and its repeat), where
# the induction scores are measured; a range without it left no head of the two-layer model above 0.5
# there. At that one m a head can also find key i − m + 1 by position alone, so a one-layer model scores
# there too without doing induction: its accuracy, not its score, tells it apart (bench/RESULTS.md).
INDUCTION_SEGMENT = (4, 10)
PAIR_VOCAB = 6  # previous_first: 36 classes
PAIR_LENGTH = 10
TEXT_CONTEXT = 16
MAX_TEXT_CHARS = 400
MAX_OFFSET = 4
# Tasks whose answer is the next token: only here can a missing causal mask show the answer.
NEXT_TOKEN_TASKS = ("induction", "text")
DEFAULT_MASK = {
    "previous": "causal", "reverse": "none", "sort": "none", "induction": "causal", "text": "causal",
    "previous_first": "causal",
}  # fmt: skip


@dataclass(frozen=True)
class Batch:
    """``tokens``, ``targets`` ``[B, n]`` (integer ids) and ``scored [B, n]`` (bool)."""

    tokens: np.ndarray
    targets: np.ndarray
    scored: np.ndarray


@dataclass(frozen=True)
class Task:
    """One task's sizes and labels, and the recipe for its batches (see the module doc)."""

    name: str
    vocab_in: int
    vocab_out: int
    n: int  # tokens per sequence (the model's context)
    labels_in: tuple[str, ...]  # how each input id is shown
    labels_out: tuple[str, ...]  # how each answer id is shown
    offset: int = 1  # previous: how far back
    text_ids: tuple[int, ...] = ()  # text: the learner's text as ids into labels_in

    @property
    def default_mask(self) -> str:
        return DEFAULT_MASK[self.name]

    def batch(self, rng: np.random.Generator, size: int) -> Batch:
        """``size`` fresh examples drawn from ``rng``."""
        if self.name == "text":
            return self._text(rng.integers(0, len(self.text_ids), size=size))
        if self.name == "induction":
            lo, hi = INDUCTION_SEGMENT
            return self._induction(
                _distinct(rng, size, self.vocab_in, self.n), rng.integers(lo, hi + 1, size=size)
            )
        tokens = rng.integers(0, self.vocab_in, size=(size, self.n))
        return self.answer(tokens)

    def answer(self, tokens: np.ndarray) -> Batch:
        """The targets of given sequences ``tokens [B, n]`` (not for ``text``, whose answers come from the text)."""
        tokens = np.asarray(tokens, dtype=np.intp)
        scored = np.ones(tokens.shape, dtype=bool)
        if self.name == "previous":
            targets = np.roll(tokens, self.offset, axis=1)
            scored[:, : self.offset] = False
        elif self.name == "reverse":
            targets = tokens[:, ::-1]
        elif self.name == "sort":
            targets = np.sort(tokens, axis=1)
        elif self.name == "previous_first":
            targets = np.roll(tokens, 1, axis=1) * PAIR_VOCAB + tokens[:, :1]
            scored[:, 0] = False
        else:
            raise ValueError(f"no answer rule for {self.name!r}")
        targets = np.where(scored, targets, 0)
        return Batch(np.ascontiguousarray(tokens), np.ascontiguousarray(targets), scored)

    def _induction(self, distinct: np.ndarray, m: np.ndarray) -> Batch:
        """``distinct [B, n]``: distinct ids per row; ``m [B]``: segment lengths. Row b is
        ``distinct[b, :n−m]`` (filler, then the segment) followed by the segment again."""
        n = self.n
        i = np.arange(n)
        second = i >= n - m[:, None]  # [B, n] the repeat
        tokens = np.take_along_axis(distinct, np.where(second, i - m[:, None], i), axis=1)
        targets = np.zeros_like(tokens)
        targets[:, :-1] = tokens[:, 1:]  # the next token
        scored = second & (i < n - 1)  # the repeat's own next tokens: after its first, up to the last
        return Batch(tokens, targets, scored)

    def induction_batch(self, segments: np.ndarray, m: np.ndarray) -> Batch:
        """Given rows of ``n`` distinct ids and segment lengths (the tests' way in)."""
        return self._induction(np.asarray(segments, dtype=np.intp), np.asarray(m, dtype=np.intp))

    def _text(self, starts: np.ndarray) -> Batch:
        ids = np.asarray(self.text_ids, dtype=np.intp)
        pos = (starts[:, None] + np.arange(self.n + 1)) % len(ids)  # [B, n+1], wrapping round the text
        window = ids[pos]
        return Batch(window[:, :-1], window[:, 1:], np.ones((len(starts), self.n), dtype=bool))

    def text_windows(self) -> Batch:
        """``text``: every window of the text, one per start (``len(text)`` rows, wrapping round)."""
        return self._text(np.arange(len(self.text_ids)))

    def held_out(self, rng: np.random.Generator, size: int) -> Batch:
        """The accuracy batch: fresh examples (text: windows that predict every character once)."""
        if self.name != "text":
            return self.batch(rng, size)
        return self._text(np.arange(0, len(self.text_ids), self.n))

    def sample(self, rng: np.random.Generator) -> Batch:
        """One example whose maps the page shows (text: the start of the text)."""
        if self.name == "text":
            return self._text(np.zeros(1, dtype=np.intp))
        return self.batch(rng, 1)

    def repeated_sample(self, rng: np.random.Generator) -> np.ndarray:
        """``[1, 2·(n//2)]``: ``n//2`` random input tokens (distinct while the vocabulary allows) and
        the same again, where the heads page's induction and previous-token scores are defined."""
        m = self.n // 2
        if self.vocab_in >= m:
            first = _distinct(rng, 1, self.vocab_in, m)
        else:
            first = rng.integers(0, self.vocab_in, size=(1, m))
        return np.concatenate([first, first], axis=1).astype(np.intp)


def _distinct(rng: np.random.Generator, size: int, vocab: int, m: int) -> np.ndarray:
    """``[size, m]`` rows of ``m`` distinct ids each, below ``vocab``."""
    return np.argsort(rng.random((size, vocab)), axis=1)[:, :m].astype(np.intp)


class TaskError(ValueError):
    """A text or offset the tasks refuse; ``key`` names it for the page's catalog."""

    def __init__(self, key: str, message: str, **values) -> None:
        super().__init__(message)
        self.key = key
        self.values = values


def text_vocabulary(text: str) -> tuple[str, ...]:
    """The distinct characters of ``text`` in code-point order (Japanese included; one id each)."""
    return tuple(sorted(set(text)))


def make_task(name: str, text: str = "", offset: int = 1) -> Task:
    """The task ``name`` (one of :data:`ALL_TASKS`)."""
    if name not in ALL_TASKS:
        raise TaskError("task", f"Unknown task {name!r}: choose one of {', '.join(TASKS)}.", task=name)
    if name == "text":
        if not text.strip():
            raise TaskError("text_empty", "The text is empty: type at least one character.")
        if len(text) > MAX_TEXT_CHARS:
            raise TaskError(
                "text_long",
                f"The text is too long: at most {MAX_TEXT_CHARS} characters.",
                limit=MAX_TEXT_CHARS,
            )
        vocab = text_vocabulary(text)
        index = {c: i for i, c in enumerate(vocab)}
        ids = tuple(index[c] for c in text)
        return Task(name, len(vocab), len(vocab), TEXT_CONTEXT, vocab, vocab, text_ids=ids)
    if name == "previous":
        if isinstance(offset, bool) or not isinstance(offset, int) or not 1 <= offset <= MAX_OFFSET:
            raise TaskError(
                "offset", f"The offset must be a whole number from 1 to {MAX_OFFSET}.", limit=MAX_OFFSET
            )
    if name == "induction":
        labels = tuple(LETTERS[:INDUCTION_VOCAB])
        return Task(name, INDUCTION_VOCAB, INDUCTION_VOCAB, INDUCTION_LENGTH, labels, labels)
    if name == "previous_first":
        labels = tuple(LETTERS[:PAIR_VOCAB])
        pairs = tuple(f"{a}{b}" for a in labels for b in labels)  # class a·V + b: (previous a, first b)
        return Task(name, PAIR_VOCAB, PAIR_VOCAB**2, PAIR_LENGTH, labels, pairs)
    labels = tuple(LETTERS[:SYNTHETIC_VOCAB])
    return Task(name, SYNTHETIC_VOCAB, SYNTHETIC_VOCAB, SYNTHETIC_LENGTH[name], labels, labels, offset=offset)
