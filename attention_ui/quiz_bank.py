"""The quiz's questions as data: ids, catalog keys, the correct choice and the page that shows it.

No text lives here. A static question ``qid`` uses the catalog keys ``quiz.q_<qid>`` (question),
``quiz.q_<qid>_c<k>`` (choice k, multiple choice only; true/false uses ``quiz.true``/``quiz.false``)
and ``quiz.q_<qid>_why`` (explanation). Computed questions come from
``attention_core.labs.quiz.generate_question(kind, seed)``; their text is ``quiz.comp_<kind>`` and
``quiz.comp_<kind>_why``, filled from the question's params, so their answers are always right.

Pure helpers (no Streamlit): :func:`build_quiz` makes the seeded, shuffled list of
:class:`QuizItem`; :func:`score` counts answers.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from attention_core.labs.quiz import QUIZ_KINDS, QuizQuestion, generate_question, worked_numbers

# pages a question can point to (the paths registered in app.py)
PLAYGROUND = "app_pages/playground.py"
WHY_SQRT = "app_pages/why_sqrt_dk.py"
MASKS = "app_pages/masks.py"
MULTI_HEAD = "app_pages/multi_head.py"
COST = "app_pages/cost.py"
LOOKALIKES = "app_pages/lookalikes.py"
POSITIONS = "app_pages/positions.py"
INFERENCE = "app_pages/inference.py"
BLOCK = "app_pages/block.py"
PAGE_TITLE_KEYS = {
    PLAYGROUND: "app.nav_playground",
    WHY_SQRT: "app.nav_why_sqrt",
    MASKS: "app.nav_masks",
    MULTI_HEAD: "app.nav_multi_head",
    COST: "app.nav_cost",
    LOOKALIKES: "app.nav_lookalikes",
    POSITIONS: "app.nav_positions",
    INFERENCE: "app.nav_inference",
    BLOCK: "app.nav_block",
}


@dataclass(frozen=True)
class StaticQuestion:
    qid: str
    kind: str  # "mc" or "tf"
    n_choices: int  # 4 for multiple choice, 2 for true/false
    correct: int  # index of the right choice in catalog order (tf: 0 = true, 1 = false)
    link: str  # page path that shows the answer
    topic: str  # the exam trap / recall check it covers


def _mc(qid: str, correct: int, link: str, topic: str) -> StaticQuestion:
    return StaticQuestion(qid, "mc", 4, correct, link, topic)


def _tf(qid: str, true: bool, link: str, topic: str) -> StaticQuestion:
    return StaticQuestion(qid, "tf", 2, 0 if true else 1, link, topic)


STATIC_QUESTIONS: tuple[StaticQuestion, ...] = (
    _mc("qkv_roles", 0, PLAYGROUND, "qkv"),
    _tf("qkv_same_tensor", False, PLAYGROUND, "qkv"),
    _mc("order", 0, PLAYGROUND, "order"),
    _tf("scale_after_softmax", False, WHY_SQRT, "order"),
    _mc("why_sqrt", 0, WHY_SQRT, "scaling"),
    _mc("saturation", 0, WHY_SQRT, "scaling"),
    _mc("mask_where", 0, MASKS, "mask"),
    _tf("zero_values_enough", False, MASKS, "mask"),
    _mc("masked_weight", 0, MASKS, "mask"),
    _mc("multi_head_meaning", 0, MULTI_HEAD, "multi_head"),
    _tf("heads_split_sequence", False, MULTI_HEAD, "multi_head"),
    _tf("heads_same_params", True, MULTI_HEAD, "multi_head"),
    _mc("cost_cause", 0, COST, "cost"),
    _mc("projection_growth", 0, COST, "cost"),
    _mc("flash_attention", 0, COST, "efficient"),
    _mc("gqa", 0, COST, "efficient"),
    _mc("ring_linear", 0, COST, "efficient"),
    _mc("cross_sources", 0, LOOKALIKES, "lookalikes"),
    _mc("cross_shape", 0, LOOKALIKES, "lookalikes"),
    _mc("additive", 0, LOOKALIKES, "lookalikes"),
    _tf("all_causal", False, LOOKALIKES, "causal"),
    _mc("causal_first_row", 0, LOOKALIKES, "causal"),
    _mc("rnn_path", 0, LOOKALIKES, "rnn"),
    _tf("rnn_parallel", False, LOOKALIKES, "rnn"),
    _mc("rnn_cost", 0, LOOKALIKES, "rnn"),
    _mc("padding_mask", 0, MASKS, "mask"),
    _tf("subtract_max", False, PLAYGROUND, "softmax"),
    _mc("rnn_memory", 0, LOOKALIKES, "rnn"),
    _mc("rnn_training_speed", 0, LOOKALIKES, "rnn"),
    _mc("self_vs_attention", 0, LOOKALIKES, "lookalikes"),
    _mc("linear_attention", 0, COST, "efficient"),
    _mc("shuffle_no_positions", 0, POSITIONS, "positions"),
    _mc("rope_offset", 0, POSITIONS, "positions"),
    _tf("learned_table_beyond", False, POSITIONS, "positions"),
    _tf("rope_on_values", False, POSITIONS, "positions"),
    _mc("kv_cache_holds", 0, INFERENCE, "inference"),
    _mc("mqa_meaning", 0, INFERENCE, "inference"),
    _mc("cached_step_cost", 0, INFERENCE, "inference"),
    _tf("bidirectional_cache", False, INFERENCE, "inference"),
    # issue 14, part 3: efficient attention
    _mc("window_work", 0, COST, "efficient"),
    _tf("window_same_model", False, COST, "efficient"),
    _mc("linear_state", 0, COST, "efficient"),
    _mc("exact_method", 0, COST, "efficient"),
    # issue 14, part 4: the block around attention
    _mc("pre_ln", 0, BLOCK, "block"),
    _tf("rmsnorm_centres", False, BLOCK, "block"),
    _mc("cross_kv", 0, BLOCK, "block"),
    _tf("ffn_mixes_tokens", False, BLOCK, "block"),
)

COMPUTED_LINKS = {
    "causal_weight": MASKS,
    "scores_shape": PLAYGROUND,
    "attention_memory": COST,
    "dot_variance": WHY_SQRT,
    "memory_ratio": COST,
    "head_dim": MULTI_HEAD,
    "multihead_params": MULTI_HEAD,
    "padding_cells": MASKS,
    "softmax_shift": PLAYGROUND,
    "sqrt_divisor": WHY_SQRT,
    "kv_cache_size": INFERENCE,
    "sinusoidal_value": POSITIONS,
    "window_scores": COST,
    "block_crossover": BLOCK,
    "ring_send_bytes": COST,
    "ssm_weight": LOOKALIKES,
}


@dataclass(frozen=True)
class QuizItem:
    """One question as the page shows it: choices in display order, the right one marked."""

    qid: str  # unique in a quiz: the static id, or "comp_<kind>"
    kind: str  # "mc", "tf" or "computed"
    text_key: str  # catalog key of the question
    why_key: str  # catalog key of the explanation
    choice_keys: tuple[str, ...]  # catalog keys of the choices in display order (static questions)
    choice_values: tuple  # computed questions: the values in display order; () for static ones
    correct: int  # index into the display order
    link: str
    computed: QuizQuestion | None = None

    @property
    def n_choices(self) -> int:
        return len(self.choice_values) if self.computed is not None else len(self.choice_keys)


def static_item(q: StaticQuestion, rng: random.Random) -> QuizItem:
    if q.kind == "tf":  # keep "true, false" in that order: shuffling them only confuses
        keys = ("quiz.true", "quiz.false")
        order = [0, 1]
    else:
        keys = tuple(f"quiz.q_{q.qid}_c{k}" for k in range(q.n_choices))
        order = list(range(q.n_choices))
        rng.shuffle(order)
    return QuizItem(
        qid=q.qid,
        kind=q.kind,
        text_key=f"quiz.q_{q.qid}",
        why_key=f"quiz.q_{q.qid}_why",
        choice_keys=tuple(keys[i] for i in order),
        choice_values=(),
        correct=order.index(q.correct),
        link=q.link,
    )


def computed_item(kind: str, seed: int) -> QuizItem:
    q = generate_question(kind, seed)
    return QuizItem(
        qid=f"comp_{kind}",
        kind="computed",
        text_key=f"quiz.comp_{kind}",
        why_key=f"quiz.comp_{kind}_why",
        choice_keys=(),
        choice_values=tuple(q.choices),
        correct=q.answer_index,
        link=COMPUTED_LINKS[kind],
        computed=q,
    )


def build_quiz(seed: int) -> tuple[QuizItem, ...]:
    """Every static question plus one computed question per kind, in an order shuffled by ``seed``.

    The same seed always gives the same quiz (order, choice order, computed numbers); the random
    source is a local ``random.Random(seed)``, never global state.
    """
    rng = random.Random(seed)
    items = [static_item(q, rng) for q in STATIC_QUESTIONS]
    items += [computed_item(kind, seed) for kind in QUIZ_KINDS]
    rng.shuffle(items)
    return tuple(items)


@dataclass(frozen=True)
class Score:
    """How a learner did on a set of questions."""

    answered: int  # questions with an answer (the first one counts)
    correct: int  # of those, answered right
    total: int  # questions in the set


def score(items: Sequence[QuizItem], answers: Mapping[str, int]) -> Score:
    """Count answers (``qid -> chosen display index``) for ``items``; others are ignored."""
    answered = [it for it in items if it.qid in answers]
    correct = sum(1 for it in answered if answers[it.qid] == it.correct)
    return Score(len(answered), correct, len(items))


def missed_ids(items: Sequence[QuizItem], answers: Mapping[str, int]) -> list[str]:
    return [it.qid for it in items if it.qid in answers and answers[it.qid] != it.correct]


def format_value(value, unit: str | None = None) -> str:
    """A computed choice as text: shapes ``5 × 5``, integers with thousands separators, floats
    with 3 decimals (weights), or 6 significant digits when they carry a unit (MiB)."""
    if isinstance(value, tuple):
        return " × ".join(str(int(v)) for v in value)
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        text = f"{int(value):,}"
    elif unit is None:
        text = f"{float(value):.3f}"
    else:
        text = f"{float(value):,.6g}"
    return f"{text} {unit}" if unit else text


def _row_text(values) -> str:
    return "[" + ", ".join("−∞" if np.isneginf(v) else f"{v:.3f}" for v in values) + "]"


def explain_values(q: QuizQuestion) -> dict:
    """Placeholder values for ``quiz.comp_<kind>`` and ``quiz.comp_<kind>_why``.

    The intermediate numbers (the scaled scores of a causal example, byte counts) come from the
    core's :func:`attention_core.labs.quiz.worked_numbers`, the same arithmetic the answer came from.
    """
    p = dict(q.params)
    values: dict = {k: v for k, v in p.items() if k not in ("Q", "K", "scaled")}
    values["answer"] = format_value(q.answer, q.unit)
    worked = worked_numbers(q)
    if q.kind == "causal_weight":
        values["Q"] = str(p["Q"])
        values["K"] = str(p["K"])
        values["scores"] = _row_text(worked["scores"])
        values["weights"] = _row_text(worked["weights"])
    elif q.kind == "attention_memory":
        values["elements"] = f"{worked['elements']:,}"
        values["bytes"] = f"{worked['bytes']:,}"
        values["n"] = f"{p['n']:,}"
    elif q.kind == "dot_variance":
        values["expr"] = "q·k/√d_k" if p["scaled"] else "q·k"
    elif q.kind == "multihead_params":
        values["d_model"] = p["d_model"]
    elif q.kind == "softmax_shift":
        values["scores"] = "[" + ", ".join(str(int(x)) for x in p["scores"]) + "]"
        values["m"] = f"{worked['max']:g}"
        values["shifted"] = "[" + ", ".join(f"{x:g}".replace("-", "−") for x in worked["shifted"]) + "]"
        values["exps"] = _row_text(worked["exps"])
        values["total"] = f"{worked['exps'].sum():.3f}"
        values["exp_col"] = f"{worked['exps'][p['col']]:.3f}"
    elif q.kind == "kv_cache_size":
        values["n"] = f"{p['n']:,}"
        values["bytes"] = f"{worked['bytes']:,}"
    elif q.kind == "ring_send_bytes":
        values["n"] = f"{p['n']:,}"
        values["per_hop"] = format_value(q.answer / (p["P"] - 1), q.unit)
    elif q.kind == "ssm_weight":
        values.update({k: f"{p[k]:g}" for k in ("a", "b", "c")})
    elif q.kind == "sqrt_divisor":
        values["sqrt128"] = f"{worked['sqrt128']:.1f}"
    return values
