"""An independent, deliberately slow reference for multi-head self-attention.

Written from the formulas, not from ``attention_core``: plain Python floats and ``for`` loops,
no matrix products, no NumPy in the arithmetic. It is the yardstick the core is measured against.

For each head h (with X the n x d_model input):
    Q[h][i][c] = sum_m X[i][m] * W_Q[h][m][c]  (+ b_Q[h][c])       and the same for K, V
    raw[h][i][j] = sum_c Q[h][i][c] * K[h][j][c]
    scaled[h][i][j] = raw[h][i][j] / divisor
    masked[h][i][j] = scaled[h][i][j] if query i may see key j else -inf
    weights[h][i][j] = exp(masked - row max) / sum over the row     (row with no allowed key -> all 0)
    head_out[h][i][c] = sum_j weights[h][i][j] * V[h][j][c]
concat[i][h * d_v + c] = head_out[h][i][c]
output[i][m] = sum_r concat[i][r] * W_O[r][m]  (+ b_O[m])
"""

from __future__ import annotations

import math

import numpy as np

NEG_INF = float("-inf")

# The order in which the steps happen: the first one that disagrees is the one to look at.
STEP_ORDER = (
    "mask",
    "Q",
    "K",
    "V",
    "scores_raw",
    "scores_scaled",
    "scores_masked",
    "weights",
    "fully_masked_rows",
    "head_outputs",
    "concat",
    "output",
)


def _tolist(a) -> list:
    return np.asarray(a, dtype=float).tolist() if a is not None else None


def naive_mask(kind: str, n: int, n_pad: int = 0) -> list[list[bool]]:
    """allowed[i][j] from the definitions: causal keeps j <= i; padding forbids the last n_pad keys."""
    allowed = []
    for i in range(n):
        row = []
        for j in range(n):
            ok = True
            if kind in ("causal", "causal+padding") and j > i:
                ok = False
            if kind in ("padding", "causal+padding") and j >= n - n_pad:
                ok = False
            row.append(ok)
        allowed.append(row)
    return allowed


def naive_positional_encoding(n: int, d_model: int) -> list[list[float]]:
    """PE[pos][2i] = sin(pos / 10000^(2i/d)), PE[pos][2i+1] = cos(pos / 10000^(2i/d))."""
    pe = []
    for pos in range(n):
        row = []
        for col in range(d_model):
            even = col - (col % 2)  # the "2i" shared by a sin/cos pair
            angle = pos / (10000.0 ** (even / d_model))
            row.append(math.sin(angle) if col % 2 == 0 else math.cos(angle))
        pe.append(row)
    return pe


def naive_project(X: list, W: list, b: list | None) -> list:
    """One head: rows of X times W (+ b), by loops."""
    out = []
    for x_row in X:
        row = []
        for c in range(len(W[0])):
            total = 0.0
            for m in range(len(x_row)):
                total += x_row[m] * W[m][c]
            if b is not None:
                total += b[c]
            row.append(total)
        out.append(row)
    return out


def naive_softmax_row(row: list[float]) -> list[float]:
    """Softmax of one row where -inf means masked.

    Subtract the largest allowed value first; masked entries give exactly 0; a row with no allowed
    entry gives all zeros. A +inf entry (overflowed score) takes the whole weight, split evenly.
    """
    allowed = [v for v in row if v != NEG_INF]
    if not allowed:
        return [0.0] * len(row)
    top = max(allowed)
    if top == math.inf:
        count = sum(1 for v in row if v == math.inf)
        return [1.0 / count if v == math.inf else 0.0 for v in row]
    exps = [0.0 if v == NEG_INF else math.exp(v - top) for v in row]
    total = sum(exps)
    return [e / total for e in exps]


def naive_attention(X, W_Q, W_K, W_V, W_O, allowed, divisor, b_Q=None, b_K=None, b_V=None, b_O=None) -> dict:
    """Every intermediate, as NumPy arrays with the core's shapes (head axis first).

    Inputs may be NumPy arrays or nested lists; they are turned into Python floats first.
    ``W_Q/W_K [h, d_model, d_k]``, ``W_V [h, d_model, d_v]``, ``W_O [h*d_v, d_model]``,
    ``allowed [n, n]`` (True = may attend), ``divisor`` a positive float.
    """
    X, W_Q, W_K, W_V, W_O = (_tolist(a) for a in (X, W_Q, W_K, W_V, W_O))
    b_Q, b_K, b_V, b_O = (_tolist(b) for b in (b_Q, b_K, b_V, b_O))
    allowed = [[bool(v) for v in row] for row in np.asarray(allowed).tolist()]
    divisor = float(divisor)
    n, heads = len(X), len(W_Q)
    d_v = len(W_V[0][0])

    Qs, Ks, Vs, raws, scaleds, maskeds, weights_all, outs = [], [], [], [], [], [], [], []
    for h in range(heads):
        Q = naive_project(X, W_Q[h], b_Q[h] if b_Q is not None else None)
        K = naive_project(X, W_K[h], b_K[h] if b_K is not None else None)
        V = naive_project(X, W_V[h], b_V[h] if b_V is not None else None)
        raw = [[sum(Q[i][c] * K[j][c] for c in range(len(Q[i]))) for j in range(n)] for i in range(n)]
        scaled = [[raw[i][j] / divisor for j in range(n)] for i in range(n)]
        masked = [[scaled[i][j] if allowed[i][j] else NEG_INF for j in range(n)] for i in range(n)]
        weights = [naive_softmax_row(masked[i]) for i in range(n)]
        out = []
        for i in range(n):
            row = []
            for c in range(d_v):
                total = 0.0
                for j in range(n):
                    total += weights[i][j] * V[j][c]
                row.append(total)
            out.append(row)
        for store, value in zip(
            (Qs, Ks, Vs, raws, scaleds, maskeds, weights_all, outs),
            (Q, K, V, raw, scaled, masked, weights, out),
            strict=True,
        ):
            store.append(value)

    concat = [[outs[h][i][c] for h in range(heads) for c in range(d_v)] for i in range(n)]
    output = []
    for i in range(n):
        row = []
        for m in range(len(W_O[0])):
            total = 0.0
            for r in range(heads * d_v):
                total += concat[i][r] * W_O[r][m]
            if b_O is not None:
                total += b_O[m]
            row.append(total)
        output.append(row)

    arr = np.array
    return {
        "mask": arr(allowed, dtype=bool).reshape(n, n),
        "Q": arr(Qs, dtype=float),
        "K": arr(Ks, dtype=float),
        "V": arr(Vs, dtype=float),
        "scores_raw": arr(raws, dtype=float).reshape(heads, n, n),
        "scores_scaled": arr(scaleds, dtype=float).reshape(heads, n, n),
        "scores_masked": arr(maskeds, dtype=float).reshape(heads, n, n),
        "weights": arr(weights_all, dtype=float).reshape(heads, n, n),
        "fully_masked_rows": arr([not any(row) for row in allowed], dtype=bool),
        "head_outputs": arr(outs, dtype=float).reshape(heads, n, d_v),
        "concat": arr(concat, dtype=float).reshape(n, heads * d_v),
        "output": arr(output, dtype=float).reshape(n, len(W_O[0])),
    }


def first_divergence(trace, ref: dict, atol: float, rtol: float) -> str | None:
    """The first step (in computation order) where ``trace`` and ``ref`` disagree, with details; else None."""
    for step in STEP_ORDER:
        got = np.asarray(getattr(trace, step))
        want = ref[step]
        if got.shape != want.shape:
            return f"step {step!r}: shape {got.shape} != reference {want.shape}"
        if want.dtype == bool:
            if not np.array_equal(got, want):
                bad = np.argwhere(got != want)[0]
                return f"step {step!r}: differs at index {tuple(bad)}"
            continue
        # -inf must sit exactly where the reference has it; the finite parts are compared with tolerance.
        if not np.array_equal(np.isneginf(got), np.isneginf(want)):
            bad = np.argwhere(np.isneginf(got) != np.isneginf(want))[0]
            return f"step {step!r}: -inf placement differs at index {tuple(bad)}"
        finite = ~np.isneginf(want)
        g, w = got[finite], want[finite]
        close = np.abs(g - w) <= atol + rtol * np.abs(w)
        if not close.all():
            k = int(np.argmin(close))
            return (
                f"step {step!r} diverged first: max |diff| = {np.max(np.abs(g - w)):.3e}, "
                f"e.g. got {g[k]!r} vs reference {w[k]!r} (atol={atol}, rtol={rtol})"
            )
    return None


def naive_softmax_jacobian_row(p: list[float]) -> list[list[float]]:
    """J[j][k] = d p_j / d s_k = p_j * (1 if j == k else 0) - p_j * p_k, entry by entry.

    Derived from p_j = exp(s_j) / sum_m exp(s_m); a masked entry (p = 0) has a zero row and column.
    """
    n = len(p)
    return [[p[j] * ((1.0 if j == k else 0.0) - p[k]) for k in range(n)] for j in range(n)]


def naive_softmax_backward_row(p: list[float], g: list[float]) -> list[float]:
    """dL/ds_k = sum_j g_j * J[j][k] (the chain rule through one softmax row), by loops."""
    J = naive_softmax_jacobian_row(p)
    n = len(p)
    out = []
    for k in range(n):
        total = 0.0
        for j in range(n):
            total += g[j] * J[j][k]
        out.append(total)
    return out
