"""Questions computed from a training run, so their answers are right by construction (the heads
page's :class:`~attention_ui.heads.questions.Question`: ``training.quiz_<qid>`` and ``…_why``)."""

from __future__ import annotations

import numpy as np

from attention_ui.heads.questions import Question

ACCURACY_MARK = 0.9  # "did the held-out accuracy reach 90 %?"


def previous_question(previous_token: np.ndarray) -> Question:
    """Which head has the highest previous-token score after training? (choices: "layer·head")"""
    scores = np.asarray(previous_token, float)
    layers, heads = scores.shape
    best = np.unravel_index(int(np.argmax(scores)), scores.shape)
    choices = tuple(f"{lay}·{h}" for lay in range(layers) for h in range(heads))
    params = {"layer": int(best[0]), "head": int(best[1]), "score": f"{scores.max():.3f}"}
    return Question("previous", params, choices, int(best[0]) * heads + int(best[1]))


def accuracy_question(final_accuracy: float, mark: float = ACCURACY_MARK) -> Question:
    """Did the held-out accuracy reach ``mark``? (yes/no)"""
    params = {"acc": f"{100 * final_accuracy:.1f}", "mark": f"{100 * mark:.0f}"}
    reached = final_accuracy >= mark
    return Question("accuracy", params, ("training.quiz_yes", "training.quiz_no"), 0 if reached else 1, True)


def pattern_question(pattern: str, layer: int, head: int) -> Question:
    """Which pattern does ``head`` of ``layer`` show after training?"""
    from .patterns import PATTERNS

    choices = tuple(f"training.pattern_{p}" for p in PATTERNS)
    return Question("pattern", {"layer": layer, "head": head}, choices, PATTERNS.index(pattern), True)


def from_run(run, found) -> list[Question]:
    items = [accuracy_question(float(run.final_accuracy))]
    if np.asarray(run.previous_token).size > 1:  # with one head there is nothing to choose
        items.insert(0, previous_question(run.previous_token))
    # not the head the reveal names (the last layer's head 0): the last layer's last head, or layer 0's
    layer, head = (found.layers - 1, found.heads - 1) if found.heads > 1 else (0, 0)
    if (layer, head) != (found.layers - 1, 0):
        items.append(pattern_question(found.pattern[layer][head], layer, head))
    return items
