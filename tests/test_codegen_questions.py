"""Exam code questions (attention_core/codegen_questions.py): every option is run on the learner's
sentence, a trap that gives the right numbers here is never offered, and every consequence number is
the run's own. The fragments are checked by splicing each into the blank of the question's program
and running that text, independently of how the generator wrote the trap."""

from __future__ import annotations

import contextlib
import io
import math
import warnings

import numpy as np
import pytest

from attention_core import AttentionConfig, codegen, tokenize
from attention_core import codegen_questions as cq

TOKENS = tokenize("the cat sat on the mat").tokens
JA_TOKENS = tokenize("猫がマットの上に座った").tokens
RICH = AttentionConfig(d_model=16, heads=2, mask="causal+padding", pad=1)
SETTINGS = [
    ("rich", RICH, TOKENS),
    ("one_head_ja", AttentionConfig(d_model=6, heads=1, mask="causal", scale=2.5), JA_TOKENS),
    ("plain", AttentionConfig(d_model=8, heads=4, d_k=3, d_v=5, positional=False), TOKENS),
    ("padding_ja", AttentionConfig(d_model=12, heads=3, mask="padding", pad=2, scale="none"), JA_TOKENS),
    ("large_scores", AttentionConfig(d_model=16, heads=2, mask="causal", scale=1e-3), TOKENS),
]


def test_twelve_templates_whose_traps_are_the_catalogue():
    assert len(cq.TEMPLATES) >= 12
    assert len(set(cq.TEMPLATE_NAMES)) == len(cq.TEMPLATES)
    for template in cq.TEMPLATES:
        assert len(template.wrongs) >= cq.N_OPTIONS - 1
        for name in template.wrongs:
            codegen.mutation_by_name(name)
    used = {name for t in cq.TEMPLATES for name in t.wrongs}
    assert used == set(codegen.MUTATION_NAMES)  # every trap of the catalogue is asked somewhere
    with pytest.raises(ValueError, match="unknown code question"):
        cq.template_by_name("nope")


def _splice_and_run(question: cq.CodeQuestion, option: cq.CodeOption, config, tokens) -> dict:
    """The question's own text with ``option`` in the blank, run after the settings, X and the weights
    of the right program (what the context line says): independent of the mutation that made it."""
    right = codegen.layer_program(config, tokens)
    start = "\n".join(
        "\n".join(right.blocks[b]) for b in ("setup", "softmax_fn", "x", "weights") if b in right.blocks
    )
    text = "\n".join([*question.before, *option.fragment, *question.after])
    ns: dict = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(start + "\n" + text, ns)  # noqa: S102 - generated here
    return ns


@pytest.mark.parametrize(("name", "config", "tokens"), SETTINGS, ids=[s[0] for s in SETTINGS])
def test_every_offered_wrong_option_gives_other_numbers_here(name, config, tokens):
    questions = cq.code_questions(config, tokens, seed=1)
    assert questions
    right_ns = codegen.run_program(codegen.layer_program(config, tokens))
    for q in questions:
        assert len(q.options) == cq.N_OPTIONS
        assert [o.mutation for o in q.options].count(None) == 1
        assert q.answer.mutation is None and q.answer.outcome.right
        assert len({o.fragment for o in q.options}) == cq.N_OPTIONS  # four different fragments
        runs = []  # what each option gave: its weights and output, or its error
        for option in q.options:
            try:
                ns = _splice_and_run(q, option, config, tokens)
            except (ValueError, IndexError) as err:  # the fragment stops the program, as recorded
                assert option.outcome.stopped and type(err).__name__ in option.outcome.error
                runs.append(str(err))
                continue
            assert not option.outcome.stopped
            runs.append((np.asarray(ns["weights"], dtype=float), np.asarray(ns["output"], dtype=float)))
            same = (
                np.shape(ns["output"]) == np.shape(right_ns["output"])
                and np.allclose(ns["output"], right_ns["output"], rtol=1e-9, atol=1e-12)
                and np.allclose(ns["weights"], right_ns["weights"], rtol=1e-9, atol=1e-12)
            )
            assert same == (option.mutation is None), (q.template, option.mutation)
        for i, a in enumerate(runs):  # and no two options give the same numbers as each other
            for b in runs[:i]:
                assert not _same_run(a, b), q.template


def _same_run(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return all(x.shape == y.shape and np.allclose(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))


def test_two_fragments_are_copies_only_with_the_same_numbers_or_the_same_error():
    w, out = np.array([[0.5, np.nan]]), np.array([[1.0, 2.0]])
    assert cq._same_numbers((w, out), (w.copy(), out + 1e-13))  # NaN is NaN; within 1e-12
    assert not cq._same_numbers((w, out), (w, out * (1 + 1e-7)))  # 1e-7 apart: other numbers
    assert not cq._same_numbers((w, 0 * out), (w, 0 * out + 1e-10))  # 1e-10 from 0: beyond 1e-12
    assert not cq._same_numbers((w, out), (w[:, :1], out))  # another shape
    assert not cq._same_numbers((w, out), (np.array([[0.5, 0.5]]), out))  # other weights
    assert cq._same_numbers("ValueError: x", "ValueError: x")
    assert not cq._same_numbers("ValueError: x", "ValueError: y")
    assert not cq._same_numbers("ValueError: x", (w, out)) and not cq._same_numbers((w, out), "x")
    assert cq._numbers(None, "ValueError: x") == "ValueError: x"
    weights, output = cq._numbers({"weights": [[1.0]], "output": [[2.0]]}, None)
    assert weights.tolist() == [[1.0]] and output.tolist() == [[2.0]]


def _asked(monkeypatch, *wrongs: str) -> tuple[cq.CodeQuestion, set]:
    """A question of a template made here with these candidate traps, and the mutations it offers."""
    monkeypatch.setattr(cq, "TEMPLATES", (*cq.TEMPLATES, cq.Template("made_here", wrongs)))
    q = cq.code_question("made_here", RICH, TOKENS)
    return q, {o.mutation for o in q.options}


def test_two_fragments_that_stop_with_other_errors_are_both_offered(monkeypatch):
    # K for K.T (n != d_k) and the heads stacked along the tokens both stop, each with its own error
    q, offered = _asked(
        monkeypatch, "k_not_transposed", "heads_merged_along_tokens", "no_scaling", "divide_by_d_k"
    )
    assert offered == {None, "k_not_transposed", "heads_merged_along_tokens", "no_scaling"}
    errors = {o.outcome.error for o in q.options if o.outcome.stopped}
    assert len(errors) == 2 and all(e.startswith("ValueError") for e in errors)


def test_a_trap_with_the_numbers_of_an_offered_one_is_not_offered(monkeypatch):
    # K for V and V from W_K give the same weights and the same output (weights @ X W_K, both)
    _, offered = _asked(
        monkeypatch, "keys_as_values", "v_from_w_k", "weights_transposed", "scores_as_weights"
    )
    assert offered == {None, "keys_as_values", "weights_transposed", "scores_as_weights"}
    config = AttentionConfig(d_model=8, heads=1, mask="causal")
    a = codegen.run_program(codegen.layer_program(config, TOKENS, "keys_as_values"))
    b = codegen.run_program(codegen.layer_program(config, TOKENS, "v_from_w_k"))
    assert np.array_equal(a["weights"], b["weights"]) and np.allclose(a["output"], b["output"], rtol=1e-12)


def test_a_trap_with_the_right_numbers_here_is_not_offered():
    # No overflow at these sizes: the max subtraction changes nothing, so its question is not asked
    assert cq.code_question("softmax_stability", RICH, TOKENS) is None
    # and its traps really give the same numbers here (what the filter decided on)
    right = codegen.run_program(codegen.layer_program(RICH, TOKENS))
    for name in ("no_max_subtraction", "max_added", "min_subtracted"):
        ns = codegen.run_program(codegen.layer_program(RICH, TOKENS, name))
        assert np.allclose(ns["output"], right["output"], rtol=1e-9, atol=1e-12)
    # with scores large enough to overflow exp, the same question is asked, all three traps give nan
    big = AttentionConfig(d_model=16, heads=2, mask="causal", scale=1e-3)
    q = cq.code_question("softmax_stability", big, TOKENS)
    assert q is not None
    for option in q.options:
        if option.mutation is not None:
            assert option.outcome.overflow and option.outcome.nan_output > 0
    # without a mask, the mask's values change nothing but the inverted mask: too few traps to ask
    assert cq.code_question("mask_values", AttentionConfig(), TOKENS) is None
    ns_inverted = codegen.run_program(codegen.layer_program(AttentionConfig(), TOKENS, "mask_inverted"))
    assert not np.asarray(ns_inverted["weights"]).any()  # every key masked: all zero
    # one head: nothing to merge
    assert cq.code_question("merge_heads", AttentionConfig(d_model=8, heads=1), TOKENS) is None


def test_templates_ask_only_what_the_settings_have():
    none = AttentionConfig(scale="none")
    assert cq.code_question("scale_divisor", none, TOKENS) is None
    assert cq.code_question("scale_order", none, TOKENS) is None
    assert cq.code_question("causal_mask", AttentionConfig(mask="padding", pad=1), TOKENS) is None
    assert cq.code_question("padding_mask", AttentionConfig(mask="padding", pad=0), TOKENS) is None
    assert cq.code_question("padding_mask", AttentionConfig(mask="padding", pad=1), TOKENS) is not None
    custom = AttentionConfig(scale=2.0, mask="causal")
    assert cq.code_question("scale_divisor", custom, TOKENS) is None  # d_k vs √d_k: only for √d_k
    assert cq.code_question("scale_order", custom, TOKENS) is not None
    names = [q.template for q in cq.code_questions(RICH, TOKENS)]
    assert names == [t for t in cq.TEMPLATE_NAMES if t != "softmax_stability"]


def _option(q, mutation):
    return next(o for o in q.options if o.mutation == mutation)


def test_consequences_are_the_runs_numbers():
    d_k = RICH.head_dim_k
    q = cq.code_question("scale_order", RICH, TOKENS)
    late = _option(q, "scale_after_softmax").outcome
    assert math.isclose(late.row_sum_min, 1 / math.sqrt(d_k), rel_tol=1e-12)
    assert math.isclose(late.row_sum_max, 1 / math.sqrt(d_k), rel_tol=1e-12)
    right = q.answer.outcome
    assert right.distance == 0.0 and right.forbidden_weight == 0.0 and right.nan_output == 0
    assert math.isclose(right.row_sum_min, 1.0, rel_tol=1e-12) and math.isclose(right.row_sum_max, 1.0)
    # the distance is the largest difference of the outputs, computed here again
    right_ns = codegen.run_program(codegen.layer_program(RICH, TOKENS))
    late_ns = codegen.run_program(codegen.layer_program(RICH, TOKENS, "scale_after_softmax"))
    assert late.distance == float(np.max(np.abs(late_ns["output"] - right_ns["output"])))

    q = cq.code_question("causal_mask", RICH, TOKENS)
    diagonal = _option(q, "triu_k0_masks_diagonal").outcome
    assert diagonal.row_sum_min == 0.0  # query 0 has no key left: its row stays 0
    upper = _option(q, "causal_upper_allowed").outcome
    assert upper.forbidden_weight > 0.5  # the future gets the weight
    ns = codegen.run_program(codegen.layer_program(RICH, TOKENS, "causal_upper_allowed"))
    h, i, j = upper.forbidden_at
    assert not right_ns["allowed"][i, j] and ns["weights"][h, i, j] == upper.forbidden_weight

    q = cq.code_question("mask_place", RICH, TOKENS)
    late_mask = _option(q, "mask_after_softmax").outcome  # the forbidden weights zeroed after softmax
    assert late_mask.forbidden_weight == 0.0 and late_mask.row_sum_max < 1 - 1e-6
    into_v = _option(q, "mask_multiplies_v").outcome
    assert 0 < into_v.forbidden_weight < 1 and into_v.nan_output == 0
    assert math.isclose(into_v.row_sum_min, 1.0) and math.isclose(into_v.row_sum_max, 1.0)
    assert late_mask.distance == into_v.distance > 0  # the same output, by mathematics
    added = cq.outcome(
        *cq._run(codegen.layer_program(RICH, TOKENS, "mask_added_after_softmax")),
        {"weights": right_ns["weights"], "output": right_ns["output"]},
        right_ns["allowed"],
    )
    assert added.forbidden_weight == -np.inf and added.nan_output == added.output_size
    assert math.isnan(added.distance)

    q = cq.code_question("merge_heads", RICH, TOKENS)
    per_head = _option(q, "w_o_per_head_before_concat").outcome
    assert per_head.output_shape == (len(TOKENS) + 1, RICH.heads * RICH.d_model) and per_head.distance is None
    along = _option(q, "heads_merged_along_tokens").outcome
    assert along.stopped and along.error.startswith("ValueError")

    q = cq.code_question("mask_values", RICH, TOKENS)
    flipped = _option(q, "mask_sign_flipped").outcome
    assert flipped.nan_weights > 0 and not flipped.overflow  # inf - inf, not an overflow


def test_the_largest_weight_and_where():
    q = cq.code_question("softmax_axis", RICH, TOKENS)
    wrong_axis = _option(q, "softmax_wrong_axis").outcome
    ns = codegen.run_program(codegen.layer_program(RICH, TOKENS, "softmax_wrong_axis"))
    w = np.asarray(ns["weights"])
    assert wrong_axis.largest_weight == float(w.max())
    assert w[wrong_axis.largest_at] == w.max()
    sums = w.sum(axis=-1)
    assert (wrong_axis.row_sum_min, wrong_axis.row_sum_max) == (float(sums.min()), float(sums.max()))


def test_the_blank_is_what_the_options_do_not_share():
    q = cq.code_question("raw_scores", RICH, TOKENS, seed=0)
    text = q.program_with_blank()
    assert text.startswith(cq.CONTEXT_LINE)
    assert "# ______ (blank)" in text and "scores = " not in text  # the blanked line is gone
    assert "scaled = scores / np.sqrt(d_k)" in text  # the context after it stays
    assert q.answer.fragment == ("scores = Q @ K.transpose(0, 2, 1)",)
    # a trap inside the softmax shows the function, the blank indented inside it
    q = cq.code_question("softmax_axis", RICH, TOKENS)
    assert "def softmax(s):" in "\n".join(q.before)
    assert "    # ______ (blank)" in q.program_with_blank()
    # no option carries a comment that would give it away
    for q in cq.code_questions(RICH, TOKENS):
        for option in q.options:
            assert not any(" # " in line for line in option.fragment), (q.template, option.mutation)


def test_the_order_is_seeded_and_the_answer_follows_it():
    orders = set()
    for seed in range(12):
        q = cq.code_question("scale_divisor", RICH, TOKENS, seed=seed)
        again = cq.code_question("scale_divisor", RICH, TOKENS, seed=seed)
        assert [o.mutation for o in q.options] == [o.mutation for o in again.options]
        assert q.options[q.answer_index].mutation is None and q.seed == seed
        orders.add(q.answer_index)
    assert len(orders) >= 3  # the right fragment is not always in one place


def test_an_error_is_an_outcome_not_a_crash():
    q = cq.code_question("raw_scores", RICH, TOKENS)
    k = _option(q, "k_not_transposed").outcome
    assert k.stopped and "matmul" in k.error and k.distance is None and not k.right
    assert math.isnan(k.row_sum_min)


# Kills from `make mutate` (scripts/mutate.py): each pins a rule the tests above left implicit.


def test_which_settings_each_template_needs():
    applies = {t.name: t for t in cq.TEMPLATES}
    sqrt, none, custom = AttentionConfig(), AttentionConfig(scale="none"), AttentionConfig(scale=3.0)
    assert cq.template_applies(applies["scale_divisor"], sqrt)
    assert not cq.template_applies(applies["scale_divisor"], custom)
    assert cq.template_applies(applies["scale_order"], custom) and not cq.template_applies(
        applies["scale_order"], none
    )
    assert cq.template_applies(applies["causal_mask"], AttentionConfig(mask="causal+padding"))
    assert not cq.template_applies(applies["causal_mask"], AttentionConfig(mask="padding"))
    assert cq.template_applies(applies["padding_mask"], AttentionConfig(mask="padding", pad=1))
    assert not cq.template_applies(applies["padding_mask"], AttentionConfig(mask="padding", pad=0))
    assert not cq.template_applies(applies["padding_mask"], AttentionConfig(mask="causal", pad=2))
    assert cq.template_applies(applies["merge_heads"], AttentionConfig(heads=2))
    assert not cq.template_applies(applies["merge_heads"], AttentionConfig(d_model=8, heads=1))
    assert all(cq.template_applies(applies[n], none) for n in ("raw_scores", "mask_values", "softmax_axis"))


def test_the_blank_of_programs_that_share_everything_or_a_prefix():
    assert cq._blank([["a", "b"], ["a", "b"]]) == (2, 0)
    assert cq._blank([["a", "b"], ["a", "b", "c"]]) == (2, 0)
    assert cq._blank([["a", "x", "c"], ["a", "y", "c"]]) == (1, 1)
    assert cq._indent(("", "  x = 1")) == "  " and cq._indent(()) == ""


def test_the_text_with_its_blank_and_the_questions_record():
    q = cq.code_question("softmax_axis", RICH, TOKENS, seed=4)
    assert q.program_with_blank("BLANK") == "\n".join([*q.before, "    BLANK", *q.after])
    assert q.heads == RICH.heads and q.seed == 4
    n = len(TOKENS) + 1
    allowed = np.tril(np.ones((n, n), dtype=bool))
    allowed[:, -1] = False
    assert q.forbidden_cells == int((~allowed).sum())
    plain = cq.code_question("raw_scores", RICH, TOKENS)
    assert not any("def softmax" in line for line in plain.before)  # only a softmax blank shows it
    assert [o.mutation for o in cq.code_questions(RICH, TOKENS, seed=5)[0].options] == [
        o.mutation for o in cq.code_question(cq.TEMPLATE_NAMES[0], RICH, TOKENS, seed=5).options
    ]


def test_the_right_options_outcome_claims_nothing_wrong():
    for config in (RICH, AttentionConfig(d_model=6, heads=1, mask="causal")):
        q = cq.code_question("scale_order", config, TOKENS)
        right = q.answer.outcome
        assert right.overflow is False and right.forbidden_at == () and right.forbidden_weight == 0.0
        assert len(right.largest_at) == 3  # (head, query, key), one head included


def test_same_numbers_means_within_1e_9_relative_and_1e_12_absolute():
    ns = codegen.run_program(codegen.layer_program(RICH, TOKENS))
    right = codegen.program_values(ns, RICH.heads)
    right = {"weights": right["weights"], "output": right["output"]}
    allowed = np.asarray(ns["allowed"])
    same = cq.outcome(ns, None, False, right, allowed)
    assert same.right
    for name, change in (("output", lambda a: a * (1 + 1e-7)), ("weights", lambda a: a * (1 + 1e-7))):
        moved = dict(ns, **{name: change(np.asarray(ns[name]))})
        assert not cq.outcome(moved, None, False, right, allowed).right, name
    weights = np.array(ns["weights"], dtype=float)
    weights[weights == 0] = 1e-10  # a masked weight of 0 moved by 1e-10: above 1e-12
    assert not cq.outcome(dict(ns, weights=weights), None, False, right, allowed).right
    output = np.array(ns["output"], dtype=float)
    output.flat[0] += 5e-9 * max(1.0, abs(output.flat[0]))  # 5e-9 relative: above 1e-9, under 1e-8
    assert not cq.outcome(dict(ns, output=output), None, False, right, allowed).right


def test_running_records_errors_without_an_overflow_and_prints_nothing(capsys):
    ns, error, overflow = cq._run(codegen.layer_program(RICH, TOKENS, "k_not_transposed"))
    assert ns is None and error.startswith("ValueError: ") and overflow is False
    ns, error, overflow = cq._run(codegen.example_program())
    assert error is None and ns["weights"].shape == (4, 4)
    assert capsys.readouterr().out == ""  # the example's prints are swallowed
    assert cq._finite_max(np.array([3.0])) == (3.0, (0,))
    value, where = cq._finite_max(np.array([np.nan, np.nan]))
    assert math.isnan(value) and where == ()


def test_the_default_seed_is_0():
    orders = [[o.mutation for o in q.options] for q in cq.code_questions(RICH, TOKENS)]
    assert orders == [[o.mutation for o in q.options] for q in cq.code_questions(RICH, TOKENS, seed=0)]
    assert orders != [[o.mutation for o in q.options] for q in cq.code_questions(RICH, TOKENS, seed=1)]
    single = cq.code_question("scale_divisor", RICH, TOKENS)
    assert single.seed == 0
