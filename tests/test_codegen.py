"""The code generator (attention_core/codegen.py): the program it writes, run in a fresh namespace, gives
every intermediate of the core's trace (atol 1e-12), for 48 settings over every option; each trap of the
catalogue is a real trap; the one-head function keeps the contract with issue 44; the reference notes'
example prints exactly what the notes print."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from attention_core import (
    AttentionConfig,
    attend,
    build_mask,
    codegen,
    tokenize,
    trace_tokens,
    worked_example_trace,
)
from attention_core.codegen import (
    MUTATIONS,
    MutationNotApplicable,
    example_program,
    layer_program,
    multi_head_function,
    one_head_function,
    program_values,
    run_program,
)
from attention_core.config import MASK_KINDS
from attention_core.trace import AttentionParams

ROOT = Path(__file__).resolve().parent.parent
SENTENCES = (
    "the cat sat on the mat",
    "猫が座った。",
    "Attention is all you need, they said",
    "私はNumPyで注意を計算する",
    "a",
    "don't stop: 3.14, \"quoted\" \\ back{slash} 'single'",
)
SCALES = ("sqrt", "none", 2.5, 0.37)


def _configs() -> list[tuple[str, AttentionConfig]]:
    """48 settings: every mask kind, scaling on, off and two custom divisors, 1-8 heads, d_k = d_v and
    d_k != d_v, positions on and off, 0-3 [PAD]s, six sentences (two Japanese), several seeds."""
    out = []
    for i in range(48):
        heads = 1 + i % 8
        manual = i % 3 == 0  # d_k and d_v by hand, different from each other
        d_model = heads * (2 + i % 3) if not manual else 5 + i % 7
        d_k, d_v = ((2 + i % 5), (1 + (i * 7) % 6)) if manual else (None, None)
        if manual and d_k == d_v:
            d_v += 1
        config = AttentionConfig(
            d_model=d_model,
            heads=heads,
            d_k=d_k,
            d_v=d_v,
            mask=MASK_KINDS[i % 4],
            pad=(i // 4) % 4,
            scale=SCALES[(i // 2) % 4],
            seed=i * 7919,
            positional=i % 5 != 2,
        )
        out.append((SENTENCES[i % len(SENTENCES)], config))
    return out


CONFIGS = _configs()


def test_the_settings_cover_every_option():
    configs = [c for _, c in CONFIGS]
    assert len(configs) >= 40
    assert {c.mask for c in configs} == set(MASK_KINDS)
    assert {str(c.scale) for c in configs} == {str(s) for s in SCALES}
    assert {c.heads for c in configs} == set(range(1, 9))
    assert any(c.head_dim_k != c.head_dim_v for c in configs)
    assert {c.positional for c in configs} == {True, False}
    assert {c.pad for c in configs} == {0, 1, 2, 3}
    assert any(c.pad and "padding" in c.mask for c in configs)
    assert any(any(ord(ch) > 0x3000 for ch in text) for text, _ in CONFIGS)


def assert_program_equals_trace(program, trace, atol: float = 1e-12) -> None:
    """Run ``program`` in a fresh namespace; every intermediate must equal the trace's (same shape,
    -inf in the same places, the rest within ``atol``). The first step that differs is named."""
    values = program_values(run_program(program), program.heads)
    assert set(values) == set(codegen.TRACE_NAMES.values())
    for name, value in values.items():  # in the order of the computation
        expected = np.asarray(getattr(trace, name))
        assert value.shape == expected.shape, f"{name}: shape {value.shape}, trace {expected.shape}"
        if expected.dtype == bool:
            assert np.array_equal(value, expected), name
        else:
            np.testing.assert_allclose(value, expected, rtol=0, atol=atol, err_msg=name)


@pytest.mark.parametrize(("text", "config"), CONFIGS, ids=[f"c{i}" for i in range(len(CONFIGS))])
def test_the_program_gives_every_intermediate_of_the_trace(text, config):
    tokens = tokenize(text).tokens
    assert_program_equals_trace(layer_program(config, tokens), trace_tokens(tokens, config))


# A deliberately broken generator: each of these traps, written by the generator, must fail the check
# above at the step it breaks (and so would the generator if it wrote them by mistake).
BROKEN = {
    "scale_after_softmax": "scores_scaled",  # the scores are not divided before the softmax
    "mask_multiplies_v": "scores_masked",  # the scores are not masked
    "divide_by_d_k": "scores_scaled",
    "mask_after_softmax": "scores_masked",
    "softmax_wrong_axis": "weights",
    "k_not_transposed": "scores_raw",
    "heads_merged_without_transpose": "concat",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_generator_fails_the_check(name):
    config = AttentionConfig(d_model=12, heads=3, mask="causal+padding", pad=1)
    tokens = ("one", "two", "three", "four", "five")
    trace = trace_tokens(tokens, config)
    program = layer_program(config, tokens, name)
    with pytest.raises((AssertionError, ValueError)) as failure, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_program_equals_trace(program, trace)
    if failure.type is AssertionError:  # named at the first step that differs
        assert BROKEN[name] in str(failure.value)


def test_a_generator_that_scales_after_the_softmax_fails(monkeypatch):
    """The check catches the generator itself going wrong, not only the traps it is asked for."""
    config = AttentionConfig(d_model=8, heads=2, mask="causal")
    tokens = ("a", "b", "c")
    monkeypatch.setattr(codegen._Writer, "after_softmax", lambda self, expr: f"{expr} / np.sqrt(d_k)")
    with pytest.raises(AssertionError, match="weights"):
        assert_program_equals_trace(layer_program(config, tokens), trace_tokens(tokens, config))


def test_a_generator_that_multiplies_the_mask_into_v_fails(monkeypatch):
    config = AttentionConfig(d_model=8, heads=1, mask="causal")
    tokens = ("a", "b", "c")
    monkeypatch.setattr(codegen._Writer, "masked", lambda self: [codegen.Line("masked = scaled")])
    monkeypatch.setattr(
        codegen._Writer, "head_out", lambda self: [codegen.Line("out = (weights * allowed) @ V")]
    )
    with pytest.raises(AssertionError, match="scores_masked"):
        assert_program_equals_trace(layer_program(config, tokens), trace_tokens(tokens, config))


def _run_quietly(program):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return program_values(run_program(program), program.heads)


# Settings under which each trap has a line to change: causal and padding, several heads, d_k != d_v.
RICH = AttentionConfig(d_model=12, heads=3, d_k=5, d_v=3, mask="causal+padding", pad=2)
RICH_ONE = AttentionConfig(d_model=6, heads=1, mask="causal+padding", pad=1)
TOKENS = ("we", "read", "the", "code")
# Traps that give the right numbers unless a score is large enough for exp to overflow (tested below).
OVERFLOW_ONLY = {"no_max_subtraction", "max_added", "min_subtracted"}


def _differs_or_stops(run, right: dict) -> list[str]:
    """What a trap changed: ``["error"]`` when the program stops (a shape error), else the names among
    weights, head outputs, concat and output that differ from ``right`` (or are missing)."""
    try:
        values = run()
    except (ValueError, IndexError):
        return ["error"]
    return [
        name
        for name in right
        if name not in values
        or values[name].shape != right[name].shape
        or not np.allclose(values[name], right[name], equal_nan=False)
    ]


FINAL = ("weights", "head_outputs", "concat", "output")


@pytest.mark.parametrize("mutation", [m.name for m in MUTATIONS if m.name not in OVERFLOW_ONLY])
def test_every_trap_changes_the_numbers_or_stops_the_program(mutation):
    right_values = program_values(run_program(layer_program(RICH, TOKENS)), RICH.heads)
    program = layer_program(RICH, TOKENS, mutation)
    assert program.source != layer_program(RICH, TOKENS).source
    assert program.mutation == mutation
    assert _differs_or_stops(lambda: _run_quietly(program), {k: right_values[k] for k in FINAL}), mutation


@pytest.mark.parametrize("mutation", sorted(OVERFLOW_ONLY))
def test_the_overflow_traps_give_nan_once_scores_are_large(mutation):
    # small scores: the same numbers (so a question never offers them there, test_codegen_questions)
    right = program_values(run_program(layer_program(RICH, TOKENS)), RICH.heads)
    assert not _differs_or_stops(lambda: _run_quietly(layer_program(RICH, TOKENS, mutation)), right)
    big = AttentionConfig(d_model=12, heads=3, d_k=5, d_v=3, mask="causal+padding", pad=2, scale=1e-3)
    values = _run_quietly(layer_program(big, TOKENS, mutation))
    assert np.isnan(values["weights"]).any()  # exp overflowed: inf / inf
    assert not np.isnan(_run_quietly(layer_program(big, TOKENS))["weights"]).any()


def test_the_catalogue_names_the_reference_traps():
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names)) >= 10
    for needed in (
        "scale_after_softmax",
        "divide_by_d_k",
        "mask_after_softmax",
        "mask_multiplies_v",
        "softmax_wrong_axis",
        "k_not_transposed",
        "no_max_subtraction",
        "triu_k0_masks_diagonal",
        "heads_merged_without_transpose",
        "mask_sign_flipped",
        "w_o_per_head_before_concat",
        "compare_v_with_v",
    ):
        assert needed in names
    for m in MUTATIONS:
        assert m.step in codegen.BLOCKS
        assert isinstance(m.one_head, bool)


@pytest.mark.parametrize("mutation", [m.name for m in MUTATIONS])
def test_a_trap_changes_the_block_it_names(mutation):
    config = RICH if mutation not in ("no_projections",) else RICH_ONE
    right = layer_program(config, TOKENS)
    wrong = layer_program(config, TOKENS, mutation)
    changed = [b for b in codegen.BLOCKS if right.code.get(b) != wrong.code.get(b)]
    assert codegen.mutation_by_name(mutation).step in changed
    assert len(changed) <= 2  # a trap that moves a step touches the step and the line it moves to


def test_traps_without_a_line_to_change_are_refused():
    plain = AttentionConfig(d_model=8, heads=1, mask="none", scale="none")
    for name in (
        "triu_k0_masks_diagonal",
        "pad_off_by_one",
        "heads_merged_without_transpose",
        "w_o_per_head_before_concat",
        "divide_by_d_k",
        "scale_after_softmax",
        "no_scaling",
    ):
        with pytest.raises(MutationNotApplicable):
            layer_program(plain, ("a", "b"), name)
    with pytest.raises(ValueError, match="unknown mutation"):
        layer_program(plain, ("a",), "no_such_trap")
    with pytest.raises(ValueError, match="no tokens"):
        layer_program(plain, ())
    # the padding traps need the padding mask; the causal ones the causal mask
    layer_program(AttentionConfig(mask="padding", pad=1), ("a",), "pad_first_keys")
    with pytest.raises(MutationNotApplicable):
        layer_program(AttentionConfig(mask="causal", pad=1), ("a",), "pad_first_keys")
    layer_program(AttentionConfig(mask="causal"), ("a",), "causal_reversed")
    with pytest.raises(MutationNotApplicable):
        layer_program(AttentionConfig(mask="padding", pad=1), ("a",), "causal_reversed")


def test_the_blocks_and_the_steps():
    program = layer_program(RICH, TOKENS)
    assert tuple(program.blocks) == codegen.BLOCKS
    assert tuple(program.code) == codegen.BLOCKS
    for block, lines in program.blocks.items():
        assert any(line.startswith("# ") for line in lines[:4]), block  # each block says what it computes
        assert program.source.count("\n".join(lines)) == 1
    for step, blocks in codegen.STEP_BLOCKS.items():
        text = program.step_source(step)
        for block in blocks:
            assert "\n".join(program.blocks[block]) in text, step
    assert "weights = softmax(masked)" in program.step_source("softmax")
    assert "def softmax(s):" in program.step_source("softmax")
    assert program.lines("raw") == ["scores = Q @ K.transpose(0, 2, 1)"]
    assert program.lines("scaled", "raw") == [
        "scores = Q @ K.transpose(0, 2, 1)",
        "scaled = scores / np.sqrt(d_k)",
    ]
    one = layer_program(RICH_ONE, TOKENS)
    assert one.lines("raw") == ["scores = Q @ K.T"]
    assert one.lines("concat") == ["concat = out"]
    # the code has no comment beside its lines; the source does
    assert all("#" not in line for lines in program.code.values() for line in lines if "[PAD]" not in line)


def test_the_settings_are_written_as_configured():
    tokens = ("猫", "が", "座る")
    src = layer_program(
        AttentionConfig(d_model=6, heads=1, scale=2.5, positional=False, pad=2), tokens
    ).source
    assert "scaled = scores / 2.5" in src
    assert "X = E  " in src and "P[:, 0::2]" not in src
    assert "tokens = ['猫', 'が', '座る', '[PAD]', '[PAD]']" in src
    assert "n, d_model, d_k, d_v = 5, 6, 6, 6" in src
    assert "n_pad = 2" in src
    src = layer_program(
        AttentionConfig(d_model=8, heads=4, d_k=3, d_v=5, scale="none", seed=42), tokens
    ).source
    assert "n, d_model, heads, d_k, d_v = 3, 8, 4, 3, 5" in src
    assert "seed = 42" in src
    assert "scaled = scores  " in src
    assert "n_pad" not in src
    src = layer_program(AttentionConfig(d_model=4, heads=1, scale=1 / 3), ("a",)).source
    assert f"scaled = scores / {1 / 3!r}" in src  # the exact float: the file reproduces the division
    long = layer_program(AttentionConfig(d_model=4, heads=1), tuple(f"token{i}" for i in range(200))).source
    assert max(len(line) for line in long.splitlines() if line.lstrip().startswith("'")) <= 104


HOSTILE = json.loads((ROOT / "tests" / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))["texts"]


@pytest.mark.parametrize(
    "entry", [e for e in HOSTILE if tokenize(e["text"], max_tokens=12).tokens], ids=lambda e: e["id"]
)
def test_hostile_tokens_stay_string_literals(entry):
    """A token is written with repr(): quotes, backslashes, braces and newlines cannot break out."""
    tokens = tokenize(entry["text"], max_tokens=12).tokens
    config = AttentionConfig(d_model=4, heads=2, mask="causal")
    program = layer_program(config, tokens)
    ns = run_program(program)
    assert ns["tokens"] == list(tokens)
    assert_program_equals_trace(program, trace_tokens(tokens, config))


def test_tokens_that_look_like_code_are_only_data():
    tokens = ("'])\nimport os\nos.system('x')\n#", '"""', "{seed}", "\\", "\x1f")
    program = layer_program(AttentionConfig(d_model=4, heads=1), tokens)
    ns = run_program(program)
    assert ns["tokens"] == list(tokens)
    assert "os" not in ns


# The one-head function: the contract with issue 44.


def _one_head_inputs(seed: int, n: int = 5, d_model: int = 6, d_k: int = 3, d_v: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d_model))
    W_Q, W_K = rng.standard_normal((d_model, d_k)), rng.standard_normal((d_model, d_k))
    W_V = rng.standard_normal((d_model, d_v))
    return X, W_Q, W_K, W_V


def _core_one_head(X, W_Q, W_K, W_V, mask, d_k):
    params = AttentionParams(W_Q[None], W_K[None], W_V[None], np.zeros((W_V.shape[1], X.shape[1])))
    allowed = np.ones((len(X), len(X)), dtype=bool) if mask is None else mask
    return attend(X, params, allowed, np.sqrt(d_k)).head_outputs[0]


def _attention(mutation=None):
    ns = {}
    exec(one_head_function(mutation), ns)  # noqa: S102 - generated here
    return ns["attention"]


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "empty_row", "random"])
def test_the_one_head_function_equals_the_core(mask_kind):
    X, W_Q, W_K, W_V = _one_head_inputs(3)
    n = len(X)
    mask = {
        "none": None,
        "causal": build_mask("causal", n),
        "padding": build_mask("padding", n, 2),
        "empty_row": np.tril(np.ones((n, n), dtype=bool), k=-1),  # query 0 may read nothing
        "random": np.random.default_rng(1).random((n, n)) > 0.5,
    }[mask_kind]
    out = _attention()(X, W_Q, W_K, W_V, mask, 3)
    assert out.shape == (n, 2)
    np.testing.assert_allclose(out, _core_one_head(X, W_Q, W_K, W_V, mask, 3), rtol=0, atol=1e-12)
    if mask_kind == "empty_row":
        assert out[0].tolist() == [0.0, 0.0]  # every key masked: a zero row, as in the core


def test_the_one_head_function_source():
    src = one_head_function()
    assert src.startswith("import numpy as np\n")
    assert "def attention(X, W_Q, W_K, W_V, mask, d_k):" in src
    assert "scores = Q @ K.T" in src and "scaled = scores / np.sqrt(d_k)" in src
    assert "softmax" not in src.split("def attention")[0]  # no helper besides the function


@pytest.mark.parametrize("mutation", [m.name for m in MUTATIONS if m.one_head])
def test_every_one_head_trap_is_caught_by_some_input(mutation):
    """Issue 44 runs these against the learner's function: each must differ from the right one on a
    causal mask, or on large scores for the overflow traps, or stop."""
    right = _attention()
    wrong = _attention(mutation)
    X, W_Q, W_K, W_V = _one_head_inputs(5, n=4, d_k=3, d_v=2)
    if mutation in OVERFLOW_ONLY:
        X = X * 40.0  # scores in the thousands: exp overflows without the max subtracted
    mask = build_mask("causal", 4)

    def run():
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return {"out": wrong(X, W_Q, W_K, W_V, mask, 3)}

    assert _differs_or_stops(run, {"out": right(X, W_Q, W_K, W_V, mask, 3)}), mutation


def test_layer_only_traps_are_refused_by_the_one_head_function():
    for m in MUTATIONS:
        if not m.one_head:
            with pytest.raises(MutationNotApplicable):
                one_head_function(m.name)
    with pytest.raises(ValueError, match="unknown mutation"):
        one_head_function("nope")


@pytest.mark.parametrize(
    "mutation", ["mask_inverted", "mask_as_ones", "mask_multiplies_v", "mask_after_softmax"]
)
def test_without_a_mask_the_functions_mask_traps_change_nothing(mutation):
    """mask None: the function adds nothing, the way a learner skips the mask (``if mask is not None``),
    so a learner's inverted mask is named by its trap (an all-True mask inverted would mask every key)."""
    X, W_Q, W_K, W_V = _one_head_inputs(4)
    right = _attention()(X, W_Q, W_K, W_V, None, 3)
    np.testing.assert_allclose(_attention(mutation)(X, W_Q, W_K, W_V, None, 3), right, rtol=0, atol=1e-12)
    causal = build_mask("causal", len(X))
    assert not np.allclose(_attention(mutation)(X, W_Q, W_K, W_V, causal, 3), right)


@pytest.mark.parametrize(
    "mutation, written",
    [
        ("mask_after_softmax", "* allowed"),  # the weights zeroed where forbidden, after the softmax
        ("mask_added_after_softmax", "total) + M"),  # -inf added to the weights
        ("mask_multiplies_v", "V_seen = allowed[:, :, None] * V"),  # query i's V, forbidden rows 0
        ("scores_as_weights", "out = masked @ V"),  # the softmax skipped: the masked scores mix V
    ],
)
def test_traps_are_written_as_a_learner_writes_them(mutation, written):
    assert written in one_head_function(mutation) and written not in one_head_function()


def test_masking_v_and_masking_the_weights_after_softmax_give_the_same_output():
    """By mathematics: sum_j (w_ij m_ij) v_j is both. The check names both (codecheck/test_traps.py)."""
    X, W_Q, W_K, W_V = _one_head_inputs(6)
    mask = build_mask("causal", len(X))
    a = _attention("mask_after_softmax")(X, W_Q, W_K, W_V, mask, 3)
    b = _attention("mask_multiplies_v")(X, W_Q, W_K, W_V, mask, 3)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    assert not np.allclose(a, _attention()(X, W_Q, W_K, W_V, mask, 3))


def _multi_head(mutation=None):
    ns = {}
    exec(multi_head_function(mutation), ns)  # noqa: S102 - generated here
    return ns["multi_head"]


def _multi_inputs(seed: int, heads: int = 3, n: int = 5, d_model: int = 8, d_k: int = 2, d_v: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d_model))
    W_Q, W_K = rng.standard_normal((2, heads, d_model, d_k))
    W_V = rng.standard_normal((heads, d_model, d_v))
    W_O = rng.standard_normal((heads * d_v, d_model))
    return X, AttentionParams(W_Q, W_K, W_V, W_O)


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding"])
def test_the_multi_head_function_equals_the_core(mask_kind):
    X, p = _multi_inputs(7)
    n = len(X)
    mask = None if mask_kind == "none" else build_mask(mask_kind, n, 2)
    out = _multi_head()(X, p.W_Q, p.W_K, p.W_V, p.W_O, mask)
    allowed = np.ones((n, n), dtype=bool) if mask is None else mask
    np.testing.assert_allclose(out, attend(X, p, allowed, np.sqrt(2)).output, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mutation", [m.name for m in MUTATIONS if m.multi_head])
def test_every_multi_head_trap_is_caught_by_some_input(mutation):
    X, p = _multi_inputs(8)
    if mutation in OVERFLOW_ONLY:
        X = X * 40.0
    mask = build_mask("causal", len(X))
    right = _multi_head()(X, p.W_Q, p.W_K, p.W_V, p.W_O, mask)

    def run():
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return {"out": _multi_head(mutation)(X, p.W_Q, p.W_K, p.W_V, p.W_O, mask)}

    assert _differs_or_stops(run, {"out": right}), mutation


def test_which_traps_the_multi_head_function_takes():
    taken = {m.name for m in MUTATIONS if m.multi_head}
    assert taken == {m.name for m in MUTATIONS if m.one_head} | {
        "heads_merged_without_transpose",
        "heads_merged_along_tokens",
        "w_o_per_head_before_concat",
    }
    for m in MUTATIONS:
        if not m.multi_head:  # building the causal or padding mask: the function is given its mask
            with pytest.raises(MutationNotApplicable):
                multi_head_function(m.name)
    src = multi_head_function()
    assert "def multi_head(X, W_Q, W_K, W_V, W_O, mask):" in src and "return output" in src


# The reference notes' worked example.
NOTES_PRINTOUT = "(4, 4) (4, 4) (4, 2)\n[1. 0. 0. 0.]\n"  # the two lines the notes show under their code


def test_the_example_program_prints_what_the_notes_print():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ns = run_program(example_program())
    assert out.getvalue() == NOTES_PRINTOUT
    trace = worked_example_trace()
    for name, value in program_values(ns, 1).items():
        np.testing.assert_allclose(value, getattr(trace, name), rtol=0, atol=1e-12, err_msg=name)


def test_the_example_program_run_alone():
    """As a learner runs it: a fresh interpreter, the program file alone."""
    done = subprocess.run(
        [sys.executable, "-c", example_program().source],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == NOTES_PRINTOUT
    assert done.stderr == ""


def test_the_example_with_a_trap_prints_something_else():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run_program(example_program("triu_k0_masks_diagonal"))
    assert out.getvalue() != NOTES_PRINTOUT
    assert out.getvalue().splitlines()[0] == "(4, 4) (4, 4) (4, 2)"


# Kills from `make mutate` (scripts/mutate.py): what the runs above left implicit.

SHAPE_COMMENT = re.compile(r"^(\w+) = .*#\s*\[([^\]]+)\]")


@pytest.mark.parametrize(
    "config",
    [RICH, RICH_ONE, AttentionConfig(d_model=10, heads=5, d_k=3, d_v=4, positional=False)],
    ids=["heads", "one_head", "d_k_ne_d_v"],
)
def test_every_shape_comment_is_the_arrays_shape(config):
    """The comments beside the lines claim shapes ([h, n, d_k] ...): each is the shape the line makes."""
    program = layer_program(config, TOKENS)
    ns = run_program(program)
    sizes = {"n": ns["n"], "d_model": ns["d_model"], "d_k": ns["d_k"], "d_v": ns["d_v"], "h": config.heads}
    sizes |= {"h*d_v": config.heads * ns["d_v"], "1": 1, "ceil(d_model/2)": -(-ns["d_model"] // 2)}
    checked = 0
    for line in program.source.splitlines():
        match = SHAPE_COMMENT.match(line)
        if match and match.group(1) in ns and isinstance(ns[match.group(1)], np.ndarray):
            dims = tuple(sizes[d.strip()] for d in match.group(2).split(","))
            assert np.shape(ns[match.group(1)]) == dims, line
            checked += 1
    assigned = {
        m.group(1) for m in (re.match(r"^(\w+) = ", line) for line in program.source.splitlines()) if m
    }
    arrays = {name for name in assigned if isinstance(ns.get(name), np.ndarray)}
    assert checked == len(arrays)  # every array line says its shape ("E" and "P" included)


def test_the_example_programs_shape_comments_are_its_arrays_shapes():
    program = example_program()
    with contextlib.redirect_stdout(io.StringIO()):
        ns = run_program(program)
    sizes = {"n": 4, "d_model": 6, "d_k": 3, "d_v": 2}
    checked = 0
    for line in program.source.splitlines():
        match = SHAPE_COMMENT.match(line)
        if match and isinstance(ns.get(match.group(1)), np.ndarray):
            assert np.shape(ns[match.group(1)]) == tuple(
                sizes[d.strip()] for d in match.group(2).split(",")
            ), line
            checked += 1
    assigned = {
        m.group(1) for m in (re.match(r"^(\w+) = ", line) for line in program.source.splitlines()) if m
    }
    assert checked == len({name for name in assigned if isinstance(ns.get(name), np.ndarray)}) == 17


def test_the_example_programs_record():
    program = example_program()
    assert tuple(program.blocks) == (*codegen.BLOCKS, "print")
    assert program.heads == 1 and program.prints == codegen.EXAMPLE_PRINTS
    assert "as the notes draw them" in program.blocks["x"][0]  # the example's own headers
    two = layer_program(RICH, TOKENS)
    assert two.step_source("qkv") == "\n".join(two.blocks["weights"]) + "\n\n" + "\n".join(two.blocks["qkv"])


def test_run_program_takes_a_text_or_a_namespace_and_values_skip_missing_names():
    source = example_program().source
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ns = run_program(source)  # a text
        mine = {"__name__": "mine"}
        assert run_program(source, mine) is mine and "weights" in mine
    assert "weights" in ns
    values = program_values({"X": np.zeros((2, 3)), "output": np.ones((2, 3))}, 2)
    assert set(values) == {"X", "output"}  # a name missing in the middle does not stop the others


def _shape_claims(program, ns, heads: int) -> tuple[int, set[str]]:
    """How many array lines of ``program`` claim a shape in their comment (each claim checked against
    the array the line made in ``ns``), and the names of the arrays it assigns."""
    sizes = {"n": ns["n"], "d_model": ns["d_model"], "d_k": ns["d_k"], "d_v": ns["d_v"], "h": heads}
    sizes |= {"h*d_v": heads * ns["d_v"], "h*d_model": heads * ns["d_model"], "1": 1}
    sizes["ceil(d_model/2)"] = -(-ns["d_model"] // 2)
    checked = 0
    for line in program.source.splitlines():
        match = SHAPE_COMMENT.match(line)
        if match and isinstance(ns.get(match.group(1)), np.ndarray):
            dims = tuple(sizes[d.strip()] for d in match.group(2).split(","))
            assert np.shape(ns[match.group(1)]) == dims, line
            assert heads > 1 or "h" not in re.split(r"[ ,*]+", match.group(2)), line  # one head: no head axis
            checked += 1
    assigned = {m.group(1) for m in (re.match(r"^(\w+) = ", ln) for ln in program.source.splitlines()) if m}
    return checked, {name for name in assigned if isinstance(ns.get(name), np.ndarray)}


@pytest.mark.parametrize("config", [RICH, RICH_ONE], ids=["heads", "one_head"])
def test_a_traps_lines_keep_their_shape_comments(config):
    """A trap changes a line's code, never what its comment claims: every array line of every trap's
    program that runs still says its shape, and the shape is the array's (with the head axis exactly
    when there are heads)."""
    tried = 0
    for mutation in MUTATIONS:
        try:
            program = layer_program(config, TOKENS, mutation=mutation.name)
        except MutationNotApplicable:
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ns = run_program(program)
        except (ValueError, IndexError):  # a trap that stops the program (a shape mismatch)
            continue
        checked, arrays = _shape_claims(program, ns, config.heads)
        assert checked == len(arrays), mutation.name
        tried += 1
    assert tried >= 10


def test_comments_line_up_at_the_comment_column():
    """A comment beside a short line starts at COMMENT_COLUMN, so the comments of a block form one
    column; beside a longer line it follows two spaces after the code."""
    lines = [ln for ln in layer_program(RICH, TOKENS).source.splitlines() if "  # " in ln]
    short = [ln for ln in lines if len(ln.split("  # ")[0].rstrip()) < codegen.COMMENT_COLUMN - 2]
    assert short and all(ln.index("# ") == codegen.COMMENT_COLUMN for ln in short)
    long_ = [ln for ln in lines if ln not in short]
    assert long_ and all(ln.split("# ")[0].endswith(("  ", "   ")) for ln in long_)
    assert all(
        not ln.split("  # ")[0].endswith("   ")
        for ln in long_
        if len(ln.split("  # ")[0]) > codegen.COMMENT_COLUMN
    )


@pytest.mark.parametrize("mutation", [m.name for m in MUTATIONS])
def test_a_trap_keeps_the_names_the_right_program_assigns(mutation):
    """A trap is a wrong right-hand side (or a missing line), never a renamed variable: every name a
    trap's program assigns at the top level is one the right program assigns, or the trap's own
    helper (V_seen)."""
    config = RICH if mutation not in ("no_projections",) else RICH_ONE
    try:
        wrong = layer_program(config, TOKENS, mutation)
    except MutationNotApplicable:
        wrong = layer_program(RICH_ONE, TOKENS, mutation)
    right = layer_program(config, TOKENS)

    def names(program):
        heads = (re.match(r"^(\w+(?:, \w+)*) = ", ln) for ln in program.source.splitlines())
        return {name for m in heads if m for name in m.group(1).split(", ")}

    assert names(wrong) - names(right) <= {"V_seen"}, mutation


@pytest.mark.parametrize("pad", [0, 2])
def test_the_settings_comment_names_the_pads_only_when_there_are_some(pad):
    setup = layer_program(AttentionConfig(d_model=6, heads=1, pad=pad, mask="padding"), TOKENS).blocks[
        "setup"
    ]
    note = next(ln for ln in setup if ln.startswith("# Settings"))
    assert ("[PAD]" in note) == (pad > 0) and (f"+ {pad}" in note) == (pad > 0)


def test_wrapped_token_lines_stay_inside_the_brackets_and_indented():
    """A long sentence wraps: the first line opens the list with its first token, every further line
    is indented by four spaces, and no line passes 100 characters unless one token alone does."""
    tokens = tuple(f"token{i:03d}" for i in range(40)) + ("x" * 120,)
    lines = [ln.code for ln in codegen._tokens_lines(tokens)]
    assert lines[0].startswith("tokens = ['token000', ")
    assert all(ln.startswith("    '") for ln in lines[1:]) and lines[-1].endswith("]")
    assert all(len(ln) <= 100 for ln in lines if "x" * 120 not in ln)
    for a, b in zip(lines, lines[1:], strict=False):  # a line breaks only where the next token would not fit
        assert len(a) + len(b.strip().split(", ")[0]) + 2 > 100
    first_huge = [ln.code for ln in codegen._tokens_lines(("y" * 150, "b"))]
    assert first_huge[0].startswith("tokens = ['yyy")  # never a bare "tokens = [" line
    assert eval("".join(first_huge).removeprefix("tokens = ")) == ["y" * 150, "b"]  # noqa: S307 - our own literal


def _function_locals(source: str, name: str, *args):
    """Run the generated function ``name`` and return its local variables at its return."""
    ns: dict = {}
    exec(source, ns)  # noqa: S102 - generated here
    seen: dict = {}

    def tracer(frame, event, arg):
        if frame.f_code.co_name == name:
            if event == "return":
                seen.update(frame.f_locals)
            return tracer
        return None

    sys.settrace(tracer)
    try:
        ns[name](*args)
    finally:
        sys.settrace(None)
    return seen


def test_the_functions_shape_comments_are_their_arrays_shapes():
    """The one-head and multi-head functions' comments claim the same shapes as the program's."""
    n, d_model, d_k, d_v, heads = 5, 6, 3, 2, 3
    X, W_Q, W_K, W_V = _one_head_inputs(4, n=n, d_model=d_model, d_k=d_k, d_v=d_v)
    causal = ~np.triu(np.ones((n, n), dtype=bool), k=1)
    X2, p = _multi_inputs(5, heads=heads, n=n, d_model=d_model, d_k=d_k, d_v=d_v)
    cases = [
        (one_head_function(), "attention", (X, W_Q, W_K, W_V, causal, d_k), 1),
        (multi_head_function(), "multi_head", (X2, p.W_Q, p.W_K, p.W_V, p.W_O, causal), heads),
    ]
    for source, name, args, h in cases:
        local = _function_locals(source, name, *args)
        sizes = {
            "n": n,
            "d_model": d_model,
            "d_k": local["d_k"] if h > 1 else d_k,
            "d_v": d_v,
            "h": h,
            "h*d_v": h * d_v,
        }
        checked = 0
        for line in source.splitlines():
            match = re.match(r"^\s+(\w+) = .*#\s*\[([^\]]+)\]", line)
            if match and isinstance(local.get(match.group(1)), np.ndarray):
                dims = tuple(sizes[d.strip()] for d in match.group(2).split(","))
                assert np.shape(local[match.group(1)]) == dims, (name, line)
                checked += 1
        assert checked >= 7, (name, checked)  # Q, K, V, scores, scaled, masked, weights, out (...)


ASSIGNS = re.compile(r"^(\s*)(\w+(?:, \w+)*|\w+\[[^\]]*\]) = ")


def _uncommented(source: str, skip: tuple[str, ...]) -> list[str]:
    """The lines of ``source`` that assign something and carry no comment, but for the names in ``skip``
    (the settings a learner reads as they are) and the body of token_vector (a recipe, not a step)."""
    out, in_recipe = [], False
    for line in source.splitlines():
        if line.startswith("def "):
            in_recipe = line.startswith("def token_vector")
        elif line and not line.startswith(" "):
            in_recipe = False
        match = ASSIGNS.match(line)
        if match and not in_recipe and match.group(2).split("[")[0] not in skip and "  # " not in line:
            out.append(line)
    return out


SETTINGS_NAMES = ("tokens", "n, d_model, heads, d_k, d_v", "n, d_model, d_k, d_v", "seed")


@pytest.mark.parametrize("config", [RICH, RICH_ONE], ids=["heads", "one_head"])
def test_every_line_that_computes_says_what_it_does(config):
    """Every line that computes a step carries its comment, in the right program, in every trap's
    program and in the softmax; the settings lines are the only bare ones."""
    programs = [layer_program(config, TOKENS)]
    for mutation in MUTATIONS:
        with contextlib.suppress(MutationNotApplicable):
            programs.append(layer_program(config, TOKENS, mutation.name))
    for program in programs:
        assert _uncommented(program.source, SETTINGS_NAMES) == [], program.mutation
        returns = [ln for ln in program.blocks["softmax_fn"] if ln.strip().startswith("return ")]
        assert returns and all("  # " in ln for ln in returns), program.mutation  # why 0 and not 0/0
    assert _uncommented(example_program().source, ("rng", "n, d_model, d_k, d_v")) == []
    assert any(ln.startswith("# Settings: the reference notes'") for ln in example_program().blocks["setup"])
    for source in (one_head_function(), multi_head_function()):
        bare = [ln.strip() for ln in _uncommented(source, ("n", "heads, d_k, d_v", "allowed"))]
        assert bare == [], bare


@pytest.mark.parametrize("config", [RICH, RICH_ONE, AttentionConfig(d_model=6, heads=2, scale=2.5)])
def test_comments_say_what_holds_for_these_settings(config):
    """The comments that depend on the settings: the head axis is spoken of only when there are heads
    (Q for every head at once, M added to every head), a single head's masked line names -inf, and
    the scaled line says which divisor it uses."""
    program = layer_program(config, TOKENS)
    lines = {b: " ".join(program.blocks[b]) for b in ("qkv", "masked", "scaled")}
    multi = config.heads > 1
    assert ("every head at once" in lines["qkv"]) == multi
    assert ("M is added to every head" in lines["masked"]) == multi
    assert ("masked keys: -inf" in lines["masked"]) == (not multi)
    assert ("divided before the softmax" in lines["scaled"]) == (config.scale == "sqrt")
    assert ("divided by your divisor" in lines["scaled"]) == (config.scale not in ("sqrt", "none"))


def test_the_w_o_per_head_trap_skips_the_concatenation():
    """The trap multiplies each head by its slice of W_O and concatenates the products: no concat line."""
    wrong = layer_program(RICH, TOKENS, "w_o_per_head_before_concat")
    assert wrong.code["concat"] == () and "concat =" not in wrong.source


def test_a_last_token_that_would_end_at_column_101_goes_to_the_next_line():
    lines = [ln.code for ln in codegen._tokens_lines(("a" * 40, "b" * 45))]
    assert len(lines) == 2 and all(len(ln) <= 100 for ln in lines)


def test_the_multi_head_function_takes_every_multi_head_trap():
    for m in MUTATIONS:
        if m.multi_head:
            assert "def multi_head(" in multi_head_function(m.name)
