"""A trap is named truly (issue 44): each trap of the code generator's catalogue, written by hand the way
a learner writes that mistake, is named by its own name, and only by it, unless another trap gives the
same numbers on every case, when both are named and the report says they give the same numbers.

The sources here are written by hand, never generated. They run through the worker's own job code
(compile under the policy, the runs, the locals) in this process (tests/codecheck_helpers.py
``check_in_process``), so the many checks stay fast; the real sandbox names traps in
test_check.py and the browser test.
"""

from __future__ import annotations

import textwrap
import warnings
from functools import partial

import numpy as np
import pytest

from attention_core.codecheck.check import all_cases
from attention_core.codecheck.report import report_text
from attention_core.codecheck.traps import trap_outputs
from attention_core.codegen import MUTATIONS
from attention_core.config import AttentionConfig
from attention_ui.codecheck import views
from attention_ui.i18n import translate
from tests.codecheck_helpers import RIGHT, RIGHT_MULTI_HEAD, check_in_process

CASES = {
    kind: all_cases("the cat sat on the mat", AttentionConfig(mask=kind, pad=2 if "padding" in kind else 0))
    for kind in ("causal", "none", "causal+padding")
}

PROJECT = "Q = X @ W_Q\nK = X @ W_K\nV = X @ W_V"
SCORES = "scores = Q @ K.T / np.sqrt(d_k)"
MASK = "if mask is not None:\n    scores = np.where(mask, scores, -np.inf)"
# a softmax that keeps the contract's zero row for a query with no key (its own way, not the core's)
SOFTMAX = """m = scores.max(axis=-1, keepdims=True)
m = np.where(np.isfinite(m), m, 0.0)
e = np.exp(scores - m)
total = e.sum(axis=-1, keepdims=True)
weights = e / np.where(total == 0, 1.0, total)"""
OUT = "return weights @ V"
# the reference notes' idioms: the mask through np.where with -inf where forbidden, the softmax in two
# lines over axis 1, no guard for a query with no key left (0/0 there: NaN)
NOTES_MASK = "if mask is not None:\n    scores = np.where(~mask, -np.inf, scores)"
NOTES_SOFTMAX = """weights = np.exp(scores - np.max(scores, axis=1, keepdims=True))
weights /= weights.sum(axis=1, keepdims=True)"""


def attention(project=PROJECT, scores=SCORES, mask=MASK, softmax=SOFTMAX, out=OUT) -> str:
    body = "\n".join(part for part in (project, scores, mask, softmax, out) if part)
    return "import numpy as np\n\n\ndef attention(X, W_Q, W_K, W_V, mask, d_k):\n" + textwrap.indent(
        body, "    "
    )


# Each one-head trap of the catalogue, by hand. A learner's own softmax (SOFTMAX), or the notes' style.
BY_HAND = {
    "k_not_transposed": attention(scores="scores = Q @ K / np.sqrt(d_k)"),
    "compare_v_with_v": attention(scores="scores = V @ V.T / np.sqrt(d_k)"),
    "keys_against_queries": attention(scores="scores = K @ Q.T / np.sqrt(d_k)"),
    "divide_by_d_k": attention(scores="scores = Q @ K.T / d_k"),
    "no_scaling": attention(scores="scores = Q @ K.T"),
    "multiply_by_sqrt_d_k": attention(scores="scores = Q @ K.T * np.sqrt(d_k)"),
    "scale_after_softmax": attention(
        scores="scores = Q @ K.T", out="weights = weights / np.sqrt(d_k)\n" + OUT
    ),
    "scale_after_weighted_sum": attention(scores="scores = Q @ K.T", out="return weights @ V / np.sqrt(d_k)"),
    # the notes' own line with this contract's mask (True: may read) is the inverted mask
    "mask_inverted": attention(mask="if mask is not None:\n    scores = np.where(mask, -np.inf, scores)"),
    "mask_sign_flipped": attention(mask="if mask is not None:\n    scores = np.where(mask, scores, np.inf)"),
    "mask_as_ones": attention(mask="if mask is not None:\n    scores = scores + mask"),
    "mask_multiplies_scores": attention(mask="if mask is not None:\n    scores = scores * mask"),
    "mask_after_softmax": attention(
        mask="", out="if mask is not None:\n    weights = weights * mask\n" + OUT
    ),
    "mask_added_after_softmax": attention(
        mask="", out="if mask is not None:\n    weights = np.where(mask, weights, -np.inf)\n" + OUT
    ),
    "mask_multiplies_v": attention(  # each query sees V with the rows it may not read set to 0
        mask="",
        out="""if mask is None:
    return weights @ V
out = np.zeros((X.shape[0], V.shape[1]))
for i in range(X.shape[0]):
    out[i] = weights[i] @ (V * mask[i][:, None])
return out""",
    ),
    "softmax_wrong_axis": attention(softmax=SOFTMAX.replace("axis=-1", "axis=0")),
    "no_normalisation": attention(
        softmax="m = scores.max(axis=-1, keepdims=True)\nm = np.where(np.isfinite(m), m, 0.0)\n"
        "weights = np.exp(scores - m)"
    ),
    "normalise_whole_matrix": attention(
        softmax=SOFTMAX.replace("total = e.sum(axis=-1, keepdims=True)", "total = e.sum()")
    ),
    "no_max_subtraction": attention(
        softmax="e = np.exp(scores)\ntotal = e.sum(axis=-1, keepdims=True)\nweights = e / np.where(total == 0, 1.0, total)"
    ),
    "max_added": attention(softmax=SOFTMAX.replace("np.exp(scores - m)", "np.exp(scores + m)")),
    "min_subtracted": attention(softmax=SOFTMAX.replace("m = scores.max(", "m = scores.min(")),
    "weights_transposed": attention(out="return weights.T @ V"),
    "keys_as_values": attention(out="return weights @ K"),
    "scores_as_weights": attention(softmax="", out="return scores @ V"),
    "q_from_w_k": attention(project="Q = X @ W_K\nK = X @ W_K\nV = X @ W_V"),
    "no_projections": attention(project="Q = K = V = X"),
    "v_from_w_k": attention(project="Q = X @ W_Q\nK = X @ W_K\nV = X @ W_K"),
}
# The reference notes' exam traps once more, in the notes' own style (no zero-row guard in the softmax)
NOTES_STYLE = {
    "scale_after_softmax": attention(
        scores="scores = Q @ K.T",
        mask=NOTES_MASK,
        softmax=NOTES_SOFTMAX,
        out="weights /= np.sqrt(d_k)\n" + OUT,
    ),
    "compare_v_with_v": attention(
        scores="scores = V @ V.T / np.sqrt(d_k)", mask=NOTES_MASK, softmax=NOTES_SOFTMAX
    ),
    "no_max_subtraction": attention(
        mask=NOTES_MASK, softmax="weights = np.exp(scores)\nweights /= weights.sum(axis=1, keepdims=True)"
    ),
    "mask_multiplies_v": attention(
        mask="",
        softmax=NOTES_SOFTMAX,
        out="if mask is None:\n    return weights @ V\nreturn np.einsum('ij,ijd->id', weights, mask[:, :, None] * V)",
    ),
}
# Traps that give the same output as each other on every input, by mathematics: named together.
SAME_NUMBERS = (
    ("scale_after_softmax", "scale_after_weighted_sum"),  # (A / c) @ V = (A @ V) / c
    ("mask_after_softmax", "mask_multiplies_v"),  # sum_j (a_ij m_ij) v_j, both
    ("keys_as_values", "v_from_w_k"),  # A @ (X W_K) = A @ K
)
ORDER = [m.name for m in MUTATIONS]


def expected_names(trap: str) -> tuple[str, ...]:
    group = next((g for g in SAME_NUMBERS if trap in g), (trap,))
    return tuple(sorted(group, key=ORDER.index))


def test_every_one_head_trap_is_written_by_hand():
    assert set(BY_HAND) == {m.name for m in MUTATIONS if m.one_head}


@pytest.mark.parametrize("kind", sorted(CASES))
@pytest.mark.parametrize("trap", sorted(BY_HAND))
def test_a_trap_written_by_hand_is_named_by_its_own_name(trap, kind):
    report = check_in_process(BY_HAND[trap], CASES[kind])
    assert report.verdict == "fail"
    assert report.traps == expected_names(trap)
    assert not report.matches[0].empty_rows  # the learner's softmax keeps the zero row


@pytest.mark.parametrize("trap", sorted(NOTES_STYLE))
def test_the_notes_exam_traps_in_the_notes_style_are_named(trap):
    """The notes' softmax gives NaN (0/0) for a query with no key left: that row is counted as the
    trap's zeros, and the report says so. Masking V leaves the scores unmasked: no row is left empty."""
    report = check_in_process(NOTES_STYLE[trap], CASES["causal"])
    assert report.traps == expected_names(trap)
    empty_rows = trap != "mask_multiplies_v"
    assert report.matches[0].empty_rows == empty_rows
    said = "Counted as equal: rows where a query has no key left to read" in report_text(report)
    assert said == empty_rows


def test_the_notes_style_right_implementation_names_no_trap():
    # right but for the zero row: NaN where the contract asks for 0 is not any trap
    report = check_in_process(attention(mask=NOTES_MASK, softmax=NOTES_SOFTMAX), CASES["causal"])
    assert report.verdict == "fail" and report.matches == ()
    failing = [c.case for c in report.function("attention").cases if c.status != "pass"]
    assert failing == ["masked_row"]


@pytest.mark.parametrize("pair", SAME_NUMBERS, ids=[p[0] for p in SAME_NUMBERS])
def test_traps_with_the_same_numbers_are_both_named_and_said_to_be_so(pair):
    for trap in pair:
        report = check_in_process(BY_HAND[trap], CASES["causal"])
        assert report.traps == pair
        text = report_text(report)
        assert f"each of these known traps: {pair[0]}, {pair[1]}." in text
        assert "so it cannot tell which one you wrote" in text
        for lang in ("en", "ja"):
            shown = views.trap_text(partial(translate, lang), report.matches[0])
            assert translate(lang, "codecheck.traps_named_attention") in shown
            for name in pair:
                assert translate(lang, f"code.mut_{name}") in shown
                assert translate(lang, f"code.mut_{name}_why") in shown


def test_one_trap_is_named_as_the_same_numbers_not_as_what_was_written():
    report = check_in_process(BY_HAND["divide_by_d_k"], CASES["causal"])
    text = report_text(report)
    assert "On every case, your attention gives the same numbers as a known trap: divide_by_d_k." in text
    assert "This is" not in text and "you wrote" not in text


def test_code_that_only_raises_is_named_no_trap():
    # K instead of K.T raises on every case but one (d_k = n); raising everywhere is no evidence of it
    report = check_in_process(
        "import numpy as np\ndef attention(X, W_Q, W_K, W_V, mask, d_k):\n    return Q\n", CASES["causal"]
    )
    assert report.verdict == "fail" and report.matches == ()
    assert all(c.status == "error" for c in report.function("attention").cases)


# --- multi_head -------------------------------------------------------------------------------------

MULTI_LOOP = """

def multi_head(X, W_Q, W_K, W_V, W_O, mask):
    heads = []
    for i in range(W_Q.shape[0]):
        heads.append(attention(X, W_Q[i], W_K[i], W_V[i], mask, W_Q.shape[2]))
    concat = np.concatenate(heads, axis=-1)
    return concat @ W_O
"""
MULTI_VECTORISED = RIGHT_MULTI_HEAD
MULTI_RIGHT_LOOP = RIGHT + MULTI_LOOP
# (id, the trap, the learner's code): merging the heads, and one-head traps inside multi_head
MULTI_BY_HAND = [
    (
        "no_transpose_vectorised",
        "heads_merged_without_transpose",
        MULTI_VECTORISED.replace("O.transpose(1, 0, 2).reshape(n, -1)", "O.reshape(n, -1)"),
    ),
    (
        "no_transpose_loop",
        "heads_merged_without_transpose",
        MULTI_RIGHT_LOOP.replace("np.concatenate(heads, axis=-1)", "np.stack(heads).reshape(X.shape[0], -1)"),
    ),
    (
        "w_o_per_head",
        "w_o_per_head_before_concat",
        MULTI_RIGHT_LOOP.replace(
            "    concat = np.concatenate(heads, axis=-1)\n    return concat @ W_O",
            "    d_v = W_V.shape[2]\n    parts = [heads[i] @ W_O[i * d_v:(i + 1) * d_v] for i in range(len(heads))]\n"
            "    return np.concatenate(parts, axis=-1)",
        ),
    ),
    ("no_scaling_in_the_heads", "no_scaling", BY_HAND["no_scaling"] + MULTI_LOOP),
    ("softmax_wrong_axis", "softmax_wrong_axis", MULTI_VECTORISED.replace("axis=-1", "axis=-2")),
    (
        "mask_after_softmax",
        "mask_after_softmax",
        MULTI_VECTORISED.replace(
            "    if mask is not None:\n        S = np.where(mask, S, -np.inf)\n", ""
        ).replace("O = A @ V", "O = (A * mask) @ V if mask is not None else A @ V"),
    ),
]
MULTI = {name: source for name, _, source in MULTI_BY_HAND}


@pytest.mark.parametrize("kind", ["causal", "none"])
@pytest.mark.parametrize("trap, source", [b[1:] for b in MULTI_BY_HAND], ids=[b[0] for b in MULTI_BY_HAND])
def test_a_multi_head_trap_written_by_hand_is_named(trap, source, kind):
    report = check_in_process(source, CASES[kind])
    assert report.verdict == "fail" and not report.function("multi_head").passed
    assert report.multi_traps == expected_names(trap)


def test_the_right_multi_head_functions_pass_and_name_nothing():
    for source in (MULTI_RIGHT_LOOP, MULTI_VECTORISED):
        report = check_in_process(source, CASES["causal"])
        assert report.verdict == "pass" and report.matches == ()


def test_heads_stacked_along_the_tokens_raise_and_are_not_named():
    """The trap's program stops with a shape error (h·n rows against W_O's h·d_v): a learner's too. An
    error alone names no trap; the report gives the learner's line and message."""
    source = MULTI_RIGHT_LOOP.replace("axis=-1)", "axis=0)")
    report = check_in_process(source, CASES["causal"])
    assert report.multi_traps == ()
    error = report.function("multi_head").cases[0].error
    assert (
        error.line == source.splitlines().index("    return concat @ W_O") + 1 and "matmul" in error.message
    )


@pytest.mark.parametrize(
    "source, where",
    [
        (MULTI["no_transpose_vectorised"], ("concat", "C", "heads")),
        (MULTI["no_transpose_loop"], ("concat", "concat", "heads")),
        (MULTI["no_scaling_in_the_heads"], ("heads", "heads", None)),  # the loop's list of head outputs
        (MULTI["softmax_wrong_axis"], ("weights", "E", "masked")),
    ],
    ids=["vectorised", "loop", "heads_list", "softmax"],
)
def test_multi_head_is_located_at_its_first_differing_intermediate(source, where):
    report = check_in_process(source, CASES["causal"])
    failure = report.function("multi_head").first_failure
    loc = failure.location
    assert (loc.step, loc.variable, loc.agrees_up_to) == where
    text = report_text(report)
    assert "your variable" in text


def test_every_trap_has_a_name_and_an_explanation_in_both_languages():
    for m in MUTATIONS:
        for lang in ("en", "ja"):
            assert translate(lang, f"code.mut_{m.name}") and translate(lang, f"code.mut_{m.name}_why")


def test_step_functions_chained_are_named_as_such():
    steps = """import numpy as np

def scale(S, d_k):
    return S / d_k

def softmax(S):
    m = S.max(axis=-1, keepdims=True)
    E = np.exp(S - np.where(np.isfinite(m), m, 0.0))
    t = E.sum(axis=-1, keepdims=True)
    return E / np.where(t == 0, 1.0, t)
"""
    report = check_in_process(steps, CASES["causal"])
    assert report.matches[0].function == "chain" and report.traps == ("divide_by_d_k",)
    text = report_text(report)
    assert "your step functions, run one after the other, give the same numbers as a known trap" in text
    shown = views.trap_text(partial(translate, "en"), report.matches[0])
    assert shown.startswith(
        translate("en", "codecheck.trap_named_chain", name=translate("en", "code.mut_divide_by_d_k"))
    )


def test_the_traps_run_silently_and_keep_their_overflow():
    """exp overflows in the max-subtraction traps on large scores: recorded as the trap's NaN, with no
    warning (a warning turned into an error would lose the trap's output)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outputs = trap_outputs(CASES["causal"], ["no_max_subtraction", "k_not_transposed"])
    large = outputs["no_max_subtraction"]["large_scores"]
    assert large is not None and np.isnan(large).any()
    assert outputs["k_not_transposed"]["sentence"] is None  # Q @ K cannot run when n != d_k
    assert outputs["k_not_transposed"]["large_scores"] is not None  # the case with d_k = n
    multi = trap_outputs(CASES["causal"], ["heads_merged_along_tokens"], multi=True)
    assert set(multi["heads_merged_along_tokens"]) == {"sentence", "four_heads"}
    assert all(v is None for v in multi["heads_merged_along_tokens"].values())
