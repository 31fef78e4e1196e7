"""Exam code questions whose every option is run: a short program for the learner's settings with one
blank, and four fragments to choose from (the right one and three traps of :data:`codegen.MUTATIONS`).

Pure (NumPy and the standard library). A question carries no words: ``template`` selects its prompt in
the message catalogs, each option's ``mutation`` its name and explanation, and each option's
:class:`Outcome` holds the numbers its consequence sentence is written from: the program with that
fragment is run on the learner's sentence and compared with the right one (row sums of the weights,
the largest weight, the largest weight on a forbidden key, nan and overflow, the output's distance
from the right output, or the error that stopped it). A trap that gives the right numbers under
these settings (the max subtraction without an overflow, a mask trap without a mask) is never
offered, nor one that gives the same weights and output as a wrong fragment already offered (its
consequences would be a copy); a template left with fewer than three wrong fragments is not asked.

The blank is what the four programs do not share: their common first and last lines are the context
shown around it, so a trap that moves a step (the scaling after the softmax) blanks every line it
touches, and all four fragments cover the same lines.
"""

from __future__ import annotations

import contextlib
import io
import warnings
import zlib
from dataclasses import dataclass

import numpy as np

from . import codegen
from .config import AttentionConfig

N_OPTIONS = 4
# The blocks a question's program shows (X and the weights come from the learner's program: one
# comment line says so); the softmax's definition only when the blank is inside it.
SHOWN_BLOCKS = ("mask", "qkv", "raw", "scaled", "masked", "softmax", "head_out", "concat", "output")
# Two runs give "the right numbers" when every weight and output number agrees this closely.
SAME_RTOL, SAME_ATOL = 1e-9, 1e-12


@dataclass(frozen=True)
class Template:
    """One kind of code question: its candidate traps, in the order they are tried, and the settings
    it needs (``"sqrt"``: scaling by √d_k; ``"scaled"``: any divisor; ``"causal"``, ``"padding"``:
    that mask, with at least one [PAD] for padding; ``"heads"``: more than one head)."""

    name: str
    wrongs: tuple[str, ...]
    needs: str = ""


TEMPLATES = (
    Template("raw_scores", ("k_not_transposed", "compare_v_with_v", "keys_against_queries")),
    Template("scale_divisor", ("divide_by_d_k", "no_scaling", "multiply_by_sqrt_d_k"), "sqrt"),
    Template("scale_order", ("scale_after_softmax", "scale_after_weighted_sum", "no_scaling"), "scaled"),
    Template("causal_mask", ("triu_k0_masks_diagonal", "causal_upper_allowed", "causal_reversed"), "causal"),
    Template("padding_mask", ("pad_off_by_one", "pad_rows_masked", "pad_first_keys"), "padding"),
    Template("mask_values", ("mask_inverted", "mask_sign_flipped", "mask_as_ones")),
    # masking the weights after the softmax and masking V give the same output (not the same weights)
    Template(
        "mask_place",
        ("mask_after_softmax", "mask_multiplies_v", "mask_multiplies_scores", "mask_added_after_softmax"),
    ),
    Template("softmax_axis", ("softmax_wrong_axis", "no_normalisation", "normalise_whole_matrix")),
    Template("softmax_stability", ("no_max_subtraction", "max_added", "min_subtracted")),
    Template("weighted_sum", ("weights_transposed", "keys_as_values", "scores_as_weights")),
    Template("projections", ("q_from_w_k", "no_projections", "v_from_w_k")),
    Template(
        "merge_heads",
        ("heads_merged_without_transpose", "heads_merged_along_tokens", "w_o_per_head_before_concat"),
        "heads",
    ),
)
TEMPLATE_NAMES = tuple(t.name for t in TEMPLATES)


def template_by_name(name: str) -> Template:
    for template in TEMPLATES:
        if template.name == name:
            return template
    raise ValueError(f"unknown code question {name!r}; one of {', '.join(TEMPLATE_NAMES)}")


def template_applies(template: Template, config: AttentionConfig) -> bool:
    """Whether these settings have the lines the template asks about."""
    needs = template.needs
    if needs == "sqrt":
        return config.scale == "sqrt"
    if needs == "scaled":
        return config.scale != "none"
    if needs == "causal":
        return "causal" in config.mask
    if needs == "padding":
        return "padding" in config.mask and config.pad > 0
    if needs == "heads":
        return config.heads > 1
    return True


@dataclass(frozen=True)
class Outcome:
    """What one program did on the learner's sentence. Weights and output are the program's own
    ``weights`` and ``output``; ``forbidden_weight`` is read on the settings' real mask."""

    error: str | None = None  # "ValueError: ..." when the program stopped; the rest is then empty
    row_sum_min: float = float("nan")  # the rows of the weights (every head): their smallest and
    row_sum_max: float = float("nan")  # largest sum
    largest_weight: float = float("nan")
    largest_at: tuple[int, ...] = ()  # (head, query, key) of the largest weight
    forbidden_weight: float = 0.0  # the weight farthest from 0 on a key the mask forbids (0: none)
    forbidden_at: tuple[int, ...] = ()
    nan_weights: int = 0  # nan among the weights, and among the output's numbers
    nan_output: int = 0
    output_size: int = 0
    overflow: bool = False  # exp overflowed (NumPy's overflow warning)
    output_shape: tuple[int, ...] = ()
    distance: float | None = None  # max |output - right output|; None when the shapes differ
    right: bool = False  # the right numbers: same weights and output as the right program

    @property
    def stopped(self) -> bool:
        return self.error is not None


@dataclass(frozen=True)
class CodeOption:
    mutation: str | None  # None: the right fragment
    fragment: tuple[str, ...]  # the lines that fill the blank
    outcome: Outcome


@dataclass(frozen=True)
class CodeQuestion:
    """A program with a blank (``before`` + blank + ``after``) and four options, shuffled by the seed."""

    template: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    options: tuple[CodeOption, ...]
    answer_index: int
    heads: int
    seed: int
    forbidden_cells: int = 0  # keys the settings' mask forbids (over all queries): 0 without a mask

    @property
    def answer(self) -> CodeOption:
        return self.options[self.answer_index]

    def program_with_blank(self, blank: str = "# ______ (blank)") -> str:
        indent = _indent(self.options[self.answer_index].fragment)
        return "\n".join([*self.before, indent + blank, *self.after])


def _indent(lines: tuple[str, ...]) -> str:
    first = next((line for line in lines if line.strip()), "")
    return first[: len(first) - len(first.lstrip())]


def _run(program: codegen.Program) -> tuple[dict | None, str | None, bool]:
    """The program's namespace (or None), the error that stopped it, and whether exp overflowed.
    NumPy's warnings are recorded, not printed: they are part of the consequence."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                ns = codegen.run_program(program)
        except (ValueError, IndexError, TypeError, FloatingPointError) as err:
            return None, f"{type(err).__name__}: {err}", False
    overflow = any("overflow" in str(w.message) for w in caught)
    return ns, None, overflow


def _finite_max(a: np.ndarray) -> tuple[float, tuple[int, ...]]:
    if a.size == 0 or np.isnan(a).all():
        return float("nan"), ()
    flat = int(np.nanargmax(a))
    return float(a.flat[flat]), tuple(int(i) for i in np.unravel_index(flat, a.shape))


def outcome(ns: dict | None, error: str | None, overflow: bool, right: dict, allowed: np.ndarray) -> Outcome:
    """The consequence of one run, against the right run's ``weights`` and ``output`` (head first)."""
    if ns is None:
        return Outcome(error=error)
    heads = right["weights"].shape[0]
    weights = np.asarray(ns["weights"], dtype=float)
    output = np.asarray(ns["output"], dtype=float)
    if heads == 1 and weights.ndim == 2:
        weights = weights[None]
    with np.errstate(all="ignore"):
        sums = weights.sum(axis=-1)
    largest, largest_at = _finite_max(weights)
    forbidden, forbidden_at = 0.0, ()
    if weights.shape == right["weights"].shape and not allowed.all():
        on_forbidden = np.where(~allowed, weights, 0.0)
        size, where = _finite_max(np.abs(on_forbidden))
        if size > 0:  # the forbidden weight farthest from 0, with its sign (-inf after "+ M" late)
            forbidden, forbidden_at = float(on_forbidden[where]), where
    same_shape = output.shape == right["output"].shape
    distance = None
    if same_shape:
        with np.errstate(all="ignore"):
            diff = np.abs(output - right["output"])
        distance = float("nan") if np.isnan(diff).any() else float(diff.max(initial=0.0))
    is_right = (
        same_shape
        and weights.shape == right["weights"].shape
        and bool(np.allclose(weights, right["weights"], rtol=SAME_RTOL, atol=SAME_ATOL))
        and bool(np.allclose(output, right["output"], rtol=SAME_RTOL, atol=SAME_ATOL))
    )
    return Outcome(
        row_sum_min=float(np.min(sums)) if sums.size else float("nan"),
        row_sum_max=float(np.max(sums)) if sums.size else float("nan"),
        largest_weight=largest,
        largest_at=largest_at,
        forbidden_weight=forbidden,
        forbidden_at=forbidden_at,
        nan_weights=int(np.isnan(weights).sum()),
        nan_output=int(np.isnan(output).sum()),
        output_size=int(output.size),
        overflow=overflow,
        output_shape=tuple(int(s) for s in output.shape),
        distance=distance,
        right=is_right,
    )


def _numbers(ns: dict | None, error: str | None) -> str | tuple[np.ndarray, np.ndarray]:
    """What a run gave, to tell two wrong fragments apart: its error, or its weights and output."""
    if ns is None:
        return str(error)
    return np.asarray(ns["weights"]), np.asarray(ns["output"])


def _same_numbers(a: str | tuple, b: str | tuple) -> bool:
    """Two runs that stopped with the same error, or gave the same weights and the same output."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return _alike(a[0], b[0]) and _alike(a[1], b[1])


def _alike(x: np.ndarray, y: np.ndarray) -> bool:
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=SAME_RTOL, atol=SAME_ATOL, equal_nan=True))


def _blank(programs: list[list[str]]) -> tuple[int, int]:
    """The lines the programs do not share: (common first lines, common last lines)."""
    shortest = min(len(p) for p in programs)
    head = 0
    while head < shortest and all(p[head] == programs[0][head] for p in programs):
        head += 1
    tail = 0
    while tail < shortest - head and all(p[-1 - tail] == programs[0][-1 - tail] for p in programs):
        tail += 1
    return head, tail


def _shown(program: codegen.Program, with_softmax: bool) -> list[str]:
    blocks = (("softmax_fn",) if with_softmax else ()) + SHOWN_BLOCKS
    return program.lines(*blocks)


CONTEXT_LINE = "# X, W_Q, W_K, W_V, W_O and the sizes: as in the program of your settings"


def code_question(template: str, config: AttentionConfig, tokens, seed: int = 0) -> CodeQuestion | None:
    """The question ``template`` on the learner's tokens and settings, or None when these settings
    cannot ask it (no line to blank, or fewer than three traps that give other numbers here)."""
    tpl = template_by_name(template)
    if not template_applies(tpl, config):
        return None
    right_program = codegen.layer_program(config, tokens)
    ns, error, _ = _run(right_program)
    if ns is None:  # the right program always runs (tests/test_codegen.py); a failure is a bug here
        raise RuntimeError(f"the right program stopped: {error}")
    right = codegen.program_values(ns, config.heads)
    right = {"weights": right["weights"], "output": right["output"]}
    allowed = np.asarray(ns["allowed"], dtype=bool)
    right_option = CodeOption(None, (), outcome(ns, None, False, right, allowed))
    wrong: list[tuple[str, codegen.Program, Outcome]] = []
    offered: list[tuple] = []
    for name in tpl.wrongs:
        try:
            program = codegen.layer_program(config, tokens, name)
        except codegen.MutationNotApplicable:
            continue
        run = _run(program)
        result = outcome(*run, right, allowed)
        numbers = _numbers(run[0], run[1])
        # a trap that gives the right numbers here is not offered, nor a copy of an offered one's
        if not result.right and not any(_same_numbers(numbers, other) for other in offered):
            wrong.append((name, program, result))
            offered.append(numbers)
    if len(wrong) < N_OPTIONS - 1:
        return None
    wrong = wrong[: N_OPTIONS - 1]
    in_softmax = any(codegen.mutation_by_name(name).step == "softmax_fn" for name, _, _ in wrong)
    texts = [_shown(right_program, in_softmax)] + [_shown(p, in_softmax) for _, p, _ in wrong]
    head, tail = _blank(texts)
    fragments = [tuple(text[head : len(text) - tail]) for text in texts]
    options = [CodeOption(None, fragments[0], right_option.outcome)] + [
        CodeOption(name, fragment, result)
        for (name, _, result), fragment in zip(wrong, fragments[1:], strict=True)
    ]
    rng = np.random.default_rng((int(seed), zlib.crc32(template.encode())))
    order = rng.permutation(len(options))
    shuffled = tuple(options[i] for i in order)
    before = (CONTEXT_LINE, *texts[0][:head])
    after = tuple(texts[0][len(texts[0]) - tail :])
    forbidden = int((~allowed).sum())
    return CodeQuestion(
        template, before, after, shuffled, int(np.argmin(order)), config.heads, int(seed), forbidden
    )


def code_questions(config: AttentionConfig, tokens, seed: int = 0) -> list[CodeQuestion]:
    """Every template these settings can ask, in :data:`TEMPLATES` order."""
    questions = (code_question(t.name, config, tokens, seed) for t in TEMPLATES)
    return [q for q in questions if q is not None]
