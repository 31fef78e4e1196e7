"""The layer as a NumPy program the learner can run: every step of the trace, written as code.

Pure (NumPy and the standard library). :func:`layer_program` writes, from an :class:`AttentionConfig`
and the learner's tokens, the minimal program that computes the layer step by step under the names of
the maths (``X``, ``W_Q``, ``Q``, ``scores``, ``weights``, ``out``), one short line per step, the shapes
in comments, the mask and the divisor exactly as configured. It rebuilds ``X`` and the weights with
the same seeded draws the core makes (:mod:`attention_core.embeddings`, :func:`trace.init_params`),
so the file stays a few dozen lines at any size and its numbers are the trace's (tests/test_codegen.py
runs it for many settings and compares every intermediate, ``atol`` 1e-12).

Each step is a named block (:data:`BLOCKS`), so a page can show one step's lines; :data:`STEP_BLOCKS`
says which blocks make each step of the playground. One head is written with 2-D arrays, as the
reference notes write it (``Q @ K.T``); several heads keep the head first (``[h, n, d_k]``).

:data:`MUTATIONS` is the trap catalogue, written once for the project: each is the same generator with
one mistake (scaling after the softmax, the mask added after it, ``K`` for ``K.T``, …), asked for by
name. A mutation that has nothing to change under the given settings (a causal-mask trap on a layer
without a causal mask) raises :class:`MutationNotApplicable`. :func:`one_head_function` and
:func:`multi_head_function` write the functions of the contract with issue 44 (their docs below), with
or without a trap. Each trap is written the way a learner writes that mistake by hand (the mask
skipped when there is none, the weights masked after the softmax by zeroing them, the scores used as
the weights after they are masked), so that the code check names a learner's mistake by the trap whose
numbers theirs equal (tests/codecheck/test_traps.py writes every trap by hand).

The comments in the generated code are English whatever the UI's language: the program is the same
text in both, so its lines, fragments and error messages match between a Japanese and an English
screen, and the message catalogs explain each step in the learner's language beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .config import PAD_TOKEN, AttentionConfig

# The program's blocks, in the order they appear in its source.
BLOCKS = (
    "setup",
    "softmax_fn",
    "x",
    "weights",
    "mask",
    "qkv",
    "raw",
    "scaled",
    "masked",
    "softmax",
    "head_out",
    "concat",
    "output",
)
# The playground's steps (attention_ui/playground/steps_view.STEPS) and the blocks that compute them.
STEP_BLOCKS = {
    "x": ("x",),
    "qkv": ("weights", "qkv"),
    "raw": ("raw",),
    "scaled": ("scaled",),
    "mask": ("mask",),
    "masked": ("masked",),
    "softmax": ("softmax_fn", "softmax"),
    "head_out": ("head_out",),
    "all_heads": ("softmax",),
    "concat": ("concat",),
    "output": ("output",),
}
# The program's variables and the trace fields they equal. One head's program keeps 2-D arrays: they
# equal the trace's head 0 (``[0]``); the mask and the matrices without a head axis are compared whole.
TRACE_NAMES = {
    "X": "X",
    "W_Q": "W_Q",
    "W_K": "W_K",
    "W_V": "W_V",
    "W_O": "W_O",
    "allowed": "mask",
    "Q": "Q",
    "K": "K",
    "V": "V",
    "scores": "scores_raw",
    "scaled": "scores_scaled",
    "masked": "scores_masked",
    "weights": "weights",
    "out": "head_outputs",
    "concat": "concat",
    "output": "output",
}
PER_HEAD_NAMES = ("W_Q", "W_K", "W_V", "Q", "K", "V", "scores", "scaled", "masked", "weights", "out")
COMMENT_COLUMN = 48  # comments line up here, or two spaces after a longer line


class MutationNotApplicable(ValueError):
    """The mutation changes a line these settings do not have (e.g. a causal trap without a causal mask)."""


@dataclass(frozen=True)
class Mutation:
    """One trap: the generator with one mistake. Its learner-facing name and explanation are in the
    message catalogs (``code.mut_<name>`` and ``code.mut_<name>_why``), both languages."""

    name: str  # stable id
    step: str  # the block it changes (mutations that move a step also touch the line after it)
    one_head: bool  # whether one_head_function() accepts it

    @property
    def multi_head(self) -> bool:
        """Whether multi_head_function() accepts it: every one-head trap and the traps of merging the
        heads (the function is given its mask, so the traps of building one have no line there)."""
        return self.one_head or self.step in ("concat", "output")


MUTATIONS = (
    # The scores: every query against every key.
    Mutation("k_not_transposed", "raw", True),
    Mutation("compare_v_with_v", "raw", True),
    Mutation("keys_against_queries", "raw", True),
    # The divisor and where it goes.
    Mutation("divide_by_d_k", "scaled", True),
    Mutation("no_scaling", "scaled", True),
    Mutation("multiply_by_sqrt_d_k", "scaled", True),
    Mutation("scale_after_softmax", "scaled", True),
    Mutation("scale_after_weighted_sum", "scaled", True),
    # The mask: which keys, its values, and where it goes.
    Mutation("triu_k0_masks_diagonal", "mask", False),
    Mutation("causal_upper_allowed", "mask", False),
    Mutation("causal_reversed", "mask", False),
    Mutation("pad_off_by_one", "mask", False),
    Mutation("pad_rows_masked", "mask", False),
    Mutation("pad_first_keys", "mask", False),
    Mutation("mask_inverted", "mask", True),
    Mutation("mask_sign_flipped", "mask", True),
    Mutation("mask_as_ones", "mask", True),
    Mutation("mask_multiplies_scores", "masked", True),
    Mutation("mask_after_softmax", "masked", True),  # the weights zeroed where forbidden, after softmax
    Mutation("mask_added_after_softmax", "masked", True),  # -inf added to the weights, after softmax
    Mutation("mask_multiplies_v", "masked", True),  # V masked per query: mask_after_softmax's output
    # The softmax.
    Mutation("softmax_wrong_axis", "softmax_fn", True),
    Mutation("no_normalisation", "softmax_fn", True),
    Mutation("normalise_whole_matrix", "softmax_fn", True),
    Mutation("no_max_subtraction", "softmax_fn", True),
    Mutation("max_added", "softmax_fn", True),
    Mutation("min_subtracted", "softmax_fn", True),
    # The weighted sum of the values.
    Mutation("weights_transposed", "head_out", True),
    Mutation("keys_as_values", "head_out", True),
    Mutation("scores_as_weights", "head_out", True),
    # The projections.
    Mutation("q_from_w_k", "qkv", True),
    Mutation("no_projections", "qkv", True),
    Mutation("v_from_w_k", "qkv", True),
    # Several heads back into one matrix.
    Mutation("heads_merged_without_transpose", "concat", False),
    Mutation("heads_merged_along_tokens", "concat", False),
    Mutation("w_o_per_head_before_concat", "output", False),
)
MUTATION_NAMES = tuple(m.name for m in MUTATIONS)
_BY_NAME = {m.name: m for m in MUTATIONS}


def mutation_by_name(name: str) -> Mutation:
    """The mutation called ``name`` (ValueError for an unknown name)."""
    if name not in _BY_NAME:
        raise ValueError(f"unknown mutation {name!r}; one of {', '.join(MUTATION_NAMES)}")
    return _BY_NAME[name]


@dataclass(frozen=True)
class Line:
    """One line of the program: its code and the comment beside it ("" for none)."""

    code: str
    comment: str = ""


def _render(lines: Sequence[Line], indent: str = "") -> tuple[str, ...]:
    out = []
    for line in lines:
        text = indent + line.code
        if line.comment and line.code:
            text = f"{text.ljust(COMMENT_COLUMN - 2)}  # {line.comment}"
        elif line.comment:
            text = f"{indent}# {line.comment}"
        out.append(text)
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Program:
    """A generated program: its blocks in order (name -> lines of source) and the whole text.

    ``code`` holds the same blocks without the comments beside the lines (what a code question shows
    in its options, where a comment would give the answer away).
    """

    blocks: dict[str, tuple[str, ...]]
    code: dict[str, tuple[str, ...]]
    mutation: str | None = None
    heads: int = 1
    prints: tuple[str, ...] = field(default=())  # the print lines that end the program, if any

    @property
    def source(self) -> str:
        return "\n\n".join("\n".join(lines) for lines in self.blocks.values() if lines) + "\n"

    def step_source(self, step: str) -> str:
        """The lines of one playground step (:data:`STEP_BLOCKS`), blocks separated by a blank line."""
        return "\n\n".join("\n".join(self.blocks[b]) for b in STEP_BLOCKS[step] if self.blocks.get(b))

    def lines(self, *names: str) -> list[str]:
        """The comment-free lines of the named blocks, in the program's order."""
        return [line for name in self.code if name in names for line in self.code[name]]


def divisor_code(config: AttentionConfig) -> str | None:
    """The divisor as the program writes it: ``np.sqrt(d_k)``, the custom number (exact), or None
    when scaling is off."""
    if config.scale == "sqrt":
        return "np.sqrt(d_k)"
    if config.scale == "none":
        return None
    return repr(float(config.scale))


class _Writer:
    """Writes the blocks for one layout (one head in 2-D, or head-first 3-D) and at most one mutation.

    Every branch that writes a mutated line marks it ``applied``; a mutation left unapplied raises
    :class:`MutationNotApplicable`, so a trap never silently gives the right program.
    """

    def __init__(self, heads: int, divisor: str | None, mutation_name: str | None) -> None:
        if mutation_name is not None:
            mutation_by_name(mutation_name)  # ValueError for an unknown name
        self.multi = heads > 1
        self.divisor = divisor
        self.m = mutation_name
        self.applied = False

    def trap(self, name: str) -> bool:
        """Whether the mutation ``name`` is asked for (and so is written now)."""
        if self.m == name:
            self.applied = True
            return True
        return False

    def variant(self, correct: str, **traps: str) -> str:
        """The code of the first of ``traps`` (a trap's name: its code) that is asked for, tried in
        their order, else ``correct``."""
        for name, code in traps.items():
            if self.trap(name):
                return code
        return correct

    def check(self) -> None:
        if self.m is not None and not self.applied:
            raise MutationNotApplicable(f"the mutation {self.m!r} changes nothing under these settings")

    # shapes in comments
    def shape(self, *dims: str) -> str:
        return "[" + ", ".join((("h",) if self.multi else ()) + dims) + "]"

    def t(self, name: str) -> str:
        """``name`` with its last two axes swapped: ``K.T`` for one head."""
        return f"{name}.transpose(0, 2, 1)" if self.multi else f"{name}.T"

    def qkv(self) -> list[Line]:
        if self.trap("no_projections"):
            return [Line("Q, K, V = X, X, X", "[n, d_model]")]
        q_weight = "W_K" if self.trap("q_from_w_k") else "W_Q"
        v_weight = "W_K" if self.trap("v_from_w_k") else "W_V"
        every = ": every head at once" if self.multi else ""
        return [
            Line(f"Q = X @ {q_weight}", self.shape("n", "d_k") + " queries" + every),
            Line("K = X @ W_K", self.shape("n", "d_k") + " keys"),
            Line(f"V = X @ {v_weight}", self.shape("n", "d_v") + " values"),
        ]

    def raw(self) -> list[Line]:
        code = self.variant(
            f"scores = Q @ {self.t('K')}",
            k_not_transposed="scores = Q @ K",
            compare_v_with_v=f"scores = V @ {self.t('V')}",
            keys_against_queries=f"scores = K @ {self.t('Q')}",
        )
        return [Line(code, self.shape("n", "n") + " every query against every key")]

    def scaled(self) -> list[Line]:
        d = self.divisor
        comment = self.shape("n", "n")
        if d is not None and (
            self.trap("no_scaling")
            or self.trap("scale_after_softmax")
            or self.trap("scale_after_weighted_sum")
        ):
            return [Line("scaled = scores", comment)]
        if d == "np.sqrt(d_k)" and self.trap("divide_by_d_k"):
            return [Line("scaled = scores / d_k", comment)]
        if d == "np.sqrt(d_k)" and self.trap("multiply_by_sqrt_d_k"):
            return [Line("scaled = scores * np.sqrt(d_k)", comment)]
        if d is None:
            return [Line("scaled = scores", comment + " scaling off: the divisor is 1")]
        why = " divided before the softmax" if d == "np.sqrt(d_k)" else " divided by your divisor"
        return [Line(f"scaled = scores / {d}", comment + why)]

    def after_softmax(self, expr: str) -> str:
        """The weights' expression, with a trap that acts after the softmax."""
        if self.m == "scale_after_softmax" and self.divisor is not None:
            return f"{expr} / {self.divisor}"
        if self.m == "mask_after_softmax":
            return f"{expr} * allowed"
        if self.m == "mask_added_after_softmax":
            return f"{expr} + M"
        return expr

    def mask_values(self) -> list[Line]:
        code = self.variant(
            "M = np.where(allowed, 0.0, -np.inf)",
            mask_inverted="M = np.where(allowed, -np.inf, 0.0)",
            mask_sign_flipped="M = np.where(allowed, 0.0, np.inf)",
            mask_as_ones="M = allowed.astype(float)",
        )
        return [Line(code, "[n, n] the formula's M: 0 allowed, -inf masked")]

    def masked(self) -> list[Line]:
        comment = self.shape("n", "n") + (" M is added to every head" if self.multi else "")
        if self.trap("mask_multiplies_scores"):
            return [Line("masked = scaled * allowed", comment)]
        if (
            self.trap("mask_after_softmax")
            or self.trap("mask_added_after_softmax")
            or self.trap("mask_multiplies_v")
        ):
            return [Line("masked = scaled", comment)]
        return [Line("masked = scaled + M", comment + ("" if self.multi else " masked keys: -inf"))]

    def softmax_body(self, src: str) -> tuple[list[Line], str]:
        """The softmax's lines on ``src`` and the expression of its result (rows over the last axis)."""
        axis = "-2" if self.trap("softmax_wrong_axis") else "-1"
        lines = []
        if not self.trap("no_max_subtraction"):
            reduce = "min" if self.trap("min_subtracted") else "max"
            lines += [
                Line(f"row_max = {src}.{reduce}(axis={axis}, keepdims=True)", "one largest score per row"),
                Line(
                    "row_max[np.isneginf(row_max)] = 0.0",
                    "a row with every key masked: nothing to subtract",
                ),
            ]
            sign = "+" if self.trap("max_added") else "-"
            lines.append(Line(f"e = np.exp({src} {sign} row_max)", "subtracting the max keeps exp finite"))
        else:
            lines.append(Line(f"e = np.exp({src})", "exp(-inf) = 0: a masked key gets no weight"))
        if self.trap("normalise_whole_matrix"):
            lines.append(Line("total = e.sum()", "one sum for the whole matrix"))
        else:
            lines.append(Line(f"total = e.sum(axis={axis}, keepdims=True)", "one sum per row"))
        expr = "e" if self.trap("no_normalisation") else "e / np.where(total == 0.0, 1.0, total)"
        return lines, expr

    def softmax_fn(self) -> list[Line]:
        body, expr = self.softmax_body("s")
        return [
            Line("def softmax(s):"),
            Line('    """Each row of s (the last axis: the keys) into weights that sum to 1; -inf gives 0,'),
            Line('    and a row with every key masked stays all 0."""'),
            *(Line("    " + line.code, line.comment) for line in body),
            Line(f"    return {expr}", "a fully masked row stays 0 instead of 0/0"),
        ]

    def softmax_call(self) -> list[Line]:
        expr = self.after_softmax("softmax(masked)")
        return [Line(f"weights = {expr}", self.shape("n", "n") + " each row sums to 1")]

    def head_out(self) -> list[Line]:
        comment = self.shape("n", "d_v") + " weighted averages of value rows"
        if self.trap("mask_multiplies_v"):  # query i mixes a copy of V whose forbidden rows are 0
            seen = "allowed[:, :, None] * V" + ("[:, None]" if self.multi else "")
            spec = '"hij,hijd->hid"' if self.multi else '"ij,ijd->id"'
            return [
                Line(f"V_seen = {seen}", self.shape("n", "n", "d_v") + " query i's V: forbidden rows 0"),
                Line(f"out = np.einsum({spec}, weights, V_seen)", comment),
            ]
        if self.trap("weights_transposed"):
            return [Line(f"out = {self.t('weights')} @ V", comment)]
        if self.trap("keys_as_values"):
            return [Line("out = weights @ K", comment)]
        if self.trap("scores_as_weights"):  # the softmax skipped: what it would get goes to V
            return [Line("out = masked @ V", comment)]
        if self.m == "scale_after_weighted_sum" and self.divisor is not None:
            return [Line(f"out = weights @ V / {self.divisor}", comment)]
        return [Line("out = weights @ V", comment)]

    def concat(self) -> list[Line]:
        if not self.multi:
            return [Line("concat = out", "[n, d_v] one head: nothing to put side by side")]
        # That trap writes no concat line: its output line multiplies each head by its rows of W_O.
        if self.m == "w_o_per_head_before_concat":
            return []
        code = self.variant(
            "concat = out.transpose(1, 0, 2).reshape(n, heads * d_v)",
            heads_merged_without_transpose="concat = out.reshape(n, heads * d_v)",
            heads_merged_along_tokens="concat = np.concatenate(out, axis=0)",
        )
        return [Line(code, "[n, h*d_v] head 0's columns first")]

    def output(self) -> list[Line]:
        if self.multi and self.trap("w_o_per_head_before_concat"):
            code = "output = np.concatenate([out[i] @ W_O[i * d_v:(i + 1) * d_v] for i in range(heads)], axis=-1)"
            return [Line(code, "[n, h*d_model]")]
        return [Line("output = concat @ W_O", "[n, d_model] W_O mixes the heads back")]

    def mask_block(self, kind: str) -> list[Line]:
        """``allowed`` (True where query i may read key j) for a mask kind, then M."""
        lines = []
        if "causal" in kind:
            code = self.variant(
                "allowed = ~np.triu(np.ones((n, n), dtype=bool), k=1)",
                triu_k0_masks_diagonal="allowed = ~np.triu(np.ones((n, n), dtype=bool), k=0)",
                causal_upper_allowed="allowed = np.triu(np.ones((n, n), dtype=bool), k=1)",
                causal_reversed="allowed = ~np.tril(np.ones((n, n), dtype=bool), k=-1)",
            )
            lines.append(Line(code, "[n, n] False above the diagonal: no later key"))
        else:
            lines.append(Line("allowed = np.ones((n, n), dtype=bool)", "[n, n] True: query i may read key j"))
        if "padding" in kind:
            code = self.variant(
                "allowed[:, n - n_pad:] = False",
                pad_off_by_one="allowed[:, n - n_pad - 1:] = False",
                pad_rows_masked="allowed[n - n_pad:, :] = False",
                pad_first_keys="allowed[:, :n_pad] = False",
            )
            lines.append(Line(code, "no query reads a [PAD] key"))
        return lines + self.mask_values()


def _tokens_lines(tokens: Sequence[str]) -> list[Line]:
    """``tokens = [...]`` wrapped so no line runs past ~100 characters; each token as a Python literal."""
    items = [repr(t) for t in tokens]
    lines, current = [], "tokens = ["
    for i, item in enumerate(items):
        piece = item + (", " if i < len(items) - 1 else "")
        if len(current) + len(piece) > 100 and current.strip() not in ("tokens = [", ""):
            lines.append(Line(current.rstrip()))
            current = "    "
        current += piece
    lines.append(Line(current + "]"))
    return lines


def _x_lines(positional: bool) -> list[Line]:
    lines = [
        Line("def token_vector(token):"),
        Line('    """The core\'s vector of a token: N(0, 1) numbers from a generator seeded by BLAKE2b of'),
        Line('    (seed, token), the same in every run; [PAD] is the zero vector."""'),
        Line(f"    if token == {PAD_TOKEN!r}:"),
        Line("        return np.zeros(d_model)"),
        Line('    digest = hashlib.blake2b(f"{seed}\\x1f{token}".encode(), digest_size=8).digest()'),
        Line('    return np.random.default_rng(int.from_bytes(digest, "little")).standard_normal(d_model)'),
        Line(""),
        Line("E = np.stack([token_vector(token) for token in tokens])", "[n, d_model] one row per token"),
    ]
    if not positional:
        return lines + [Line("X = E", "[n, d_model] positions off: X is the token vectors alone")]
    return lines + [
        Line("pos = np.arange(n)[:, None]", "[n, 1] positions 0 .. n-1"),
        Line("two_i = np.arange(0, d_model, 2)[None, :]", "[1, ceil(d_model/2)] even feature indices"),
        Line("angle = pos / np.power(10000.0, two_i / d_model)", "[n, ceil(d_model/2)]"),
        Line("P = np.zeros((n, d_model))", "[n, d_model] sinusoidal positional encoding"),
        Line("P[:, 0::2] = np.sin(angle)", "even columns: sine"),
        Line("P[:, 1::2] = np.cos(angle[:, : d_model // 2])", "odd columns: cosine"),
        Line("X = E + P", "[n, d_model] token vector + position"),
    ]


def _weights_lines(multi: bool) -> list[Line]:
    head = "heads, " if multi else ""
    h = "h, " if multi else ""
    return [
        Line("rng = np.random.default_rng(seed)", "the core draws W_Q, W_K, W_V, W_O in this order"),
        Line(f"W_Q = rng.standard_normal(({head}d_model, d_k)) / np.sqrt(d_model)", f"[{h}d_model, d_k]"),
        Line(f"W_K = rng.standard_normal(({head}d_model, d_k)) / np.sqrt(d_model)", f"[{h}d_model, d_k]"),
        Line(f"W_V = rng.standard_normal(({head}d_model, d_v)) / np.sqrt(d_model)", f"[{h}d_model, d_v]"),
        Line(
            "W_O = rng.standard_normal((heads * d_v, d_model)) / np.sqrt(heads * d_v)"
            if multi
            else "W_O = rng.standard_normal((d_v, d_model)) / np.sqrt(d_v)",
            "[h*d_v, d_model]" if multi else "[d_v, d_model]",
        ),
    ]


def _compute_blocks(w: _Writer, mask_kind: str) -> dict[str, list[Line]]:
    """The blocks every program shares, from the mask to the output."""
    return {
        "mask": w.mask_block(mask_kind),
        "qkv": w.qkv(),
        "raw": w.raw(),
        "scaled": w.scaled(),
        "masked": w.masked(),
        "softmax": w.softmax_call(),
        "head_out": w.head_out(),
        "concat": w.concat(),
        "output": w.output(),
    }


# Each block's first line: what it computes (the setup block writes its own, after the imports).
HEADERS = {
    "softmax_fn": "Softmax over each row, as the core computes it",
    "x": "X: one row per token (token vector + position)",
    "weights": "The weight matrices, drawn from the seed as the core draws them",
    "mask": "The mask (it depends only on the positions, so it comes first)",
    "qkv": "Queries, keys and values: three projections of the same X",
    "raw": "Raw scores",
    "scaled": "Scaled scores",
    "masked": "Masked scores: S' + M",
    "softmax": "Attention weights",
    "head_out": "Each head's output: the weighted sum of the values",
    "concat": "Concatenate the heads",
    "output": "Output projection",
    "print": "What the reference notes print",
}
EXAMPLE_HEADERS = {
    **HEADERS,
    "x": "X: four rows of standard normal numbers, as the notes draw them",
    "weights": "The weight matrices, drawn from the same generator, as the notes draw them",
}


def _program(
    blocks: dict[str, list[Line]],
    w: _Writer,
    heads: int,
    headers: dict = HEADERS,
    prints: tuple[str, ...] = (),
) -> Program:
    w.check()
    rendered, code = {}, {}
    for name, lines in blocks.items():
        header = [Line("", headers[name])] if name in headers else []
        rendered[name] = _render(header + lines)
        code[name] = tuple(line.code for line in lines)
    return Program(blocks=rendered, code=code, mutation=w.m, heads=heads, prints=prints)


def layer_program(config: AttentionConfig, tokens: Sequence[str], mutation: str | None = None) -> Program:
    """The whole layer for ``config`` on ``tokens`` (the sentence's; ``config.pad`` [PAD]s are appended
    as :func:`trace.trace_tokens` does), optionally with one trap. ValueError for no tokens or an
    unknown mutation; :class:`MutationNotApplicable` for a trap these settings cannot show."""
    if not tokens:
        raise ValueError("there are no tokens")
    all_tokens = tuple(tokens) + (PAD_TOKEN,) * config.pad
    heads, d_k, d_v = config.heads, config.head_dim_k, config.head_dim_v
    w = _Writer(heads, divisor_code(config), mutation)
    multi = heads > 1
    pad_note = f" (+ {config.pad} {PAD_TOKEN})" if config.pad else ""
    setup = [
        Line("import hashlib"),
        Line("import numpy as np"),
        Line(""),
        Line("", f"Settings: your sentence's tokens{pad_note} and the layer's sizes"),
        *_tokens_lines(all_tokens),
    ]
    sizes = ("n, d_model, heads, d_k, d_v", f"{len(all_tokens)}, {config.d_model}, {heads}, {d_k}, {d_v}")
    if not multi:
        sizes = ("n, d_model, d_k, d_v", f"{len(all_tokens)}, {config.d_model}, {d_k}, {d_v}")
    setup.append(Line(f"{sizes[0]} = {sizes[1]}"))
    if config.pad or "padding" in config.mask:
        setup.append(Line(f"n_pad = {config.pad}", f"how many {PAD_TOKEN} tokens end the list"))
    setup.append(Line(f"seed = {config.seed}"))
    blocks = {
        "setup": setup,
        "softmax_fn": w.softmax_fn(),
        "x": _x_lines(config.positional),
        "weights": _weights_lines(multi),
        **_compute_blocks(w, config.mask),
    }
    return _program(blocks, w, heads)


# The reference notes' worked example: n = 4, d_model = 6, d_k = 3, d_v = 2, default_rng(0), causal.
EXAMPLE_SIZES = (4, 6, 3, 2)
EXAMPLE_PRINTS = ("print(scores.shape, weights.shape, out.shape)", "print(np.round(weights[0], 6))")


def example_program(mutation: str | None = None) -> Program:
    """The notes' worked example as a program: X and the weights drawn as the notes draw them
    (standard normal from ``default_rng(0)``, W_O after the other three, as
    :mod:`attention_core.example` does), one causal head, ÷√d_k; it ends with the two lines the notes
    print. Run alone it prints ``(4, 4) (4, 4) (4, 2)`` and ``[1. 0. 0. 0.]``."""
    n, d_model, d_k, d_v = EXAMPLE_SIZES
    w = _Writer(1, "np.sqrt(d_k)", mutation)
    blocks = {
        "setup": [
            Line("import numpy as np"),
            Line(""),
            Line("", "Settings: the reference notes' worked example (one causal head)"),
            Line("rng = np.random.default_rng(0)"),
            Line(f"n, d_model, d_k, d_v = {n}, {d_model}, {d_k}, {d_v}"),
        ],
        "softmax_fn": w.softmax_fn(),
        "x": [
            Line("X = rng.normal(size=(n, d_model))", "[n, d_model] standard normal, as the notes draw it")
        ],
        "weights": [
            Line("W_Q = rng.normal(size=(d_model, d_k))", "[d_model, d_k]"),
            Line("W_K = rng.normal(size=(d_model, d_k))", "[d_model, d_k]"),
            Line("W_V = rng.normal(size=(d_model, d_v))", "[d_model, d_v]"),
            Line("W_O = rng.normal(size=(d_v, d_model))", "[d_v, d_model] drawn last: the notes' draws stay"),
        ],
        **_compute_blocks(w, "causal"),
        "print": [Line(line) for line in EXAMPLE_PRINTS],
    }
    return _program(blocks, w, 1, headers=EXAMPLE_HEADERS, prints=EXAMPLE_PRINTS)


def _function_body(w: _Writer) -> list[Line]:
    """The lines the one-head and multi-head functions share, from the mask to each head's output.

    ``mask`` None adds nothing (``M = 0.0``), the way a learner skips the mask when there is none; the
    traps that multiply by the mask multiply by all-True then, which changes nothing either.
    """
    softmax, expr = w.softmax_body("masked")
    values = w.mask_values()[0]
    return [
        Line("allowed = np.ones((n, n), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)"),
        Line(f"{values.code} if mask is not None else 0.0", "0 allowed, -inf masked; no mask: 0"),
        *w.qkv(),
        *w.raw(),
        *w.scaled(),
        *w.masked(),
        *softmax,
        Line(f"weights = {w.after_softmax(expr)}", w.shape("n", "n") + " each row sums to 1"),
        *w.head_out(),
    ]


def one_head_function(mutation: str | None = None) -> str:
    """The source of ``def attention(X, W_Q, W_K, W_V, mask, d_k):`` (with ``import numpy as np``).

    The contract with issue 44: X ``[n, d_model]``, W_Q and W_K ``[d_model, d_k]``, W_V
    ``[d_model, d_v]``; ``mask`` a boolean ``[n, n]`` array, True where query i may read key j (the
    core's convention), or None for no mask; ``d_k`` an int (the divisor is √d_k). It returns
    ``[n, d_v]``; a query whose every key is masked gets a row of zeros, as in the core. With
    ``mutation`` (a one-head trap, :attr:`Mutation.one_head`) the same function with that trap.
    """
    if mutation is not None and not mutation_by_name(mutation).one_head:
        raise MutationNotApplicable(f"the mutation {mutation!r} is not a one-head trap")
    w = _Writer(1, "np.sqrt(d_k)", mutation)
    body = [Line("n = X.shape[0]"), *_function_body(w), Line("return out")]
    w.check()
    head = [
        "import numpy as np",
        "",
        "",
        "def attention(X, W_Q, W_K, W_V, mask, d_k):",
        '    """One head of scaled dot-product attention: X [n, d_model] -> [n, d_v].',
        "",
        "    mask: [n, n] bool, True where query i may read key j, or None (no mask). A query whose every",
        '    key is masked gets a row of zeros."""',
    ]
    return "\n".join(head + list(_render(body, indent="    "))) + "\n"


def multi_head_function(mutation: str | None = None) -> str:
    """The source of ``def multi_head(X, W_Q, W_K, W_V, W_O, mask):`` (with ``import numpy as np``).

    The contract with issue 44: X ``[n, d_model]``, W_Q and W_K ``[h, d_model, d_k]``, W_V
    ``[h, d_model, d_v]``, W_O ``[h*d_v, d_model]``, ``mask`` as for :func:`one_head_function`; every
    head divides by √d_k; it returns the layer's output ``[n, d_model]`` (the heads' outputs side by
    side, head 0's columns first, times W_O). With ``mutation`` (:attr:`Mutation.multi_head`) the same
    function with that trap.
    """
    if mutation is not None and not mutation_by_name(mutation).multi_head:
        raise MutationNotApplicable(f"the mutation {mutation!r} is not a trap of the multi-head function")
    w = _Writer(2, "np.sqrt(d_k)", mutation)  # any number of heads > 1: the head-first layout
    body = [
        Line("n = X.shape[0]"),
        Line("heads, d_k, d_v = W_Q.shape[0], W_Q.shape[2], W_V.shape[2]"),
        *_function_body(w),
        *w.concat(),
        *w.output(),
        Line("return output"),
    ]
    w.check()
    head = [
        "import numpy as np",
        "",
        "",
        "def multi_head(X, W_Q, W_K, W_V, W_O, mask):",
        '    """Multi-head attention, every head at once: X [n, d_model] -> [n, d_model].',
        "",
        "    W_Q, W_K: [h, d_model, d_k]; W_V: [h, d_model, d_v]; W_O: [h*d_v, d_model]; mask as for one",
        '    head: [n, n] bool, True where query i may read key j, or None (no mask)."""',
    ]
    return "\n".join(head + list(_render(body, indent="    "))) + "\n"


def run_program(program: Program | str, namespace: dict | None = None) -> dict:
    """Execute a generated program (trusted: written here) in a fresh namespace and return it."""
    source = program.source if isinstance(program, Program) else program
    ns = {"__name__": "__attention_program__"} if namespace is None else namespace
    exec(compile(source, "<attention program>", "exec"), ns)  # noqa: S102 - our own generated code
    return ns


def program_values(ns: dict, heads: int) -> dict[str, np.ndarray]:
    """The program's intermediates under the trace's field names (:data:`TRACE_NAMES`), each with the
    trace's shape: one head's 2-D arrays get the head axis back."""
    values = {}
    for name, field_name in TRACE_NAMES.items():
        if name not in ns:
            continue
        a = np.asarray(ns[name])
        if heads == 1 and name in PER_HEAD_NAMES:
            a = a[None]
        values[field_name] = a
    return values
