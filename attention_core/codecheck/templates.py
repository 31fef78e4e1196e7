"""What the page's code box starts from: an empty template stating the contract, or the code
generator's one-head function with one step taken out (the scaling), which runs but is wrong until
the learner puts the step back."""

from __future__ import annotations

TEMPLATE = '''import numpy as np


def attention(X, W_Q, W_K, W_V, mask, d_k):
    """One head of scaled dot-product attention.

    X: [n, d_model]; W_Q, W_K: [d_model, d_k]; W_V: [d_model, d_v]
    mask: [n, n] bool, True where query i may read key j, or None (no mask)
    d_k: int; the scores are divided by its square root
    Returns [n, d_v]. A query whose every key is masked gets a row of zeros.
    """
    n, d_v = X.shape[0], W_V.shape[1]
    # your code here
    return np.zeros((n, d_v))


# Optional: the steps as functions. Each one you write is checked on its own, on the core's inputs
# for that step, so the report can say which step differs first.
# def scores(Q, K):            # [n, d_k], [n, d_k] -> [n, n]
# def scale(S, d_k):           # divide by the square root of d_k
# def apply_mask(S, mask):     # -inf where mask is False; mask None: S unchanged
# def softmax(S):              # row by row; a row of -inf only gives zeros
# def weighted_sum(A, V):      # [n, n], [n, d_v] -> [n, d_v]
# def multi_head(X, W_Q, W_K, W_V, W_O, mask):
#     # W_Q, W_K [h, d_model, d_k]; W_V [h, d_model, d_v]; W_O [h*d_v, d_model] -> [n, d_model]
'''
REMOVED_STEP = "scaled = "
TODO = "scaled = scores  # TODO: the scaling step was removed: put it back"


def one_step_removed() -> str:
    """The generated one-head function with its scaling line replaced by a TODO (the template when
    the code generator writes no such line)."""
    from ..codegen import one_head_function

    lines = one_head_function().splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith(REMOVED_STEP):
            indent = line[: len(line) - len(line.lstrip())]
            lines[i] = indent + TODO
            return "\n".join(lines) + "\n"
    return TEMPLATE
