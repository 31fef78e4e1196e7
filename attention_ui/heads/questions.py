"""Questions computed from the heads page's own numbers, so their answers are right by construction.

Pure (no Streamlit). Each :class:`Question` names its catalog keys (``heads.quiz_<qid>`` for the
question, ``heads.quiz_<qid>_why`` for the explanation, both filled from ``params``) and its
choices as already-formatted values.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Question:
    qid: str
    params: dict = field(hash=False)
    choices: tuple[str, ...]  # values shown as the options (layer numbers, tokens, "first"/"second" keys)
    correct: int
    translate_choices: bool = False  # choices are catalog keys, not values

    def is_right(self, chosen: int | None) -> bool:
        return chosen == self.correct


def _layer_choices(answer: int, n_layers: int, seed: int) -> tuple[tuple[str, ...], int]:
    rng = random.Random(seed)
    others = [layer for layer in range(n_layers) if layer != answer]
    options = sorted([answer, *rng.sample(others, 3)])
    return tuple(str(o) for o in options), options.index(answer)


def lens_question(first_top_layer: int, target_label: str, n_layers: int, seed: int = 0) -> Question:
    """After which layer does the final top token become the top token and stay there?"""
    choices, correct = _layer_choices(first_top_layer, n_layers, seed)
    params = {"token": target_label, "last": n_layers - 1, "answer": first_top_layer}
    return Question("lens", params, choices, correct)


def ablation_question(layer: int, head: int, top_before: int, top_after: int, before_label: str,
                      after_label: str) -> Question:  # fmt: skip
    """Does zeroing this head change the most probable next token? (true/false)"""
    changed = top_before != top_after
    params = {"layer": layer, "head": head, "before": before_label, "after": after_label}
    return Question("ablation", params, ("heads.quiz_yes", "heads.quiz_no"), 0 if changed else 1, True)


def induction_question(loss_first: float, loss_second: float) -> Question:
    """Which copy of the repeated sequence has the lower mean loss?"""
    params = {"first": f"{loss_first:.2f}", "second": f"{loss_second:.2f}"}
    return Question("induction", params, ("heads.copy_first", "heads.copy_second"),
                    0 if loss_first < loss_second else 1, True)  # fmt: skip


def sink_question(first_token: np.ndarray, layer: int) -> Question:
    """In this layer, which head puts the most weight on the first token?"""
    row = np.asarray(first_token)[layer]
    best = int(np.argmax(row))
    return Question("sink", {"layer": layer, "value": f"{row[best]:.3f}", "head": best},
                    tuple(str(h) for h in range(len(row))), best)  # fmt: skip
