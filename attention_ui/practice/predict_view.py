"""Predict-then-reveal: the learner answers a checkable question before a map is shown.

A :class:`Question` is built from arrays a trace, a lab or an exercise already holds; its answer
comes from :mod:`attention_core.predict` and nothing here recomputes attention. :func:`ask` draws
the question while it is unanswered (and returns False: the caller holds the map back), then the
verdict, right or wrong, above the map (and returns True). Practice mode (``pr_mode``, off by
default, so presenter mode and a first visit show every map at once) turns the questions on.

Hooks: :func:`before_step` (the playground's steps), :func:`masks_lab`, :func:`cost_lab`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from attention_core import predict
from attention_ui import kit
from attention_ui.playground.settings import TABLE as PLAYGROUND
from attention_ui.practice.settings import TABLE

key = TABLE.key
MODE_KEY = key("mode")
# attention_ui.playground.presenter.PRESENT_KEY, not imported: presenter imports steps_view, which
# imports this module.
PRESENT_KEY = PLAYGROUND.key("present")
FACTOR_OPTIONS = (2, 4, 8, 16)  # "doubling n multiplies the memory by ..."
COST_N = 2_048  # the n of the cost lab's question (the notes' first row)
SHAPE_MAX = 1_000_000
HELD_KEY = TABLE.key("held")  # a question of this run waits: the later per-head steps wait with it
HELD_STEPS = ("scaled", "mask", "masked", "softmax", "head_out")
SKIPPED = "skipped"  # stored instead of a response when the learner chose to see the map directly
KINDS = ("shape", "key", "keys", "yesno", "factor")


@dataclass(frozen=True)
class Question:
    """One checkable prediction. ``prompt`` is a catalog key filled with ``values``.

    ``answer``: ``(rows, cols)`` for "shape", the winning keys (any one is right) for "key", the
    frozenset of removed keys for "keys", a bool for "yesno", a whole factor for "factor".
    ``labels`` name the options (token text: shown as plain text or escaped, never as Markdown).
    """

    qid: str
    kind: str
    prompt: str
    values: tuple[tuple[str, object], ...]
    answer: object
    options: tuple[int, ...] = ()
    labels: tuple[str, ...] = ()
    explain: str = ""  # catalog key shown with the verdict, filled with ``values``

    @property
    def signature(self) -> str:
        """What the stored answer belongs to: a new sentence or setting asks afresh."""
        return repr((self.kind, self.prompt, self.values, self.answer, self.options, self.labels))


def token_labels(tokens: Sequence[str]) -> tuple[str, ...]:
    """``0 · the``, ``1 · cat``, …: the options of a key question, numbered as the maps number them."""
    return tuple(f"{j} · {tok}" for j, tok in enumerate(tokens))


def pick_row(weights) -> int:
    """The row a question is about: the middle one, or the first after it that keeps a key."""
    n = len(weights)
    for i in [*range(n // 2, n), *range(n // 2)]:
        if predict.winning_keys(weights[i]):
            return i
    return n // 2


def shape_question(qid: str, Q, K) -> Question:
    """The shape of QKᵀ for one head's ``Q [n_q, d_k]`` and ``K [n_k, d_k]``."""
    n_q, d_k = Q.shape
    values = (("n_q", n_q), ("n_k", K.shape[0]), ("d_k", d_k))
    return Question(
        qid, "shape", "practice.q_shape", values, predict.scores_shape(Q, K), explain="practice.why_shape"
    )


def winner_question(qid: str, weights, row: int, labels: Sequence[str], first: int = 0) -> Question:
    """Which key gets the largest weight in ``row`` of ``weights [n_q, n_k]`` (ties: any tied key).
    ``first``: the number the learner sees for row 0 (1 where the exercise is printed from 1)."""
    answer = predict.winning_keys(weights[row])
    opts = tuple(range(len(labels)))
    values = (("row", row + first),)
    return Question(
        qid, "key", "practice.q_winner", values, answer, opts, tuple(labels), "practice.why_winner"
    )


def masked_row_question(qid: str, allowed, row: int, labels: Sequence[str], first: int = 0) -> Question:
    """Which keys the mask removes from query ``row`` (``allowed [n_q, n_k]``, True = kept);
    ``first`` as in :func:`winner_question`."""
    answer = frozenset(j for i, j in predict.masked_cells(allowed) if i == row)
    opts = tuple(range(len(labels)))
    return Question(
        qid,
        "keys",
        "practice.q_masked",
        (("row", row + first),),
        answer,
        opts,
        tuple(labels),
        "practice.why_masked",
    )


def sums_question(qid: str, weights, row: int, first: int = 0) -> Question:
    """Whether row ``row`` of the (masked) weights still sums to 1; ``first`` as in :func:`winner_question`."""
    answer = predict.row_sums_to_one(weights[row])
    values = (("row", row + first),)
    return Question(qid, "yesno", "practice.q_sums", values, answer, explain="practice.why_sums")


def memory_question(qid: str, n: int = COST_N) -> Question:
    """By what factor the n × n score matrix's memory grows when n doubles."""
    answer = predict.memory_factor_when_doubling(n)
    return Question(
        qid, "factor", "practice.q_memory", (("n", n),), answer, FACTOR_OPTIONS, explain="practice.why_memory"
    )


def is_right(q: Question, response: object) -> bool:
    """Whether ``response`` (what the question's widget returns) is the right prediction."""
    if q.kind == "shape":
        return tuple(int(x) for x in response) == tuple(q.answer)
    if q.kind == "key":
        return response in q.answer
    if q.kind == "keys":
        return frozenset(response) == q.answer
    if q.kind == "yesno":
        return bool(response) is q.answer
    if q.kind == "factor":
        return response == q.answer
    raise ValueError(f"unknown question kind {q.kind!r}")


def answer_text(t, q: Question, value: object) -> str:
    """A response or the answer as Markdown-safe text (token labels escaped)."""
    if q.kind == "shape":
        return f"{int(value[0])} × {int(value[1])}"
    if q.kind in ("key", "keys"):
        keys = sorted(value) if q.kind == "keys" else (value if isinstance(value, tuple) else (value,))
        if not keys:
            return t("practice.none")
        return ", ".join(kit.escape_markdown(q.labels[j]) for j in keys)
    if q.kind == "yesno":
        return t("practice.yes") if value else t("practice.no")
    return f"× {value}"


# --- Streamlit --------------------------------------------------------------------------------------


def active() -> bool:
    return bool(st.session_state.get(MODE_KEY, False))


def mode_toggle(t, where=st) -> None:
    """The practice-mode switch (one session key for every page)."""
    where.toggle(t("practice.mode"), key=MODE_KEY, help=t("practice.mode_help"), persist_state=kit.KEEP)


def store(q: Question, response: object) -> None:
    st.session_state[key("ans", q.qid)] = (q.signature, response)


def _submit(q: Question) -> None:
    value = st.session_state.get(key("in", q.qid))
    if q.kind == "shape":
        value = (st.session_state.get(key("in", q.qid, "r")), st.session_state.get(key("in", q.qid, "c")))
        value = None if None in value else value
    if q.kind == "keys" and value is None:
        value = ()
    if value is None:
        st.session_state[key("missing", q.qid)] = True
        return
    st.session_state[key("missing", q.qid)] = False
    store(q, tuple(value) if q.kind in ("shape", "keys") else value)


def stored(q: Question) -> object | None:
    """The learner's response to ``q`` (or SKIPPED), None while unanswered."""
    saved = st.session_state.get(key("ans", q.qid))
    return saved[1] if saved is not None and saved[0] == q.signature else None


def _input(t, q: Question) -> None:
    name = key("in", q.qid)
    if q.kind == "shape":
        c1, c2, _ = st.columns([1, 1, 2])
        c1.number_input(t("practice.rows"), 1, SHAPE_MAX, value=None, step=1, key=key("in", q.qid, "r"))
        c2.number_input(t("practice.cols"), 1, SHAPE_MAX, value=None, step=1, key=key("in", q.qid, "c"))
    elif q.kind == "key":
        names = dict(zip(q.options, q.labels, strict=True))
        st.selectbox(
            t("practice.your_key"),
            q.options,
            index=None,
            format_func=names.get,
            key=name,
            placeholder=t("practice.choose_key"),
        )
    elif q.kind == "keys":
        names = dict(zip(q.options, q.labels, strict=True))
        st.multiselect(
            t("practice.your_keys"),
            q.options,
            format_func=names.get,
            key=name,
            placeholder=t("practice.choose_keys"),
        )
    elif q.kind == "yesno":
        yes_no = {True: t("practice.yes"), False: t("practice.no")}
        st.radio(
            t("practice.your_answer"),
            (True, False),
            index=None,
            format_func=yes_no.get,
            key=name,
            horizontal=True,
        )
    else:
        st.radio(
            t("practice.your_answer"),
            q.options,
            index=None,
            format_func=lambda f: f"× {f}",
            key=name,
            horizontal=True,
        )


def verdict(t, q: Question, response: object) -> None:
    """Right or wrong, what was predicted and the answer, with why."""
    if response == SKIPPED:
        st.caption(t("practice.skipped", answer=answer_text(t, q, q.answer)))
        return
    values = dict(q.values)
    mine, answer = answer_text(t, q, response), answer_text(t, q, q.answer)
    if is_right(q, response):
        st.success(t("practice.right", mine=mine), icon=":material/check_circle:")
    else:
        st.error(t("practice.wrong", mine=mine, answer=answer), icon=":material/cancel:")
    if q.explain:
        st.caption(t(q.explain, **values))


def ask(t, q: Question, always: bool = False) -> bool:
    """The question while unanswered (False: hold the map back), else its verdict (True).

    Only in practice mode, unless ``always`` (the guided path asks whatever the mode)."""
    if not (always or active()):
        return True
    response = stored(q)
    if response is not None:
        verdict(t, q, response)
        return True
    with st.container(border=True, key=key("box", q.qid)):
        st.markdown(t("practice.predict_first"))
        st.markdown(t(q.prompt, **dict(q.values)))
        _input(t, q)
        if st.session_state.get(key("missing", q.qid)):
            st.warning(t("practice.missing"))
        c1, c2, _ = st.columns([1, 1, 2])
        c1.button(t("practice.check"), key=key("check", q.qid), on_click=_submit, args=(q,), type="primary")
        c2.button(t("practice.show"), key=key("skip", q.qid), on_click=store, args=(q, SKIPPED))
    return False


def ask_all(t, questions: Sequence[Question], always: bool = False) -> bool:
    """Every question of a stop; True once all are answered (or skipped)."""
    return all([ask(t, q, always) for q in questions])


# --- hooks ------------------------------------------------------------------------------------------


def _playground_question(view, name: str) -> Question | None:
    tr, h = view.trace, view.head
    if name == "raw":
        return shape_question("pg_raw", tr.Q[h], tr.K[h])
    row = pick_row(tr.weights[h])
    if name == "mask" and not tr.mask.all():
        return masked_row_question("pg_mask", tr.mask, row, token_labels(tr.tokens))
    if name == "softmax":
        return winner_question("pg_softmax", tr.weights[h], row, token_labels(tr.tokens))
    return None


def before_step(view, name: str) -> bool:
    """The playground's hook (steps_view.render_step): False while the step's question waits.

    While a question waits, the per-head steps after it wait too (their maps would give the answer
    away); presenter mode draws one step at a time and holds nothing back.
    """
    present = bool(st.session_state.get(PRESENT_KEY))
    if name == "x" and not present and getattr(view, "practice_switch", True):
        with st.sidebar:
            mode_toggle(view.t)
    if name in ("x", "qkv"):  # the start of a full run and of a per-head fragment run
        st.session_state[HELD_KEY] = False
    if not active():
        return True
    if name in HELD_STEPS and st.session_state.get(HELD_KEY) and not present:
        st.caption(view.t("practice.held"))
        return False
    q = _playground_question(view, name)
    shown = True if q is None else ask(view.t, q)
    st.session_state[HELD_KEY] = st.session_state.get(HELD_KEY, False) or not shown
    return shown


def masks_lab(t, lab) -> bool:
    """The masks lab's hook, before its three maps: the removed keys of one row and its sum."""
    with st.sidebar:
        mode_toggle(t)
    if not active():
        return True
    weights = lab.methods[0].effective_weights
    row = pick_row(weights)
    tokens = token_labels(lab.settings.tokens)
    return ask_all(
        t,
        [
            masked_row_question("masks_mask", lab.mask.allowed, row, tokens),
            sums_question("masks_sums", weights, row),
        ],
    )


def cost_lab(t) -> bool:
    """The cost lab's hook, before its tables and charts: what doubling n does to memory."""
    with st.sidebar:
        mode_toggle(t)
    return ask(t, memory_question("cost_double")) if active() else True
