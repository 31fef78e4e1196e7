"""The quiz's questions as data: ids, catalog keys, the correct choice and the page that shows it.

No text lives here. A static question ``qid`` uses the catalog keys ``quiz.q_<qid>`` (question),
``quiz.q_<qid>_c<k>`` (choice k, multiple choice only; true/false uses ``quiz.true``/``quiz.false``)
and ``quiz.q_<qid>_why`` (explanation). Computed questions come from
``attention_core.labs.quiz.generate_question(kind, seed)``; their text is ``quiz.comp_<kind>`` and
``quiz.comp_<kind>_why``, filled from the question's params, so their answers are always right.

Pure helpers (no Streamlit): :func:`build_quiz` makes the seeded, shuffled list of
:class:`QuizItem`; :func:`score` counts answers.

One question interface, :class:`Worded`: a question in the reader's words, whatever made it (a
bank item through :func:`worded`, a question on the learner's sentence, an exam code question). The
quiz page shows its items through it, and the SCORM quiz, Moodle XML and GIFT files
(:mod:`attention_ui.takehome`) write nothing else.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from attention_core.labs.quiz import QUIZ_KINDS, QuizQuestion, generate_question, worked_numbers

# pages a question can point to (the paths registered in app.py)
PLAYGROUND = "app_pages/playground.py"
WHY_SQRT = "app_pages/scaling.py"
MASKS = "app_pages/masks.py"
MULTI_HEAD = "app_pages/multihead.py"
COST = "app_pages/cost.py"
LOOKALIKES = "app_pages/lookalikes.py"
POSITIONS = "app_pages/positions.py"
INFERENCE = "app_pages/inference.py"
BLOCK = "app_pages/block.py"
PAGE_TITLE_KEYS = {
    PLAYGROUND: "app.nav_playground",
    WHY_SQRT: "app.nav_scaling",
    MASKS: "app.nav_masks",
    MULTI_HEAD: "app.nav_multihead",
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


# One question a line: id, answer ("mc": multiple choice, choice 0 is right; "true"/"false": a
# true/false question and its answer), the page that shows the answer, the topic. Lines starting with
# "#" are notes. The order is the bank's order (build_quiz shuffles it with its seed).
_TABLE = """
    qkv_roles              mc     playground  qkv
    qkv_same_tensor        false  playground  qkv
    order                  mc     playground  order
    scale_after_softmax    false  why_sqrt    order
    why_sqrt               mc     why_sqrt    scaling
    saturation             mc     why_sqrt    scaling
    mask_where             mc     masks       mask
    zero_values_enough     false  masks       mask
    masked_weight          mc     masks       mask
    multi_head_meaning     mc     multi_head  multi_head
    heads_split_sequence   false  multi_head  multi_head
    heads_same_params      true   multi_head  multi_head
    cost_cause             mc     cost        cost
    projection_growth      mc     cost        cost
    flash_attention        mc     cost        efficient
    gqa                    mc     cost        efficient
    ring_linear            mc     cost        efficient
    cross_sources          mc     lookalikes  lookalikes
    cross_shape            mc     lookalikes  lookalikes
    additive               mc     lookalikes  lookalikes
    all_causal             false  lookalikes  causal
    causal_first_row       mc     lookalikes  causal
    rnn_path               mc     lookalikes  rnn
    rnn_parallel           false  lookalikes  rnn
    rnn_cost               mc     lookalikes  rnn
    padding_mask           mc     masks       mask
    subtract_max           false  playground  softmax
    rnn_memory             mc     lookalikes  rnn
    rnn_training_speed     mc     lookalikes  rnn
    self_vs_attention      mc     lookalikes  lookalikes
    linear_attention       mc     cost        efficient
    shuffle_no_positions   mc     positions   positions
    rope_offset            mc     positions   positions
    learned_table_beyond   false  positions   positions
    rope_on_values         false  positions   positions
    kv_cache_holds         mc     inference   inference
    mqa_meaning            mc     inference   inference
    cached_step_cost       mc     inference   inference
    bidirectional_cache    false  inference   inference
    # issue 14, part 3: efficient attention
    window_work            mc     cost        efficient
    window_same_model      false  cost        efficient
    linear_state           mc     cost        efficient
    exact_method           mc     cost        efficient
    # issue 14, part 4: the block around attention
    pre_ln                 mc     block       block
    rmsnorm_centres        false  block       block
    cross_kv               mc     block       block
    ffn_mixes_tokens       false  block       block
"""
_PAGES = {
    "playground": PLAYGROUND,
    "why_sqrt": WHY_SQRT,
    "masks": MASKS,
    "multi_head": MULTI_HEAD,
    "cost": COST,
    "lookalikes": LOOKALIKES,
    "positions": POSITIONS,
    "inference": INFERENCE,
    "block": BLOCK,
}


def _static_questions(table: str) -> tuple[StaticQuestion, ...]:
    """Parse :data:`_TABLE`: multiple choice has 4 choices (0 right), true/false 2 (0 = true)."""
    questions = []
    for line in table.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        qid, answer, page, topic = line.split()
        if answer == "mc":
            questions.append(StaticQuestion(qid, "mc", 4, 0, _PAGES[page], topic))
        else:
            questions.append(
                StaticQuestion(qid, "tf", 2, {"true": 0, "false": 1}[answer], _PAGES[page], topic)
            )
    return tuple(questions)


STATIC_QUESTIONS: tuple[StaticQuestion, ...] = _static_questions(_TABLE)

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


@dataclass(frozen=True)
class Choice:
    """One option in words: ``text`` is plain text (a number, a shape, tokens; lines of code when the
    question's ``code_choices``), ``feedback`` Markdown saying why this option is right or wrong."""

    text: str
    feedback: str


@dataclass(frozen=True)
class Worded:
    """A question in the reader's language: the prompt (Markdown), the options in display order,
    which is right, and the explanation shown after an answer (Markdown, with the question's numbers).
    ``program``: code shown under the prompt (an exam code question's program with its blank)."""

    qid: str
    prompt: str
    choices: tuple[Choice, ...]
    correct: int
    explanation: str
    program: str = ""
    code_choices: bool = False

    @property
    def answer(self) -> str:
        return self.choices[self.correct].text


def feedback_for(
    t, labels: Sequence[str], correct: int, explanation: str, slips: Mapping[int, str] | None = None
) -> tuple[Choice, ...]:
    """Each option with its feedback: right or wrong and the answer, then the slip that gives this
    option (``slips``: display index -> Markdown) or else the explanation."""
    out = []
    for k, label in enumerate(labels):
        if k == correct:
            head = t("takehome.fb_right", chosen=label)
        else:
            head = t("takehome.fb_wrong", chosen=label, answer=labels[correct])
        rest = (slips or {}).get(k, explanation)
        out.append(
            Choice(label, head + rest if head.endswith("。") else f"{head} {rest}")
        )  # no space after 。
    return tuple(out)


def worded(t, item: QuizItem) -> Worded:
    """A bank item (static or computed) in the reader's words."""
    values = explain_values(item.computed) if item.computed is not None else {}
    if item.computed is not None:
        unit = t("quiz.unit_mib") if item.computed.unit == "MiB" else item.computed.unit
        labels = [format_value(v, unit) for v in item.choice_values]
    else:
        labels = [t(k) for k in item.choice_keys]
    explanation = t(item.why_key, **values)
    return Worded(
        qid=item.qid,
        prompt=t(item.text_key, **values),
        choices=feedback_for(t, labels, item.correct, explanation),
        correct=item.correct,
        explanation=explanation,
    )
